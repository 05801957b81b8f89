//! Codex thread items → canonical events, shared by both transports.
//!
//! `codex exec --json` spells items in snake_case (`agent_message`,
//! `aggregated_output`), the app-server in camelCase (`agentMessage`,
//! `aggregatedOutput`); `Item::parse` accepts both so one mapping serves both.
//!
//! Tool-like items (commands, file changes, MCP calls, web searches, plan
//! updates, anything unknown) become a tool call: the invocation is emitted as
//! `item_done(function_call)` as soon as its arguments are known, so the pane
//! shows the command while it runs, and the result as
//! `item_done(function_call_output)` correlated by the item id. Text-like items
//! (agent messages, reasoning summaries) become message / thinking items fed by
//! deltas where the transport has them and finished by the whole text.

pub(crate) mod call;

use call::{invocation, object, result_text};

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::PROVIDER_ID;
use crate::event::{ErrorInfo, FinalItem, ItemType, Origin, Payload, ResponseStatus, Usage};
use crate::provider::json::UsageKeys;
use crate::provider::{DiagnosticLevel, display};

/// What a translator asks its transport to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    /// The thread id (resume handle) and, where known, the model.
    Thread {
        id: String,
        model: Option<String>,
    },
    /// The agent started the turn (`response_start`).
    Started,
    /// A canonical event of the running turn.
    Event(Payload),
    /// The terminal event of the turn (`response_done` / `response_error`).
    Finished(Payload),
    Diagnostic(DiagnosticLevel, String),
}

/// One file of a file change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub path: String,
    pub kind: String,
    pub diff: Option<String>,
}

/// A thread item in either spelling, reduced to what a pane shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `agent_message` and `plan` (a proposed plan in plan mode) are
    /// messages; `reasoning` is the reasoning summary.
    Text {
        id: String,
        kind: TextKind,
        text: String,
    },
    Command {
        id: String,
        command: String,
        cwd: Option<String>,
        output: Option<String>,
        exit_code: Option<i64>,
        status: Status,
    },
    FileChange {
        id: String,
        changes: Vec<Change>,
        status: Status,
    },
    Mcp {
        id: String,
        server: String,
        tool: String,
        arguments: Value,
        result: Option<Value>,
        error: Option<String>,
        status: Status,
    },
    WebSearch {
        id: String,
        query: String,
        action: Option<Value>,
    },
    Todo {
        id: String,
        items: Vec<(String, bool)>,
    },
    /// A non-fatal error surfaced as an item (exec).
    Error {
        id: String,
        message: String,
    },
    /// The user's own input; the runner already shows it.
    UserMessage {
        id: String,
    },
    Compaction {
        id: String,
    },
    /// Anything else, shown generically with its fields.
    Other {
        id: String,
        kind: String,
        raw: Value,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    InProgress,
    Completed,
    Failed,
    Declined,
}

impl Status {
    fn parse(v: Option<&Value>) -> Self {
        let s = v.and_then(Value::as_str).unwrap_or("");
        match s.replace('_', "").to_ascii_lowercase().as_str() {
            "completed" => Status::Completed,
            "failed" => Status::Failed,
            "declined" => Status::Declined,
            _ => Status::InProgress,
        }
    }

    fn is_error(self) -> bool {
        matches!(self, Status::Failed | Status::Declined)
    }
}

/// `snake_case` or `camelCase` field.
fn field<'a>(v: &'a Value, snake: &str) -> Option<&'a Value> {
    if let Some(x) = v.get(snake).filter(|x| !x.is_null()) {
        return Some(x);
    }
    let camel = to_camel(snake);
    v.get(camel.as_str()).filter(|x| !x.is_null())
}

