//! Gemini CLI headless `stream-json` lines → canonical stream events, for one
//! turn (one `gemini -p` process).
//!
//! Shapes as captured from Gemini CLI 0.61.0 (realcli README, "Gemini CLI"):
//! `init {session_id, model}`, `message {role, content, delta}`,
//! `tool_use {tool_name, tool_id, parameters}`, `tool_result {tool_id, status,
//! output?, error?}`, `result {status, error?, stats}`. The stream carries no
//! thinking. Pure and synchronous so captures can be replayed in tests.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::event::{
    ErrorInfo, FinalItem, ItemType, Origin, Payload, ResponseStatus, StreamEvent, Usage, new_id,
};
use crate::provider::display::{self, COMMON};
use crate::provider::json::{excerpt, object_line, str_field};

use crate::provider::{DiagnosticLevel, ProviderEvent, SessionInfo};

/// Provider id stamped on `response_start`.
pub(crate) const PROVIDER_ID: &str = "gemini";

/// The assistant text item being streamed.
#[derive(Debug)]
struct OpenText {
    item_id: String,
    content: String,
}

/// Translation state of one turn.
#[derive(Debug)]
pub struct GeminiTurn {
    turn_id: String,
    session_id: String,
    /// Model named in the agent config; wins over the CLI's `auto`.
    configured_model: Option<String>,
    started: bool,
    ended: bool,
    text: Option<OpenText>,
    /// The CLI's session id once `init` named it.
    agent_session: Option<String>,
}

impl GeminiTurn {
    /// `session_id` names the turn's events until `init` reports the CLI's own.
    pub fn new(turn_id: &str, session_id: &str, configured_model: Option<&str>) -> Self {
        Self {
            turn_id: turn_id.to_owned(),
            session_id: session_id.to_owned(),
            configured_model: configured_model.map(str::to_owned),
            started: false,
            ended: false,
            text: None,
            agent_session: None,
        }
    }

    /// True once the turn's terminal event was produced.
    pub(crate) fn is_ended(&self) -> bool {
        self.ended
    }

    /// True once `response_start` was produced (the CLI began the turn).
    pub fn started(&self) -> bool {
        self.started
    }

