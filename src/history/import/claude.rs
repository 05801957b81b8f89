//! Claude Code transcripts: `~/.claude/projects/<dir>/<session>.jsonl` (and the
//! `stream-json` output, which carries the same `user`/`assistant` lines).
//!
//! An assistant message is written one content block per line, lines sharing
//! `message.id`; a user line is either a prompt (starts a turn) or the results
//! of tool calls (`tool_result` blocks). Side-chain (subagent) lines and
//! `isMeta` lines are not part of the conversation.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{Builder, Parsed, content_text, json_lines, ts_of};
use crate::history::record::UsageMeta;

pub(super) fn session_id(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        v.get("sessionId")
            .or_else(|| v.get("session_id"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    })
}

pub(super) fn parse(text: &str, mut b: Builder) -> Parsed {
    let (lines, skipped_lines) = json_lines(text);
    let mut tool_names: HashMap<String, String> = HashMap::new();
    let mut seen_blocks: HashSet<String> = HashSet::new();
    // Usage of each API message of the current turn (last line wins).
    let mut usage: HashMap<String, UsageMeta> = HashMap::new();
    let mut last_ts = 0;
    for v in &lines {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if v.get("isSidechain").and_then(Value::as_bool) == Some(true)
            || v.get("isMeta").and_then(Value::as_bool) == Some(true)
            || v.get("parent_tool_use_id").is_some_and(|p| !p.is_null())
        {
            continue;
        }
        let ts = ts_of(v.get("timestamp")).unwrap_or(last_ts);
        last_ts = ts;
        let Some(msg) = v.get("message") else {
            continue;
        };
        match kind {
            "user" => {
                let content = msg.get("content");
                let results: Vec<&Value> = content
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter(|b| {
                                b.get("type").and_then(Value::as_str) == Some("tool_result")
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if results.is_empty() {
                    let prompt = content_text(content, &["text"]);
                    if !prompt.trim().is_empty() {
                        flush_usage(&mut b, &mut usage);
                        b.user(&prompt, ts);
                    }
                    continue;
                }
                for r in results {
                    let id = r.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    let name = tool_names.get(id).cloned().unwrap_or_else(|| "tool".into());
                    let output = content_text(r.get("content"), &["text"]);
                    let is_error = r.get("is_error").and_then(Value::as_bool) == Some(true);
                    b.turn(ts).tool_result(id, &name, &output, is_error, ts);
                }
            }
            "assistant" => {
                let msg_id = msg.get("id").and_then(Value::as_str).unwrap_or("");
                let asm = b.turn(ts);
                if let Some(model) = msg.get("model").and_then(Value::as_str) {
                    asm.meta.model = Some(model.to_owned());
                }
                asm.meta.provider = Some("claude".into());
                if let Some(reason) = msg.get("stop_reason").and_then(Value::as_str) {
                    asm.meta.stop_reason = Some(reason.to_owned());
                }
                for block in msg
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    // Lines repeat blocks in some versions; keep each once.
                    if !seen_blocks.insert(format!("{msg_id}\u{1}{block}")) {
                        continue;
                    }
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            let t = block.get("text").and_then(Value::as_str).unwrap_or("");
                            asm.text(t, ts);
                        }
                        Some("thinking") => {
                            let t = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                            asm.thinking(t, ts);
                        }
                        Some("tool_use") => {
                            let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                            let name = block.get("name").and_then(Value::as_str).unwrap_or("tool");
                            let input = block.get("input").cloned().unwrap_or(Value::Null);
                            tool_names.insert(id.to_owned(), name.to_owned());
                            asm.tool_call(id, name, input, ts);
                        }
                        _ => {}
                    }
                }
                if let Some(u) = msg.get("usage") {
                    usage.insert(msg_id.to_owned(), usage_of(u));
                }
            }
            _ => {}
        }
    }
    flush_usage(&mut b, &mut usage);
    Parsed {
        native_session: session_id(text),
        builder: b,
        skipped_lines,
    }
}

fn usage_of(u: &Value) -> UsageMeta {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let input = n("input_tokens").unwrap_or(0);
    let output = n("output_tokens").unwrap_or(0);
    let cache_read = n("cache_read_input_tokens");
    let cache_write = n("cache_creation_input_tokens");
    UsageMeta {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: input + output + cache_read.unwrap_or(0) + cache_write.unwrap_or(0),
        cost_usd: None,
    }
}

/// Sums the turn's API calls into its `meta.usage`.
fn flush_usage(b: &mut Builder, usage: &mut HashMap<String, UsageMeta>) {
    if usage.is_empty() || b.is_empty() {
        usage.clear();
        return;
    }
    let mut total = UsageMeta::default();
    for u in usage.values() {
        total.input += u.input;
        total.output += u.output;
        total.total_tokens += u.total_tokens;
        if let Some(c) = u.cache_read {
            total.cache_read = Some(total.cache_read.unwrap_or(0) + c);
        }
        if let Some(c) = u.cache_write {
            total.cache_write = Some(total.cache_write.unwrap_or(0) + c);
        }
    }
    b.turn(0).meta.usage = Some(total);
    usage.clear();
}
