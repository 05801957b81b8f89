//! The server's part of a pane's slot (beside the record every door reads,
//! src/panes/), and what a console is told of it.

use super::clients::ClientId;
use super::layout::Placed;
use super::log::PaneLog;
use crate::config::AgentConfig;
use crate::panes::{PaneRecord, Slot, Started};
use crate::protocol::snapshot::{PaneCard, PaneSnapshot, Restored};
use crate::runner::RunnerCommand;
use crate::worktree::Worktree;

/// The server's part of one pane (its agent, whether it is closed, how its
/// runner came up and its state are the slot's record).
pub(super) struct Pane {
    /// The agent as placed (before a worktree moved its cwd), its window,
    /// whether it was made at runtime: what the layout saves (its `parent`
    /// is always `None` here: the record holds it, `Pane::slot`).
    pub(super) placed: Placed,
    /// A scripted agent's words (`PaneCard::try_words`), read once.
    pub(super) try_words: Vec<String>,
    pub(super) worktree: Option<Worktree>,
    pub(super) log: PaneLog,
    /// The composer text a client left in it.
    pub(super) draft: String,
    /// The client a reply (a recalled message, a terminal selection) is for.
    pub(super) reply_to: Option<ClientId>,
    /// What the runner was last told about the focus.
    pub(super) focused: bool,
    /// What the user sent while its worktree's setup ran (the record's
    /// `Started::SettingUp`): sent when the agent starts.
    pub(super) waiting: Vec<RunnerCommand>,
}

/// A pane's slot as the server keeps it: its record and the server's part.
pub(super) type PaneSlot = Slot<Pane>;

impl Pane {
    /// A slot for `placed`, running `agent` (its cwd moved to a worktree).
    /// The parent moves to the record, which every door reads: one copy.
    pub(super) fn slot(mut placed: Placed, agent: AgentConfig) -> (PaneRecord, Self) {
        let mut record = PaneRecord::new(agent, Started::Starting);
        record.parent = placed.parent.take();
        (record, Self::new(placed))
    }

    fn new(placed: Placed) -> Self {
        Self {
            try_words: crate::provider::script::match_words(&placed.agent),
            placed,
            worktree: None,
            log: PaneLog::new(Restored::default()),
            draft: String::new(),
            reply_to: None,
            focused: false,
            waiting: Vec::new(),
        }
    }
}

/// Pane `pane` for a client that has seen everything up to `seen`.
pub(super) fn pane_snapshot(pane: &PaneSlot, seen: Option<u64>) -> PaneSnapshot {
    // `seen` goes with it: a console applies what came after as unread.
    PaneSnapshot {
        agent: PaneCard {
            try_words: pane.try_words.clone(),
            ..pane.record.agent.card()
        },
        worktree: pane.worktree.clone(),
        failed: pane.record.failed().map(str::to_owned),
        restored: pane.log.restored().clone(),
        events: pane.log.events_since(seen),
        draft: pane.draft.clone(),
        window: pane.placed.window,
        parent: pane.record.parent.clone(),
        host: None,
        seen,
        dismissed: Vec::new(),
    }
}
