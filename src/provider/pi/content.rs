//! pi message parts read both live (`translate`, from RPC events) and from
//! saved sessions (`import`): pi writes the same `usage` and tool-result
//! shapes to both, so each has one parser.

use serde_json::Value;

use crate::event::Usage;
use crate::provider::json::UsageKeys;

/// pi usage: `{input, output, cacheRead, cacheWrite, cost: {total}}`. pi
/// prices only the models it knows and says `0` for the rest: a zero cost
/// is not reported, not free (issue 13 item 3).
pub(crate) fn usage(u: &Value) -> Usage {
    const KEYS: UsageKeys = UsageKeys {
        input: "input",
        output: "output",
        cache_read: "cacheRead",
        cache_write: "cacheWrite",
    };
    Usage {
        cost_usd: u
            .get("cost")
            .and_then(|c| c.get("total"))
            .and_then(Value::as_f64)
            .filter(|&c| c > 0.0),
        ..KEYS.read(|k| u.get(k).and_then(Value::as_u64))
    }
}

/// pi's own token total, where it reports one.
pub(crate) fn total_tokens(u: &Value) -> Option<u64> {
    u.get("totalTokens").and_then(Value::as_u64)
}

/// The text of a tool result (an RPC `result` or a session's `toolResult`
/// message): `{content: [{type:"text", text}]}` or a string. Blocks other
/// than text show as their type (`[image]`).
pub(crate) fn result_text(result: &Value) -> String {
    let str_field = |p: &Value, k: &str| p.get(k).and_then(Value::as_str).map(str::to_owned);
    match result {
        Value::String(s) => s.clone(),
        Value::Object(_) => match result.get("content") {
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| match str_field(p, "type").as_deref() {
                    Some("text") => str_field(p, "text"),
                    Some(other) => Some(format!("[{other}]")),
                    None => None,
                })
                .collect::<Vec<_>>()
                .join(""),
            Some(Value::String(s)) => s.clone(),
            _ => result.to_string(),
        },
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
