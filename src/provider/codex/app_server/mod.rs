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

mod lines;
mod models;
mod server;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::provider::paced::AgentStdout;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant};

use super::items::{Out, usage};
use super::{CodexSettings, PROVIDER_ID, announce, excerpt};
use crate::event::{ErrorInfo, Payload, Usage, new_id};
use crate::provider::Sink;
use crate::provider::process::{AgentProcess, LineReader};
use crate::provider::{
    DiagnosticLevel, EventSink, PermissionDecision, PermissionRequest, ProviderCommand,
    ProviderEvent,
};
use crate::timer;

mod turn;
pub use turn::{AppTurn, DeltaNote};

/// How long output written just before the server exited is still read.
const DRAIN: Duration = Duration::from_millis(200);

/// The provider task of one `codex app-server`.
pub(super) async fn run(
    settings: Arc<CodexSettings>,
    resume: Option<String>,
    events: EventSink,
    rx: mpsc::UnboundedReceiver<ProviderCommand>,
) {
    let spec = settings.app_server_command();
    let (proc, lines) = match AgentProcess::spawn(&spec, &events) {
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
        images: Vec::new(),
        turn: None,
        approvals: HashMap::new(),
        abandoned: HashSet::new(),
        thread_total: Usage::default(),
        startup: Some(startup),
        model_switched: false,
        models_asked: false,
        model_pages: 0,
    };
    server.run(lines, rx).await;
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
    /// `model/list`, with the models of the pages before.
    ModelList(Vec<String>),
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
    /// Images for the next turn (`ProviderCommand::Attach`).
    images: Vec<crate::image::Image>,
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
    /// `/model` chose a model: every later `turn/start` names it.
    model_switched: bool,
    /// `model/list` was asked (once per server), and how many pages more.
    models_asked: bool,
    model_pages: usize,
}

/// Why the task ends.
enum Stop {
    Killed,
    Exited(Option<String>),
}

impl AppServer {
    async fn run(
        &mut self,
        mut lines: LineReader<AgentStdout>,
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
            // Both go with every later `turn/start` (per-turn overrides).
            ProviderCommand::SetModel { model } => {
                self.model = Some(model.clone());
                Arc::make_mut(&mut self.settings).model = Some(model);
                self.model_switched = true;
            }
            ProviderCommand::SetEffort { effort } => {
                Arc::make_mut(&mut self.settings).effort = Some(effort);
            }
            ProviderCommand::Attach(images) => self.images = images,
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
        let images = std::mem::take(&mut self.images);
        let mut params = json!({
            "threadId": thread,
            "input": turn_input(&text, &images),
        });
        if let Some(effort) = &self.settings.effort {
            params["effort"] = effort.clone().into();
        }
        if self.model_switched
            && let Some(model) = &self.settings.model
        {
            params["model"] = model.clone().into();
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
}

/// `turn/start` input: the text, then each image as a `localImage` item
/// (codex reads the file itself).
pub fn turn_input(text: &str, images: &[crate::image::Image]) -> Value {
    let mut input = vec![json!({"type": "text", "text": text})];
    input.extend(
        images
            .iter()
            .map(|i| json!({"type": "localImage", "path": i.path.display().to_string()})),
    );
    Value::Array(input)
}
