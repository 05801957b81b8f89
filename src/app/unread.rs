//! "Since you looked": what a pane did while it was not focused. Runner
//! events for an unfocused pane are tallied here (new agent items, turns
//! finished, tools run with their durations, files changed, errors, the
//! last stop reason); the title shows the count and, when the pane is
//! focused again, the tally becomes the pane's one-line digest with a key
//! to jump to the first unread item.
//!
//! What counts as unread: an item of the agent (answer, thinking, tool
//! call) the first time it arrives or changes while unfocused, a failed
//! turn, and an error notice. The user's own messages, hive's system lines
//! and further updates of an item already counted do not.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use super::transcript::Transcript;
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::event::{Origin, ToolDisplay};
use crate::protocol::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind};
use serde_json::Value;

/// An MCP tool without its server prefix (`mcp__hive__hive_call` is
/// `hive_call`), as a digest names it.
fn short_tool_name(name: &str) -> &str {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map_or(name, |(_, tool)| tool)
}

/// A tool call that finished while the pane was not looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRun {
    pub name: String,
    /// From its first sight to its result (focused or not); `None` when
    /// it arrived done.
    pub took: Option<Duration>,
}

/// The tally for one pane since it was last focused.
#[derive(Debug, Default, Clone)]
pub struct Unread {
    /// Unread items (the title's count).
    pub count: usize,
    /// The transcript entry of the first unread item.
    pub first: Option<usize>,
    pub turns: usize,
    pub tools: Vec<ToolRun>,
    pub files: BTreeSet<String>,
    pub errors: usize,
    /// How the last turn ended (`end_turn`, `interrupted`, an error code).
    pub stop: Option<String>,
    counted: HashSet<String>,
    tool_done: HashSet<String>,
}

impl Unread {
    pub fn is_empty(&self) -> bool {
        self.count == 0 && self.turns == 0
    }

    /// An item arrived or changed; `entry` is where the transcript holds
    /// it, `took` how long a tool call ran when this is its result (the
    /// transcript times it: it may have started while the pane was looked at).
    pub fn item(&mut self, u: &Upsert, entry: usize, took: Option<Duration>) {
        let agent = match &u.kind {
            UpsertKind::Message { origin, .. } => *origin == Origin::Agent,
            UpsertKind::Thinking { .. } | UpsertKind::ToolCall { .. } => true,
        };
        if !agent {
            return;
        }
        // Live tails repeat an item many times: no allocation once counted.
        if !self.counted.contains(&u.item_id) {
            self.counted.insert(u.item_id.clone());
            self.mark(Some(entry));
        }
        let UpsertKind::ToolCall {
            tool_name,
            display,
            arguments,
            ..
        } = &u.kind
        else {
            return;
        };
        if u.is_closed() && !self.tool_done.contains(&u.item_id) {
            self.tool_done.insert(u.item_id.clone());
            self.tools.push(ToolRun {
                name: short_tool_name(tool_name).to_owned(),
                took,
            });
            self.files
                .extend(edited_files(display.as_deref(), arguments));
        }
    }

    /// A turn ended (or failed) while unfocused.
    pub fn turn(&mut self, t: &TurnEvent, transcript: &Transcript) {
        match t {
            TurnEvent::TurnComplete {
                status,
                finish_reason,
                ..
            } => {
                self.turns += 1;
                self.stop = Some(match (status, finish_reason) {
                    (TurnStatus::Cancelled, _) => "interrupted".into(),
                    (_, Some(r)) if !r.is_empty() => stop_words(r).into(),
                    _ => "completed".into(),
                });
            }
            TurnEvent::TurnError { error_code, .. } => {
                self.errors += 1;
                self.stop = Some(error_code.clone());
                self.mark(transcript.len().checked_sub(1));
            }
            TurnEvent::TurnStarted { .. } => {}
        }
    }

    /// A notice was added; errors count.
    pub fn notice(&mut self, level: DiagnosticLevel, transcript: &Transcript) {
        if level == DiagnosticLevel::Error {
            self.errors += 1;
            self.mark(transcript.len().checked_sub(1));
        }
    }

    fn mark(&mut self, entry: Option<usize>) {
        self.count += 1;
        if let Some(e) = entry {
            self.first = Some(self.first.map_or(e, |f| f.min(e)));
        }
    }