fn to_camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn to_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn str_field(v: &Value, snake: &str) -> String {
    field(v, snake)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

impl Item {
    /// Reads an item object; `None` if it has no id.
    pub fn parse(v: &Value) -> Option<Item> {
        let id = v.get("id")?.as_str()?.to_owned();
        let raw_kind = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
        let kind = to_snake(raw_kind);
        Some(match kind.as_str() {
            "agent_message" | "plan" => Item::Text {
                id,
                kind: TextKind::Message,
                text: str_field(v, "text"),
            },
            "reasoning" => Item::Text {
                id,
                kind: TextKind::Reasoning,
                text: reasoning_text(v),
            },
            "command_execution" => Item::Command {
                id,
                command: str_field(v, "command"),
                cwd: field(v, "cwd").and_then(Value::as_str).map(str::to_owned),
                output: field(v, "aggregated_output")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                exit_code: field(v, "exit_code").and_then(Value::as_i64),
                status: Status::parse(v.get("status")),
            },
            "file_change" => Item::FileChange {
                id,
                changes: v
                    .get("changes")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(parse_change).collect())
                    .unwrap_or_default(),
                status: Status::parse(v.get("status")),
            },
            "mcp_tool_call" => Item::Mcp {
                id,
                server: str_field(v, "server"),
                tool: str_field(v, "tool"),
                arguments: v.get("arguments").cloned().unwrap_or(Value::Null),
                result: v.get("result").filter(|r| !r.is_null()).cloned(),
                error: v.get("error").filter(|e| !e.is_null()).map(error_message),
                status: Status::parse(v.get("status")),
            },
            "web_search" => Item::WebSearch {
                id,
                query: str_field(v, "query"),
                action: v.get("action").filter(|a| !a.is_null()).cloned(),
            },
            "todo_list" => Item::Todo {
                id,
                items: todo_items(v),
            },
            "error" => Item::Error {
                id,
                message: str_field(v, "message"),
            },
            "user_message" => Item::UserMessage { id },
            "context_compaction" => Item::Compaction { id },
            _ => Item::Other {
                id,
                kind: raw_kind.to_owned(),
                raw: v.clone(),
            },
        })
    }

    pub fn id(&self) -> &str {
        match self {
            Item::Text { id, .. }
            | Item::Command { id, .. }
            | Item::FileChange { id, .. }
            | Item::Mcp { id, .. }
            | Item::WebSearch { id, .. }
            | Item::Todo { id, .. }
            | Item::Error { id, .. }
            | Item::UserMessage { id }
            | Item::Compaction { id }
            | Item::Other { id, .. } => id,
        }
    }
}

fn parse_change(c: &Value) -> Change {
    // exec: "kind": "add"; app-server: "kind": {"type": "update", "move_path": ..}.
    let kind = match c.get("kind") {
        Some(Value::String(s)) => s.clone(),
        Some(obj @ Value::Object(_)) => {
            let base = obj
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("update")
                .to_owned();
            match field(obj, "move_path").and_then(Value::as_str) {
                Some(to) => format!("{base} → {to}"),
                None => base,
            }
        }
        _ => "change".into(),
    };
    Change {
        path: str_field(c, "path"),
        kind,
        diff: c
            .get("diff")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .map(str::to_owned),
    }
}

/// Which text item a delta belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Message,
    Reasoning,
}

/// Per-turn item state: which items were opened, how much text each has
/// streamed, which tool calls still await their result.
#[derive(Debug, Default)]
pub struct ItemMapper {
    /// Text items opened with `item_start`, with the bytes streamed so far.
    text: HashMap<String, (TextKind, usize)>,
    /// Reasoning items that streamed summary text (raw text deltas are then
    /// redundant) and the summary part they are in.
    parts: HashMap<String, i64>,
    /// Tool calls whose invocation was emitted.
    tools: HashMap<String, Map<String, Value>>,
    /// Tool calls whose result was emitted.
    done: HashSet<String>,
    last_plan: Option<String>,
}

impl ItemMapper {
    pub fn new() -> Self {
        Self::default()
    }

    /// The arguments of an open tool call (for approval prompts).
    pub(crate) fn tool_arguments(&self, item_id: &str) -> Option<&Map<String, Value>> {
        self.tools.get(item_id)
    }

    /// An item began: the same as a snapshot of its state so far.
    pub fn started(&mut self, raw: &Value) -> Vec<Payload> {
        self.updated(raw)
    }

    /// exec `item.updated`: the item's whole current state.
    pub fn updated(&mut self, raw: &Value) -> Vec<Payload> {
        let Some(item) = Item::parse(raw) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        match &item {
            Item::Text { id, kind, text } => {
                self.open_text(id, *kind, &mut out);
                self.catch_up(id, text, &mut out);
            }
            Item::Todo { items, .. } => self.todo(items, &mut out),
            Item::Error { .. } | Item::UserMessage { .. } | Item::Compaction { .. } => {}
            _ => self.invoke(&item, &mut out),
        }
        out
    }

