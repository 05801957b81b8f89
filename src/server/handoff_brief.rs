//! The brief `/handoff` sends (issue 33 item 5, issue 50): who handed off,
//! where the work is now for the one who continues, every message the user
//! sent, the files its tools touched, its last answer, what was still
//! queued. Built by the server from the source pane's finished items (its
//! restored history and its logged events), so every door hands off the
//! same way and a turn still running adds nothing half-written. Plain text
//! any agent reads.

use serde_json::Value;

use crate::protocol::event::Origin;
use crate::protocol::upsert::{Upsert, UpsertKind};

/// The last answer is cut to this many characters.
const ANSWER_CHARS: usize = 4000;
/// A user message is cut to this many characters.
const MESSAGE_CHARS: usize = 1500;

/// What the brief says of the source and of where the work is.
pub(super) struct Source<'a> {
    pub(super) name: &'a str,
    pub(super) provider: &'a str,
    pub(super) model: Option<&'a str>,
    /// Where the target works now, as it should read it.
    pub(super) place: String,
    /// Messages queued at the source, not yet sent.
    pub(super) queued: &'a [String],
}

/// The brief from `items`, the source's finished items in order (an item
/// seen twice, by its id: the later one).
pub(super) fn brief<'a>(src: &Source<'_>, items: impl IntoIterator<Item = &'a Upsert>) -> String {
    let mut asked = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut answer = None;
    let mut seen = std::collections::HashSet::new();
    let items: Vec<&Upsert> = items.into_iter().filter(|u| u.is_final()).collect();
    // Later copies of an item win: walk from the end, keep the first.
    let mut latest: Vec<&Upsert> = items
        .iter()
        .rev()
        .filter(|u| seen.insert(u.item_id.as_str()))
        .copied()
        .collect();
    latest.reverse();
    for u in latest {
        match &u.kind {
            UpsertKind::Message { content, origin } => match origin {
                Origin::User => asked.push(content.to_string()),
                Origin::Agent => answer = Some(content.to_string()),
                Origin::System => {}
            },
            UpsertKind::ToolCall { arguments, .. } => {
                for f in touched(arguments) {
                    if !files.contains(&f) {
                        files.push(f);
                    }
                }
            }
            _ => {}
        }
    }
    let model = src.model.unwrap_or("its model");
    let mut out = format!(
        "Hand-off from {} ({}, {model}): continue this task where it stopped.\n\n{}\n",
        src.name, src.provider, src.place
    );
    out.push_str("\nThe user asked, in order:\n");
    if asked.is_empty() {
        out.push_str("(nothing yet)\n");
    }
    for (i, m) in asked.iter().enumerate() {
        out.push_str(&format!("{}. {}\n", i + 1, cut(m, MESSAGE_CHARS)));
    }
    if !files.is_empty() {
        out.push_str("\nFiles its tools touched:\n");
        for f in &files {
            out.push_str(&format!("- {f}\n"));
        }
    }
    if let Some(a) = answer {
        out.push_str(&format!("\nIts last answer:\n{}\n", cut(&a, ANSWER_CHARS)));
    }
    if !src.queued.is_empty() {
        out.push_str("\nStill queued there, not yet sent:\n");
        for (i, m) in src.queued.iter().enumerate() {
            out.push_str(&format!("{}. {}\n", i + 1, cut(m, MESSAGE_CHARS)));
        }
    }
    out
}

/// The paths a tool call names (`file_path`, `path`, `filePath`,
/// `notebook_path`, Codex's `changes[].path`).
fn touched(arguments: &Value) -> Vec<String> {
    let Value::Object(map) = arguments else {
        return Vec::new();
    };
    let mut out: Vec<String> = ["file_path", "path", "filePath", "notebook_path"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    if let Some(Value::Array(changes)) = map.get("changes") {
        out.extend(
            changes
                .iter()
                .filter_map(|c| c.get("path").and_then(Value::as_str))
                .map(str::to_owned),
        );
    }
    out
}

/// `text` cut to `max` characters, saying so.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}… (cut)", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::upsert::UpsertStatus;

    fn item(id: &str, status: UpsertStatus, kind: UpsertKind) -> Upsert {
        Upsert {
            turn_id: "t1".into(),
            session_id: "s".into(),
            item_id: id.into(),
            source_timestamp: chrono::Utc::now(),
            emitted_at: chrono::Utc::now(),
            status,
            error_code: None,
            error_message: None,
            kind,
        }
    }

    fn message(id: &str, status: UpsertStatus, origin: Origin, text: &str) -> Upsert {
        item(
            id,
            status,
            UpsertKind::Message {
                content: text.into(),
                origin,
            },
        )
    }

    /// Only what finished reaches the brief: an answer still streaming is
    /// not "its last answer"; an item's later copy replaces the earlier.
    #[test]
    fn the_brief_holds_finished_items_only() {
        let items = vec![
            message(
                "u1",
                UpsertStatus::Complete,
                Origin::User,
                "port the parser",
            ),
            item(
                "c1",
                UpsertStatus::Complete,
                UpsertKind::ToolCall {
                    tool_name: "Edit".into(),
                    arguments: serde_json::json!({"file_path": "src/parse.rs"}),
                    call_id: "c1".into(),
                    output: None,
                    output_is_error: None,
                    display: None,
                },
            ),
            message("a1", UpsertStatus::Complete, Origin::Agent, "lexer done"),
            message(
                "a1",
                UpsertStatus::Complete,
                Origin::Agent,
                "lexer done, grammar next",
            ),
            message("a2", UpsertStatus::Update, Origin::Agent, "half a line"),
        ];
        let src = Source {
            name: "Claude",
            provider: "claude",
            model: Some("opus"),
            place: "You work in /w (branch hive/x).".into(),
            queued: &["then the tests".into()],
        };
        let b = brief(&src, &items);
        assert!(b.starts_with("Hand-off from Claude (claude, opus)"), "{b}");
        assert!(b.contains("You work in /w (branch hive/x)."), "{b}");
        assert!(b.contains("1. port the parser\n"), "{b}");
        assert!(b.contains("- src/parse.rs\n"), "{b}");
        assert!(
            b.contains("Its last answer:\nlexer done, grammar next\n"),
            "{b}"
        );
        assert!(!b.contains("half a line"), "{b}");
        assert!(
            b.contains("Still queued there, not yet sent:\n1. then the tests"),
            "{b}"
        );
    }
}
