//! One pane as the server keeps it, and what clients and the control hub
//! are told of it.

use super::clients::ClientId;
use super::layout::Placed;
use super::log::PaneLog;
use crate::config::AgentConfig;
use crate::protocol::snapshot::{PaneCard, PaneSnapshot, Restored};
use crate::runner::{RunnerCommand, RunnerHandle, TurnState};
use crate::worktree::Worktree;

/// One pane as the server keeps it.
pub(super) struct Pane {
    /// The agent as placed (before a worktree moved its cwd), its window,
    /// whether it was made at runtime: what the layout saves.
    pub(super) placed: Placed,
    /// Closed at runtime: its slot stays (every other pane keeps its
    /// number), out of the layout and of every snapshot.
    pub(super) closed: bool,
    pub(super) agent: AgentConfig,
    /// A scripted agent's words (`PaneCard::try_words`), read once.
    pub(super) try_words: Vec<String>,
    pub(super) worktree: Option<Worktree>,
    pub(super) failed: Option<String>,
    pub(super) log: PaneLog,
    /// The composer text a client left in it.
    pub(super) draft: String,
    /// The client a reply (a recalled message, a terminal selection) is for.
    pub(super) reply_to: Option<ClientId>,
    /// What the runner was last told about the focus.
    pub(super) focused: bool,
    /// The last event (`seq`) a console saw of it: events after came while
    /// no console looked at it, and a console attaching shows them unread
    /// and in its inbox, as it would have live (#46 item 8).
    pub(super) seen: u64,
    /// The turn state last reported (`hive ls` counts running turns).
    pub(super) state: TurnState,
    /// Its worktree's setup runs; the agent starts when it is done, and
    /// what the user sent meanwhile waits here.
    pub(super) setting_up: bool,
    pub(super) waiting: Vec<RunnerCommand>,
}

impl Pane {
    pub(super) fn new(placed: Placed) -> Self {
        Self {
            agent: placed.agent.clone(),
            try_words: crate::provider::script::match_words(&placed.agent),
            placed,
            closed: false,
            worktree: None,
            failed: None,
            log: PaneLog::new(Restored::default()),
            draft: String::new(),
            reply_to: None,
            focused: false,
            seen: 0,
            state: TurnState::Idle,
            setting_up: false,
            waiting: Vec::new(),
        }
    }
}

/// How a pane's runner came up, for the control hub.
pub(super) fn started_of(
    (runner, pane): (&Option<RunnerHandle>, &Pane),
) -> crate::control::Started {
    match runner {
        Some(h) => crate::control::Started::Running(h.capabilities),
        None if pane.setting_up => crate::control::Started::SettingUp,
        None => crate::control::Started::Failed(pane.failed.clone().unwrap_or_default()),
    }
}

/// Pane `pane` for a client that has seen everything up to `seen`.
pub(super) fn pane_snapshot(pane: &Pane, seen: Option<u64>) -> PaneSnapshot {
    // `seen` goes with it: a console applies what came after as unread.
    PaneSnapshot {
        agent: PaneCard {
            try_words: pane.try_words.clone(),
            ..pane.agent.card()
        },
        worktree: pane.worktree.clone(),
        failed: pane.failed.clone(),
        restored: pane.log.restored().clone(),
        events: pane.log.events_since(seen),
        draft: pane.draft.clone(),
        window: pane.placed.window,
        parent: pane.placed.parent.clone(),
        host: None,
        seen,
    }
}
