//! pi sessions: `~/.pi/agent/sessions/<dir>/<ts>_<id>.jsonl`.
//!
//! pi's own records are close to the canonical ones: `message` lines wrap
//! `user`, `assistant` (content blocks `thinking`, `text`, `toolCall`, with
//! provider/model/usage/stopReason) and `toolResult` messages. One pi turn can
//! hold several assistant messages (one per model call); they merge into one
//! canonical assistant record per user turn. Usage and tool results are read
//! by the live translator's functions (`content`).

use serde_json::Value;

use super::content::{result_text, total_tokens, usage};
use crate::history::assemble::TurnAssembler;
use crate::history::import::{Builder, Importer};
use crate::history::record::UsageMeta;
use crate::provider::display;
use crate::provider::import::{content_text, ts_of};

/// The pi session importer.
pub(crate) struct Session;

impl Importer for Session {
    fn name(&self) -> &'static str {
        super::translate::PROVIDER_ID
    }

    fn session_id(&self, text: &str) -> Option<String> {
        text.lines().take(5).find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            (v.get("type").and_then(Value::as_str) == Some("session"))
                .then(|| v.get("id").and_then(Value::as_str).map(str::to_owned))
                .flatten()
        })
    }

    fn parse(&self, lines: &[Value], b: &mut Builder) {
        let mut last_ts = 0;
        for v in lines {
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
                "assistant" => assistant(b.turn(ts), m, ts),
                "toolResult" => {
                    let s = |k: &str| m.get(k).and_then(Value::as_str);
                    let id = s("toolCallId").unwrap_or("");
                    let name = s("toolName").unwrap_or("tool");
                    let is_error = m.get("isError").and_then(Value::as_bool) == Some(true);
                    b.turn(ts)
                        .tool_result(id, name, (&result_text(m), is_error), None, ts);
                }
                _ => {}
            }
        }
    }
}

/// One model call's message, merged into the turn's assistant record.
fn assistant(asm: &mut TurnAssembler, m: &Value, ts: i64) {
    for block in m
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let s = |k: &str| block.get(k).and_then(Value::as_str);
        match s("type") {
            Some("text") => asm.text(s("text").unwrap_or(""), ts),
            Some("thinking") => asm.thinking(s("thinking").unwrap_or(""), ts),
            Some("toolCall") => {
                let args = block.get("arguments").cloned().unwrap_or(Value::Null);
                let shown = Some(display::describe(&args, &super::translate::TOOL_KEYS));
                asm.tool_call(
                    s("id").unwrap_or(""),
                    s("name").unwrap_or("tool"),
                    args,
                    shown,
                    ts,
                );
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
        let add = UsageMeta::reported(&usage(u), total_tokens(u));
        asm.meta
            .usage
            .get_or_insert_with(UsageMeta::default)
            .accumulate(&add);
    }
}
