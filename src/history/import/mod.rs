//! Backfill (seed 000): converts an agent's own transcript into the canonical
//! store once. Each format has its parser; all of them feed the same
//! `TurnAssembler` the live recorder uses, so an imported session looks exactly
//! like a recorded one. The imported session's id derives from the agent's own
//! session id, so importing the same transcript again finds it and does nothing.

mod claude;
mod codex;
mod pi;

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::assemble::TurnAssembler;
use super::record::{Block, Record, Role};
use super::state::{PaneState, write_atomic};
use super::store::{Store, StoreError, safe_name};

/// Transcript formats hive reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Claude Code session JSONL (`~/.claude/projects/<dir>/<session>.jsonl`);
    /// stream-json output works too.
    Claude,
    /// Codex rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
    /// pi session JSONL (`~/.pi/agent/sessions/<dir>/*.jsonl`).
    Pi,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Claude => "claude",
            Format::Codex => "codex",
            Format::Pi => "pi",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no conversation found (is this a {format} transcript?)")]
    Empty { path: String, format: &'static str },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What an import did.
#[derive(Debug)]
pub struct ImportReport {
    pub session: String,
    pub path: PathBuf,
    /// The agent's own session id (usable as a resume handle).
    pub native_session: Option<String>,
    pub records: usize,
    /// Lines that were not JSON (skipped).
    pub skipped_lines: usize,
    /// The transcript had been imported before; nothing was written.
    pub already_imported: bool,
}

/// A parsed transcript, ready to become records.
pub(crate) struct Parsed {
    pub native_session: Option<String>,
    pub builder: Builder,
    pub skipped_lines: usize,
}

/// Turns of a transcript being rebuilt.
pub(crate) struct Builder {
    agent: String,
    session: String,
    turns: Vec<(Option<Record>, TurnAssembler)>,
}

impl Builder {
    pub fn new(agent: &str, session: &str) -> Self {
        Self {
            agent: agent.to_owned(),
            session: session.to_owned(),
            turns: Vec::new(),
        }
    }

    fn turn_id(&self) -> String {
        format!("{}-t{}", self.session, self.turns.len() + 1)
    }

    /// A user message starts a turn.
    pub fn user(&mut self, text: &str, ts: i64) {
        let turn_id = self.turn_id();
        let mut r = Record::new(&self.agent, &self.session, ts, Role::User);
        r.turn_id = Some(turn_id.clone());
        r.content = vec![Block::Text {
            text: text.to_owned(),
        }];
        let asm = TurnAssembler::new(&self.agent, &self.session, Some(turn_id), ts);
        self.turns.push((Some(r), asm));
    }

    /// The turn being filled (one without a user message if the transcript
    /// starts with the agent).
    pub fn turn(&mut self, ts: i64) -> &mut TurnAssembler {
        if self.turns.is_empty() {
            let turn_id = self.turn_id();
            let asm = TurnAssembler::new(&self.agent, &self.session, Some(turn_id), ts);
            self.turns.push((None, asm));
        }
        let last = self.turns.len() - 1;
        &mut self.turns[last].1
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    pub fn records(self) -> Vec<Record> {
        let mut out = Vec::new();
        for (user, asm) in self.turns {
            out.extend(user);
            out.extend(asm.finish());
        }
        out
    }
}

/// RFC 3339 text or epoch milliseconds → milliseconds.
pub(crate) fn ts_of(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.timestamp_millis()),
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

/// Text of a content value that is a string or a list of `{type, text}` blocks.
pub(crate) fn content_text(v: Option<&Value>, types: &[&str]) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let parts: Vec<&str> = blocks
                .iter()
                .filter(|b| {
                    b.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| types.contains(&t))
                })
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            parts.join("\n")
        }
        _ => String::new(),
    }
}

/// Lines of a JSONL file as JSON values; counts the lines that are not.
pub(crate) fn json_lines(text: &str) -> (Vec<Value>, usize) {
    let mut skipped = 0;
    let values = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| match serde_json::from_str::<Value>(l) {
            Ok(v) => Some(v),
            Err(_) => {
                skipped += 1;
                None
            }
        })
        .collect();
    (values, skipped)
}

/// Imports `path` for `agent`. With `activate`, the agent's pane continues the
/// imported session next time, resuming the agent's own session id.
pub fn import(
    store: &Store,
    format: Format,
    path: &Path,
    agent: &str,
    activate: bool,
) -> Result<ImportReport, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.display().to_string(),
        source,
    })?;
    // The session id must not depend on the parse, only on the transcript's
    // identity, so it is computed first and the parser fills it in.
    let native = match format {
        Format::Claude => claude::session_id(&text),
        Format::Codex => codex::session_id(&text),
        Format::Pi => pi::session_id(&text),
    }
    .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()));
    let session = format!(
        "import-{}-{}",
        format.name(),
        safe_name(native.as_deref().unwrap_or("unknown"))
    );
    let target = store.session_path(agent, &session);
    let mut report = ImportReport {
        session: session.clone(),
        path: target.clone(),
        native_session: native.clone(),
        records: 0,
        skipped_lines: 0,
        already_imported: target.exists(),
    };
    if !report.already_imported {
        let builder = Builder::new(agent, &session);
        let parsed = match format {
            Format::Claude => claude::parse(&text, builder),
            Format::Codex => codex::parse(&text, builder),
            Format::Pi => pi::parse(&text, builder),
        };
        if parsed.builder.is_empty() {
            return Err(ImportError::Empty {
                path: path.display().to_string(),
                format: format.name(),
            });
        }
        report.skipped_lines = parsed.skipped_lines;
        let records = parsed.builder.records();
        report.records = records.len();
        let mut body = String::new();
        for r in &records {
            body.push_str(&r.to_line());
        }
        write_atomic(&target, body.as_bytes())?;
        report.native_session = parsed.native_session.or(native);
    }
    if activate {
        let state_path = store.state_path(agent);
        let old = PaneState::load(&state_path)
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut state = PaneState {
            agent_id: agent.to_owned(),
            session,
            resume: report.native_session.clone(),
            queue: old.queue,
            provider: Some(format.name().to_owned()),
            ..PaneState::default()
        };
        state.save(&state_path)?;
    }
    Ok(report)
}
