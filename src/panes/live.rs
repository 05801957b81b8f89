//! A pane's state, queue, turn and approvals as its runner's updates tell
//! them: read alike by consoles' lists, `hive ctl` and agents' operations.

use crate::protocol::agent::PermissionRequest;
use crate::protocol::pane::{PaneEvent, TurnState};
use crate::protocol::upsert::TurnEvent;

/// A pane as its updates tell it.
#[derive(Debug, Clone)]
pub struct Live {
    pub state: TurnState,
    pub queue: Vec<String>,
    /// The running turn.
    pub turn: Option<String>,
    /// Turns ended since start (restored ones included).
    pub turns: u64,
    /// Approvals the agent waits for, oldest first, until answered (by any
    /// door) or the turn ends.
    pub approvals: Vec<PermissionRequest>,
}

impl Default for Live {
    fn default() -> Self {
        Self {
            state: TurnState::Idle,
            queue: Vec::new(),
            turn: None,
            turns: 0,
            approvals: Vec::new(),
        }
    }
}

impl Live {
    /// Waiting for an approval: the runner's state says streaming, but
    /// nothing moves until someone answers.
    pub fn awaiting_approval(&self) -> bool {
        !self.approvals.is_empty() && self.state.is_busy()
    }

    /// The approval `id` asks for, or the oldest one.
    pub fn approval(&self, id: Option<&str>) -> Option<&PermissionRequest> {
        match id {
            Some(id) => self.approvals.iter().find(|r| r.request_id == id),
            None => self.approvals.first(),
        }
    }

    /// The running turn, while the pane is busy with it.
    pub fn busy_turn(&self) -> Option<&str> {
        self.turn.as_deref().filter(|_| self.state.is_busy())
    }

    pub(super) fn observe(&mut self, event: &PaneEvent) {
        match event {
            PaneEvent::State(s) => {
                self.state = *s;
                if *s == TurnState::Dead {
                    self.approvals.clear();
                }
            }
            PaneEvent::Permission(req) => self.approvals.push(req.clone()),
            PaneEvent::PermissionSettled { request_id } => {
                self.approvals.retain(|r| r.request_id != *request_id);
            }
            PaneEvent::Queue(q) => self.queue.clone_from(q),
            PaneEvent::Turn(TurnEvent::TurnStarted { turn_id, .. }) => {
                self.turn = Some(turn_id.clone());
            }
            PaneEvent::Turn(t) => {
                if self.turn.as_deref() == Some(t.turn_id()) {
                    self.turn = None;
                }
                // An approval cannot outlive its turn.
                self.approvals.clear();
                self.turns += 1;
            }
            _ => {}
        }
    }
}
