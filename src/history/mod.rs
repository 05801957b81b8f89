//! Canonical history store (DESIGN §6, issue #5 builds it out).
//!
//! Seam used by the console and `hive run`: `open_pane` returns what a pane
//! needs to come back after a restart (its transcript, the agent's resume
//! handle, messages still queued) and the recorder that keeps it up to date.

use crate::config::AgentConfig;
use crate::runner::Recorder;
use crate::upsert::Upsert;

/// What a pane restores on start.
#[derive(Default)]
pub struct PaneHistory {
    /// Completed items of earlier turns, oldest first, ready to render.
    pub items: Vec<Upsert>,
    /// The agent's own session handle to resume, unless `fresh`.
    pub resume: Option<String>,
    /// Messages queued but never sent; offered again, not auto-sent.
    pub queue: Vec<String>,
    /// Records this pane's events from now on.
    pub recorder: Option<Box<dyn Recorder>>,
    /// Problems met while loading (torn lines skipped…), for the user to see.
    pub warnings: Vec<String>,
}

/// Opens the history of `agent` (a new session when `fresh`).
pub fn open_pane(agent: &AgentConfig, fresh: bool) -> PaneHistory {
    let _ = (agent, fresh);
    PaneHistory::default()
}
