//! A snapshot put back together from the messages that carry it (the
//! client's side of [`Snapshot::into_messages`]), within bounds.
//!
//! A console holds a snapshot whole before it shows it, so what it takes in
//! on the way is bounded here, not only by the server that sends it (issue
//! 53: a server on another machine is untrusted, and a start followed by
//! endless `SnapshotEvents` grew a console without end). The bounds are far
//! above what a hive server sends: its pane log keeps 32 MiB of item text
//! and a quarter (src/server/log.rs `KEEP_BYTES`) and its newest item
//! whatever its size, which crosses in at most one frame. A snapshot past
//! them is refused (the link ends, saying why) and what it held is dropped.

use super::ServerMsg;
use super::snapshot::Snapshot;

/// Frame bytes one pane of a snapshot may take: the pane log's bound
/// (40 MiB), a frame for its newest item and one for the pane's own
/// record (64 MiB each), and room to spare.
pub const MAX_PANE_BYTES: usize = 192 << 20;
/// Events one pane may carry: a log keeps 2,000 items and a quarter, a few
/// events each, and one slot per kind of state.
pub const MAX_PANE_EVENTS: usize = 65_536;
/// Panes one snapshot may hold.
pub const MAX_PANES: usize = 1024;
/// Frame bytes of a whole snapshot (ten panes at the log's bound are
/// 400 MiB).
pub const MAX_SNAPSHOT_BYTES: usize = 2 << 30;

/// A snapshot message out of its place, or past a bound: the stream cannot
/// be trusted.
#[derive(Debug, thiserror::Error)]
pub enum PartsError {
    /// An end with no start, events with no pane.
    #[error("a snapshot arrived out of order: {0}")]
    OutOfOrder(&'static str),
    /// More than a hive server sends.
    #[error("a snapshot with {what}, more than a hive server sends: refused")]
    TooLarge { what: String },
}

/// A snapshot being put back together, and what it holds so far.
#[derive(Debug, Default)]
pub struct Parts {
    building: Option<Snapshot>,
    /// Frame bytes taken for the snapshot being built, in all and for its
    /// last pane; that pane's events.
    total: usize,
    pane_bytes: usize,
    pane_events: usize,
}

impl Parts {
    /// Takes one snapshot message that came in `bytes` frame bytes; the
    /// snapshot once it is whole.
    pub fn take(&mut self, msg: ServerMsg, bytes: usize) -> Result<Option<Snapshot>, PartsError> {
        let result = self.put(msg, bytes);
        if result.is_err() {
            // Nothing of a refused snapshot is kept.
            *self = Self::default();
        }
        result
    }

    fn put(&mut self, msg: ServerMsg, bytes: usize) -> Result<Option<Snapshot>, PartsError> {
        match msg {
            ServerMsg::SnapshotStart {
                server,
                focus,
                away_since,
                panes,
            } => {
                if panes > MAX_PANES {
                    return Err(too_large(format!("{panes} panes (at most {MAX_PANES})")));
                }
                *self = Self {
                    building: Some(Snapshot {
                        server,
                        focus,
                        away_since,
                        panes: Vec::with_capacity(panes),
                    }),
                    total: bytes,
                    pane_bytes: 0,
                    pane_events: 0,
                };
            }
            ServerMsg::SnapshotPane(pane) => {
                let held = self.building.as_ref().map_or(0, |s| s.panes.len());
                if held >= MAX_PANES {
                    return Err(too_large(format!("over {MAX_PANES} panes")));
                }
                self.pane_bytes = 0;
                self.pane_events = 0;
                self.count(bytes, pane.events.len())?;
                self.building
                    .as_mut()
                    .ok_or(PartsError::OutOfOrder("a pane before the start"))?
                    .panes
                    .push(*pane);
            }
            ServerMsg::SnapshotEvents(events) => {
                self.count(bytes, events.len())?;
                self.building
                    .as_mut()
                    .and_then(|s| s.panes.last_mut())
                    .ok_or(PartsError::OutOfOrder("events before a pane"))?
                    .events
                    .extend(events);
            }
            ServerMsg::SnapshotEnd => {
                let whole = self
                    .building
                    .take()
                    .ok_or(PartsError::OutOfOrder("an end before the start"))?;
                *self = Self::default();
                return Ok(Some(whole));
            }
            _ => return Err(PartsError::OutOfOrder("not a snapshot message")),
        }
        Ok(None)
    }

    /// Counts a message of the last pane, refusing one past a bound before
    /// it is kept.
    fn count(&mut self, bytes: usize, events: usize) -> Result<(), PartsError> {
        self.total = self.total.saturating_add(bytes);
        self.pane_bytes = self.pane_bytes.saturating_add(bytes);
        self.pane_events = self.pane_events.saturating_add(events);
        if self.pane_bytes > MAX_PANE_BYTES {
            return Err(too_large(format!(
                "a pane of over {} MiB",
                MAX_PANE_BYTES >> 20
            )));
        }
        if self.pane_events > MAX_PANE_EVENTS {
            return Err(too_large(format!(
                "a pane of over {MAX_PANE_EVENTS} events"
            )));
        }
        if self.total > MAX_SNAPSHOT_BYTES {
            return Err(too_large(format!(
                "over {} MiB in all",
                MAX_SNAPSHOT_BYTES >> 20
            )));
        }
        Ok(())
    }

    /// Whether a snapshot is on its way.
    pub fn started(&self) -> bool {
        self.building.is_some()
    }

    /// Frame bytes the snapshot being built holds (what the bounds count).
    pub fn held(&self) -> usize {
        if self.building.is_some() {
            self.total
        } else {
            0
        }
    }
}

fn too_large(what: String) -> PartsError {
    PartsError::TooLarge { what }
}

#[cfg(test)]
#[path = "parts_tests.rs"]
mod tests;
