//! Claude Code transcripts: `~/.claude/projects/<dir>/<session>.jsonl` (and the
//! `stream-json` output, which carries the same `user`/`assistant` lines).
//!
//! An assistant message is written one content block per line, lines sharing
//! `message.id`; a user line is either a prompt (starts a turn) or the results
//! of tool calls (`tool_result` blocks). Side-chain (subagent) lines and
//! `isMeta` lines are not part of the conversation. Usage and tool results
//! are read by the same functions the live translator uses (`content`).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::content;
use super::translate::PROVIDER_ID;
use crate::event::Usage;
use crate::history::import::{Builder, Importer};
use crate::history::record::UsageMeta;
use crate::provider::display;
use crate::provider::import::{content_text, ts_of};

/// The Claude Code transcript importer.
pub struct Transcript;

impl Importer for Transcript {
    fn name(&self) -> &'static str {
        PROVIDER_ID
    }

    fn session_id(&self, text: &str) -> Option<String> {
        text.lines().find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            v.get("sessionId")
                .or_else(|| v.get("session_id"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        })
    }

    fn parse(&self, lines: &[Value], b: &mut Builder) {
        let mut p = Parse::default();
        for v in lines {
            if v.get("isSidechain").and_then(Value::as_bool) == Some(true)
                || v.get("isMeta").and_then(Value::as_bool) == Some(true)
                || v.get("parent_tool_use_id").is_some_and(|p| !p.is_null())
            {
                continue;
            }
            let ts = ts_of(v.get("timestamp")).unwrap_or(p.last_ts);
            p.last_ts = ts;
            let Some(msg) = v.get("message") else {
                continue;
            };
            match v.get("type").and_then(Value::as_str).unwrap_or("") {
                "user" => p.user(b, msg, ts),
                "assistant" => p.assistant(b, msg, ts),
                _ => {}
            }
        }
        p.flush_usage(b);
    }
}

/// State across the lines of one transcript.
#[derive(Default)]
struct Parse {
    tool_names: HashMap<String, String>,
    seen_blocks: HashSet<String>,
    /// Usage of each API message of the current turn (last line wins).
    usage: HashMap<String, Usage>,
    last_ts: i64,
}

impl Parse {
    fn user(&mut self, b: &mut Builder, msg: &Value, ts: i64) {
        let content = msg.get("content");
        let results: Vec<content::ToolResult> = content
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(content::tool_result).collect())
            .unwrap_or_default();
        if results.is_empty() {
            let prompt = content_text(content, &["text"]);
            if !prompt.trim().is_empty() {
                self.flush_usage(b);
                b.user(&prompt, ts);
            }
            return;
        }
        for r in results {
            let name = self
                .tool_names
                .get(&r.call_id)
                .map_or("tool", String::as_str);
            b.turn(ts)
                .tool_result(&r.call_id, name, (&r.output, r.is_error), None, ts);
        }
    }

    fn assistant(&mut self, b: &mut Builder, msg: &Value, ts: i64) {
        let msg_id = msg.get("id").and_then(Value::as_str).unwrap_or("");
        let asm = b.turn(ts);
        if let Some(model) = msg.get("model").and_then(Value::as_str) {
            asm.meta.model = Some(model.to_owned());
        }
        asm.meta.provider = Some(PROVIDER_ID.into());
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
            if !self.seen_blocks.insert(format!("{msg_id}\u{1}{block}")) {
                continue;
            }
            let str_of = |k: &str| block.get(k).and_then(Value::as_str);
            match str_of("type") {
                Some("text") => asm.text(str_of("text").unwrap_or(""), ts),
                Some("thinking") => asm.thinking(str_of("thinking").unwrap_or(""), ts),
                Some("tool_use") => {
                    let id = str_of("id").unwrap_or("");
                    let name = str_of("name").unwrap_or("tool");
                    let input = block.get("input").cloned().unwrap_or(Value::Null);
                    self.tool_names.insert(id.to_owned(), name.to_owned());
                    let shown = Some(display::describe(&input, &display::COMMON));
                    asm.tool_call(id, name, input, shown, ts);
                }
                _ => {}
            }
        }
        if let Some(u) = msg.get("usage") {
            self.usage.insert(msg_id.to_owned(), content::usage(u));
        }
    }

    /// Sums the turn's API calls into its `meta.usage`.
    fn flush_usage(&mut self, b: &mut Builder) {
        if self.usage.is_empty() || b.is_empty() {
            self.usage.clear();
            return;
        }
        let mut total = UsageMeta::default();
        for u in self.usage.values() {
            total.accumulate(&UsageMeta::from(u));
        }
        b.turn(0).meta.usage = Some(total);
        self.usage.clear();
    }
}
