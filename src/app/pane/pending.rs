//! The pending part of a pane: what waits for a turn or for the user.
//! Messages queued while the agent was busy (the runner owns the queue and
//! sends each change; this is its last copy, with the selection of the
//! queue-management mode) and the approval cards the agent asked.

use std::collections::VecDeque;

use crate::protocol::agent::PermissionRequest;

#[derive(Default)]
pub struct Pending {
    /// Messages waiting for the next turn, as the runner last sent them.
    pub(crate) queue: Vec<String>,
    /// The queue came back from a previous run and waits for the user.
    pub(crate) restored: bool,
    /// Queue management mode: the selected entry.
    pub selected: Option<usize>,
    /// Approval cards, oldest (the one shown) first.
    pub permissions: VecDeque<PermissionRequest>,
}

impl Pending {
    /// An approval card waits for the user.
    pub fn asks(&self) -> bool {
        !self.permissions.is_empty()
    }
}
