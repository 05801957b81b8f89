//! Session start-up: `initialize`, `session/new` / `session/load`, and the
//! session settings hive applies after it opens (model, mode, thinking).

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    InitializeResponse, LoadSessionRequest, NewSessionRequest, NewSessionResponse,
};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Effect, Engine, Pending, Phase};
use crate::event::{ErrorInfo, Payload};
use crate::provider::acp::client::RpcError;
use crate::provider::{DiagnosticLevel, ProviderEvent, SessionInfo};

impl Engine {
    pub(super) fn open_session(&mut self) {
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

    pub(super) fn on_response(&mut self, kind: Pending, result: Result<Value, RpcError>) {
        if !self.is_current(&kind) {
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
            Pending::NewSession => self.session_created(result),
            Pending::LoadSession(id) => self.session_loaded(id, result),
            Pending::Prompt { turn_id } => {
                let Some(turn) = self.turn.take_if(|t| t.turn_id == turn_id) else {
                    return;
                };
                self.end_turn(turn_id, result, turn.cancel_deadline.is_some());
            }
            Pending::Setting => match result {
                Err(e) => self.diagnostic(
                    DiagnosticLevel::Warn,
                    format!("the agent refused a session setting: {}", e.describe()),
                ),
                // `session/set_config_option` answers with all the options.
                Ok(v) => {
                    if let Some(options) = v.get("configOptions") {
                        self.config_options_changed(options.clone());
                    }
                }
            },
        }
    }

    /// A start-up answer that comes after hive gave up (or after a retry
    /// was answered first) only counts while that step is still open.
    fn is_current(&self, kind: &Pending) -> bool {
        match (kind, &self.phase) {
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
        }
    }

    /// The session's settings as `session/new` or `session/load` offer them.
    fn read_settings(&mut self, v: &Value) {
        self.config_options = v.get("configOptions").cloned().unwrap_or_default();
        self.models = v.get("models").cloned().unwrap_or_default();
        self.modes = v.get("modes").cloned().unwrap_or_default();
        self.model = current_model(v);
    }

    fn session_created(&mut self, result: Result<Value, RpcError>) {
        match result {
            Ok(v) => match serde_json::from_value::<NewSessionResponse>(v.clone()) {
                Ok(r) => {
                    self.read_settings(&v);
                    self.session_open(r.session_id.to_string());
                }
                Err(e) => self.startup_failed(
                    true,
                    format!("session/new answered without a session id: {e}"),
                ),
            },
            Err(e) => self.startup_failed(true, session_error("session/new", &e)),
        }
    }

    fn session_loaded(&mut self, id: String, result: Result<Value, RpcError>) {
        match result {
            Ok(v) => {
                self.read_settings(&v);
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
        }
    }

    pub(super) fn initialized(&mut self, v: Value) {
        match serde_json::from_value::<InitializeResponse>(v) {
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
                self.image_supported = r.agent_capabilities.prompt_capabilities.image;
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

    pub(super) fn session_open(&mut self, session_id: String) {
        self.session_id = Some(session_id.clone());
        self.phase = Phase::Ready;
        self.startup_deadline = None;
        self.select_model(&session_id);
        self.select_mode(&session_id);
        self.select_thinking(&session_id);
        self.emit_session();
        let models = self.offered_models();
        if !models.is_empty() {
            self.effects
                .push(Effect::Emit(Box::new(ProviderEvent::Models(models))));
        }
        if let Some((turn_id, text)) = self.waiting.take() {
            self.prompt(turn_id, text);
        }
    }

    /// Applies the configured model: Codex exposes it as a config option,
    /// Claude Code as `models` with `session/set_model`.
    pub(super) fn select_model(&mut self, session_id: &str) {
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

    /// Model ids the agent offers: `models.availableModels`, or the values
    /// of a `model` config option.
    fn offered_models(&self) -> Vec<String> {
        let ids = |list: Option<&Value>, key: &str| -> Vec<String> {
            list.and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(|m| m.get(key).and_then(Value::as_str).map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let listed = ids(self.models.get("availableModels"), "modelId");
        if !listed.is_empty() {
            return listed;
        }
        let option = self.config_options.as_array().and_then(|opts| {
            opts.iter()
                .find(|o| o.get("category").and_then(Value::as_str) == Some("model"))
        });
        ids(option.and_then(|o| o.get("options")), "value")
    }

    /// `permission_mode` → one of the agent's session modes (`session/set_mode`),
    /// or a `mode` config option.
    pub(super) fn select_mode(&mut self, session_id: &str) {
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
    pub(super) fn select_thinking(&mut self, session_id: &str) {
        let Some(wanted) = self.cfg.thinking.clone() else {
            return;
        };
        if std::mem::take(&mut self.effort_asked) {
            return self.answer_effort(session_id, wanted);
        }
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

    /// `/effort`: one note, and the effort is the pane's only if the agent
    /// has a thought level to take it (issue 34 item 3). Before the session
    /// opens it waits in `thinking`; opening the session answers it.
    pub(super) fn set_effort(&mut self, effort: String) {
        match self.session_id.clone() {
            Some(sid) => self.answer_effort(&sid, effort),
            None => {
                self.cfg.thinking = Some(effort);
                self.effort_asked = true;
            }
        }
    }

    fn answer_effort(&mut self, session_id: &str, effort: String) {
        if self.set_config_option(session_id, "thought_level", &effort) {
            self.cfg.thinking = Some(effort.clone());
            self.diagnostic(DiagnosticLevel::Info, format!("effort set to {effort}"));
            self.effects
                .push(Effect::Emit(Box::new(ProviderEvent::EffortTaken(effort))));
        } else {
            // Not the agent's to take: a restart does not ask again.
            self.cfg.thinking = None;
            let agent = self.agent_label();
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!("{agent} offers no thinking level; the effort stays as it is"),
            );
        }
    }

    /// Sets the config option of `category` to `value` if the agent has one.
    pub(super) fn set_config_option(
        &mut self,
        session_id: &str,
        category: &str,
        value: &str,
    ) -> bool {
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

    pub(super) fn startup_failed(&mut self, initialized: bool, reason: String) {
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

    pub(super) fn emit_session(&mut self) {
        let info = SessionInfo {
            resume_handle: self.session_id.clone(),
            model: self.model.clone(),
            commands: self.commands.clone(),
        };
        self.effects
            .push(Effect::Emit(Box::new(ProviderEvent::Session(info))));
    }

    /// The agent's config options changed (a `config_option_update`, or the
    /// answer to a setting): kept for the next `/effort` or `/model`, and a
    /// new approval mode is named once, as a `current_mode_update` is.
    pub(super) fn config_options_changed(&mut self, options: Value) {
        if !options.is_array() {
            return;
        }
        let mode = |opts: &Value| option_value(opts, "mode");
        let (was, now) = (mode(&self.config_options), mode(&options));
        self.config_options = options;
        if let Some(now) = now.filter(|n| was.as_ref() != Some(n)) {
            self.diagnostic(DiagnosticLevel::Info, format!("agent mode is now `{now}`"));
        }
    }

    pub(super) fn agent_label(&self) -> String {
        self.agent_name
            .clone()
            .unwrap_or_else(|| format!("agent `{}`", self.cfg.agent_id))
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

/// The current value of the config option of `category` (or that id).
fn option_value(options: &Value, category: &str) -> Option<String> {
    options
        .as_array()?
        .iter()
        .find(|o| {
            o.get("category").and_then(Value::as_str) == Some(category)
                || o.get("id").and_then(Value::as_str) == Some(category)
        })?
        .get("currentValue")?
        .as_str()
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