    /// The digest line's parts: "2 turns finished", "3 tools (Bash 1.2s, …)".
    pub fn parts(&self) -> Vec<String> {
        let mut out = Vec::new();
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        if self.turns > 0 {
            out.push(format!("{} finished", plural(self.turns, "turn", "turns")));
        }
        if !self.tools.is_empty() {
            let shown: Vec<String> = self
                .tools
                .iter()
                .take(3)
                .map(|t| match t.took {
                    Some(d) => format!("{} {:.1}s", t.name, d.as_secs_f64()),
                    None => t.name.clone(),
                })
                .collect();
            let more = self.tools.len().saturating_sub(3);
            let more = if more > 0 {
                format!(", +{more}")
            } else {
                String::new()
            };
            out.push(format!(
                "{} ({}{more})",
                plural(self.tools.len(), "tool", "tools"),
                shown.join(", ")
            ));
        }
        if !self.files.is_empty() {
            out.push(format!(
                "{} changed",
                plural(self.files.len(), "file", "files")
            ));
        }
        if self.errors > 0 {
            out.push(plural(self.errors, "error", "errors"));
        }
        if let Some(s) = &self.stop {
            out.push(format!("stop: {s}"));
        }
        if out.is_empty() {
            out.push(plural(self.count, "new item", "new items"));
        }
        out
    }
}

/// A finish reason as the digest says it: the vendors' words for a normal
/// end (openai's `stop`, Claude's `end_turn`, Gemini's `STOP`) read
/// "completed", a cut-off answer "max tokens"; others as given.
fn stop_words(reason: &str) -> &str {
    match reason {
        "stop" | "end_turn" | "STOP" | "completed" | "success" => "completed",
        "length" | "max_tokens" | "MAX_TOKENS" => "max tokens",
        other => other,
    }
}

/// The files an editing call changes: a patch's `+++`/`*** … File:` headers,
/// else the paths of Codex's `apply_patch` (`changes[].path`: its call
/// carries no diff), else the call's summary (the path, for replace and
/// write calls).
pub(crate) fn edited_files(d: Option<&ToolDisplay>, arguments: &Value) -> Vec<String> {
    let changes = arguments.get("changes").and_then(Value::as_array);
    let codex: Vec<String> = changes
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("path").and_then(Value::as_str))
        .filter(|p| !p.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let Some(diff) = d.and_then(|d| d.diff.as_ref()) else {
        return codex;
    };
    let mut files: Vec<String> = diff
        .lines()
        .filter_map(|l| {
            let path = l
                .strip_prefix("+++ ")
                .or_else(|| l.strip_prefix("*** Update File: "))
                .or_else(|| l.strip_prefix("*** Add File: "))
                .or_else(|| l.strip_prefix("*** Delete File: "))?;
            let path = path.trim();
            let path = path.strip_prefix("b/").unwrap_or(path);
            (path != "/dev/null" && !path.is_empty()).then(|| path.to_owned())
        })
        .collect();
    if files.is_empty() {
        files = codex;
    }
    if let Some(d) = d
        && files.is_empty()
        && !d.summary.trim().is_empty()
    {
        files.push(d.summary.trim().to_owned());
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn display(summary: &str, diff: &str) -> ToolDisplay {
        ToolDisplay {
            summary: summary.into(),
            diff: Some(diff.into()),
        }
    }

    /// openai's digest said "stop: stop" (#34 item 13).
    #[test]
    fn a_normal_end_reads_completed_whatever_the_vendor_calls_it() {
        let ended = |reason: &str| {
            let mut u = Unread::default();
            let t = crate::protocol::upsert::TurnEvent::TurnComplete {
                turn_id: "t".into(),
                session_id: "s".into(),
                status: crate::protocol::upsert::TurnStatus::Completed,
                usage: None,
                finish_reason: Some(reason.into()),
            };
            u.turn(&t, &crate::app::transcript::Transcript::default());
            u.parts().join(" · ")
        };
        assert!(
            ended("stop").ends_with("stop: completed"),
            "{}",
            ended("stop")
        );
        assert!(ended("end_turn").ends_with("stop: completed"));
        assert!(ended("length").ends_with("stop: max tokens"));
        assert!(ended("content_filter").ends_with("stop: content_filter"));
    }

    #[test]
    fn edited_files_come_from_patch_headers_or_the_summary() {
        let none = Value::Null;
        let d = display("patch", "--- a/x.rs\n+++ b/x.rs\n@@\n+1\n+++ b/y.rs");
        assert_eq!(edited_files(Some(&d), &none), ["x.rs", "y.rs"]);
        let d = display("", "*** Begin Patch\n*** Update File: src/a.rs\n+x");
        assert_eq!(edited_files(Some(&d), &none), ["src/a.rs"]);
        let d = display("src/b.rs", "-a\n+b");
        assert_eq!(edited_files(Some(&d), &none), ["src/b.rs"]);
        let read = ToolDisplay {
            summary: "src/c.rs".into(),
            diff: None,
        };
        assert!(edited_files(Some(&read), &none).is_empty());
        let codex = serde_json::json!({"changes": [{"path": "a.rs"}, {"path": "b.rs"}]});
        let d = ToolDisplay {
            summary: "a.rs, b.rs".into(),
            diff: None,
        };
        assert_eq!(edited_files(Some(&d), &codex), ["a.rs", "b.rs"]);
    }
}
