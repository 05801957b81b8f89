//! What a console is shown of a pane's stored history: how restored turns
//! ended, the session's totals, where older records begin, and the past
//! sessions `/resume` lists. The store (src/history/) reads and writes them.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::protocol::event::Usage;

/// How a restored turn ended, placed after `after` items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEnd {
    /// Items before this end (its position among the builder's items).
    pub after: usize,
    pub turn_id: String,
    pub model: Option<String>,
    pub duration: Option<Duration>,
    pub usage: Option<Usage>,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Completed,
    Cancelled,
    Failed { code: String, message: String },
}

/// A session's running totals (the pane's status line after a restart).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub usage: Usage,
    pub turns: u64,
}

/// Where the loaded window of a session file begins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OlderPage {
    pub path: PathBuf,
    /// Byte offset of the oldest record already loaded.
    pub before: u64,
}

/// One past session as the picker lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub session: String,
    /// Its file (never sent to a console: a path of the server's machine).
    #[serde(skip)]
    pub path: PathBuf,
    /// Milliseconds since the epoch of the first record (else the file's
    /// modification time).
    pub started: Option<i64>,
    /// Milliseconds since the epoch of the last change.
    pub updated: Option<i64>,
    pub first_prompt: String,
    pub turns: usize,
    pub model: Option<String>,
}
