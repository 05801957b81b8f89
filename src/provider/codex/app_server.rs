//! `transport = "app-server"` (default): one persistent `codex app-server`
//! per pane, JSON-RPC over stdio (the server omits the `jsonrpc` field, and so
//! do we; realcli/README.md "codex app-server").
//!
//! Startup: `initialize` → `initialized` → `thread/resume` (the pane's last
//! thread; on failure a visible fallback to) `thread/start`. A turn is
//! `turn/start`; its notifications stream deltas and items; it ends with
//! `turn/completed` (`completed` | `interrupted` | `failed`). `turn/interrupt`
//! and `turn/steer` act on the running turn; approval requests from the
//! server become `ProviderEvent::Permission` and are answered from the pane.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::process::ChildStdout;
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant};

use super::items::{ItemMapper, Out, TextKind, completed, usage};
use super::{CodexSettings, PROVIDER_ID, announce, excerpt};
use crate::event::{ErrorInfo, Payload, ResponseStatus, Usage, new_id};
use crate::provider::Sink;
use crate::provider::process::{AgentProcess, LineReader};
use crate::provider::{
    DiagnosticLevel, EventSink, PermissionDecision, PermissionRequest, ProviderCommand,
    ProviderEvent, ProviderHandle,
};
use crate::timer;

/// Translates the notifications of one turn.
#[derive(Debug, Default)]
pub struct AppTurn {
    /// The server's id of this turn, once known; notifications of other
    /// turns (a turn abandoned after an ignored interrupt) are dropped.
    pub codex_turn: Option<String>,
    items: ItemMapper,
    /// The thread's token total when the turn began, and the latest one.
    base: Option<Usage>,
    total: Option<Usage>,
    pending_error: Option<String>,
    finished: bool,
}

impl AppTurn {
    pub fn new() -> Self {
        Self::default()
    }

    /// A turn of a thread that has already used `base` tokens.
    pub fn with_base(base: Usage) -> Self {
        Self {
            base: Some(base),
            ..Self::default()
        }
    }

    /// Sets the base once: the thread total when the server named the turn
    /// (a resumed thread reports its total only after the resume answer).
    pub fn set_base(&mut self, base: &Usage) {
        if self.base.is_none() {
            self.base = Some(base.clone());
        }
    }

    /// The thread's token total as last reported.
    pub fn total(&self) -> Option<&Usage> {
        self.total.as_ref()
    }

    pub fn finished(&self) -> bool {
        self.finished
    }

    pub fn items(&self) -> &ItemMapper {
        &self.items
    }

