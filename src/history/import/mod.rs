//! Backfill (seed 000): converts an agent's own transcript into the canonical
//! store once. This is the provider-neutral half of `hive import`: reading the
//! file, naming the session, writing its records and the pane state. The
//! agent's transcript shape is known only to that agent's `Importer`, which
//! lives with its provider (`provider/<name>/import.rs`) and feeds the same
//! `TurnAssembler` the live recorder uses, so an imported session looks exactly
//! like a recorded one. The imported session's id derives from the agent's own
//! session id, so importing the same transcript again finds it and does nothing.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::assemble::TurnAssembler;
use super::record::{Block, Record, Role};
use super::state::{PaneState, write_atomic};
use super::store::{Store, StoreError, safe_name};

/// One agent's transcript reader, implemented by its provider module.
pub trait Importer {
    /// The format's name: `hive import <name>`, the imported session's prefix
    /// and the provider the activated pane runs.
    fn name(&self) -> &'static str;
    /// The agent's own session id (the resume handle), read from the raw text
    /// before anything is parsed: the imported session's id depends on it alone.
    fn session_id(&self, text: &str) -> Option<String>;
    /// Rebuilds the conversation of a transcript's JSON lines into `builder`.
    fn parse(&self, lines: &[Value], builder: &mut Builder);
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
    pub(crate) native_session: Option<String>,
    pub records: usize,
    /// Lines that were not JSON (skipped).
    pub skipped_lines: usize,
    /// The transcript had been imported before; nothing was written.
    pub already_imported: bool,
}

/// Turns of a transcript being rebuilt.
pub struct Builder {
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

/// Lines of a JSONL file as JSON values; counts the lines that are not.
fn json_lines(text: &str) -> (Vec<Value>, usize) {
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
    importer: impl Importer,
    path: &Path,
    agent: &str,
    activate: bool,
) -> Result<ImportReport, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.display().to_string(),
        source,
    })?;
    // The session id must not depend on the parse, only on the transcript's
    // identity, so it is read before the parse.
    let native = importer
        .session_id(&text)
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()));
    let session = format!(
        "import-{}-{}",
        importer.name(),
        safe_name(native.as_deref().unwrap_or("unknown"))
    );
    let target = store.session_path(agent, &session);
    let mut report = ImportReport {
        session: session.clone(),
        path: target.clone(),
        native_session: native,
        records: 0,
        skipped_lines: 0,
        already_imported: target.exists(),
    };
    if !report.already_imported {
        let (lines, skipped_lines) = json_lines(&text);
        let mut builder = Builder::new(agent, &session);
        importer.parse(&lines, &mut builder);
        if builder.is_empty() {
            return Err(ImportError::Empty {
                path: path.display().to_string(),
                format: importer.name(),
            });
        }
        report.skipped_lines = skipped_lines;
        let records = builder.records();
        report.records = records.len();
        let mut body = String::new();
        for r in &records {
            body.push_str(&r.to_line());
        }
        write_atomic(&target, body.as_bytes())?;
    }
    if activate {
        let state_path = store.state_path(agent);
        let old = PaneState::load(&state_path)
            .ok()
            .flatten()
            .unwrap_or_default();
        // The session left behind stays available to `/resume`.
        let mut state = PaneState {
            agent_id: agent.to_owned(),
            session: old.session,
            resume: old.resume,
            resume_key: old.resume_key,
            past: old.past,
            queue: old.queue,
            provider: Some(importer.name().to_owned()),
            ..PaneState::default()
        };
        state.switch_to(&session, report.native_session.clone());
        state.resume_key = None;
        state.save(&state_path)?;
    }
    Ok(report)
}
