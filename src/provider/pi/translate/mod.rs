//! pi RPC events → canonical stream events.
//!
//! Shapes as captured from pi 0.73.1 (realcli README "pi", seed 003): responses
//! `{type:"response", command, success, id?, error?, data?}` and events
//! `agent_start/end`, `turn_start/end`, `message_start/update/end` (text,
//! thinking and tool-call blocks), `tool_execution_start/update/end`,
//! `auto_retry_start/end`, `auto_compaction_start/end`, `queue_update`.
//!
//! A hive turn is one `prompt` up to the `agent_end` that pi does not follow
//! with a retry: pi's own "turns" are single model calls inside it. Every
//! `message_update` repeats the whole partial message, so text is diffed
//! against what was already emitted and only the new suffix goes out.
//! Pure and synchronous (lines to write back are queued in an outbox) so
//! captures can be replayed in tests.

mod blocks;
mod events;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::content::{result_text, usage};
use crate::event::{
    ErrorInfo, FinalItem, ItemType, Origin, Payload, ResponseStatus, StreamEvent, Usage, new_id,
};
use crate::provider::display::{self, ToolKeys};
use crate::provider::json::{excerpt, object_line, str_field};

/// pi's tool argument names (bash, read, edit, write, grep, find, ls).
pub(crate) const TOOL_KEYS: ToolKeys = ToolKeys {
    summary: &["command", "path", "pattern", "url", "query"],
    replace: &[("oldText", "newText")],
    write: &["content"],
    patch: &["diff", "patch"],
};
use crate::provider::{DiagnosticLevel, ProviderEvent, SessionInfo};

/// Provider id stamped on `response_start` and thinking items.
pub(crate) const PROVIDER_ID: &str = "pi";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
    Tool,
}

/// One content block of the assistant message being streamed.
#[derive(Debug)]
struct Block {
    kind: BlockKind,
    item_id: String,
    /// Text already sent as deltas (text and thinking blocks).
    emitted: String,
    call_id: Option<String>,
    done: bool,
}

/// The parts of a `message_update` the translator reads; everything else
/// (the repeated `message`, usage, tool arguments in partials) is skipped.
#[derive(Debug, Deserialize)]
struct Update<'a> {
    #[serde(rename = "assistantMessageEvent", borrow, default)]
    ame: Option<Ame<'a>>,
}

#[derive(Debug, Deserialize)]
struct Ame<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(rename = "contentIndex", default)]
    index: usize,
    #[serde(default, borrow)]
    delta: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(rename = "toolCall", default)]
    tool_call: Option<Value>,
    #[serde(default, borrow)]
    partial: Option<Partial<'a>>,
}

#[derive(Debug, Deserialize)]
struct Partial<'a> {
    #[serde(default, borrow)]
    content: Vec<PartialBlock<'a>>,
}

#[derive(Debug, Deserialize)]
struct PartialBlock<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
}

/// A hive turn in flight.
#[derive(Debug)]
struct Turn {
    turn_id: String,
    prompt_id: String,
    /// The `prompt` line as written, to send again to a replacement process.
    prompt_line: String,
    started: bool,
    /// Blocks of the current assistant message by `contentIndex`.
    blocks: BTreeMap<usize, Block>,
    /// Tool calls already shown as `function_call` items: call id → item id.
    announced: HashMap<String, String>,
    usage: Option<Usage>,
    last_stop: Option<String>,
    last_error: Option<String>,
    /// Id of the `get_state` probe sent after an `agent_end` with an error:
    /// pi announces a retry or compaction before it answers the probe.
    settling: Option<String>,
    cancel_requested: bool,
}

/// Translation state of one pi process.
#[derive(Debug)]
pub struct PiTranslator {
    session_id: String,
    /// pi's session id once `get_state` reported it.
    agent_session: Option<String>,
    configured_model: Option<String>,
    model: Option<String>,
    turn: Option<Turn>,
    outbox: Vec<String>,
    probes: u64,
    queued: usize,
}