    pub fn completed(&mut self, raw: &Value) -> Vec<Payload> {
        let Some(item) = Item::parse(raw) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        match &item {
            Item::Text {
                id,
                kind: TextKind::Message,
                text,
            } => {
                self.open_text(id, TextKind::Message, &mut out);
                self.text.remove(id);
                out.push(Payload::ItemDone {
                    item_id: id.clone(),
                    final_item: FinalItem::Message {
                        content: text.clone(),
                        origin: Origin::Agent,
                    },
                });
            }
            Item::Text {
                id,
                kind: TextKind::Reasoning,
                text,
            } => {
                if text.trim().is_empty() {
                    // Nothing to show (no summary): drop the empty block.
                    if self.text.remove(id).is_some() {
                        out.push(Payload::ItemCancelled {
                            item_id: id.clone(),
                            reason: Some("no reasoning summary".into()),
                        });
                    }
                } else {
                    self.open_text(id, TextKind::Reasoning, &mut out);
                    self.text.remove(id);
                    self.parts.remove(id);
                    out.push(Payload::ItemDone {
                        item_id: id.clone(),
                        final_item: FinalItem::Reasoning {
                            content: text.clone(),
                            provider_id: PROVIDER_ID.into(),
                        },
                    });
                }
            }
            Item::Todo { items, .. } => self.todo(items, &mut out),
            Item::Error { message, .. } => out.extend(self.notice(&format!("⚠ {message}"))),
            Item::UserMessage { .. } => {}
            Item::Compaction { .. } => out.extend(self.notice("context compacted")),
            _ => {
                self.invoke(&item, &mut out);
                self.result(&item, &mut out);
            }
        }
        out
    }

    /// A streamed text delta (app-server `agentMessage/delta`, `plan/delta`,
    /// reasoning deltas, exec `item.plan.delta`).
    pub fn delta(&mut self, item_id: &str, kind: TextKind, delta: &str) -> Vec<Payload> {
        let mut out = Vec::new();
        if delta.is_empty() {
            return out;
        }
        self.open_text(item_id, kind, &mut out);
        self.push_delta(item_id, delta, &mut out);
        out
    }

    /// app-server `item/reasoning/summaryTextDelta`.
    pub(crate) fn summary_delta(&mut self, item_id: &str, index: i64, delta: &str) -> Vec<Payload> {
        let mut out = self.summary_part(item_id, index);
        out.extend(self.delta(item_id, TextKind::Reasoning, delta));
        out
    }

    /// app-server `item/reasoning/summaryPartAdded`: parts are separated by a
    /// blank line, as the completed item joins them.
    pub(crate) fn summary_part(&mut self, item_id: &str, index: i64) -> Vec<Payload> {
        let mut out = Vec::new();
        let previous = self.parts.insert(item_id.to_owned(), index);
        let streamed = self.text.get(item_id).is_some_and(|(_, n)| *n > 0);
        if previous.is_some_and(|p| p != index) && streamed {
            self.push_delta(item_id, "\n\n", &mut out);
        }
        out
    }

    /// app-server `item/reasoning/textDelta` (raw reasoning): shown only when
    /// the item streams no summary, so the two never interleave.
    pub(crate) fn raw_reasoning_delta(&mut self, item_id: &str, delta: &str) -> Vec<Payload> {
        if self.parts.contains_key(item_id) {
            return Vec::new();
        }
        self.delta(item_id, TextKind::Reasoning, delta)
    }

    /// app-server `turn/plan/updated`: one plan update shown as one call of
    /// the model's plan tool.
    pub(crate) fn plan_update(
        &mut self,
        explanation: Option<&str>,
        steps: &[(String, String)],
    ) -> Vec<Payload> {
        let mut out = Vec::new();
        let mut text = String::new();
        if let Some(e) = explanation.filter(|e| !e.trim().is_empty()) {
            text.push_str(e);
            text.push('\n');
        }
        for (step, status) in steps {
            let mark = match status.as_str() {
                "completed" => "[x]",
                "inProgress" | "in_progress" => "[~]",
                _ => "[ ]",
            };
            text.push_str(&format!("{mark} {step}\n"));
        }
        let args = json!({
            "explanation": explanation,
            "plan": steps.iter().map(|(s, st)| json!({"step": s, "status": st})).collect::<Vec<_>>(),
        });
        self.emit_plan(text, args, &mut out);
        out
    }