    /// A notice from hive itself, shown in the conversation as a system message.
    pub(crate) fn system_notice(&mut self, text: &str) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        let ts = Utc::now();
        self.ensure_started(ts, None, &mut out);
        for payload in Payload::notice("notice", text) {
            self.emit(&mut out, ts, payload);
        }
        out
    }

    /// Translates one stdout line. Malformed lines become diagnostics.
    pub fn push_line(&mut self, line: &str) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        if line.trim().is_empty() {
            return out;
        }
        let value = match object_line("gemini", line) {
            Ok(v) => v,
            Err(warning) => {
                out.push(ProviderEvent::diagnostic(DiagnosticLevel::Warn, warning));
                return out;
            }
        };
        if self.ended {
            // Anything after the terminal event (a result racing an interrupt)
            // belongs to a turn the host already closed.
            return out;
        }
        let ts = timestamp(&value);
        let kind = str_field(&value, "type").unwrap_or_default();
        match kind {
            "init" => self.init(&value, ts, &mut out),
            "message" => self.message(&value, ts, &mut out),
            "tool_use" => self.tool_use(&value, ts, &mut out),
            "tool_result" => self.tool_result(&value, ts, &mut out),
            "result" => self.result(&value, ts, &mut out),
            "error" => {
                // Non-fatal warnings the CLI reports in-stream.
                let message = error_message(&value).unwrap_or_else(|| excerpt(line));
                out.push(ProviderEvent::diagnostic(
                    DiagnosticLevel::Warn,
                    format!("gemini: {message}"),
                ));
            }
            other => out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Info,
                format!("gemini: event `{other}` not shown: {}", excerpt(line)),
            )),
        }
        out
    }

    /// The host interrupted the turn: it ends as cancelled.
    pub fn cancelled(&mut self) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        self.ended = true;
        if let Some(text) = self.text.take() {
            self.emit(
                &mut out,
                Utc::now(),
                Payload::item_interrupted(text.item_id),
            );
        }
        self.emit(&mut out, Utc::now(), Payload::interrupted(None));
        out
    }

    /// The process ended (or could not start) before a `result` line: the turn
    /// fails with `report` (exit status and stderr tail).
    pub fn exited(&mut self, code: &str, report: &str) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        self.ended = true;
        self.emit(
            &mut out,
            Utc::now(),
            Payload::ResponseError {
                error: ErrorInfo::new(code, report),
            },
        );
        out
    }

    fn emit(&self, out: &mut Vec<ProviderEvent>, ts: DateTime<Utc>, payload: Payload) {
        let mut ev = StreamEvent::new(&self.turn_id, &self.session_id, payload);
        ev.timestamp = ts;
        out.push(ProviderEvent::Stream(ev));
    }

    fn model_id(&self, reported: Option<&str>) -> String {
        self.configured_model
            .clone()
            .or_else(|| reported.filter(|m| !m.is_empty()).map(str::to_owned))
            .unwrap_or_else(|| PROVIDER_ID.to_owned())
    }

    fn ensure_started(
        &mut self,
        ts: DateTime<Utc>,
        model: Option<&str>,
        out: &mut Vec<ProviderEvent>,
    ) {
        if self.started {
            return;
        }
        self.started = true;
        let model_id = self.model_id(model);
        self.emit(
            out,
            ts,
            Payload::ResponseStart {
                model_id,
                provider_id: PROVIDER_ID.into(),
            },
        );
    }

    fn init(&mut self, v: &Value, ts: DateTime<Utc>, out: &mut Vec<ProviderEvent>) {
        let model = str_field(v, "model");
        if let Some(sid) = str_field(v, "session_id").filter(|s| !s.is_empty()) {
            self.session_id = sid.to_owned();
            self.agent_session = Some(sid.to_owned());
            out.push(ProviderEvent::Session(SessionInfo {
                resume_handle: Some(sid.to_owned()),
                model: Some(self.model_id(model)),
                commands: Vec::new(),
            }));
        }
        self.ensure_started(ts, model, out);
    }

    fn message(&mut self, v: &Value, ts: DateTime<Utc>, out: &mut Vec<ProviderEvent>) {
        // The user's own prompt is echoed; the host already shows it.
        if str_field(v, "role") != Some("assistant") {
            return;
        }
        let content = str_field(v, "content").unwrap_or_default();
        self.ensure_started(ts, None, out);
        let is_delta = v.get("delta").and_then(Value::as_bool).unwrap_or(false);
        if !is_delta {
            // A whole message: close what streamed before and show it as one item.
            self.close_text(ts, out);
        }
        if self.text.is_none() {
            let item_id = new_id("item");
            self.emit(
                out,
                ts,
                Payload::item_start(item_id.clone(), ItemType::Message),
            );
            self.text = Some(OpenText {
                item_id,
                content: String::new(),
            });
        }
        if let Some(text) = self.text.as_mut() {
            text.content.push_str(content);
            let item_id = text.item_id.clone();
            if !content.is_empty() {
                self.emit(
                    out,
                    ts,
                    Payload::ItemDelta {
                        item_id,
                        delta_content: content.to_owned(),
                    },
                );
            }
        }
        if !is_delta {
            self.close_text(ts, out);
        }
    }

    fn close_text(&mut self, ts: DateTime<Utc>, out: &mut Vec<ProviderEvent>) {
        if let Some(text) = self.text.take() {
            self.emit(
                out,
                ts,
                Payload::ItemDone {
                    item_id: text.item_id,
                    final_item: FinalItem::Message {
                        content: text.content,
                        origin: Origin::Agent,
                    },
                },
            );
        }
    }

    fn tool_use(&mut self, v: &Value, ts: DateTime<Utc>, out: &mut Vec<ProviderEvent>) {
        self.ensure_started(ts, None, out);
        self.close_text(ts, out);
        let name = str_field(v, "tool_name").unwrap_or("tool").to_owned();
        let item_id = new_id("tool");
        let call_id = str_field(v, "tool_id")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .unwrap_or_else(|| item_id.clone());
        let arguments = match v.get("parameters") {
            Some(Value::Object(m)) => m.clone(),
            Some(Value::Null) | None => Map::new(),
            Some(other) => {
                let mut m = Map::new();
                m.insert("input".into(), other.clone());
                m
            }
        };
        self.emit(
            out,
            ts,
            Payload::tool_start(item_id.clone(), name.clone(), call_id.clone()),
        );
        self.emit(
            out,
            ts,
            Payload::ItemDone {
                item_id,
                final_item: display::function_call(name, call_id, arguments, &COMMON),
            },
        );
    }

    fn tool_result(&mut self, v: &Value, ts: DateTime<Utc>, out: &mut Vec<ProviderEvent>) {
        self.ensure_started(ts, None, out);
        self.close_text(ts, out);
        let Some(call_id) = str_field(v, "tool_id").filter(|s| !s.is_empty()) else {
            out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Warn,
                "gemini: tool_result without tool_id".to_owned(),
            ));
            return;
        };
        let is_error = str_field(v, "status").is_some_and(|s| s != "success");
        let output = match v.get("output") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => {
                if is_error {
                    error_message(v).unwrap_or_default()
                } else {
                    String::new()
                }
            }
            Some(other) => other.to_string(),
        };
        self.emit(
            out,
            ts,
            Payload::tool_output(new_id("out"), call_id, output, is_error),
        );
    }

    fn result(&mut self, v: &Value, ts: DateTime<Utc>, out: &mut Vec<ProviderEvent>) {
        self.ensure_started(ts, None, out);
        let stats = v.get("stats");
        if str_field(v, "status") == Some("success") {
            self.close_text(ts, out);
            if let Some(model) = stats.and_then(main_model) {
                out.push(ProviderEvent::Session(SessionInfo {
                    resume_handle: self.agent_session.clone(),
                    model: Some(self.configured_model.clone().unwrap_or(model)),
                    commands: Vec::new(),
                }));
            }
            self.ended = true;
            self.emit(
                out,
                ts,
                Payload::ResponseDone {
                    status: ResponseStatus::Completed,
                    finish_reason: Some("stop".into()),
                    error: None,
                    usage: stats.map(usage),
                },
            );
        } else {
            let code = v
                .get("error")
                .and_then(|e| str_field(e, "type"))
                .filter(|c| !c.is_empty())
                .unwrap_or("gemini_error");
            let message =
                error_message(v).unwrap_or_else(|| "the Gemini CLI reported an error".into());
            self.ended = true;
            self.emit(
                out,
                ts,
                Payload::ResponseError {
                    error: ErrorInfo::new(code, message),
                },
            );
        }
    }
}

