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
use agent_client_protocol_schema::v1::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation,
    InitializeRequest, InitializeResponse, LoadSessionRequest, McpServer, NewSessionRequest,
    NewSessionResponse, PermissionOptionKind, PromptRequest, ReadTextFileRequest,
    RequestPermissionRequest, StopReason, TextContent, WriteTextFileRequest,
};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::client::{
    self, INVALID_PARAMS, Incoming, METHOD_NOT_FOUND, RpcClient, RpcError, parse_line,
};
use super::fs::{FsRoot, MissingFile};
use super::render;
use super::translate::{Translated, Translator, kind_label};
use crate::event::{ErrorInfo, Payload, ResponseStatus, StreamEvent};
use crate::provider::{
    DiagnosticLevel, PermissionDecision, PermissionOption, PermissionRequest, ProviderCommand,
    ProviderEvent, SessionInfo,
};

pub const PROVIDER_ID: &str = "acp";

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
    pub cancel_grace: Duration,
    /// How long `initialize` and `session/new` may take before start-up counts
    /// as failed (the next `Send` tries again).
    pub startup_timeout: Duration,
    pub missing_file: MissingFile,
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
    permission_seq: u64,
    /// Updates replayed by `session/load` are history hive already shows.
    replayed: usize,
    /// While starting: when hive stops waiting for the agent.
    startup_deadline: Option<Instant>,
    effects: Vec<Effect>,
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
            self.diagnostic(
                DiagnosticLevel::Info,
                format!(
                    "the agent did not confirm the cancel within {} ms; hive ended the turn",
                    self.cfg.cancel_grace.as_millis()
                ),
            );
            self.stream(
                &turn.turn_id,
                Payload::ResponseDone {
                    status: ResponseStatus::Cancelled,
                    finish_reason: Some("interrupted".into()),
                    error: None,
                    usage: None,
                },
            );
        }
    }

    pub fn on_command(&mut self, cmd: ProviderCommand, now: Instant) {
        match cmd {
            ProviderCommand::Send { turn_id, text } => self.send(turn_id, text),
            ProviderCommand::Cancel => self.cancel(now),
            ProviderCommand::Permission {
                request_id,
                decision,
            } => self.answer_permission(&request_id, decision),
            ProviderCommand::Steer { text } => self.diagnostic(
                DiagnosticLevel::Warn,
                format!("ACP agents take no input mid-turn; message not delivered: {text}"),
            ),
            // Kill is the task's business; terminal input has no meaning here.
            ProviderCommand::Kill | ProviderCommand::Input(_) | ProviderCommand::Resize { .. } => {}
        }
    }

    /// The agent's process is gone: the turn in flight fails with `report`.
    pub fn on_exit(&mut self, report: &str) {
        self.permissions.clear();
        let turn_id = self
            .turn
            .take()
            .map(|t| t.turn_id)
            .or_else(|| self.waiting.take().map(|(id, _)| id));
        if let Some(turn_id) = turn_id {
            self.stream(
                &turn_id,
                Payload::ResponseError {
                    error: ErrorInfo::new("agent_exited", format!("the agent {report}")),
                },
            );
        }
    }

    /// hive is killing the agent: the turn in flight ends as cancelled.
    pub fn on_kill(&mut self) {
        self.permissions.clear();
        let turn_id = self
            .turn
            .take()
            .map(|t| t.turn_id)
            .or_else(|| self.waiting.take().map(|(id, _)| id));
        if let Some(turn_id) = turn_id {
            self.stream(
                &turn_id,
                Payload::ResponseDone {
                    status: ResponseStatus::Cancelled,
                    finish_reason: Some("killed".into()),
                    error: None,
                    usage: None,
                },
            );
        }
    }

    pub fn on_line(&mut self, line: &str, now: Instant) {
        if line.trim().is_empty() {
            return;
        }
        match parse_line(line) {
            Ok(Incoming::Response { id, result }) => match self.rpc.take(&id) {
                Some(kind) => self.on_response(kind, result, now),
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
        let req = PromptRequest::new(session_id, vec![ContentBlock::Text(TextContent::new(text))]);
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
            self.stream(
                &turn_id,
                Payload::ResponseDone {
                    status: ResponseStatus::Cancelled,
                    finish_reason: Some("interrupted".into()),
                    error: None,
                    usage: None,
                },
            );
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
        if status == ResponseStatus::Completed {
            let closing = self.translator.finish();
            self.translated(&turn_id, closing);
        }
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

    // ---- session ---------------------------------------------------------

    fn open_session(&mut self) {
        self.phase = Phase::Opening;
        self.startup_deadline = Some(Instant::now() + self.cfg.startup_timeout);
        let cwd = self.cfg.cwd.clone();
        match self.cfg.resume.clone() {
            Some(id) if self.load_supported => {
                let req = LoadSessionRequest::new(id.clone(), cwd)
                    .mcp_servers(self.cfg.mcp_servers.clone());
                let (_, line) = self
                    .rpc
                    .request("session/load", req, Pending::LoadSession(id));
                self.write(line);
            }
            resume => {
                if let Some(id) = resume {
                    self.diagnostic(
                        DiagnosticLevel::Warn,
                        format!(
                            "{} cannot load earlier sessions; session {id} is not resumed, a new one starts",
                            self.agent_label()
                        ),
                    );
                    // Ask once; later restarts of the session do not repeat it.
                    self.cfg.resume = None;
                }
                let req = NewSessionRequest::new(cwd).mcp_servers(self.cfg.mcp_servers.clone());
                let (_, line) = self.rpc.request("session/new", req, Pending::NewSession);
                self.write(line);
            }
        }
    }

    fn on_response(&mut self, kind: Pending, result: Result<Value, RpcError>, _now: Instant) {
        // A start-up answer that comes after hive gave up (or after a retry
        // was answered first) only counts while that step is still open.
        let current = match (&kind, &self.phase) {
            (Pending::Initialize, Phase::Initializing)
            | (
                Pending::Initialize,
                Phase::Failed {
                    initialized: false, ..
                },
            ) => true,
            (Pending::Initialize, _) => false,
            (Pending::NewSession | Pending::LoadSession(_), Phase::Opening)
            | (
                Pending::NewSession | Pending::LoadSession(_),
                Phase::Failed {
                    initialized: true, ..
                },
            ) => true,
            (Pending::NewSession | Pending::LoadSession(_), _) => false,
            _ => true,
        };
        if !current {
            tracing::debug!(?kind, "stale start-up answer ignored");
            return;
        }
        match kind {
            Pending::Initialize => match result {
                Ok(v) => self.initialized(v),
                Err(e) => {
                    self.startup_failed(false, format!("initialize failed: {}", e.describe()))
                }
            },
            Pending::NewSession => match result {
                Ok(v) => match serde_json::from_value::<NewSessionResponse>(v.clone()) {
                    Ok(r) => {
                        self.config_options = v.get("configOptions").cloned().unwrap_or_default();
                        self.models = v.get("models").cloned().unwrap_or_default();
                        self.modes = v.get("modes").cloned().unwrap_or_default();
                        self.model = current_model(&v);
                        self.session_open(r.session_id.to_string());
                    }
                    Err(e) => self.startup_failed(
                        true,
                        format!("session/new answered without a session id: {e}"),
                    ),
                },
                Err(e) => self.startup_failed(true, session_error("session/new", &e)),
            },
            Pending::LoadSession(id) => match result {
                Ok(v) => {
                    self.config_options = v.get("configOptions").cloned().unwrap_or_default();
                    self.models = v.get("models").cloned().unwrap_or_default();
                    self.modes = v.get("modes").cloned().unwrap_or_default();
                    self.model = current_model(&v);
                    if self.replayed > 0 {
                        self.diagnostic(
                            DiagnosticLevel::Info,
                            format!(
                                "resumed session {id}; {} replayed updates not shown again",
                                self.replayed
                            ),
                        );
                    }
                    self.replayed = 0;
                    self.session_open(id);
                }
                Err(e) => {
                    self.diagnostic(
                        DiagnosticLevel::Warn,
                        format!(
                            "could not resume session {id} ({}); starting a new session",
                            e.describe()
                        ),
                    );
                    self.cfg.resume = None;
                    self.replayed = 0;
                    self.open_session();
                }
            },
            Pending::Prompt { turn_id } => {
                let Some(turn) = self.turn.take_if(|t| t.turn_id == turn_id) else {
                    return;
                };
                self.end_turn(turn_id, result, turn.cancel_deadline.is_some());
            }
            Pending::Setting => {
                if let Err(e) = result {
                    self.diagnostic(
                        DiagnosticLevel::Warn,
                        format!("the agent refused a session setting: {}", e.describe()),
                    );
                }
            }
        }
    }

    fn initialized(&mut self, v: Value) {
        match serde_json::from_value::<InitializeResponse>(v.clone()) {
            Ok(r) => {
                if r.protocol_version != ProtocolVersion::V1 {
                    self.diagnostic(
                        DiagnosticLevel::Warn,
                        format!(
                            "the agent speaks ACP version {}; hive speaks 1",
                            r.protocol_version.as_u16()
                        ),
                    );
                }
                self.load_supported = r.agent_capabilities.load_session;
                self.agent_name = r
                    .agent_info
                    .map(|i| i.title.unwrap_or(i.name))
                    .filter(|n| !n.is_empty());
            }
            Err(e) => self.diagnostic(
                DiagnosticLevel::Warn,
                format!("unexpected initialize response ({e}); continuing with defaults"),
            ),
        }
        self.open_session();
    }

    fn session_open(&mut self, session_id: String) {
        self.session_id = Some(session_id.clone());
        self.phase = Phase::Ready;
        self.startup_deadline = None;
        self.select_model(&session_id);
        self.select_mode(&session_id);
        self.select_thinking(&session_id);
        self.emit_session();
        if let Some((turn_id, text)) = self.waiting.take() {
            self.prompt(turn_id, text);
        }
    }

    /// Applies the configured model: Codex exposes it as a config option,
    /// Claude Code as `models` with `session/set_model`.
    fn select_model(&mut self, session_id: &str) {
        let Some(wanted) = self.cfg.model.clone() else {
            return;
        };
        if self.model.as_deref() == Some(wanted.as_str()) {
            return;
        }
        let option = self.config_options.as_array().and_then(|opts| {
            opts.iter().find(|o| {
                o.get("category").and_then(Value::as_str) == Some("model")
                    || o.get("id").and_then(Value::as_str) == Some("model")
            })
        });
        let request = if let Some(id) = option.and_then(|o| o.get("id")).and_then(Value::as_str) {
            Some((
                "session/set_config_option",
                json!({"sessionId": session_id, "configId": id, "value": wanted}),
            ))
        } else if self.models.is_object() {
            Some((
                "session/set_model",
                json!({"sessionId": session_id, "modelId": wanted}),
            ))
        } else {
            None
        };
        match request {
            Some((method, params)) => {
                let (_, line) = self.rpc.request(method, params, Pending::Setting);
                self.write(line);
                self.model = Some(wanted);
            }
            None => self.diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "{} offers no model choice; `model = \"{wanted}\"` ignored",
                    self.agent_label()
                ),
            ),
        }
    }

    /// `permission_mode` → one of the agent's session modes (`session/set_mode`),
    /// or a `mode` config option.
    fn select_mode(&mut self, session_id: &str) {
        let Some(wanted) = self.cfg.permission_mode.clone() else {
            return;
        };
        let current = self.modes.get("currentModeId").and_then(Value::as_str);
        if current == Some(wanted.as_str()) {
            return;
        }
        let known: Vec<String> = self
            .modes
            .get("availableModes")
            .and_then(Value::as_array)
            .map(|m| {
                m.iter()
                    .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if known.contains(&wanted) {
            let params = json!({"sessionId": session_id, "modeId": wanted});
            let (_, line) = self
                .rpc
                .request("session/set_mode", params, Pending::Setting);
            self.write(line);
        } else if !self.set_config_option(session_id, "mode", &wanted) {
            let list = if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            };
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "{} has no mode `{wanted}`; `permission_mode` ignored (modes: {list})",
                    self.agent_label()
                ),
            );
        }
    }

    /// `thinking` → the agent's thought-level config option (Codex's reasoning effort).
    fn select_thinking(&mut self, session_id: &str) {
        let Some(wanted) = self.cfg.thinking.clone() else {
            return;
        };
        if !self.set_config_option(session_id, "thought_level", &wanted) {
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "{} offers no thinking level; `thinking = \"{wanted}\"` ignored",
                    self.agent_label()
                ),
            );
        }
    }

    /// Sets the config option of `category` to `value` if the agent has one.
    fn set_config_option(&mut self, session_id: &str, category: &str, value: &str) -> bool {
        let id = self.config_options.as_array().and_then(|opts| {
            opts.iter()
                .find(|o| {
                    o.get("category").and_then(Value::as_str) == Some(category)
                        || o.get("id").and_then(Value::as_str) == Some(category)
                })
                .and_then(|o| o.get("id"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        let Some(id) = id else {
            return false;
        };
        let params = json!({"sessionId": session_id, "configId": id, "value": value});
        let (_, line) = self
            .rpc
            .request("session/set_config_option", params, Pending::Setting);
        self.write(line);
        true
    }

    fn startup_failed(&mut self, initialized: bool, reason: String) {
        self.startup_deadline = None;
        self.phase = Phase::Failed {
            initialized,
            reason: reason.clone(),
        };
        self.diagnostic(DiagnosticLevel::Error, reason.clone());
        if let Some((turn_id, _)) = self.waiting.take() {
            self.stream(
                &turn_id,
                Payload::ResponseError {
                    error: ErrorInfo::new("session_failed", reason),
                },
            );
        }
    }

    fn emit_session(&mut self) {
        let info = SessionInfo {
            resume_handle: self.session_id.clone(),
            model: self.model.clone(),
            commands: self.commands.clone(),
        };
        self.effects
            .push(Effect::Emit(Box::new(ProviderEvent::Session(info))));
    }

    fn agent_label(&self) -> String {
        self.agent_name
            .clone()
            .unwrap_or_else(|| format!("agent `{}`", self.cfg.agent_id))
    }

    // ---- agent → client ----------------------------------------------------

    fn on_notification(&mut self, method: &str, params: Value) {
        if method != "session/update" {
            tracing::debug!(method, "notification ignored");
            return;
        }
        if self.phase == Phase::Opening && self.cfg.resume.is_some() {
            // History replayed by session/load; hive shows its own copy.
            let kind = params
                .pointer("/update/sessionUpdate")
                .and_then(Value::as_str);
            if kind != Some("available_commands_update") {
                self.replayed += 1;
                return;
            }
        }
        let out = self.translator.update(&params);
        match self.turn.as_ref().map(|t| t.turn_id.clone()) {
            Some(turn_id) => self.translated(&turn_id, out),
            None => {
                // Between turns only session-level news matters; stray
                // chunks (late output of a turn hive already ended) are dropped.
                for t in out {
                    match t {
                        Translated::Stream(_) => {
                            tracing::debug!("update outside a turn dropped")
                        }
                        other => self.translated("", vec![other]),
                    }
                }
            }
        }
    }

    fn on_request(&mut self, id: Value, method: &str, params: Value) {
        match method {
            "session/request_permission" => self.permission_request(id, params),
            "fs/read_text_file" => {
                let line = match serde_json::from_value::<ReadTextFileRequest>(params) {
                    Ok(req) => {
                        let path = req.path.display().to_string();
                        match self.fs.read(&path, req.line, req.limit) {
                            Ok(content) => client::response(&id, json!({"content": content})),
                            Err(e) => {
                                self.fs_refused(&e);
                                client::error_response(&id, e.code(), &e.to_string())
                            }
                        }
                    }
                    Err(e) => client::error_response(&id, INVALID_PARAMS, &e.to_string()),
                };
                self.write(line);
            }
            "fs/write_text_file" => {
                let line = match serde_json::from_value::<WriteTextFileRequest>(params) {
                    Ok(req) => {
                        let path = req.path.display().to_string();
                        match self.fs.write(&path, &req.content) {
                            Ok(()) => client::response(&id, Value::Null),
                            Err(e) => {
                                self.fs_refused(&e);
                                client::error_response(&id, e.code(), &e.to_string())
                            }
                        }
                    }
                    Err(e) => client::error_response(&id, INVALID_PARAMS, &e.to_string()),
                };
                self.write(line);
            }
            other => {
                self.write(client::error_response(
                    &id,
                    METHOD_NOT_FOUND,
                    &format!("method not found: {other}"),
                ));
            }
        }
    }

    fn fs_refused(&mut self, e: &super::fs::FsError) {
        if matches!(e, super::fs::FsError::Outside { .. }) {
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!("refused agent file access: {e}"),
            );
        }
    }

    fn permission_request(&mut self, id: Value, params: Value) {
        let req = match serde_json::from_value::<RequestPermissionRequest>(params) {
            Ok(r) => r,
            Err(e) => {
                self.write(client::error_response(&id, INVALID_PARAMS, &e.to_string()));
                return;
            }
        };
        let active = self
            .turn
            .as_ref()
            .filter(|t| t.cancel_deadline.is_none())
            .map(|t| t.turn_id.clone());
        let Some(turn_id) = active else {
            // Nobody is there to ask: the turn is over or being cancelled.
            self.write(client::response(
                &id,
                json!({"outcome": {"outcome": "cancelled"}}),
            ));
            return;
        };
        let out = self.translator.permission_tool(&req.tool_call);
        self.translated(&turn_id, out);
        self.permission_seq += 1;
        let request_id = format!("acp-perm-{}", self.permission_seq);
        let options: Vec<PermissionOption> = req
            .options
            .iter()
            .map(|o| PermissionOption {
                option_id: o.option_id.to_string(),
                label: o.name.clone(),
                kind: option_kind(o.kind).to_owned(),
            })
            .collect();
        let f = &req.tool_call.fields;
        let tool_name = f
            .title
            .clone()
            .filter(|t| !t.is_empty())
            .or_else(|| f.name.clone())
            .or_else(|| f.kind.map(|k| kind_label(k).to_owned()))
            .unwrap_or_else(|| "tool".into());
        let description = f
            .content
            .as_deref()
            .map(render::tool_content)
            .filter(|d| !d.is_empty());
        let input = f.raw_input.clone().unwrap_or_else(|| json!({}));
        self.permissions.insert(
            request_id.clone(),
            PendingPermission {
                rpc_id: id,
                tool_call_id: req.tool_call.tool_call_id.to_string(),
                options: options.clone(),
            },
        );
        self.effects
            .push(Effect::Emit(Box::new(ProviderEvent::Permission(
                PermissionRequest {
                    request_id,
                    tool_name,
                    input,
                    description,
                    options,
                },
            ))));
    }

    fn answer_permission(&mut self, request_id: &str, decision: PermissionDecision) {
        let Some(p) = self.permissions.remove(request_id) else {
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!("no pending permission request `{request_id}`"),
            );
            return;
        };
        let by_kind = |kinds: &[&str]| {
            kinds.iter().find_map(|k| {
                p.options
                    .iter()
                    .find(|o| o.kind == *k)
                    .map(|o| o.option_id.clone())
            })
        };
        let chosen = match decision {
            PermissionDecision::Option { option_id } => Some(option_id),
            PermissionDecision::AllowOnce => by_kind(&["allow_once", "allow_always"]),
            PermissionDecision::AllowAlways => by_kind(&["allow_always", "allow_once"]),
            PermissionDecision::Deny { .. } => by_kind(&["reject_once", "reject_always"]),
        };
        let refused = chosen.as_ref().is_none_or(|id| {
            p.options
                .iter()
                .any(|o| o.option_id == *id && o.kind.starts_with("reject"))
        });
        if refused {
            self.translator.refuse(&p.tool_call_id);
        }
        let outcome = match chosen {
            Some(option_id) => json!({"outcome": "selected", "optionId": option_id}),
            None => json!({"outcome": "cancelled"}),
        };
        self.write(client::response(&p.rpc_id, json!({ "outcome": outcome })));
    }

    fn cancel_permissions(&mut self) {
        let pending: Vec<PendingPermission> = self.permissions.drain().map(|(_, p)| p).collect();
        for p in pending {
            self.write(client::response(
                &p.rpc_id,
                json!({"outcome": {"outcome": "cancelled"}}),
            ));
        }
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

fn option_kind(kind: PermissionOptionKind) -> &'static str {
    match kind {
        PermissionOptionKind::AllowOnce => "allow_once",
        PermissionOptionKind::AllowAlways => "allow_always",
        PermissionOptionKind::RejectOnce => "reject_once",
        PermissionOptionKind::RejectAlways => "reject_always",
        _ => "other",
    }
}

/// The model a new session runs: Codex's `model` config option, else the
/// `models.currentModelId` Claude Code and Gemini report.
fn current_model(v: &Value) -> Option<String> {
    let from_options = v
        .get("configOptions")
        .and_then(Value::as_array)
        .and_then(|opts| {
            opts.iter().find(|o| {
                o.get("category").and_then(Value::as_str) == Some("model")
                    || o.get("id").and_then(Value::as_str) == Some("model")
            })
        })
        .and_then(|o| o.get("currentValue"))
        .and_then(Value::as_str);
    from_options
        .or_else(|| v.pointer("/models/currentModelId").and_then(Value::as_str))
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
}

/// A session/new failure, with a hint when the agent wants a login.
fn session_error(method: &str, e: &RpcError) -> String {
    let mut msg = format!("{method} failed: {}", e.describe());
    // -32000 is ACP's "authentication required".
    if e.code == -32000 {
        msg.push_str(
            " (the agent needs a login: run it once in a terminal, or set its API key in `env`)",
        );
    }
    msg
}
