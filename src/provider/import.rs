//! The transcript formats `hive import` reads: one `Importer` per provider
//! that has one, registered here so history/ reaches them without knowing
//! any agent's transcript shape.

use serde_json::Value;

use super::{claude, codex, pi};
use crate::history::import::{Builder, Importer};

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
    /// The provider's importer.
    pub fn importer(self) -> &'static dyn Importer {
        match self {
            Format::Claude => &claude::import::Transcript,
            Format::Codex => &codex::import::Rollout,
            Format::Pi => &pi::import::Session,
        }
    }
}

impl Importer for Format {
    fn name(&self) -> &'static str {
        self.importer().name()
    }

    fn session_id(&self, text: &str) -> Option<String> {
        self.importer().session_id(text)
    }

    fn parse(&self, lines: &[Value], builder: &mut Builder) {
        self.importer().parse(lines, builder);
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

/// Text of a content value that is a string or a list of `{type, text}`
/// blocks, keeping the blocks of the given types.
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
