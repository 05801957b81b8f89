//! Claude Code stream-json (stdout) → canonical events. Pure: no I/O, no
//! clock reads beyond event stamps, so every capture in `tests/fixtures/claude`
//! replays through it deterministically.
//!
//! Shapes as observed from Claude Code 2.1.330 (realcli/README.md):
//! - `system/init` starts every Claude turn (session id, model) → `Session`,
//!   and binds the hive turn (`response_start`).
//! - `stream_event` carries the raw Anthropic SSE events; each content block
//!   (keyed by API message id + block index) becomes one item.
//! - `assistant` repeats each block complete, just before its
//!   `content_block_stop`: it is the authoritative final content.
//! - `user` carries `tool_result` blocks → `function_call_output` by id.
//! - `result` ends a Claude turn; `user_message_uuids` says which of the user
//!   messages hive wrote it answered. A hive turn (one `Send` plus any steered
//!   messages) ends when every message of it has been answered, so a steered
//!   message that Claude ran as its own queued turn folds into the hive turn.

mod requests;
mod result;
mod stream;
#[cfg(test)]
mod tests;

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::content;
use crate::event::{
    ErrorInfo, FinalItem, ItemType, Origin, Payload, ResponseStatus, StreamEvent, ToolDisplay,
    Usage, new_id,
};
use crate::provider::display;
use crate::provider::json::{self, excerpt};
use crate::provider::{DiagnosticLevel, PermissionRequest, ProviderEvent, SessionInfo};

/// `provider_id` on `response_start` and reasoning items.
pub(crate) const PROVIDER_ID: &str = "claude";

/// What one stdout line produced.
#[derive(Debug, Default)]
pub struct Translated {
    pub events: Vec<ProviderEvent>,
    /// Lines to write back to stdin (answers to control requests hive does
    /// not handle, so the CLI never waits on them).
    pub replies: Vec<String>,
}