/// Usage of the whole turn from `result.stats`: `input` excludes cached
/// tokens; the model is the one that answered (the pane may run `auto`).
fn usage(stats: &Value) -> Usage {
    let n = |k: &str| stats.get(k).and_then(Value::as_u64);
    let cached = n("cached");
    let input =
        n("input").or_else(|| n("input_tokens").map(|i| i.saturating_sub(cached.unwrap_or(0))));
    Usage {
        input_tokens: input.unwrap_or(0),
        output_tokens: n("output_tokens").unwrap_or(0),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: None,
        cost_usd: None,
        cost_estimated: false,
        context_tokens: None,
        context_window: None,
        model: main_model(stats),
    }
}

/// The model that did the work: `stats.models` also lists the router model,
/// whose prompt is small, so the one with the most input tokens wins.
fn main_model(stats: &Value) -> Option<String> {
    let models = stats.get("models")?.as_object()?;
    models
        .iter()
        .map(|(name, s)| {
            let input = s.get("input_tokens").and_then(Value::as_u64).unwrap_or(0);
            (input, name)
        })
        .filter(|(input, _)| *input > 0)
        .max_by_key(|(input, _)| *input)
        .map(|(_, name)| name.clone())
}

fn error_message(v: &Value) -> Option<String> {
    match v.get("error")? {
        Value::String(s) => Some(s.clone()),
        e => str_field(e, "message").map(str::to_owned),
    }
}

fn timestamp(v: &Value) -> DateTime<Utc> {
    str_field(v, "timestamp")
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(Utc::now)
}
