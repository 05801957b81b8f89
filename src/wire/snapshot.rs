//! A pane as the server holds it, for a client that attaches: what was
//! restored from history when the pane started, then the runner's events
//! since, compacted (one entry per item, the latest of each state), each
//! with when it happened and its sequence number.
//!
//! A client rebuilds its `App` from this exactly as it would have from the
//! live stream (`App::load_snapshot`); events newer than `away_since`
//! happened while no client was attached and count as unread.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::config::AgentConfig;
use crate::history::{OlderPage, PaneHistory, rebuild::TurnEnd, state::Totals};
use crate::runner::PaneEvent;
use crate::upsert::Upsert;
use crate::worktree::Worktree;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub server: ServerInfo,
    /// The pane the last client looked at (a new client starts there).
    pub focus: usize,
    /// Events with a larger `seq` happened while no client was attached.
    pub away_since: Option<u64>,
    pub panes: Vec<PaneSnapshot>,
}

/// What `hive ls` and the help show about a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub pid: u32,
    /// Where its config came from (`ConfigSource::describe`).
    pub config: String,
    /// Its config file (`None`: the built-in one); a client that attaches
    /// by name loads its keys and theme from there.
    pub config_path: Option<std::path::PathBuf>,
    /// Its socket (also its name: the file stem).
    pub socket: std::path::PathBuf,
    /// Seconds since the Unix epoch when it started.
    pub started: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaneSnapshot {
    /// The agent as the server runs it (its cwd in its worktree).
    pub agent: AgentConfig,
    pub worktree: Option<Worktree>,
    /// Why the pane could not start, when it could not.
    pub failed: Option<String>,
    pub restored: Restored,
    /// The runner's events since the pane started, compacted, in order.
    pub events: Vec<Logged>,
    /// The composer text a client left there.
    pub draft: String,
}

/// One runner event as the server logged it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Logged {
    pub seq: u64,
    /// When it happened (crosses as milliseconds ago).
    #[serde(with = "crate::runner::ago")]
    pub at: Option<Instant>,
    pub event: PaneEvent,
}

/// A pane's history as loaded when it started (`PaneHistory` without its
/// recorder, which stays with the runner).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Restored {
    pub items: Vec<Upsert>,
    pub ends: Vec<TurnEnd>,
    pub totals: Option<Totals>,
    pub model: Option<String>,
    pub queue: Vec<String>,
    pub warnings: Vec<String>,
    pub session: String,
    pub older: Option<OlderPage>,
}

impl Restored {
    /// Copies what a client needs out of a freshly opened history.
    pub fn of(history: &PaneHistory) -> Self {
        Self {
            items: history.items.clone(),
            ends: history.ends.clone(),
            totals: history.totals.clone(),
            model: history.model.clone(),
            queue: history.queue.clone(),
            warnings: history.warnings.clone(),
            session: history.session.clone(),
            older: history.older.clone(),
        }
    }

    /// Back into the shape `App::restore` takes.
    pub fn into_history(self) -> PaneHistory {
        PaneHistory {
            items: self.items,
            ends: self.ends,
            totals: self.totals,
            model: self.model,
            resume: None,
            queue: self.queue,
            recorder: None,
            warnings: self.warnings,
            session: self.session,
            older: self.older,
        }
    }
}
