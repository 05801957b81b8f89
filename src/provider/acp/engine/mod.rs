//! The ACP client as a synchronous state machine: lines from the agent,
//! host commands and timer ticks go in; lines for the agent and provider
//! events come out as `Effect`s. The provider task (mod.rs) only does I/O, so
//! the whole protocol logic can be replayed from captures without a process.
//!
//! Lifecycle: `initialize` → `session/load` (when resuming and the agent
//! advertises `loadSession`) or `session/new` → one `session/prompt` per turn.
//! A `Send` that arrives before the session is open waits for it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use agent_client_protocol_schema::ProtocolVersion;
mod requests;
mod session;

use agent_client_protocol_schema::v1::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation,
    InitializeRequest, McpServer, PromptRequest, StopReason, TextContent,
};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::client::{self, Incoming, RpcClient, RpcError, parse_line};
use super::fs::{FsJob, FsRoot, MissingFile};
use super::render;
use super::translate::{Translated, Translator};
use crate::event::{ErrorInfo, Payload, ResponseStatus, StreamEvent};
use crate::provider::{DiagnosticLevel, PermissionOption, ProviderCommand, ProviderEvent};

pub(crate) const PROVIDER_ID: &str = "acp";

/// Settings the engine needs (built from the agent's config).
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// hive's agent id; names the session until the agent gives one.
    pub agent_id: String,
    /// Absolute working directory of the agent.
    pub cwd: PathBuf,
    /// A session id to resume with `session/load`.
    pub resume: Option<String>,
    pub mcp_servers: Vec<McpServer>,
    /// Model to select after the session opens, if the agent offers a choice.
    pub model: Option<String>,
    /// Session mode to select (`permission_mode`), e.g. `acceptEdits`, `yolo`.
    pub permission_mode: Option<String>,
    /// Thought level to select (`thinking`), e.g. `high`.
    pub thinking: Option<String>,
    /// How long a cancelled turn may take to confirm before hive ends it.
    pub(crate) cancel_grace: Duration,
    /// How long `initialize` and `session/new` may take before start-up counts
    /// as failed (the next `Send` tries again).
    pub(crate) startup_timeout: Duration,
    pub(crate) missing_file: MissingFile,
}

impl EngineConfig {
    pub fn new(agent_id: &str, cwd: PathBuf) -> Self {
        Self {
            agent_id: agent_id.to_owned(),
            cwd,
            resume: None,
            mcp_servers: Vec::new(),
            model: None,
            permission_mode: None,
            thinking: None,
            cancel_grace: Duration::from_millis(800),
            startup_timeout: Duration::from_secs(60),
            missing_file: MissingFile::Empty,
        }
    }
}

/// Something the task must do.
#[derive(Debug)]
pub enum Effect {
    /// Write this line to the agent's stdin.
    Write(String),
    Emit(Box<ProviderEvent>),
    /// Run this file request off the async workers and write its answer
    /// (`FsJob::run`).
    File(FsJob),
}

/// What a request of ours was.
#[derive(Debug, Clone, PartialEq)]
enum Pending {
    Initialize,
    NewSession,
    LoadSession(String),
    Prompt { turn_id: String },
    Setting,
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// `initialize` sent.
    Initializing,
    /// `session/new` or `session/load` sent.
    Opening,
    Ready,
    /// Start-up failed; the next `Send` tries again.
    Failed {
        initialized: bool,
        reason: String,
    },
}

#[derive(Debug)]
struct Turn {
    turn_id: String,
    prompt_id: u64,
    /// Set by a cancel: when hive stops waiting for the agent to confirm.
    cancel_deadline: Option<Instant>,
}

#[derive(Debug)]
struct PendingPermission {
    rpc_id: Value,
    tool_call_id: String,
    tool_name: String,
    options: Vec<PermissionOption>,
}

#[derive(Debug)]
pub struct Engine {
    cfg: EngineConfig,
    rpc: RpcClient<Pending>,
    phase: Phase,
    fs: FsRoot,
    translator: Translator,
    load_supported: bool,
    /// The agent takes `image` content (`promptCapabilities.image`).
    image_supported: bool,
    /// Images for the next prompt (`ProviderCommand::Attach`).
    images: Vec<crate::image::Image>,
    agent_name: Option<String>,
    session_id: Option<String>,
    model: Option<String>,
    commands: Vec<String>,
    /// Config options from `session/new` (model selection lives there for Codex).
    config_options: Value,
    /// `models` from `session/new` (Claude Code's model selection).
    models: Value,
    /// `modes` from `session/new` (permission modes of Claude Code and Gemini).
    modes: Value,
    turn: Option<Turn>,
    /// A turn sent before the session was open.
    waiting: Option<(String, String)>,
    permissions: HashMap<String, PendingPermission>,
    /// Why the user refused tools, for the next prompt: ACP's permission
    /// answer has no field for it (issue 34 item 5).
    deny_reasons: Vec<String>,
    /// A `/effort` came before the session opened: opening it answers
    /// that, not the `thinking` setting.
    effort_asked: bool,
    permission_seq: u64,
    /// Updates replayed by `session/load` are history hive already shows.
    replayed: usize,
    /// While starting: when hive stops waiting for the agent.
    startup_deadline: Option<Instant>,
    effects: Vec<Effect>,
}

