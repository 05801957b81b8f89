//! pi sessions: `~/.pi/agent/sessions/<dir>/<ts>_<id>.jsonl`.
//!
//! pi's own records are close to the canonical ones: `message` lines wrap
//! `user`, `assistant` (content blocks `thinking`, `text`, `toolCall`, with
//! provider/model/usage/stopReason) and `toolResult` messages. One pi turn can
//! hold several assistant messages (one per model call); they merge into one
//! canonical assistant record per user turn.

use serde_json::Value;

use super::{Builder, Parsed, content_text, json_lines, ts_of};
use crate::history::record::UsageMeta;

pub(super) fn session_id(text: &str) -> Option<String> {
    text.lines().take(5).find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        (v.get("type").and_then(Value::as_str) == Some("session"))
            .then(|| v.get("id").and_then(Value::as_str).map(str::to_owned))
            .flatten()
    })
}

pub(super) fn parse(text: &str, mut b: Builder) -> Parsed {
    let (lines, skipped_lines) = json_lines(text);
    let mut last_ts = 0;
    for v in &lines {
        if v.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        let Some(m) = v.get("message") else { continue };
        let ts = ts_of(m.get("timestamp"))
            .or_else(|| ts_of(v.get("timestamp")))
            .unwrap_or(last_ts);
        last_ts = ts;
        match m.get("role").and_then(Value::as_str).unwrap_or("") {
            "user" => {
                let t = content_text(m.get("content"), &["text"]);
                if !t.trim().is_empty() {
                    b.user(&t, ts);
                }
            }
            "assistant" => {
                let asm = b.turn(ts);
                for block in m
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            asm.text(block.get("text").and_then(Value::as_str).unwrap_or(""), ts);
                        }
                        Some("thinking") => {
                            let t = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                            asm.thinking(t, ts);
                        }
                        Some("toolCall") => {
                            let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                            let name = block.get("name").and_then(Value::as_str).unwrap_or("tool");
                            let args = block.get("arguments").cloned().unwrap_or(Value::Null);
                            asm.tool_call(id, name, args, ts);
                        }
                        _ => {}
                    }
                }
                let s = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_owned);
                asm.meta.provider = s("provider").or(asm.meta.provider.take());
                asm.meta.model = s("model").or(asm.meta.model.take());
                asm.meta.stop_reason = s("stopReason").or(asm.meta.stop_reason.take());
                if let Some(msg) = s("errorMessage") {
                    asm.meta.error_message = Some(msg);
                }
                if let Some(u) = m.get("usage") {
                    let add = usage_of(u);
                    let total = asm.meta.usage.get_or_insert_with(UsageMeta::default);
                    total.input += add.input;
                    total.output += add.output;
                    total.total_tokens += add.total_tokens;
                    total.cache_read = sum(total.cache_read, add.cache_read);
                    total.cache_write = sum(total.cache_write, add.cache_write);
                    total.cost_usd = match (total.cost_usd, add.cost_usd) {
                        (Some(a), Some(b)) => Some(a + b),
                        (a, b) => a.or(b),
                    };
                }
            }
            "toolResult" => {
                let id = m.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                let name = m.get("toolName").and_then(Value::as_str).unwrap_or("tool");
                let out = content_text(m.get("content"), &["text"]);
                let is_error = m.get("isError").and_then(Value::as_bool) == Some(true);
                b.turn(ts).tool_result(id, name, &out, is_error, ts);
            }
            _ => {}
        }
    }
    Parsed {
        native_session: session_id(text),
        builder: b,
        skipped_lines,
    }
}

fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

fn usage_of(u: &Value) -> UsageMeta {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let input = n("input").unwrap_or(0);
    let output = n("output").unwrap_or(0);
    UsageMeta {
        input,
        output,
        cache_read: n("cacheRead").filter(|&c| c > 0),
        cache_write: n("cacheWrite").filter(|&c| c > 0),
        total_tokens: n("totalTokens").unwrap_or(input + output),
        cost_usd: u
            .get("cost")
            .and_then(|c| c.get("total"))
            .and_then(Value::as_f64)
            .filter(|&c| c > 0.0),
    }
}
