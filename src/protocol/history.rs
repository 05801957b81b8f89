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

/// A fresh history session id: sortable by creation time, unique.
pub fn new_session_id() -> String {
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    format!(
        "{}-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S"),
        &uuid[..8]
    )
}

/// First line of a prompt, at most `max` characters (for one-line lists).
pub fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut out: String = first.trim().chars().take(max).collect();
    if first.trim().chars().count() > max || text.trim().lines().count() > 1 {
        out.push('…');
    }
    out
}