/// A prompt's content: the images (where the agent takes them), then the text.
pub fn prompt_blocks(
    text: String,
    images: &[crate::image::Image],
    image_supported: bool,
) -> Vec<ContentBlock> {
    let mut blocks: Vec<ContentBlock> = images
        .iter()
        .filter(|_| image_supported)
        .map(|i| {
            ContentBlock::Image(agent_client_protocol_schema::v1::ImageContent::new(
                i.base64(),
                i.media_type,
            ))
        })
        .collect();
    blocks.push(ContentBlock::Text(TextContent::new(text)));
    blocks
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> Self {
        let fs = FsRoot::new(&cfg.cwd, cfg.missing_file);
        Self {
            cfg,
            rpc: RpcClient::default(),
            phase: Phase::Initializing,
            fs,
            translator: Translator::new(PROVIDER_ID),
            load_supported: false,
            image_supported: false,
            images: Vec::new(),
            agent_name: None,
            session_id: None,
            model: None,
            commands: Vec::new(),
            config_options: Value::Null,
            models: Value::Null,
            modes: Value::Null,
            turn: None,
            waiting: None,
            permissions: HashMap::new(),
            deny_reasons: Vec::new(),
            effort_asked: false,
            permission_seq: 0,
            replayed: 0,
            startup_deadline: None,
            effects: Vec::new(),
        }
    }

    /// Sends `initialize`.
    pub fn start(&mut self) {
        self.phase = Phase::Initializing;
        self.startup_deadline = Some(Instant::now() + self.cfg.startup_timeout);
        let fs = FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(true);
        let caps = ClientCapabilities::new().fs(fs).terminal(false);
        let req = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(caps)
            .client_info(Implementation::new("hive", env!("CARGO_PKG_VERSION")).title("hive"));
        let (_, line) = self.rpc.request("initialize", req, Pending::Initialize);
        self.write(line);
    }

    pub fn drain(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// A turn is in flight (sent, or waiting for the session).
    pub fn busy(&self) -> bool {
        self.turn.is_some() || self.waiting.is_some()
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// When `on_timer` must run next.
    pub fn next_deadline(&self) -> Option<Instant> {
        let cancel = self.turn.as_ref().and_then(|t| t.cancel_deadline);
        match (cancel, self.startup_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn on_timer(&mut self, now: Instant) {
        if self.startup_deadline.is_some_and(|d| d <= now) {
            self.startup_deadline = None;
            let step = match self.phase {
                Phase::Initializing => Some((false, "initialize")),
                Phase::Opening => Some((true, "session/new")),
                _ => None,
            };
            if let Some((initialized, method)) = step {
                self.startup_failed(
                    initialized,
                    format!(
                        "the agent did not answer {method} within {} s",
                        self.cfg.startup_timeout.as_secs()
                    ),
                );
            }
        }
        let expired = self
            .turn
            .as_ref()
            .and_then(|t| t.cancel_deadline)
            .is_some_and(|d| d <= now);
        if !expired {
            return;
        }
        if let Some(turn) = self.turn.take() {
            // A late answer to this prompt must not end a later turn.
            self.rpc.forget(turn.prompt_id);
            self.cancel_permissions();
            self.effects
                .push(Effect::Emit(Box::new(ProviderEvent::Unresponsive {
                    reason: format!(
                        "the agent did not confirm the cancel within {} ms",
                        self.cfg.cancel_grace.as_millis()
                    ),
                })));
            self.diagnostic(
                DiagnosticLevel::Info,
                format!(
                    "the agent did not confirm the cancel within {} ms; hive ended the turn",
                    self.cfg.cancel_grace.as_millis()
                ),
            );
            self.stream(&turn.turn_id, Payload::interrupted(None));
        }
    }

    pub fn on_command(&mut self, cmd: ProviderCommand, now: Instant) {
        match cmd {
            ProviderCommand::Send { turn_id, text } => self.send(turn_id, text),
            ProviderCommand::Attach(images) => self.images = images,
            ProviderCommand::Cancel => self.cancel(now),
            ProviderCommand::Permission {
                request_id,
                decision,
            } => self.answer_permission(&request_id, decision),
            ProviderCommand::Steer { text } => self.diagnostic(
                DiagnosticLevel::Warn,
                format!("ACP agents take no input mid-turn; message not delivered: {text}"),
            ),
            ProviderCommand::SetModel { model } => {
                self.cfg.model = Some(model);
                if let Some(sid) = self.session_id.clone() {
                    self.select_model(&sid);
                    self.emit_session();
                }
            }
            ProviderCommand::SetEffort { effort } => self.set_effort(effort),
            // Kill is the task's business; terminal input has no meaning here.
            ProviderCommand::Kill | ProviderCommand::Input(_) | ProviderCommand::Resize { .. } => {}
        }
    }

    /// The agent's process is gone: the turn in flight fails with `report`.
    pub(crate) fn on_exit(&mut self, report: &str) {
        self.end_with(Payload::ResponseError {
            error: ErrorInfo::new("agent_exited", format!("the agent {report}")),
        });
    }

    /// hive is killing the agent: the turn in flight ends as cancelled.
    pub(crate) fn on_kill(&mut self) {
        self.end_with(Payload::ResponseDone {
            status: ResponseStatus::Cancelled,
            finish_reason: Some("killed".into()),
            error: None,
            usage: None,
        });
    }

    /// The agent is going: no prompt of it can be answered any more, and the
    /// turn in flight (or the one waiting for its session) ends with `last`.
    fn end_with(&mut self, last: Payload) {
        self.permissions.clear();
        let turn_id = self
            .turn
            .take()
            .map(|t| t.turn_id)
            .or_else(|| self.waiting.take().map(|(id, _)| id));
        if let Some(turn_id) = turn_id {
            self.stream(&turn_id, last);
        }
    }

    /// `_now` is the arrival time; no line handling depends on it yet, but
    /// callers pass it like every other input so timing can be added here.
    pub fn on_line(&mut self, line: &str, _now: Instant) {
        if line.trim().is_empty() {
            return;
        }
        match parse_line(line) {
            Ok(Incoming::Response { id, result }) => match self.rpc.take(&id) {
                Some(kind) => self.on_response(kind, result),
                None => tracing::debug!(%id, "response to no pending request"),
            },
            Ok(Incoming::Request { id, method, params }) => self.on_request(id, &method, params),
            Ok(Incoming::Notification { method, params }) => self.on_notification(&method, params),
            Err(e) => {
                let shown: String = line.chars().take(200).collect();
                self.diagnostic(
                    DiagnosticLevel::Warn,
                    format!("malformed line from the agent ({e}): {shown}"),
                );
            }
        }
    }

    // ---- turns ----------------------------------------------------------

    fn send(&mut self, turn_id: String, text: String) {
        if self.busy() {
            self.stream(
                &turn_id,
                Payload::ResponseError {
                    error: ErrorInfo::new("busy", "a turn is already running"),
                },
            );
            return;
        }
        match self.phase.clone() {
            Phase::Ready => self.prompt(turn_id, text),
            Phase::Initializing | Phase::Opening => self.waiting = Some((turn_id, text)),
            Phase::Failed { initialized, .. } => {
                self.waiting = Some((turn_id, text));
                if initialized {
                    self.open_session();
                } else {
                    self.start();
                }
            }
        }
    }

    fn prompt(&mut self, turn_id: String, text: String) {
        let Some(session_id) = self.session_id.clone() else {
            return;
        };
        self.translator.begin_turn();
        let images = std::mem::take(&mut self.images);
        if !images.is_empty() && !self.image_supported {
            self.diagnostic(
                DiagnosticLevel::Warn,
                "the agent does not take images (its promptCapabilities.image is off): the message went without them"
                    .into(),
            );
        }
        let mut blocks = prompt_blocks(text, &images, self.image_supported);
        if !self.deny_reasons.is_empty() {
            let reasons = std::mem::take(&mut self.deny_reasons).join("\n");
            blocks.insert(0, ContentBlock::Text(TextContent::new(reasons)));
        }
        let req = PromptRequest::new(session_id, blocks);
        let (prompt_id, line) = self.rpc.request(
            "session/prompt",
            req,
            Pending::Prompt {
                turn_id: turn_id.clone(),
            },
        );
        self.write(line);
        let model_id = self
            .model
            .clone()
            .or_else(|| self.agent_name.clone())
            .unwrap_or_else(|| PROVIDER_ID.to_owned());
        self.stream(
            &turn_id,
            Payload::ResponseStart {
                model_id,
                provider_id: PROVIDER_ID.into(),
            },
        );
        self.turn = Some(Turn {
            turn_id,
            prompt_id,
            cancel_deadline: None,
        });
    }

    fn cancel(&mut self, now: Instant) {
        if let Some((turn_id, _)) = self.waiting.take() {
            self.stream(&turn_id, Payload::interrupted(None));
            return;
        }
        let Some(session_id) = self.session_id.clone() else {
            return;
        };
        let grace = self.cfg.cancel_grace;
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if turn.cancel_deadline.is_some() {
            return;
        }
        turn.cancel_deadline = Some(now + grace);
        self.write(client::notification(
            "session/cancel",
            CancelNotification::new(session_id),
        ));
        // The agent may wait on a permission; it hears `cancelled` after the
        // cancel itself, so it knows why.
        self.cancel_permissions();
    }

    fn end_turn(&mut self, turn_id: String, result: Result<Value, RpcError>, cancelling: bool) {
        self.cancel_permissions();
        let result = match result {
            Ok(v) => v,
            Err(e) if cancelling => {
                tracing::debug!(error = %e.describe(), "prompt failed after a cancel");
                json!({"stopReason": "cancelled"})
            }
            Err(e) => {
                self.stream(
                    &turn_id,
                    Payload::ResponseError {
                        error: ErrorInfo::new(format!("rpc_{}", e.code), e.describe()),
                    },
                );
                return;
            }
        };
        let stop = result
            .get("stopReason")
            .cloned()
            .map(serde_json::from_value::<StopReason>);
        let usage = self.translator.turn_usage(&result);
        let (status, reason) = match stop {
            Some(Ok(StopReason::Cancelled)) => (ResponseStatus::Cancelled, "cancelled".to_owned()),
            Some(Ok(StopReason::Refusal)) => {
                let note = self
                    .translator
                    .note("The agent refused to continue this request.");
                self.translated(&turn_id, note);
                (ResponseStatus::Completed, "refusal".to_owned())
            }
            Some(Ok(StopReason::MaxTokens)) => (ResponseStatus::Completed, "max_tokens".into()),
            Some(Ok(StopReason::MaxTurnRequests)) => {
                (ResponseStatus::Completed, "max_turn_requests".into())
            }
            Some(Ok(_)) => (ResponseStatus::Completed, "end_turn".into()),
            _ => {
                let raw = result
                    .get("stopReason")
                    .map(render::generic)
                    .unwrap_or_else(|| "none".into());
                self.diagnostic(
                    DiagnosticLevel::Warn,
                    format!("unknown stopReason {raw} from the agent; treating the turn as ended"),
                );
                (ResponseStatus::Completed, raw.trim_matches('"').to_owned())
            }
        };
        let closing = if status == ResponseStatus::Completed {
            self.translator.finish()
        } else {
            // Open text is the processor's to mark interrupted.
            self.translator.refusals()
        };
        self.translated(&turn_id, closing);
        self.stream(
            &turn_id,
            Payload::ResponseDone {
                status,
                finish_reason: Some(reason),
                error: None,
                usage,
            },
        );
    }

    // ---- output ------------------------------------------------------------

    fn translated(&mut self, turn_id: &str, out: Vec<Translated>) {
        for t in out {
            match t {
                Translated::Stream(p) if !turn_id.is_empty() => self.stream(turn_id, p),
                Translated::Stream(_) => {}
                Translated::Commands(c) => {
                    if c != self.commands {
                        self.commands = c;
                        self.emit_session();
                    }
                }
                Translated::ConfigOptions(options) => self.config_options_changed(options),
                Translated::Diagnostic { level, message } => self.diagnostic(level, message),
            }
        }
    }

    fn stream(&mut self, turn_id: &str, payload: Payload) {
        let session = self
            .session_id
            .clone()
            .unwrap_or_else(|| self.cfg.agent_id.clone());
        let ev = StreamEvent::new(turn_id, &session, payload);
        self.effects
            .push(Effect::Emit(Box::new(ProviderEvent::Stream(ev))));
    }

    fn diagnostic(&mut self, level: DiagnosticLevel, message: String) {
        self.effects
            .push(Effect::Emit(Box::new(ProviderEvent::Diagnostic {
                level,
                message,
            })));
    }

    fn write(&mut self, line: String) {
        self.effects.push(Effect::Write(line));
    }
}