    /// Shows an `error` notification held back to see whether the turn's
    /// failure repeats it (both transports hold them the same way).
    pub(crate) fn flush_error(&mut self, pending: &mut Option<String>, out: &mut Vec<Out>) {
        if let Some(message) = pending.take() {
            let text = format!("⚠ {message}");
            out.extend(self.notice(&text).into_iter().map(Out::Event));
        }
    }

    /// The turn failed: its own message (else the held `error`, else a
    /// generic one) ends it; a held error that says something else is shown
    /// first, one that says the same is not shown twice.
    pub(crate) fn turn_failed(
        &mut self,
        pending: &mut Option<String>,
        reported: Option<&str>,
        usage: Option<Usage>,
        out: &mut Vec<Out>,
    ) {
        let message = reported
            .map(str::to_owned)
            .or_else(|| pending.clone())
            .unwrap_or_else(|| "the turn failed".into());
        if pending.as_deref() != Some(message.as_str()) {
            self.flush_error(pending, out);
        }
        *pending = None;
        out.push(Out::Finished(Payload::ResponseDone {
            status: ResponseStatus::Error,
            finish_reason: None,
            error: Some(ErrorInfo::new("turn_failed", message)),
            usage,
        }));
    }

    /// A notice inside the conversation (retries, warnings): a message item
    /// with origin `system`.
    pub fn notice(&mut self, text: &str) -> Vec<Payload> {
        Payload::notice("codex_notice", text).into()
    }

    fn open_text(&mut self, id: &str, kind: TextKind, out: &mut Vec<Payload>) {
        if self.text.contains_key(id) {
            return;
        }
        self.text.insert(id.to_owned(), (kind, 0));
        let item_type = match kind {
            TextKind::Message => ItemType::Message,
            TextKind::Reasoning => ItemType::Reasoning,
        };
        out.push(Payload::item_start(id, item_type));
    }

    fn push_delta(&mut self, id: &str, delta: &str, out: &mut Vec<Payload>) {
        if let Some((_, n)) = self.text.get_mut(id) {
            *n += delta.len();
        }
        out.push(Payload::ItemDelta {
            item_id: id.to_owned(),
            delta_content: delta.to_owned(),
        });
    }

    /// Whole-text snapshots (exec) become deltas of what is new, when the
    /// snapshot extends what was streamed; otherwise the final item fixes it.
    fn catch_up(&mut self, id: &str, text: &str, out: &mut Vec<Payload>) {
        let sent = self.text.get(id).map(|(_, n)| *n).unwrap_or(0);
        if text.len() > sent
            && let Some(rest) = text.get(sent..)
        {
            self.push_delta(id, rest, out);
        }
    }

    fn todo(&mut self, items: &[(String, bool)], out: &mut Vec<Payload>) {
        let mut text = String::new();
        for (step, done) in items {
            text.push_str(if *done { "[x] " } else { "[ ] " });
            text.push_str(step);
            text.push('\n');
        }
        let args = json!({
            "items": items.iter().map(|(t, c)| json!({"text": t, "completed": c})).collect::<Vec<_>>(),
        });
        self.emit_plan(text, args, out);
    }

    fn emit_plan(&mut self, text: String, args: Value, out: &mut Vec<Payload>) {
        if self.last_plan.as_deref() == Some(text.as_str()) {
            return;
        }
        self.last_plan = Some(text.clone());
        let call_id = crate::event::new_id("codex_plan");
        out.push(Payload::ItemDone {
            item_id: call_id.clone(),
            final_item: display::function_call(
                "update_plan",
                call_id.clone(),
                object(args),
                &display::COMMON,
            ),
        });
        out.push(Payload::tool_output(
            format!("{call_id}:out"),
            call_id,
            text,
            false,
        ));
    }

    /// Emits the invocation of a tool-like item once.
    fn invoke(&mut self, item: &Item, out: &mut Vec<Payload>) {
        let id = item.id();
        if self.tools.contains_key(id) || self.done.contains(id) {
            return;
        }
        let (name, arguments) = invocation(item);
        self.tools.insert(id.to_owned(), arguments.clone());
        out.push(Payload::ItemDone {
            item_id: id.to_owned(),
            final_item: FinalItem::FunctionCall {
                display: Some(call::display(&arguments)),
                name,
                call_id: id.to_owned(),
                arguments,
            },
        });
    }

