//! Codex rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl`.
//!
//! The conversation is in `response_item` lines (the Responses API items codex
//! sends back to the model: `message`, `reasoning`, `function_call`,
//! `function_call_output`, `custom_tool_call`…); `turn_context` names the
//! model and `token_usage_record` / `token_count` the usage (read by the
//! translators' `items::usage`). Codex also stores the context it injects
//! (developer instructions, `<environment_context>`) as messages: those are
//! not the user's and are skipped.

use std::collections::HashMap;

use serde_json::Value;

use super::PROVIDER_ID;
use super::items::usage;
use crate::history::import::{Builder, Importer};
use crate::history::record::UsageMeta;
use crate::provider::display;
use crate::provider::import::{content_text, ts_of};

/// The Codex rollout importer.
pub(crate) struct Rollout;

impl Importer for Rollout {
    fn name(&self) -> &'static str {
        PROVIDER_ID
    }

    fn session_id(&self, text: &str) -> Option<String> {
        text.lines().take(20).find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            if v.get("type").and_then(Value::as_str) != Some("session_meta") {
                return None;
            }
            let p = v.get("payload")?;
            p.get("id")
                .or_else(|| p.get("session_id"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    }

    fn parse(&self, lines: &[Value], b: &mut Builder) {
        let mut model: Option<String> = None;
        let mut names: HashMap<String, String> = HashMap::new();
        let mut last_ts = 0;
        for v in lines {
            let ts = ts_of(v.get("timestamp")).unwrap_or(last_ts);
            last_ts = ts;
            let Some(p) = v.get("payload") else { continue };
            let ptype = p.get("type").and_then(Value::as_str).unwrap_or("");
            match v.get("type").and_then(Value::as_str).unwrap_or("") {
                "turn_context" => {
                    if let Some(m) = p.get("model").and_then(Value::as_str) {
                        model = Some(m.to_owned());
                    }
                }
                "response_item" => response_item(b, p, ptype, ts, &model, &mut names),
                "token_usage_record" => {
                    if let Some(u) = p.get("turn_token_usage").or_else(|| p.get("usage")) {
                        b.turn(ts).meta.usage = Some(usage_meta(u));
                    }
                }
                "event_msg" => match ptype {
                    "task_complete" => {
                        b.turn(ts).meta.stop_reason = Some("completed".into());
                    }
                    "turn_aborted" => {
                        b.turn(ts).meta.stop_reason = Some("cancelled".into());
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }
}

/// Injected context codex stores as user messages (older rollouts have no
/// `content_item_kinds` to tell them apart).
const INJECTED: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "<skills_instructions>",
    "# AGENTS.md instructions",
];

fn is_user_prompt(p: &Value, text: &str) -> bool {
    let kinds = p
        .get("internal_chat_message_metadata_passthrough")
        .and_then(|m| m.get("content_item_kinds"))
        .and_then(Value::as_array);
    match kinds {
        Some(k) => k.iter().any(|k| k.as_str() == Some("user.text")),
        None => !INJECTED.iter().any(|p| text.trim_start().starts_with(p)),
    }
}

/// One Responses API item of the conversation.
fn response_item(
    b: &mut Builder,
    p: &Value,
    ptype: &str,
    ts: i64,
    model: &Option<String>,
    names: &mut HashMap<String, String>,
) {
    match ptype {
        "message" => message(b, p, ts, model),
        "reasoning" => {
            let mut parts = Vec::new();
            for key in ["summary", "content"] {
                let t = content_text(p.get(key), &["summary_text", "reasoning_text", "text"]);
                if !t.is_empty() {
                    parts.push(t);
                }
            }
            b.turn(ts).thinking(&parts.join("\n"), ts);
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            tool_call(b, p, ptype, ts, names);
        }
        "function_call_output" | "custom_tool_call_output" => {
            let call_id = p.get("call_id").and_then(Value::as_str).unwrap_or("");
            let output = match p.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(o) => o
                    .get("content")
                    .and_then(Value::as_str)
                    .map_or_else(|| o.to_string(), str::to_owned),
                None => String::new(),
            };
            let name = names.get(call_id).map_or("tool", String::as_str);
            let is_error = failed_exit(&output);
            b.turn(ts)
                .tool_result(call_id, name, (&output, is_error), None, ts);
        }
        _ => {}
    }
}

/// A user prompt (which starts a turn) or an assistant answer.
fn message(b: &mut Builder, p: &Value, ts: i64, model: &Option<String>) {
    let content = p.get("content");
    match p.get("role").and_then(Value::as_str).unwrap_or("") {
        "user" => {
            let t = content_text(content, &["input_text", "text"]);
            if !t.trim().is_empty() && is_user_prompt(p, &t) {
                b.user(&t, ts);
                let asm = b.turn(ts);
                asm.meta.provider = Some(PROVIDER_ID.into());
                asm.meta.model = model.clone();
            }
        }
        "assistant" => {
            let t = content_text(content, &["output_text", "text"]);
            b.turn(ts).text(&t, ts);
        }
        _ => {}
    }
}

/// A function, custom tool or local shell call; its name is kept for the
/// output that answers it.
fn tool_call(
    b: &mut Builder,
    p: &Value,
    ptype: &str,
    ts: i64,
    names: &mut HashMap<String, String>,
) {
    let call_id = p
        .get("call_id")
        .or_else(|| p.get("id"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let fallback = if ptype == "local_shell_call" {
        "shell"
    } else {
        "tool"
    };
    let name = p.get("name").and_then(Value::as_str).unwrap_or(fallback);
    let args = match (p.get("arguments"), p.get("input"), p.get("action")) {
        (Some(Value::String(s)), _, _) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        (Some(v), _, _) => v.clone(),
        (None, Some(i), _) => serde_json::json!({ "input": i }),
        (None, None, Some(a)) => a.clone(),
        _ => Value::Null,
    };
    names.insert(call_id.to_owned(), name.to_owned());
    let shown = Some(display::describe(&args, &display::COMMON));
    b.turn(ts).tool_call(call_id, name, args, shown, ts);
}

/// Codex reports a command's exit status inside the output text.
fn failed_exit(output: &str) -> bool {
    output
        .lines()
        .find_map(|l| l.strip_prefix("Process exited with code "))
        .and_then(|c| c.trim().parse::<i64>().ok())
        .is_some_and(|c| c != 0)
}

/// A rollout's token usage: the live translators' reading, with codex's own
/// total (its input count already holds the cached tokens).
fn usage_meta(u: &Value) -> UsageMeta {
    let total = u.get("total_tokens").and_then(Value::as_u64);
    UsageMeta::reported(&usage(u), total)
}
