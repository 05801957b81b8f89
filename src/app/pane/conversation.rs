//! The conversation part of a pane: what the agent said and did (the
//! transcript), where its turn stands, what it offers (capabilities,
//! models, slash commands, effort) and what it has cost so far. The runner's
//! events write it; the UI and the app's features read it.

use std::time::Instant;

use crate::app::transcript::Transcript;
use crate::config::AgentConfig;
use crate::event::Usage;
use crate::provider::Capabilities;
use crate::runner::TurnState;

pub struct Conversation {
    pub transcript: Transcript,
    pub state: TurnState,
    pub capabilities: Option<Capabilities>,
    /// The provider could not start: shown instead of a conversation.
    pub failed: Option<String>,
    pub model: Option<String>,
    /// Slash commands the agent offers (completion in the composer).
    pub commands: Vec<String>,
    /// Models the agent offers (the `/model` picker).
    pub models: Vec<String>,
    /// The effort level set with `/effort` (or configured).
    pub effort: Option<String>,
    /// Usage of every finished turn added up.
    pub usage: Usage,
    pub turns: u64,
    /// The running turn has had no output since then (runner's stall_after).
    pub stalled_since: Option<Instant>,
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
        }
    }

    pub fn is_busy(&self) -> bool {
        self.state.is_busy()
    }
}
