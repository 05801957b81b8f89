//! Claude message parts read both live (`translate`) and from saved
//! transcripts (`import`): one parser each, so an imported session shows
//! what the live one did.

use serde_json::Value;

use crate::event::Usage;
use crate::provider::json::UsageKeys;

/// An Anthropic `usage` object's token counts (no cost: Claude reports that
/// per `result`, not per message).
pub(crate) fn usage(u: &Value) -> Usage {
    const KEYS: UsageKeys = UsageKeys {
        input: "input_tokens",
        output: "output_tokens",
        cache_read: "cache_read_input_tokens",
        cache_write: "cache_creation_input_tokens",
    };
    KEYS.read(|k| u.get(k).and_then(Value::as_u64))
}

/// A tool's result, as a `user` message carries it back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult {
    pub call_id: String,
    pub output: String,
    pub is_error: bool,
}

/// A `tool_result` content block (`None` for any other block).
pub(crate) fn tool_result(c: &Value) -> Option<ToolResult> {
    if str_of(c, "type") != "tool_result" {
        return None;
    }
    let call_id = match str_of(c, "tool_use_id") {
        "" => "unknown".to_owned(),
        id => id.to_owned(),
    };
    Some(ToolResult {
        call_id,
        output: tool_output_text(c.get("content")),
        is_error: c.get("is_error").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// `tool_result.content`: a string or a list of blocks (other than text
/// shown by their type, e.g. `[image]`).
fn tool_output_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| match str_of(p, "type") {
                "text" => str_of(p, "text").to_owned(),
                "" => p.to_string(),
                other => format!("[{other}]"),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}