    /// One server notification; unrelated ones yield nothing.
    pub fn notification(&mut self, method: &str, params: &Value) -> Vec<Out> {
        let mut out = Vec::new();
        let turn_of = params
            .get("turnId")
            .and_then(Value::as_str)
            .or_else(|| params.pointer("/turn/id").and_then(Value::as_str));
        match (self.codex_turn.as_deref(), turn_of) {
            (Some(mine), Some(theirs)) if mine != theirs => return out,
            // Until the server names this turn, only its start is ours: a
            // resumed thread replays the usage of its last turn, for one.
            (None, Some(_)) if method != "turn/started" => return out,
            _ => {}
        }
        let item_id = params
            .get("itemId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let delta = params
            .get("delta")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let events = |payloads: Vec<Payload>| payloads.into_iter().map(Out::Event);
        match method {
            "turn/started" => {
                if self.codex_turn.is_none() {
                    self.codex_turn = turn_of.map(str::to_owned);
                }
                out.push(Out::Started);
            }
            "item/started" => {
                if let Some(item) = params.get("item") {
                    self.flush_error(&mut out);
                    out.extend(events(self.items.started(item)));
                }
            }
            "item/completed" => {
                if let Some(item) = params.get("item") {
                    self.flush_error(&mut out);
                    out.extend(events(self.items.completed(item)));
                }
            }
            "item/agentMessage/delta" | "item/plan/delta" => {
                out.extend(events(self.items.delta(item_id, TextKind::Message, delta)));
            }
            "item/reasoning/summaryTextDelta" => {
                let index = params
                    .get("summaryIndex")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                out.extend(events(self.items.summary_delta(item_id, index, delta)));
            }
            "item/reasoning/summaryPartAdded" => {
                let index = params
                    .get("summaryIndex")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                out.extend(events(self.items.summary_part(item_id, index)));
            }
            "item/reasoning/textDelta" => {
                out.extend(events(self.items.raw_reasoning_delta(item_id, delta)));
            }
            "thread/tokenUsage/updated" => {
                // The server re-sends unchanged counts (e.g. at an interrupt),
                // so the turn's usage is the growth of the thread total, not
                // a sum of `last` values.
                if let Some(total) = params.pointer("/tokenUsage/total") {
                    self.total = Some(usage(total));
                }
            }
            "turn/plan/updated" => {
                let explanation = params.get("explanation").and_then(Value::as_str);
                let steps: Vec<(String, String)> = params
                    .get("plan")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|s| {
                                let text = s.get("step").and_then(Value::as_str).unwrap_or("");
                                let st = s.get("status").and_then(Value::as_str).unwrap_or("");
                                (text.to_owned(), st.to_owned())
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                out.extend(events(self.items.plan_update(explanation, &steps)));
            }
            "error" => {
                let message = params
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_owned();
                let will_retry = params
                    .get("willRetry")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                self.flush_error(&mut out);
                if will_retry {
                    out.extend(events(self.items.notice(&message)));
                } else {
                    self.pending_error = Some(message);
                }
            }
            "model/rerouted" => {
                let from = params
                    .get("fromModel")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                let to = params.get("toModel").and_then(Value::as_str).unwrap_or("?");
                let text = format!("model rerouted from {from} to {to}");
                out.extend(events(self.items.notice(&text)));
            }
            "turn/completed" => {
                self.finished = true;
                let status = params
                    .pointer("/turn/status")
                    .and_then(Value::as_str)
                    .unwrap_or("completed");
                let base = self.base.clone().unwrap_or_default();
                // No growth (an interrupt before any answer): no usage to show.
                let usage = self
                    .total
                    .as_ref()
                    .map(|t| growth(&base, t))
                    .filter(|u| u.input_tokens + u.output_tokens > 0);
                match status {
                    "interrupted" => {
                        self.pending_error = None;
                        out.push(Out::Finished(Payload::interrupted(usage)));
                    }
                    "failed" => {
                        let message = params
                            .pointer("/turn/error/message")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .or_else(|| self.pending_error.clone())
                            .unwrap_or_else(|| "the turn failed".into());
                        if self.pending_error.as_deref() != Some(message.as_str()) {
                            self.flush_error(&mut out);
                        }
                        self.pending_error = None;
                        out.push(Out::Finished(Payload::ResponseDone {
                            status: ResponseStatus::Error,
                            finish_reason: None,
                            error: Some(ErrorInfo::new("turn_failed", message)),
                            usage,
                        }));
                    }
                    _ => {
                        self.flush_error(&mut out);
                        out.push(Out::Finished(completed(usage)));
                    }
                }
            }
            _ => {}
        }
        out
    }

    fn flush_error(&mut self, out: &mut Vec<Out>) {
        if let Some(message) = self.pending_error.take() {
            let text = format!("⚠ {message}");
            out.extend(self.items.notice(&text).into_iter().map(Out::Event));
        }
    }
}

/// How long output written just before the server exited is still read.
const DRAIN: Duration = Duration::from_millis(200);

/// Token use between two thread totals.
fn growth(base: &Usage, now: &Usage) -> Usage {
    let opt = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (a, Some(b)) => Some(b.saturating_sub(a.unwrap_or(0))),
        (_, None) => None,
    };
    Usage {
        input_tokens: now.input_tokens.saturating_sub(base.input_tokens),
        output_tokens: now.output_tokens.saturating_sub(base.output_tokens),
        cache_read_input_tokens: opt(base.cache_read_input_tokens, now.cache_read_input_tokens),
        cache_creation_input_tokens: opt(
            base.cache_creation_input_tokens,
            now.cache_creation_input_tokens,
        ),
        cost_usd: None,
    }
}

pub fn spawn(
    settings: Arc<CodexSettings>,
    resume: Option<String>,
    events: EventSink,
) -> ProviderHandle {
    ProviderHandle::spawn(move |rx| async move {
        let spec = settings.app_server_command();
        let (proc, lines) = match AgentProcess::spawn(&spec) {
            Ok(p) => p,
            Err(e) => {
                let _ = events.send(ProviderEvent::Exited {
                    code: None,
                    message: format!("cannot start `{}`: {e}", spec.program),
                });
                return;
            }
        };
        let startup = Instant::now() + settings.startup_timeout;
        let mut server = AppServer {
            settings,
            events,
            proc,
            next_id: 0,
            requests: HashMap::new(),
            thread: None,
            model: None,
            resume,
            placeholder: new_id("codex"),
            stale_notice: None,
            queued: None,
            turn: None,
            approvals: HashMap::new(),
            abandoned: HashSet::new(),
            thread_total: Usage::default(),
            startup: Some(startup),
        };
        server.run(lines, rx).await;
    })
}

/// What a request of ours was for, to route its response.
#[derive(Debug)]
enum Request {
    Initialize,
    ThreadStart,
    ThreadResume(String),
    /// For the hive turn with this id.
    TurnStart(String),
    Interrupt,
    Steer(String),
}

/// The hive turn in flight.
struct Turn {
    hive_id: String,
    tr: AppTurn,
    started: bool,
    /// Interrupt asked before the server named the turn.
    cancel_requested: bool,
    /// When hive stops waiting for `turn/completed` after an interrupt.
    cancel_deadline: Option<Instant>,
    /// Steers that arrived before the server named the turn.
    steers: Vec<String>,
}

/// How approval answers are spelled for one request method.
#[derive(Debug, Clone, Copy)]
enum ApprovalStyle {
    /// v2 `item/*/requestApproval`: accept / acceptForSession / decline / cancel.
    V2,
    /// v1 `execCommandApproval` / `applyPatchApproval`: approved / denied / abort.
    V1,
}

struct AppServer {
    settings: Arc<CodexSettings>,
    events: EventSink,
    proc: AgentProcess,
    next_id: i64,
    requests: HashMap<i64, Request>,
    thread: Option<String>,
    model: Option<String>,
    /// The thread to resume at startup.
    resume: Option<String>,
    placeholder: String,
    /// Shown in the next turn when the resumed thread was gone.
    stale_notice: Option<String>,
    /// A `Send` that arrived before the thread was ready.
    queued: Option<(String, String)>,
    turn: Option<Turn>,
    /// Permission request id → the server's JSON-RPC id.
    approvals: HashMap<String, (Value, ApprovalStyle)>,
    /// The thread's token total as last reported (a resumed thread reports
    /// its history's), the base of the next turn's usage.
    thread_total: Usage,
    /// Server turns hive stopped waiting for (an interrupt not confirmed in
    /// time); their late notifications are dropped.
    abandoned: HashSet<String>,
    /// Until the thread is ready, the time by which it must be.
    startup: Option<Instant>,
}

/// Why the task ends.
enum Stop {
    Killed,
    Exited(Option<String>),
}

impl AppServer {
    async fn run(
        &mut self,
        mut lines: LineReader<ChildStdout>,
        mut rx: mpsc::UnboundedReceiver<ProviderCommand>,
    ) {
        self.request(
            Request::Initialize,
            "initialize",
            json!({"clientInfo": {"name": "hive", "title": "hive", "version": env!("CARGO_PKG_VERSION")}}),
        )
        .await;
        let stop = loop {
            let deadline = self.deadline();
            tokio::select! {
                line = lines.next_line() => match line {
                    Ok(Some(line)) => self.message(&line).await,
                    Ok(None) | Err(_) => break Stop::Exited(None),
                },
                // A child that inherited stdout can keep the pipe open after
                // the server died: its exit, not EOF, is what counts.
                _ = self.proc.wait() => {
                    let until = Instant::now() + DRAIN;
                    while let Ok(Ok(Some(line))) = tokio::time::timeout_at(until, lines.next_line()).await {
                        self.message(&line).await;
                    }
                    break Stop::Exited(None);
                },
                cmd = rx.recv() => match cmd {
                    Some(ProviderCommand::Kill) | None => break Stop::Killed,
                    Some(cmd) => self.command(cmd).await,
                },
                _ = timer::sleep_until(deadline) => {
                    if let Some(stop) = self.deadline_passed() {
                        break stop;
                    }
                }
            }
        };
        match stop {
            Stop::Killed => {
                self.proc.terminate(Duration::from_secs(1)).await;
            }
            Stop::Exited(reason) => self.exited(reason).await,
        }
    }

