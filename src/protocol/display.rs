//! Tool display hints: each provider knows its tools' argument names and
//! turns a call's arguments into a `ToolDisplay` (a one-line summary, and a
//! diff where the tool edits a file). The UI only draws what this decides.

use serde_json::{Map, Value};

use crate::protocol::event::{FinalItem, ToolDisplay};

/// Which argument names a provider's tools use.
#[derive(Debug, Clone, Copy)]
pub struct ToolKeys {
    /// Tried in order for the summary line; the first string (or array of
    /// strings) wins. With none, the first string argument is used.
    pub summary: &'static [&'static str],
    /// `(old, new)` of a replace-style edit.
    pub replace: &'static [(&'static str, &'static str)],
    /// The whole new content of a write-style call.
    pub write: &'static [&'static str],
    /// A ready-made diff or patch.
    pub patch: &'static [&'static str],
}

/// The names most coding agents share (Claude Code's tools, Gemini CLI's —
/// `absolute_path`, `dir_path` —, the scripted demo's); providers with other
/// names pass their own `ToolKeys`.
pub const COMMON: ToolKeys = ToolKeys {
    summary: &[
        "command",
        "cmd",
        "file_path",
        "absolute_path",
        "dir_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
    ],
    replace: &[("old_string", "new_string")],
    write: &["content"],
    patch: &["diff", "patch"],
};

/// A finalized tool call carrying its display hint.
pub fn function_call(
    name: impl Into<String>,
    call_id: impl Into<String>,
    arguments: Map<String, Value>,
    keys: &ToolKeys,
) -> FinalItem {
    let display = Some(describe_map(&arguments, keys));
    FinalItem::FunctionCall {
        name: name.into(),
        call_id: call_id.into(),
        arguments,
        display,
    }
}

/// The display of a call with `args` (an object, or any JSON value).
pub fn describe(args: &Value, keys: &ToolKeys) -> ToolDisplay {
    match args.as_object() {
        Some(map) => describe_map(map, keys),
        None => ToolDisplay {
            summary: match args {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            diff: None,
        },
    }
}

/// `describe` for an argument object.
pub(crate) fn describe_map(map: &Map<String, Value>, keys: &ToolKeys) -> ToolDisplay {
    ToolDisplay {
        summary: summary(map, keys),
        diff: diff(map, keys),
    }
}

fn summary(map: &Map<String, Value>, keys: &ToolKeys) -> String {
    for k in keys.summary {
        match map.get(*k) {
            Some(Value::String(s)) => return first_line(s),
            Some(Value::Array(a)) => {
                let parts: Vec<String> = a
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .collect();
                return parts.join(" ");
            }
            _ => {}
        }
    }
    map.values()
        .find_map(|v| v.as_str().map(first_line))
        .unwrap_or_else(|| {
            if map.is_empty() {
                String::new()
            } else {
                Value::Object(map.clone()).to_string()
            }
        })
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

fn diff(map: &Map<String, Value>, keys: &ToolKeys) -> Option<String> {
    let s = |k: &str| map.get(k).and_then(Value::as_str);
    let prefixed = |text: &str, mark: char| -> Vec<String> {
        text.lines().map(|l| format!("{mark}{l}")).collect()
    };
    for (old, new) in keys.replace {
        if let (Some(old), Some(new)) = (s(old), s(new)) {
            let mut lines = prefixed(old, '-');
            lines.extend(prefixed(new, '+'));
            return Some(lines.join("\n"));
        }
    }
    if let Some(content) = keys.write.iter().find_map(|k| s(k)) {
        return Some(prefixed(content, '+').join("\n"));
    }
    keys.patch.iter().find_map(|k| s(k)).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn summary_prefers_the_named_keys_then_any_string() {
        let d = describe(&json!({"other": "x", "command": "ls -la\nmore"}), &COMMON);
        assert_eq!(d.summary, "ls -la");
        let d = describe(&json!({"argv": ["git", "status"]}), &COMMON);
        assert_eq!(d.summary, r#"{"argv":["git","status"]}"#);
        let d = describe(&json!({"command": ["git", "status"]}), &COMMON);
        assert_eq!(d.summary, "git status");
        assert_eq!(
            describe(&json!({"n": 1, "s": "two"}), &COMMON).summary,
            "two"
        );
        assert_eq!(describe(&Value::Null, &COMMON).summary, "");
    }

    #[test]
    fn edits_become_diff_lines() {
        let d = describe(
            &json!({"file_path": "a.rs", "old_string": "a\nb", "new_string": "c"}),
            &COMMON,
        );
        assert_eq!(d.summary, "a.rs");
        assert_eq!(d.diff.as_deref(), Some("-a\n-b\n+c"));
        let d = describe(&json!({"path": "n.txt", "content": "x\ny"}), &COMMON);
        assert_eq!(d.diff.as_deref(), Some("+x\n+y"));
        let d = describe(&json!({"patch": "@@ -1 +1 @@\n-a\n+b"}), &COMMON);
        assert_eq!(d.diff.as_deref(), Some("@@ -1 +1 @@\n-a\n+b"));
        assert_eq!(describe(&json!({"command": "ls"}), &COMMON).diff, None);
    }
}