impl PiTranslator {
    /// `session_id` names events until pi reports its own session id.
    pub fn new(session_id: &str, configured_model: Option<&str>) -> Self {
        Self {
            session_id: session_id.to_owned(),
            agent_session: None,
            configured_model: configured_model.map(str::to_owned),
            model: None,
            turn: None,
            outbox: Vec::new(),
            probes: 0,
            queued: 0,
        }
    }

    /// The `get_state` request the host sends at start (session id, model).
    pub(crate) fn state_request() -> String {
        json!({"id": "hive-state", "type": "get_state"}).to_string()
    }

    /// The `/model` picker's list (`provider/id`, as `set_model` takes it).
    pub(crate) fn models_request() -> String {
        json!({"id": "hive-models", "type": "get_available_models"}).to_string()
    }

    pub(crate) fn agent_session(&self) -> Option<&str> {
        self.agent_session.as_deref()
    }

    pub fn has_turn(&self) -> bool {
        self.turn.is_some()
    }

    /// The host wrote `prompt` (the line `line`) with id `prompt_id` for `turn_id`.
    pub fn begin_turn(&mut self, turn_id: &str, prompt_id: &str, line: &str) {
        self.turn = Some(Turn {
            turn_id: turn_id.to_owned(),
            prompt_id: prompt_id.to_owned(),
            prompt_line: line.to_owned(),
            started: false,
            blocks: BTreeMap::new(),
            announced: HashMap::new(),
            usage: None,
            last_stop: None,
            last_error: None,
            settling: None,
            cancel_requested: false,
        });
    }

    /// The host sent `abort`: the turn's end counts as cancelled.
    pub fn cancel_requested(&mut self) {
        if let Some(t) = self.turn.as_mut() {
            t.cancel_requested = true;
        }
    }

    /// The `prompt` line of a turn pi has not started yet.
    pub(crate) fn pending_prompt(&self) -> Option<String> {
        self.turn
            .as_ref()
            .filter(|t| !t.started)
            .map(|t| t.prompt_line.clone())
    }