    fn deadline(&self) -> Option<Instant> {
        let cancel = self.turn.as_ref().and_then(|t| t.cancel_deadline);
        match (self.startup, cancel) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn deadline_passed(&mut self) -> Option<Stop> {
        let now = Instant::now();
        if self.startup.is_some_and(|s| s <= now) {
            return Some(Stop::Exited(Some(format!(
                "codex app-server did not start a thread within {} s",
                self.settings.startup_timeout.as_secs()
            ))));
        }
        if let Some(turn) = self.turn.as_ref()
            && turn.cancel_deadline.is_some_and(|d| d <= now)
        {
            // The server did not confirm the interrupt in time: the turn is
            // over for hive; its late notifications are dropped by turn id.
            let hive_id = turn.hive_id.clone();
            if let Some(codex_turn) = turn.tr.codex_turn.clone() {
                self.abandoned.insert(codex_turn);
            }
            self.turn = None;
            self.emit(&hive_id, Payload::interrupted(None));
        }
        None
    }

    /// The process ended (or never became usable): fail what was in flight,
    /// report, and end the task.
    async fn exited(&mut self, reason: Option<String>) {
        let status = match tokio::time::timeout(Duration::from_millis(500), self.proc.wait()).await
        {
            Ok(Ok(s)) => Some(s),
            _ => self.proc.terminate(Duration::ZERO).await,
        };
        self.proc.terminate(Duration::ZERO).await;
        let report = self.proc.exit_report(status);
        let message = match reason {
            Some(r) => format!("{r}\n{report}"),
            None => report,
        };
        let in_flight = self
            .turn
            .take()
            .map(|t| t.hive_id)
            .or_else(|| self.queued.take().map(|(id, _)| id));
        if let Some(turn_id) = in_flight {
            self.emit(
                &turn_id,
                Payload::ResponseError {
                    error: ErrorInfo::new("agent_exited", message.clone()),
                },
            );
        }
        let _ = self.events.send(ProviderEvent::Exited {
            code: status.and_then(|s| s.code()),
            message,
        });
    }

    fn session_id(&self) -> &str {
        self.thread.as_deref().unwrap_or(&self.placeholder)
    }

    fn emit(&self, turn_id: &str, payload: Payload) {
        self.events.stream(turn_id, self.session_id(), payload);
    }

    fn diagnostic(&self, level: DiagnosticLevel, message: String) {
        self.events.diagnostic(level, message);
    }

    async fn write(&mut self, msg: Value) {
        if let Err(e) = self.proc.write_line(&msg.to_string()).await {
            // A dead server shows up as stdout EOF right after; nothing to add.
            tracing::debug!("codex app-server: write failed: {e}");
        }
    }

    async fn request(&mut self, purpose: Request, method: &str, params: Value) {
        let id = self.next_id;
        self.next_id += 1;
        self.requests.insert(id, purpose);
        self.write(json!({"id": id, "method": method, "params": params}))
            .await;
    }

    async fn command(&mut self, cmd: ProviderCommand) {
        match cmd {
            ProviderCommand::Send { turn_id, text } => {
                if self.turn.is_some() {
                    self.emit(
                        &turn_id,
                        Payload::ResponseError {
                            error: ErrorInfo::new("busy", "a codex turn is already running"),
                        },
                    );
                } else if self.thread.is_none() {
                    self.queued = Some((turn_id, text));
                } else {
                    self.start_turn(turn_id, text).await;
                }
            }
            ProviderCommand::Steer { text } => self.steer(text).await,
            ProviderCommand::Cancel => self.cancel().await,
            ProviderCommand::Permission {
                request_id,
                decision,
            } => self.answer(&request_id, decision).await,
            _ => {}
        }
    }

    async fn start_turn(&mut self, hive_id: String, text: String) {
        let Some(thread) = self.thread.clone() else {
            return;
        };
        let mut turn = Turn {
            hive_id,
            tr: AppTurn::new(),
            started: false,
            cancel_requested: false,
            cancel_deadline: None,
            steers: Vec::new(),
        };
        if let Some(notice) = self.stale_notice.take() {
            self.start_response(&mut turn);
            for p in turn.tr.items.notice(&notice) {
                self.emit(&turn.hive_id, p);
            }
        }
        let hive_id = turn.hive_id.clone();
        self.turn = Some(turn);
        let mut params = json!({
            "threadId": thread,
            "input": [{"type": "text", "text": text}],
        });
        if let Some(effort) = &self.settings.effort {
            params["effort"] = effort.clone().into();
        }
        self.request(Request::TurnStart(hive_id), "turn/start", params)
            .await;
    }

    fn start_response(&self, turn: &mut Turn) {
        if turn.started {
            return;
        }
        turn.started = true;
        let model = self
            .model
            .clone()
            .or_else(|| self.settings.model.clone())
            .unwrap_or_else(|| "codex".into());
        self.emit(
            &turn.hive_id,
            Payload::ResponseStart {
                model_id: model,
                provider_id: PROVIDER_ID.into(),
            },
        );
    }

    async fn steer(&mut self, text: String) {
        let Some(turn) = self.turn.as_mut() else {
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!("no codex turn is running; message not delivered: {text}"),
            );
            return;
        };
        match turn.tr.codex_turn.clone() {
            None => turn.steers.push(text),
            Some(codex_turn) => self.send_steer(codex_turn, text).await,
        }
    }

