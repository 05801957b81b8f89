//! Growing text sent as what was appended (filled in by the wire work).

use serde::{Deserialize, Serialize};

use crate::runner::PaneEvent;

/// A `PaneEvent` as it crosses the socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WireEvent {
    Whole(PaneEvent),
}