    /// A notice from hive itself, shown in the running turn as a system
    /// message (a pane notice when no turn runs).
    pub(crate) fn system_notice(&mut self, text: &str) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        self.system_message(text.to_owned(), &mut out);
        out
    }

    /// Lines the host must write to pi's stdin, in order.
    pub fn take_outbox(&mut self) -> Vec<String> {
        std::mem::take(&mut self.outbox)
    }

    /// Ends the turn as cancelled on the host's side (pi ignored `abort`).
    pub(crate) fn end_cancelled(&mut self) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        self.finish(&mut out, Payload::interrupted(None));
        out
    }

    /// Ends the turn as failed on the host's side (pi exited, a write failed).
    pub fn end_error(&mut self, code: &str, message: &str) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        self.finish(
            &mut out,
            Payload::ResponseError {
                error: ErrorInfo::new(code, message),
            },
        );
        out
    }

    /// Translates one stdout line. Malformed lines become diagnostics.
    pub fn push_line(&mut self, line: &str) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        if line.trim().is_empty() {
            return out;
        }
        // Fast path for the bulk of the stream: a typed, borrowing parse that
        // skips the repeated `message` copy instead of building a Value tree.
        if line.starts_with(r#"{"type":"message_update""#)
            && let Ok(update) = serde_json::from_str::<Update<'_>>(line)
        {
            self.message_update(update, &mut out);
            return out;
        }
        let v = match object_line("pi", line) {
            Ok(v) => v,
            Err(warning) => {
                out.push(ProviderEvent::diagnostic(DiagnosticLevel::Warn, warning));
                return out;
            }
        };
        match str_field(&v, "type").unwrap_or_default() {
            "response" => self.response(&v, &mut out),
            "session" => {
                if let Some(id) = str_field(&v, "id") {
                    self.set_session(Some(id), None, &mut out);
                }
            }
            "agent_start" => {
                if let Some(t) = self.turn.as_mut() {
                    t.settling = None;
                }
                self.ensure_started(&mut out);
            }
            "agent_end" => self.agent_end(&mut out),
            "turn_start" | "turn_end" => {}
            // pi's echo of `set_thinking_level`: the pane already says the
            // effort it set with `/effort` (#34 item 6).
            "thinking_level_changed" => {}
            "message_start" => self.message_start(&v, &mut out),
            "message_update" => match Update::deserialize(&v) {
                Ok(update) => self.message_update(update, &mut out),
                Err(e) => out.push(ProviderEvent::diagnostic(
                    DiagnosticLevel::Warn,
                    format!("pi: unreadable message_update ({e}): {}", excerpt(line)),
                )),
            },
            "message_end" => self.message_end(&v, &mut out),
            "tool_execution_start" => self.tool_start(&v, &mut out),
            "tool_execution_update" => self.tool_progress(&v, &mut out),
            "tool_execution_end" => self.tool_end(&v, &mut out),
            "auto_retry_start" => self.retry_start(&v, &mut out),
            "auto_retry_end" => self.retry_end(&v, &mut out),
            "auto_compaction_start" | "compaction_start" => self.compaction_start(&v, &mut out),
            "auto_compaction_end" | "compaction_end" => self.compaction_end(&v, &mut out),
            "queue_update" => self.queue_update(&v, &mut out),
            "extension_ui_request" | "hook_ui_request" => self.ui_request(&v, &mut out),
            "extension_error" | "hook_error" => out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "pi extension error: {}",
                    str_field(&v, "error").unwrap_or("unknown")
                ),
            )),
            other => out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Info,
                format!("pi: event `{other}` not shown: {}", excerpt(line)),
            )),
        }
        out
    }

    fn emit(&self, out: &mut Vec<ProviderEvent>, payload: Payload) {
        if let Some(t) = &self.turn {
            out.push(ProviderEvent::Stream(StreamEvent::new(
                &t.turn_id,
                &self.session_id,
                payload,
            )));
        }
    }

    /// The turn's last error ends it: pi stopped with it and no retry
    /// follows.
    fn error_stands(&mut self, out: &mut Vec<ProviderEvent>) {
        let message = self
            .turn
            .as_ref()
            .and_then(|t| t.last_error.clone())
            .unwrap_or_else(|| "pi stopped with an error".into());
        self.finish(
            out,
            Payload::ResponseError {
                error: ErrorInfo::new("pi_error", message),
            },
        );
    }

    fn finish(&mut self, out: &mut Vec<ProviderEvent>, payload: Payload) {
        if self.turn.is_some() {
            self.emit(out, payload);
            self.turn = None;
        }
        // A session id learned mid-turn names the events of later turns.
        if let Some(id) = &self.agent_session {
            self.session_id.clone_from(id);
        }
    }

    /// The model pi said it runs (`get_state`, `set_model`), else the
    /// configured one.
    fn model_id(&self) -> String {
        self.model
            .clone()
            .or_else(|| self.configured_model.clone())
            .unwrap_or_else(|| PROVIDER_ID.to_owned())
    }

    fn ensure_started(&mut self, out: &mut Vec<ProviderEvent>) {
        let Some(t) = self.turn.as_ref() else { return };
        if t.started {
            return;
        }
        let model_id = self.model_id();
        self.emit(
            out,
            Payload::ResponseStart {
                model_id,
                provider_id: PROVIDER_ID.into(),
            },
        );
        if let Some(t) = self.turn.as_mut() {
            t.started = true;
        }
    }

    fn set_session(&mut self, id: Option<&str>, model: Option<&str>, out: &mut Vec<ProviderEvent>) {
        let mut changed = false;
        if let Some(id) = id.filter(|i| !i.is_empty())
            && self.agent_session.as_deref() != Some(id)
        {
            self.agent_session = Some(id.to_owned());
            // Events of a turn already started keep the id they started with.
            if self.turn.as_ref().is_none_or(|t| !t.started) {
                self.session_id = id.to_owned();
            }
            changed = true;
        }
        if let Some(m) = model.filter(|m| !m.is_empty())
            && self.model.as_deref() != Some(m)
        {
            self.model = Some(m.to_owned());
            changed = true;
        }
        if changed {
            out.push(ProviderEvent::Session(SessionInfo {
                resume_handle: self.agent_session.clone(),
                model: Some(self.model_id()),
                commands: Vec::new(),
            }));
        }
    }

    /// A notice that belongs in the conversation (retries, compaction).
    fn system_message(&mut self, text: String, out: &mut Vec<ProviderEvent>) {
        if self.turn.is_none() {
            out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Info,
                format!("pi: {text}"),
            ));
            return;
        }
        self.ensure_started(out);
        for payload in Payload::notice("notice", text) {
            self.emit(out, payload);
        }
    }

    fn response(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        let command = str_field(v, "command").unwrap_or("?");
        let success = v.get("success").and_then(Value::as_bool).unwrap_or(false);
        let id = str_field(v, "id");
        let error = str_field(v, "error").unwrap_or("unknown error");
        if command == "get_available_models" {
            return self.models(v.get("data").filter(|_| success), out);
        }
        if command == "get_state" && success {
            let data = v.get("data");
            let sid = data.and_then(|d| str_field(d, "sessionId"));
            let model = data
                .and_then(|d| d.get("model"))
                .and_then(|m| str_field(m, "id"));
            self.set_session(sid, model, out);
        }
        if command == "set_model" && success {
            // `/model` took: pi answers with the model it now runs.
            let model = v.get("data").and_then(|m| str_field(m, "id"));
            self.set_session(None, model, out);
        }
        let settling = self
            .turn
            .as_ref()
            .and_then(|t| t.settling.as_deref())
            .is_some_and(|p| Some(p) == id);
        if settling {
            // pi answered the probe without announcing a retry: the error stands.
            self.error_stands(out);
            return;
        }
        if success {
            return;
        }
        let ours = self
            .turn
            .as_ref()
            .is_some_and(|t| command == "prompt" && id == Some(t.prompt_id.as_str()));
        if ours {
            self.finish(
                out,
                Payload::ResponseError {
                    error: ErrorInfo::new("pi_rejected", error),
                },
            );
        } else {
            out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Warn,
                format!("pi rejected `{command}`: {error}"),
            ));
        }
    }

    /// pi's models (`data.models`, each `{provider, id}`); where it cannot
    /// list them (an older pi), the configured model (issue 34 item 7).
    fn models(&self, data: Option<&Value>, out: &mut Vec<ProviderEvent>) {
        let listed: Vec<String> = data
            .and_then(|d| d.get("models"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| {
                let id = str_field(m, "id")?;
                Some(match str_field(m, "provider") {
                    Some(p) => format!("{p}/{id}"),
                    None => id.to_owned(),
                })
            })
            .collect();
        let models = if listed.is_empty() {
            self.configured_model.clone().into_iter().collect()
        } else {
            listed
        };
        if !models.is_empty() {
            out.push(ProviderEvent::Models(models));
        }
    }

    fn agent_end(&mut self, out: &mut Vec<ProviderEvent>) {
        if self.turn.is_none() {
            return;
        }
        self.ensure_started(out);
        let Some(t) = self.turn.as_ref() else { return };
        let stop = t.last_stop.clone();
        let cancel = t.cancel_requested;
        let payload = match stop.as_deref() {
            Some("aborted") => cancelled(),
            Some("error") if cancel => cancelled(),
            Some("error") => {
                self.probes += 1;
                let probe = format!("hive-settle-{}", self.probes);
                self.outbox
                    .push(json!({"id": probe, "type": "get_state"}).to_string());
                if let Some(t) = self.turn.as_mut() {
                    t.settling = Some(probe);
                }
                return;
            }
            other => Payload::ResponseDone {
                status: ResponseStatus::Completed,
                finish_reason: Some(other.unwrap_or("stop").to_owned()),
                error: None,
                usage: t.usage.clone(),
            },
        };
        self.finish(out, payload);
    }
}

fn cancelled() -> Payload {
    Payload::ResponseDone {
        status: ResponseStatus::Cancelled,
        finish_reason: Some("aborted".into()),
        error: None,
        usage: None,
    }
}

fn object(v: Option<&Value>) -> Map<String, Value> {
    match v {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::Null) | None => Map::new(),
        Some(other) => {
            let mut m = Map::new();
            m.insert("input".into(), other.clone());
            m
        }
    }
}