    async fn send_steer(&mut self, codex_turn: String, text: String) {
        let Some(thread) = self.thread.clone() else {
            return;
        };
        let params = json!({
            "threadId": thread,
            "expectedTurnId": codex_turn,
            "input": [{"type": "text", "text": text}],
        });
        self.request(Request::Steer(text), "turn/steer", params)
            .await;
    }

    async fn cancel(&mut self) {
        let grace = self.settings.interrupt_grace;
        if let Some((turn_id, _)) = self.queued.take() {
            // Never reached the server: nothing to interrupt.
            self.emit(&turn_id, Payload::interrupted(None));
            return;
        }
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if turn.cancel_deadline.is_some() {
            return;
        }
        turn.cancel_deadline = Some(Instant::now() + grace);
        match turn.tr.codex_turn.clone() {
            None => turn.cancel_requested = true,
            Some(codex_turn) => self.send_interrupt(codex_turn).await,
        }
    }

    async fn send_interrupt(&mut self, codex_turn: String) {
        let Some(thread) = self.thread.clone() else {
            return;
        };
        let params = json!({"threadId": thread, "turnId": codex_turn});
        self.request(Request::Interrupt, "turn/interrupt", params)
            .await;
    }

    async fn message(&mut self, line: &str) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return;
        }
        let mut msg: Value = match serde_json::from_str(trimmed) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) | Err(_) => {
                self.diagnostic(
                    DiagnosticLevel::Warn,
                    format!("codex app-server: unreadable line: {}", excerpt(trimmed)),
                );
                return;
            }
        };
        // Params are moved out, not copied: deltas arrive by the thousand.
        let params = msg
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").filter(|v| !v.is_null());
        match (method, id) {
            (Some(method), Some(id)) => {
                self.server_request(method.to_owned(), id.clone(), params)
                    .await
            }
            (Some(method), None) => self.notification(method, &params).await,
            (None, Some(id)) => self.response(id.as_i64(), &msg).await,
            (None, None) => self.diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "codex app-server: message is neither request, response nor notification: {}",
                    excerpt(trimmed)
                ),
            ),
        }
    }

    async fn response(&mut self, id: Option<i64>, msg: &Value) {
        let Some(purpose) = id.and_then(|id| self.requests.remove(&id)) else {
            tracing::debug!("codex app-server: response to an unknown request: {msg}");
            return;
        };
        let error = msg.get("error").map(|e| {
            e.get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| e.to_string())
        });
        let result = msg.get("result").cloned().unwrap_or(Value::Null);
        match (purpose, error) {
            (Request::Initialize, None) => {
                self.write(json!({"method": "initialized", "params": {}}))
                    .await;
                match self.resume.clone() {
                    Some(thread) => {
                        let mut params = self.settings.thread_params();
                        params.insert("threadId".into(), thread.clone().into());
                        // hive shows its own history; the server's copy of
                        // past turns is not needed (and deprecated in full).
                        params.insert("excludeTurns".into(), true.into());
                        self.request(
                            Request::ThreadResume(thread),
                            "thread/resume",
                            Value::Object(params),
                        )
                        .await;
                    }
                    None => self.thread_start().await,
                }
            }
            (Request::Initialize | Request::ThreadStart, Some(e)) => {
                self.diagnostic(
                    DiagnosticLevel::Error,
                    format!("codex app-server refused to start a thread: {e}"),
                );
                self.fail_queued(&e);
            }
            (Request::ThreadStart | Request::ThreadResume(_), None) => {
                self.thread_ready(&result).await
            }
            (Request::ThreadResume(thread), Some(e)) => {
                let notice = format!(
                    "Codex thread {thread} could not be resumed; continuing in a new thread."
                );
                self.diagnostic(DiagnosticLevel::Warn, format!("{notice} ({e})"));
                self.stale_notice = Some(notice);
                self.thread_start().await;
            }
            (Request::TurnStart(hive_id), None) => {
                let codex_turn = result
                    .pointer("/turn/id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if self.turn.as_ref().is_some_and(|t| t.hive_id == hive_id) {
                    self.turn_named(codex_turn).await;
                } else if let Some(codex_turn) = codex_turn {
                    // hive gave up on this turn before the server named it.
                    self.abandoned.insert(codex_turn.clone());
                    self.send_interrupt(codex_turn).await;
                }
            }
            (Request::TurnStart(hive_id), Some(e)) => {
                if self.turn.as_ref().is_some_and(|t| t.hive_id == hive_id)
                    && let Some(turn) = self.turn.take()
                {
                    self.emit(
                        &turn.hive_id,
                        Payload::ResponseError {
                            error: ErrorInfo::new("turn_start_failed", e),
                        },
                    );
                }
            }
            (Request::Interrupt, Some(e)) => {
                tracing::debug!("codex app-server: turn/interrupt failed: {e}");
            }
            (Request::Steer(text), Some(e)) => self.diagnostic(
                DiagnosticLevel::Warn,
                format!("codex did not take the message mid-turn ({e}); not delivered: {text}"),
            ),
            (Request::Interrupt | Request::Steer(_), None) => {}
        }
    }

    async fn thread_start(&mut self) {
        let params = Value::Object(self.settings.thread_params());
        self.request(Request::ThreadStart, "thread/start", params)
            .await;
    }

    async fn thread_ready(&mut self, result: &Value) {
        let Some(id) = result.pointer("/thread/id").and_then(Value::as_str) else {
            self.diagnostic(
                DiagnosticLevel::Error,
                format!(
                    "codex app-server: thread response without an id: {}",
                    excerpt(&result.to_string())
                ),
            );
            return;
        };
        self.thread = Some(id.to_owned());
        self.model = result
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| self.settings.model.clone());
        self.startup = None;
        announce(&self.events, self.thread.as_deref(), self.model.as_deref());
        if let Some((turn_id, text)) = self.queued.take() {
            self.start_turn(turn_id, text).await;
        }
    }

    fn fail_queued(&mut self, message: &str) {
        if let Some((turn_id, _)) = self.queued.take() {
            self.emit(
                &turn_id,
                Payload::ResponseError {
                    error: ErrorInfo::new("thread_unavailable", message.to_owned()),
                },
            );
        }
    }

    /// The server named the running turn: deliver what waited for its id.
    async fn turn_named(&mut self, codex_turn: Option<String>) {
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        if turn.tr.codex_turn.is_none() {
            turn.tr.codex_turn = codex_turn;
        }
        turn.tr.set_base(&self.thread_total);
        self.start_response(&mut turn);
        let steers = std::mem::take(&mut turn.steers);
        let interrupt = std::mem::take(&mut turn.cancel_requested);
        let id = turn.tr.codex_turn.clone();
        self.turn = Some(turn);
        if let Some(codex_turn) = id {
            for text in steers {
                self.send_steer(codex_turn.clone(), text).await;
            }
            if interrupt {
                self.send_interrupt(codex_turn).await;
            }
        }
    }

    async fn notification(&mut self, method: &str, params: &Value) {
        match method {
            "configWarning" => {
                let summary = params.get("summary").and_then(Value::as_str).unwrap_or("");
                self.diagnostic(DiagnosticLevel::Warn, format!("codex config: {summary}"));
                return;
            }
            "deprecationNotice" => {
                let summary = params.get("summary").and_then(Value::as_str).unwrap_or("");
                self.diagnostic(DiagnosticLevel::Info, format!("codex: {summary}"));
                return;
            }
            "thread/started" => {
                if let Some(model) = params.pointer("/thread/model").and_then(Value::as_str)
                    && self.model.is_none()
                {
                    self.model = Some(model.to_owned());
                }
                return;
            }
            _ => {}
        }
        // Sub-agents run in threads of their own; their traffic shows up in
        // this thread as collab items, not as this turn's events.
        let thread_of = params.get("threadId").and_then(Value::as_str);
        if let (Some(theirs), Some(mine)) = (thread_of, self.thread.as_deref())
            && theirs != mine
        {
            return;
        }
        if method == "thread/tokenUsage/updated"
            && let Some(total) = params.pointer("/tokenUsage/total")
        {
            self.thread_total = usage(total);
        }
        let turn_of = params
            .get("turnId")
            .and_then(Value::as_str)
            .or_else(|| params.pointer("/turn/id").and_then(Value::as_str));
        if turn_of.is_some_and(|t| self.abandoned.contains(t)) {
            return;
        }
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        if method == "turn/started" {
            turn.tr.set_base(&self.thread_total);
        }
        let outs = turn.tr.notification(method, params);
        let named =
            method == "turn/started" && turn.steers.len() + usize::from(turn.cancel_requested) > 0;
        let mut finished = false;
        for out in outs {
            match out {
                Out::Started => self.start_response(&mut turn),
                Out::Event(p) => {
                    self.start_response(&mut turn);
                    self.emit(&turn.hive_id, p);
                }
                Out::Finished(p) => {
                    self.start_response(&mut turn);
                    self.emit(&turn.hive_id, p);
                    finished = true;
                }
                Out::Diagnostic(level, message) => self.diagnostic(level, message),
                Out::Thread { .. } => {}
            }
        }
        if finished {
            return;
        }
        self.turn = Some(turn);
        if named {
            let id = self.turn.as_ref().and_then(|t| t.tr.codex_turn.clone());
            self.turn_named(id).await;
        }
    }

    async fn server_request(&mut self, method: String, id: Value, params: Value) {
        let style = match method.as_str() {
            "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => {
                ApprovalStyle::V2
            }
            "execCommandApproval" | "applyPatchApproval" => ApprovalStyle::V1,
            _ => {
                self.diagnostic(
                    DiagnosticLevel::Info,
                    format!("codex asked `{method}`, which hive does not answer; declined"),
                );
                self.write(json!({"id": id, "error": {"code": -32601, "message": format!("hive does not support `{method}`")}}))
                    .await;
                return;
            }
        };
        let request_id = format!("codex-{}", new_id("approval"));
        let request = self.permission_request(&method, &request_id, &params);
        self.approvals.insert(request_id, (id, style));
        let _ = self.events.send(ProviderEvent::Permission(request));
    }

    fn permission_request(
        &self,
        method: &str,
        request_id: &str,
        params: &Value,
    ) -> PermissionRequest {
        let reason = params
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let is_patch = method.contains("ileChange") || method.contains("Patch");
        let item_id = params
            .get("itemId")
            .or_else(|| params.get("callId"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let known = self
            .turn
            .as_ref()
            .and_then(|t| t.tr.items().tool_arguments(item_id))
            .cloned()
            .unwrap_or_default();
        let mut input = serde_json::Map::new();
        if is_patch {
            if let Some(changes) = known.get("changes") {
                input.insert("changes".into(), changes.clone());
            }
            if let Some(root) = params.get("grantRoot").filter(|r| !r.is_null()) {
                input.insert("grant_root".into(), root.clone());
            }
        } else {
            let command = match params.get("command") {
                Some(Value::String(s)) => Some(Value::String(s.clone())),
                Some(Value::Array(parts)) => Some(Value::String(
                    parts
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" "),
                )),
                _ => known.get("command").cloned(),
            };
            if let Some(c) = command {
                input.insert("command".into(), c);
            }
            if let Some(cwd) = params.get("cwd").filter(|c| !c.is_null()) {
                input.insert("cwd".into(), cwd.clone());
            }
        }
        if let Some(r) = &reason {
            input.insert("reason".into(), r.clone().into());
        }
        PermissionRequest {
            request_id: request_id.to_owned(),
            tool_name: if is_patch { "apply_patch" } else { "shell" }.into(),
            input: Value::Object(input),
            description: reason,
            options: Vec::new(),
        }
    }

    async fn answer(&mut self, request_id: &str, decision: PermissionDecision) {
        let Some((id, style)) = self.approvals.remove(request_id) else {
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!("codex: no pending approval `{request_id}`"),
            );
            return;
        };
        let word = match (style, &decision) {
            (ApprovalStyle::V2, PermissionDecision::AllowOnce) => "accept",
            (ApprovalStyle::V2, PermissionDecision::AllowAlways) => "acceptForSession",
            (ApprovalStyle::V2, PermissionDecision::Deny { .. }) => "decline",
            (ApprovalStyle::V1, PermissionDecision::AllowOnce) => "approved",
            (ApprovalStyle::V1, PermissionDecision::AllowAlways) => "approved_for_session",
            (ApprovalStyle::V1, PermissionDecision::Deny { .. }) => "denied",
            (_, PermissionDecision::Option { option_id }) => option_id.as_str(),
        };
        self.write(json!({"id": id, "result": {"decision": word}}))
            .await;
    }
}