impl Translated {
    /// Only the canonical stream events.
    pub fn stream(&self) -> impl Iterator<Item = &StreamEvent> {
        self.events.iter().filter_map(|e| match e {
            ProviderEvent::Stream(s) => Some(s),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
    Tool,
}

impl BlockKind {
    fn of(block_type: &str) -> Option<Self> {
        match block_type {
            "text" => Some(Self::Text),
            "thinking" | "redacted_thinking" => Some(Self::Thinking),
            "tool_use" | "server_tool_use" | "mcp_tool_use" => Some(Self::Tool),
            _ => None,
        }
    }
}

/// One content block of one API message: one canonical item.
#[derive(Debug)]
struct Block {
    message_id: String,
    index: Option<u64>,
    kind: BlockKind,
    item_id: String,
    call_id: String,
    name: String,
    /// Streamed text, thinking or partial tool-input JSON so far.
    content: String,
    /// Finalized (or given up); later lines for it change nothing.
    closed: bool,
    /// A tool block's input length when its live display was last read.
    live_len: usize,
    /// The live display last sent for a streaming tool input.
    live: Option<ToolDisplay>,
}

/// The hive turn in flight.
#[derive(Debug)]
struct Turn {
    turn_id: String,
    /// uuids of the user messages of this turn Claude has not answered yet.
    pending: Vec<String>,
    bound: bool,
    cancel_requested: bool,
    usage: Option<Usage>,
}

#[derive(Debug)]
pub struct Translator {
    session_id: String,
    session_known: bool,
    model: Option<String>,
    commands: Vec<String>,
    announced: Option<SessionInfo>,
    turn: Option<Turn>,
    blocks: Vec<Block>,
    current_message: Option<String>,
    /// Messages of a turn hive ended itself (the interrupt went unanswered).
    /// Until Claude's result for them arrives, its output belongs to that
    /// turn and is dropped rather than shown in the next one.
    abandoned: HashSet<String>,
    last_total_cost: Option<f64>,
    /// Text of a synthetic "API Error: …" assistant message, for the result.
    api_error: Option<String>,
    stop_reason: Option<String>,
    /// The prompt of the last model call (input and cache), the context
    /// the conversation fills.
    last_prompt: Option<u64>,
}

impl Translator {
    /// `resume`: the session being resumed, used as session id until
    /// `system/init` names it.
    pub fn new(resume: Option<&str>) -> Self {
        Self {
            session_id: resume
                .map(str::to_owned)
                .unwrap_or_else(|| new_id("claude")),
            session_known: resume.is_some(),
            model: None,
            commands: Vec::new(),
            announced: None,
            turn: None,
            blocks: Vec::new(),
            current_message: None,
            abandoned: HashSet::new(),
            last_total_cost: None,
            api_error: None,
            stop_reason: None,
            last_prompt: None,
        }
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Claude's own session id, once Claude named it (what `--resume` takes).
    pub fn resume_handle(&self) -> Option<&str> {
        self.session_known.then_some(self.session_id.as_str())
    }

    pub fn turn_id(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.turn_id.as_str())
    }

    pub fn has_turn(&self) -> bool {
        self.turn.is_some()
    }

    /// Claude is still busy with a turn hive already ended.
    pub fn draining(&self) -> bool {
        !self.abandoned.is_empty()
    }

    pub fn cancel_requested(&self) -> bool {
        self.turn.as_ref().is_some_and(|t| t.cancel_requested)
    }

    /// hive wrote the user messages `uuids` for a new turn (`Send`).
    pub fn begin_turn(&mut self, turn_id: &str, uuids: Vec<String>) {
        self.turn = Some(Turn {
            turn_id: turn_id.to_owned(),
            pending: uuids,
            bound: false,
            cancel_requested: false,
            usage: None,
        });
    }

    /// hive wrote another user message into the running turn (`Steer`).
    /// False when no turn runs.
    pub fn add_message(&mut self, uuid: &str) -> bool {
        match self.turn.as_mut() {
            Some(t) => {
                t.pending.push(uuid.to_owned());
                true
            }
            None => false,
        }
    }

    /// hive sent the interrupt; the next `result` ends the turn as cancelled.
    pub fn request_cancel(&mut self) -> bool {
        match self.turn.as_mut() {
            Some(t) => {
                t.cancel_requested = true;
                true
            }
            None => false,
        }
    }

    /// Claude did not answer the interrupt in time: end the turn as
    /// cancelled here; whatever Claude still says about it is ignored.
    pub fn force_cancel(&mut self) -> Vec<ProviderEvent> {
        let Some(turn) = self.turn.take() else {
            return Vec::new();
        };
        self.abandoned.extend(turn.pending.iter().cloned());
        self.blocks.clear();
        vec![self.event(&turn.turn_id, Payload::interrupted(turn.usage))]
    }

    /// The process ended: the turn in flight fails with `message`.
    pub fn fail_turn(&mut self, code: &str, message: &str) -> Vec<ProviderEvent> {
        let Some(turn) = self.turn.take() else {
            return Vec::new();
        };
        self.blocks.clear();
        vec![self.event(
            &turn.turn_id,
            Payload::ResponseError {
                error: ErrorInfo::new(code, message),
            },
        )]
    }

    /// Translates one stdout line. Never fails: a line that is not JSON
    /// becomes a diagnostic and the stream goes on.
    pub fn line(&mut self, line: &str) -> Translated {
        self.line_with(line, true)
    }

    /// `line`, with the typed reading of text deltas on or off (off: every
    /// line is read as a JSON tree; tests compare the two).
    fn line_with(&mut self, line: &str, fast: bool) -> Translated {
        let mut out = Translated::default();
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return out;
        }
        if fast && let Some(delta) = stream::DeltaLine::read(trimmed) {
            self.delta_line(&delta, &mut out);
            return out;
        }
        match serde_json::from_str::<Value>(trimmed) {
            Ok(v) if v.get("type").and_then(Value::as_str).is_some() => self.message(&v, &mut out),
            Ok(_) => diagnostic(
                &mut out,
                DiagnosticLevel::Warn,
                format!("claude: output line without a `type`: {}", excerpt(trimmed)),
            ),
            Err(e) => diagnostic(
                &mut out,
                DiagnosticLevel::Warn,
                format!(
                    "claude: output line is not JSON ({e}): {}",
                    excerpt(trimmed)
                ),
            ),
        }
        out
    }

    fn message(&mut self, v: &Value, out: &mut Translated) {
        if self.draining() && self.names_current_turn(v) {
            // Claude moved on to this turn's messages: whatever it did with
            // the abandoned ones, nothing more of them will come.
            self.abandoned.clear();
        }
        match str_of(v, "type") {
            "system" => self.system(v, out),
            "stream_event" => self.stream_event(v, out),
            "assistant" => self.assistant(v, out),
            "user" => self.user(v, out),
            "result" => self.result(v, out),
            "control_request" => self.control_request(v, out),
            "control_response" => self.control_response(v, out),
            "command_lifecycle" => {
                // An abandoned message Claude finished or dropped.
                if matches!(str_of(v, "state"), "completed" | "cancelled") {
                    self.abandoned.remove(str_of(v, "command_uuid"));
                }
            }
            // Lifecycle of stamped user messages, keep-alives, cancelled control
            // requests: nothing to show.
            other => tracing::trace!(kind = other, "claude line ignored"),
        }
    }

    /// The line says it works on a message of the current turn
    /// (`user_message_uuids` on status, message_start, result…).
    fn names_current_turn(&self, v: &Value) -> bool {
        let Some(turn) = self.turn.as_ref() else {
            return false;
        };
        let mut named = v
            .get("user_message_uuids")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .chain(v.get("user_message_uuid").and_then(Value::as_str));
        named.any(|u| turn.pending.iter().any(|p| p == u))
    }

    // ---- system ----------------------------------------------------------

    fn system(&mut self, v: &Value, out: &mut Translated) {
        match str_of(v, "subtype") {
            "init" => {
                if let Some(id) = v.get("session_id").and_then(Value::as_str)
                    && !id.is_empty()
                {
                    self.session_id = id.to_owned();
                    self.session_known = true;
                }
                if let Some(m) = v.get("model").and_then(Value::as_str) {
                    self.model = Some(m.to_owned());
                }
                if let Some(cmds) = v.get("slash_commands").and_then(Value::as_array) {
                    self.commands = cmds
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect();
                }
                failed_mcp(v, out);
                self.announce(out);
                self.bind(out);
            }
            "api_retry" => {
                let status = v
                    .get("error_status")
                    .and_then(Value::as_u64)
                    .map(|s| format!("{s} "))
                    .unwrap_or_default();
                let kind = v.get("error").and_then(Value::as_str).unwrap_or("error");
                let delay = v.get("retry_delay_ms").and_then(Value::as_u64).unwrap_or(0);
                let attempt = v.get("attempt").and_then(Value::as_u64).unwrap_or(0);
                let max = v.get("max_retries").and_then(Value::as_u64).unwrap_or(0);
                let text = format!(
                    "API error {status}({kind}): retrying in {:.1} s (attempt {attempt} of {max})",
                    delay as f64 / 1000.0
                );
                self.system_message(out, text);
            }
            "status" if str_of(v, "status") == "compacting" => {
                self.system_message(out, "Compacting the conversation…".into());
            }
            "compact_boundary" => {
                let meta = v.get("compact_metadata");
                let trigger = meta
                    .and_then(|m| m.get("trigger"))
                    .and_then(Value::as_str)
                    .unwrap_or("auto");
                let text = match meta
                    .and_then(|m| m.get("pre_tokens"))
                    .and_then(Value::as_u64)
                {
                    Some(n) => format!("Conversation compacted ({trigger}; {n} tokens before)"),
                    None => format!("Conversation compacted ({trigger})"),
                };
                self.system_message(out, text);
            }
            "task_started" => {
                let what = v
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("task");
                let kind = v
                    .get("task_type")
                    .and_then(Value::as_str)
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default();
                self.system_message(out, format!("Task started{kind}: {what}"));
            }
            "task_notification" => {
                let status = v.get("status").and_then(Value::as_str).unwrap_or("update");
                let what = v.get("summary").and_then(Value::as_str).unwrap_or("task");
                self.system_message(out, format!("Task {status}: {what}"));
            }
            // `status: requesting`, thinking token estimates, hooks: noise.
            other => tracing::trace!(subtype = other, "claude system line ignored"),
        }
    }

    /// A notice that belongs in the conversation: a `message` item with
    /// origin `system`; outside a turn a diagnostic.
    fn system_message(&mut self, out: &mut Translated, text: String) {
        if self.turn.is_none() {
            diagnostic(out, DiagnosticLevel::Info, format!("claude: {text}"));
            return;
        }
        for payload in Payload::notice("sys", text) {
            self.push(out, payload);
        }
    }

    fn announce(&mut self, out: &mut Translated) {
        let info = SessionInfo {
            resume_handle: self.session_known.then(|| self.session_id.clone()),
            model: self.model.clone(),
            commands: self.commands.clone(),
        };
        if self.announced.as_ref() != Some(&info) {
            self.announced = Some(info.clone());
            out.events.push(ProviderEvent::Session(info));
        }
    }

    // ---- partial messages ------------------------------------------------

    fn assistant(&mut self, v: &Value, out: &mut Translated) {
        let Some(msg) = v.get("message") else {
            return;
        };
        let content = msg.get("content").and_then(Value::as_array);
        if v.get("is_api_error_message").and_then(Value::as_bool) == Some(true) {
            // The synthetic "API Error: …" reply; the `result` after it fails
            // the turn with this text.
            let text: Vec<&str> = content
                .into_iter()
                .flatten()
                .filter(|c| str_of(c, "type") == "text")
                .map(|c| str_of(c, "text"))
                .collect();
            self.api_error = Some(text.join("\n"));
            return;
        }
        if let Some(u) = msg.get("usage") {
            let u = content::usage(u);
            let prompt = u.total_tokens() - u.output_tokens;
            if prompt > 0 {
                self.last_prompt = Some(prompt);
            }
        }
        let aborted = v.get("aborted").and_then(Value::as_bool) == Some(true);
        let message_id = str_of(msg, "id").to_owned();
        for c in content.into_iter().flatten() {
            let Some(kind) = BlockKind::of(str_of(c, "type")) else {
                continue;
            };
            let found = self.blocks.iter().position(|b| {
                b.message_id == message_id
                    && b.kind == kind
                    && !b.closed
                    && (kind != BlockKind::Tool || b.call_id == str_of(c, "id"))
            });
            if aborted {
                // Interrupted partial content: the cancelled turn drops it.
                if let Some(pos) = found {
                    self.blocks[pos].closed = true;
                }
                continue;
            }
            let pos = match found {
                Some(pos) => pos,
                // Not streamed (non-streaming fallback, partial messages off).
                None => self.open_block(out, &message_id, None, kind, &Value::Null),
            };
            let final_item = final_block(&self.blocks[pos], c);
            self.finish_block(pos, final_item, out);
        }
    }

    fn user(&mut self, v: &Value, out: &mut Translated) {
        let Some(content) = v
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
        else {
            return;
        };
        for c in content {
            let Some(content::ToolResult {
                call_id,
                output,
                is_error,
            }) = content::tool_result(c)
            else {
                // "[Request interrupted by user]" and echoed prompts: the
                // runner shows the user's own messages.
                continue;
            };
            if let Some(b) = self
                .blocks
                .iter_mut()
                .find(|b| b.kind == BlockKind::Tool && b.call_id == call_id)
            {
                b.closed = true;
            }
            self.push(
                out,
                Payload::tool_output(new_id("out"), call_id, output, is_error),
            );
        }
    }

    // ---- end of a Claude turn --------------------------------------------

    fn event(&self, turn_id: &str, payload: Payload) -> ProviderEvent {
        ProviderEvent::Stream(StreamEvent::new(turn_id, &self.session_id, payload))
    }

    /// `response_start` for the hive turn, once, before anything else of it.
    fn bind(&mut self, out: &mut Translated) {
        if self.draining() {
            return;
        }
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if turn.bound {
            return;
        }
        turn.bound = true;
        let turn_id = turn.turn_id.clone();
        let model_id = self.model.clone().unwrap_or_else(|| PROVIDER_ID.to_owned());
        out.events.push(self.event(
            &turn_id,
            Payload::ResponseStart {
                model_id,
                provider_id: PROVIDER_ID.into(),
            },
        ));
    }

    /// An item event of the hive turn; dropped when no turn runs (Claude
    /// talking after hive ended the turn itself).
    fn push(&mut self, out: &mut Translated, payload: Payload) {
        if self.draining() {
            tracing::debug!("claude output of an abandoned turn dropped");
            return;
        }
        self.bind(out);
        let Some(turn) = self.turn.as_ref() else {
            tracing::debug!("claude output outside a hive turn dropped");
            return;
        };
        let ev = self.event(&turn.turn_id, payload);
        out.events.push(ev);
    }
}

/// The complete block `c` of an `assistant` line, as the final item of
/// the streamed block `b`.
fn final_block(b: &Block, c: &Value) -> FinalItem {
    match b.kind {
        BlockKind::Text => FinalItem::Message {
            content: str_of(c, "text").to_owned(),
            origin: Origin::Agent,
        },
        BlockKind::Thinking => FinalItem::Reasoning {
            content: match str_of(c, "type") {
                "redacted_thinking" => "(redacted thinking)".to_owned(),
                _ => str_of(c, "thinking").to_owned(),
            },
            provider_id: PROVIDER_ID.into(),
        },
        BlockKind::Tool => {
            let name = match str_of(c, "name") {
                "" => b.name.clone(),
                n => n.to_owned(),
            };
            let call_id = match str_of(c, "id") {
                "" => b.call_id.clone(),
                id => id.to_owned(),
            };
            let arguments = match c.get("input") {
                Some(Value::Object(m)) => m.clone(),
                _ => parse_arguments(&b.content),
            };
            display::function_call(name, call_id, arguments, &display::COMMON)
        }
    }
}

/// An MCP server of the pane's (`[[mcp_server]]`, issue 51) that Claude
/// Code's `init` lists as `failed` is a warning in the pane; `pending` ones
/// are still connecting and `connected` ones work.
fn failed_mcp(init: &Value, out: &mut Translated) {
    let servers = init.get("mcp_servers").and_then(Value::as_array);
    for s in servers.into_iter().flatten() {
        if str_of(s, "status") == "failed" {
            let name = crate::sanitize::neutralize(str_of(s, "name")).into_owned();
            diagnostic(
                out,
                DiagnosticLevel::Warn,
                format!("MCP server `{name}` did not start (Claude Code lists it as failed)"),
            );
        }
    }
}

fn diagnostic(out: &mut Translated, level: DiagnosticLevel, message: String) {
    out.events
        .push(ProviderEvent::Diagnostic { level, message });
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Streamed tool input: a JSON object, or what there is of it.
fn parse_arguments(raw: &str) -> Map<String, Value> {
    if raw.trim().is_empty() {
        return Map::new();
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => m,
        Ok(other) => Map::from_iter([("input".to_owned(), other)]),
        Err(_) => Map::from_iter([("raw".to_owned(), Value::String(raw.to_owned()))]),
    }
}

/// The error of a failed `result`. `subtype` may say "success" while
/// `is_error` is true (API errors after retries): the message comes from
/// `result`, `errors`, or the synthetic API-error reply before it.
fn result_error(v: &Value, api_error: Option<String>) -> ErrorInfo {
    let reason = match str_of(v, "terminal_reason") {
        "" => match str_of(v, "subtype") {
            "" | "success" => "error",
            s => s,
        },
        r => r,
    };
    let code = match v.get("api_error_status").and_then(Value::as_u64) {
        Some(status) => format!("{reason}_{status}"),
        None => reason.to_owned(),
    };
    let errors: Vec<&str> = v
        .get("errors")
        .and_then(Value::as_array)
        .map(|e| e.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let message = match str_of(v, "result") {
        "" => api_error
            .filter(|e| !e.is_empty())
            .or_else(|| (!errors.is_empty()).then(|| errors.join("; ")))
            .unwrap_or_else(|| format!("Claude Code ended the turn with `{reason}`")),
        r => r.to_owned(),
    };
    ErrorInfo::new(code, message)
}
