//! The audit log of approvals (issue 47): every decision on a request —
//! by a rule or preset before any card, or by whoever answered the card —
//! appended as one JSON line to `approvals.jsonl` in the project's state
//! dir (0600, never through a symlink). Several runners append to one
//! file: each line is one `write` on an `O_APPEND` file, so lines do not
//! interleave.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// One decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// RFC 3339, UTC.
    pub at: String,
    /// The pane's agent id.
    pub pane: String,
    /// Its provider (`claude`, `codex`, `acp`, …).
    pub vendor: String,
    pub request_id: String,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// `allow`, `deny`, `ask` (a card shown), `confirm` (a destructive
    /// request's second card shown), `allow_always`.
    pub decision: String,
    /// Who decided: a rule's id, `preset:NAME`, `destructive`, `timeout`,
    /// or who answered the card (`console`, `ctl`, `device:ID`,
    /// `agent:ID`, `headless`; `Decider::audit_name`).
    pub by: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// The log file of one project.
#[derive(Debug)]
pub struct Audit {
    path: PathBuf,
    lock: Mutex<()>,
}

impl Audit {
    pub fn at(path: PathBuf) -> Self {
        Self {
            path,
            lock: Mutex::new(()),
        }
    }

    /// `approvals.jsonl` in the state dir `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        Self::at(dir.join("approvals.jsonl"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry`; a failure is logged (a decision is never held up
    /// by its log).
    pub fn record(&self, entry: &Entry) {
        if let Err(e) = self.append(entry) {
            tracing::warn!(path = %self.path.display(), "approvals log: {e}");
        }
    }

    fn append(&self, entry: &Entry) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(dir) = self.path.parent() {
            crate::private::create_dir(dir)?;
        }
        let mut opts = crate::private::file_options();
        opts.append(true).create(true);
        let mut file = crate::private::open_own_file(&mut opts, &self.path)?;
        file.write_all(&line)
    }

    /// The last `n` entries (a torn or foreign line is skipped).
    pub fn last(&self, n: usize) -> Vec<Entry> {
        self.last_of(n, None)
    }

    /// The last `n` entries of pane `pane` (or of all).
    pub fn last_of(&self, n: usize, pane: Option<&str>) -> Vec<Entry> {
        let text = std::fs::read_to_string(&self.path).unwrap_or_default();
        let mut all: Vec<Entry> = text
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Entry>(l).ok())
            .filter(|e| pane.is_none_or(|p| e.pane == p))
            .take(n)
            .collect();
        all.reverse();
        all
    }
}
