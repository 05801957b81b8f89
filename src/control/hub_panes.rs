//! The hub's side of a pane closed at runtime (issue 32): whoever waited on
//! it through `hive ctl` is told it was closed. (Its record stays in the
//! registry, closed, so every other pane keeps its slot.)

use super::{CtlError, ErrorCode, Hub};
use crate::panes::PaneRecord;

impl Hub {
    /// Pane `slot` (its record `p`) was closed: sends still waiting for a
    /// turn and waits on its running turn end with an error.
    pub(crate) fn close(&mut self, slot: usize, p: &PaneRecord) {
        let id = p.id();
        let closed = || {
            CtlError::new(
                ErrorCode::SessionNotFound,
                format!("pane `{id}` was closed"),
            )
        };
        for reply in self.sends_of(slot).take(|_| true) {
            let _ = reply.send(Err(closed()));
        }
        if let Some(turn) = &p.live.turn {
            for reply in self.waiters.remove(turn).unwrap_or_default() {
                let _ = reply.send(Err(closed()));
            }
        }
    }
}
