//! The conversation part of a pane: what the agent said and did (the
//! transcript), where its turn stands, what it offers (capabilities,
//! models, slash commands, effort) and what it has cost so far. The runner's
//! events write it; the UI and the app's features read it.

use std::time::Instant;

use crate::app::transcript::Transcript;
use crate::config::AgentConfig;
use crate::protocol::agent::Capabilities;
use crate::protocol::event::Usage;
use crate::protocol::history::TurnEnd;
use crate::protocol::pane::TurnState;
use crate::protocol::snapshot::Restored;

pub struct Conversation {
    pub transcript: Transcript,
    pub(crate) state: TurnState,
    pub(crate) capabilities: Option<Capabilities>,
    /// The provider could not start: shown instead of a conversation.
    pub failed: Option<String>,
    pub(crate) model: Option<String>,
    /// Slash commands the agent offers (completion in the composer).
    pub(crate) commands: Vec<String>,
    /// Models the agent offers (the `/model` picker).
    pub(crate) models: Vec<String>,
    /// The effort level set with `/effort` (or configured).
    pub(crate) effort: Option<String>,
    /// Usage of every finished turn added up.
    pub(crate) usage: Usage,
    pub(crate) turns: u64,
    /// The running turn has had no output since then (runner's stall_after).
    pub(crate) stalled_since: Option<Instant>,
    /// The queue waits for the vendor's limit to reset.
    pub(crate) held: Option<crate::protocol::hold::Hold>,
}

impl Conversation {
    /// A conversation not started yet, with the agent's configured model
    /// and effort.
    pub fn new(agent: &AgentConfig) -> Self {
        Self {
            transcript: Transcript::default(),
            state: TurnState::Idle,
            capabilities: None,
            failed: None,
            model: agent.model.clone(),
            commands: Vec::new(),
            models: Vec::new(),
            effort: agent.thinking.clone(),
            usage: Usage::default(),
            turns: 0,
            stalled_since: None,
            held: None,
        }
    }

    /// How full the model's context is (tokens in it, window): the
    /// agent's last report, with the configured window where it gives none.
    pub(crate) fn context_fill(&self, agent: &AgentConfig) -> Option<(u64, u64)> {
        crate::protocol::event::context_fill(&self.usage, agent.context_window)
    }

    /// The agent announced a `/compact` of its own.
    pub(crate) fn offers_compact(&self) -> bool {
        self.commands
            .iter()
            .any(|c| c.trim_start_matches('/') == "compact")
    }

    pub(crate) fn is_busy(&self) -> bool {
        self.state.is_busy()
    }

    /// Fills the conversation from its restored history as it looked before the restart:
    /// items with their turns' footers and banners in place, the session's
    /// totals and the model the agent last reported.
    pub(crate) fn restore(&mut self, history: &mut Restored) {
        let mut ends = std::mem::take(&mut history.ends).into_iter().peekable();
        let mut counted = Counted::default();
        for (n, item) in history.items.drain(..).enumerate() {
            while let Some(end) = ends.next_if(|e| e.after <= n) {
                self.transcript.restored_end(&end);
                counted.add(&end);
            }
            self.transcript.upsert(item);
        }
        for end in ends {
            self.transcript.restored_end(&end);
            counted.add(&end);
        }
        for (item, ms) in history.took.drain(..) {
            let took = std::time::Duration::from_millis(ms);
            self.transcript.set_took(&item, took);
        }
        match history.totals.take() {
            Some(t) => {
                self.usage = t.usage;
                self.turns = t.turns;
            }
            // States written before totals were kept: what the window shows.
            None => {
                self.usage = counted.totals.usage;
                self.turns = counted.totals.turns;
            }
        }
        if let Some(m) = counted.model.or_else(|| history.model.take()) {
            self.model = Some(m);
        }
    }
}

/// What the restored turns add up to.
#[derive(Default)]
struct Counted {
    totals: crate::protocol::history::Totals,
    /// The newest turn's model.
    model: Option<String>,
}

impl Counted {
    fn add(&mut self, end: &TurnEnd) {
        self.totals.add_end(end);
        if let Some(m) = end.model.as_ref().filter(|m| !m.is_empty()) {
            self.model = Some(m.clone());
        }
    }
}