    /// Output a running tool-like item printed (app-server `outputDelta`).
    pub fn output_delta(&mut self, item_id: &str, delta: &str) -> Vec<Payload> {
        if delta.is_empty() || !self.tools.contains_key(item_id) {
            return Vec::new();
        }
        vec![Payload::ToolProgress {
            item_id: item_id.to_owned(),
            display: None,
            output: None,
            output_delta: Some(delta.to_owned()),
        }]
    }

    /// Emits the result of a completed tool-like item once.
    fn result(&mut self, item: &Item, out: &mut Vec<Payload>) {
        let id = item.id();
        if !self.done.insert(id.to_owned()) {
            return;
        }
        self.tools.remove(id);
        let (output, is_error) = result_text(item);
        out.push(Payload::tool_output(
            format!("{id}:out"),
            id,
            output,
            is_error,
        ));
    }
}

/// Token usage in either spelling (`input_tokens` / `inputTokens`).
pub fn usage(v: &Value) -> Usage {
    const KEYS: UsageKeys = UsageKeys {
        input: "input_tokens",
        output: "output_tokens",
        cache_read: "cached_input_tokens",
        cache_write: "cache_write_input_tokens",
    };
    let mut u = KEYS.read(|k| field(v, k).and_then(Value::as_u64));
    // Codex counts cached tokens inside the input (as OpenAI does); the
    // canonical usage keeps them apart, so a price counts them once.
    u.input_tokens = u
        .input_tokens
        .saturating_sub(u.cache_read_input_tokens.unwrap_or(0));
    u
}

/// The terminal event of a completed turn.
pub fn completed(usage: Option<Usage>) -> Payload {
    Payload::ResponseDone {
        status: ResponseStatus::Completed,
        finish_reason: None,
        error: None,
        usage,
    }
}

/// exec: `text`; app-server: `summary` parts, raw `content` parts.
fn reasoning_text(v: &Value) -> String {
    if let Some(t) = v.get("text").and_then(Value::as_str) {
        return t.to_owned();
    }
    let summary = string_list(v.get("summary"));
    if summary.is_empty() {
        string_list(v.get("content")).join("\n\n")
    } else {
        summary.join("\n\n")
    }
}

/// An MCP call's error: its message, else the whole value.
fn error_message(e: &Value) -> String {
    e.get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| e.to_string())
}

/// A todo list's entries as (text, completed).
fn todo_items(v: &Value) -> Vec<(String, bool)> {
    let Some(items) = v.get("items").and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|t| {
            let done = t.get("completed").and_then(Value::as_bool).unwrap_or(false);
            (str_field(t, "text"), done)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_parse_alike() {
        let exec = json!({"id":"i","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":2,"status":"failed"});
        let app = json!({"id":"i","type":"commandExecution","command":"ls","aggregatedOutput":"a\n","exitCode":2,"status":"failed","cwd":null});
        assert_eq!(Item::parse(&exec), Item::parse(&app));
    }

    #[test]
    fn snapshots_become_deltas_of_what_is_new() {
        let mut m = ItemMapper::new();
        let a = m.updated(&json!({"id":"m","type":"agent_message","text":"Hel"}));
        let b = m.updated(&json!({"id":"m","type":"agent_message","text":"Hello"}));
        assert!(
            matches!(&a[1], Payload::ItemDelta { delta_content, .. } if delta_content == "Hel")
        );
        assert_eq!(b.len(), 1);
        assert!(matches!(&b[0], Payload::ItemDelta { delta_content, .. } if delta_content == "lo"));
    }

    #[test]
    fn failing_command_reports_exit_code() {
        let mut m = ItemMapper::new();
        let out = m.completed(&json!({"id":"c","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}));
        assert_eq!(out.len(), 2, "invocation and result");
        match &out[1] {
            Payload::ItemDone {
                final_item:
                    FinalItem::FunctionCallOutput {
                        output, is_error, ..
                    },
                ..
            } => {
                assert_eq!(output, "[exit code 1]");
                assert!(*is_error);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
