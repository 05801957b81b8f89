//! How a finished Codex item reads as a tool call: the tool name and arguments
//! hive shows, and the text of its result.

use super::*;
use crate::event::ToolDisplay;
use crate::provider::display::{ToolKeys, describe_map};

pub(super) fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            let mut m = Map::new();
            m.insert("input".into(), other);
            m
        }
    }
}

/// Argument names of the tool calls hive builds from Codex items.
const TOOL_KEYS: ToolKeys = ToolKeys {
    summary: &["command", "query", "path", "grant_root"],
    replace: &[],
    write: &[],
    patch: &["diff"],
};

/// How a Codex tool call reads: a file change lists the paths it touches.
pub(crate) fn display(args: &Map<String, Value>) -> ToolDisplay {
    match args.get("changes").and_then(Value::as_array) {
        Some(changes) => ToolDisplay {
            summary: changes
                .iter()
                .filter_map(|c| c.get("path").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(", "),
            diff: None,
        },
        None => describe_map(args, &TOOL_KEYS),
    }
}

/// Tool name and arguments shown for a tool-like item.
pub(super) fn invocation(item: &Item) -> (String, Map<String, Value>) {
    match item {
        Item::Command { command, cwd, .. } => {
            let mut m = Map::new();
            m.insert("command".into(), command.clone().into());
            if let Some(c) = cwd {
                m.insert("cwd".into(), c.clone().into());
            }
            ("shell".into(), m)
        }
        Item::FileChange { changes, .. } => {
            let list: Vec<Value> = changes
                .iter()
                .map(|c| json!({"path": c.path, "kind": c.kind}))
                .collect();
            ("apply_patch".into(), object(json!({ "changes": list })))
        }
        Item::Mcp {
            server,
            tool,
            arguments,
            ..
        } => (format!("mcp__{server}__{tool}"), object(arguments.clone())),
        Item::WebSearch { query, action, .. } => {
            let mut m = Map::new();
            m.insert("query".into(), query.clone().into());
            if let Some(a) = action {
                m.insert("action".into(), a.clone());
            }
            ("web_search".into(), m)
        }
        Item::Other { kind, raw, .. } => {
            let mut m = raw.as_object().cloned().unwrap_or_default();
            m.remove("id");
            m.remove("type");
            (kind.clone(), m)
        }
        // Text items never come here; keep a readable fallback anyway.
        other => ("codex_item".into(), object(json!({ "id": other.id() }))),
    }
}

/// Output text and error flag of a completed tool-like item.
pub(super) fn result_text(item: &Item) -> (String, bool) {
    match item {
        Item::Command {
            output,
            exit_code,
            status,
            ..
        } => {
            let mut text = output.clone().unwrap_or_default();
            if *status == Status::Declined {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str("(declined)");
            }
            if let Some(code) = exit_code.filter(|c| *c != 0) {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!("[exit code {code}]"));
            }
            let failed = status.is_error() || exit_code.is_some_and(|c| c != 0);
            (text, failed)
        }
        Item::FileChange {
            changes, status, ..
        } => {
            let mut text = String::new();
            for c in changes {
                text.push_str(&format!("{} {}\n", c.kind, c.path));
                if let Some(d) = &c.diff {
                    text.push_str(d);
                    if !d.ends_with('\n') {
                        text.push('\n');
                    }
                }
            }
            match status {
                Status::Failed => text.push_str("(patch failed)"),
                Status::Declined => text.push_str("(declined)"),
                _ => {}
            }
            (text, status.is_error())
        }
        Item::Mcp {
            result,
            error,
            status,
            ..
        } => match error {
            Some(e) => (e.clone(), true),
            None => (
                result.as_ref().map(mcp_result_text).unwrap_or_default(),
                status.is_error(),
            ),
        },
        Item::WebSearch { query, action, .. } => {
            let detail = action
                .as_ref()
                .and_then(|a| {
                    a.get("url")
                        .and_then(Value::as_str)
                        .map(|u| format!("opened {u}"))
                })
                .unwrap_or_else(|| format!("searched: {query}"));
            (detail, false)
        }
        Item::Other { raw, .. } => {
            let mut m = raw.as_object().cloned().unwrap_or_default();
            m.remove("id");
            m.remove("type");
            let failed = m
                .get("status")
                .and_then(Value::as_str)
                .is_some_and(|s| s.eq_ignore_ascii_case("failed"));
            (Value::Object(m).to_string(), failed)
        }
        _ => (String::new(), false),
    }
}

/// MCP content blocks: text blocks as text, anything else as JSON.
pub(super) fn mcp_result_text(result: &Value) -> String {
    let blocks = result.get("content").and_then(Value::as_array);
    let mut parts = Vec::new();
    for b in blocks.into_iter().flatten() {
        match b.get("text").and_then(Value::as_str) {
            Some(t) => parts.push(t.to_owned()),
            None => parts.push(b.to_string()),
        }
    }
    if parts.is_empty()
        && let Some(s) = field(result, "structured_content")
    {
        parts.push(s.to_string());
    }
    parts.join("\n")
}
