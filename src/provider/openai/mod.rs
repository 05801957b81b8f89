//! The `openai` provider: hive's own agent loop against any OpenAI-compatible
//! Chat Completions endpoint (seed 001). There is no child process: the task
//! owns an HTTP client and the conversation.
//!
//! A turn is a loop of steps (`step.rs`): stream the model's answer; if it
//! asks for tools, run them concurrently, append their results and call the
//! model again, at most `max_steps` times (then the turn ends with finish
//! reason `max-steps`). The conversation is hive's history: a restarted
//! hive rebuilds it from the pane's history session (`resume.rs`), whose id
//! is this provider's resume handle.

mod coding;
mod compact;
pub(crate) mod doctor;
mod mcp;
mod mcp_http;
mod resume;
pub(crate) mod settings;
mod step;
pub mod tools;
pub mod wire;

use std::sync::Arc;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    Capabilities, DiagnosticLevel, EventSink, ProviderCommand, ProviderError, ProviderEvent,
    ProviderFactory, ProviderHandle, ProviderSpec, SessionInfo, Sink, Spawned,
};
use crate::config::AgentConfig;
use crate::event::{ErrorInfo, Payload, ResponseStatus, Usage, new_id};
use crate::history::{PaneState, Store};
pub use coding::PermissionMode;
pub(crate) use resume::messages_from_records;
pub use settings::OpenAiSettings;
pub(crate) use step::StepError;
use tools::{ToolResult, Toolbox, ToolboxFactory};
use wire::{ChatMessage, ToolSpec};

pub(crate) const PROVIDER_ID: &str = "openai";
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The key variable when `base_url` is left at OpenAI's own.
const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";
pub(crate) const DEFAULT_MAX_STEPS: u32 = 10;
/// The command this agent offers: summarise the conversation now.
pub(crate) const COMPACT: &str = "/compact";

/// Parses a coding-tool call (`name`, its arguments as the model wrote
/// them) as far as it goes without I/O; for the fuzz target.
pub fn check_tool_call(name: &str, arguments: &str) -> Result<(), String> {
    coding::check(name, arguments)
}

/// How the agent calls its endpoint. The Authorization header is marked
/// sensitive, so a debug print shows `Sensitive` instead of the key.
#[derive(Debug)]
pub(crate) struct Settings {
    pub base_url: String,
    pub model: String,
    /// Authorization (marked sensitive) and the agent's own headers.
    headers: HeaderMap,
    pub max_steps: u32,
    pub temperature: Option<f64>,
    pub reasoning_effort: Option<String>,
    pub system_prompt: Option<String>,
    /// The model's context window in tokens (`context_window`): older tool
    /// outputs are cleared as the conversation nears it.
    pub context_window: Option<u64>,
    /// The longest SSE event read (`[limits] max_line_bytes`).
    pub(crate) max_line_bytes: usize,
}

impl Settings {
    pub(crate) fn from_agent(agent: &AgentConfig) -> Result<Self, String> {
        let own = OpenAiSettings::from_agent(agent).map_err(|e| e.message)?;
        let model = agent
            .model
            .clone()
            .ok_or("`model` is required for provider `openai`")?;
        let base_url = own
            .base_url
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_URL.into());
        let key_env = own
            .api_key_env
            .clone()
            .or_else(|| (base_url == DEFAULT_BASE_URL).then(|| DEFAULT_KEY_ENV.into()));
        let mut headers = HeaderMap::new();
        for (name, value) in &own.headers {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| format!("header name `{name}`: {e}"))?;
            let v = HeaderValue::from_str(value).map_err(|e| format!("header `{name}`: {e}"))?;
            headers.insert(n, v);
        }
        if let Some(var) = key_env {
            // The agent's own env table first, then hive's environment.
            let key = agent
                .env
                .get(&var)
                .cloned()
                .or_else(|| std::env::var(&var).ok())
                .filter(|k| !k.is_empty())
                .ok_or_else(|| format!("the API key variable `{var}` (api_key_env) is not set"))?;
            let mut v = HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|_| format!("the value of `{var}` is not a valid header value"))?;
            v.set_sensitive(true);
            headers.insert(AUTHORIZATION, v);
        }
        let max_steps = own.max_steps.unwrap_or(DEFAULT_MAX_STEPS);
        if max_steps == 0 {
            return Err("`max_steps` must be at least 1".into());
        }
        Ok(Self {
            max_line_bytes: agent.max_line_bytes,
            base_url,
            model,
            headers,
            max_steps,
            temperature: own.temperature,
            reasoning_effort: own.reasoning_effort.or_else(|| agent.thinking.clone()),
            system_prompt: agent.system_prompt.clone(),
            context_window: own.context_window.or(agent.context_window),
        })
    }

    /// `/model` and `/effort`: the next request carries them. `off` (or
    /// `none`) leaves `reasoning_effort` out of the request.
    fn apply(&mut self, cmd: ProviderCommand) {
        match cmd {
            ProviderCommand::SetModel { model } => self.model = model,
            ProviderCommand::SetEffort { effort } => {
                self.reasoning_effort =
                    (!matches!(effort.as_str(), "off" | "none" | "")).then_some(effort);
            }
            _ => {}
        }
    }

    pub(crate) fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }
}

/// The `openai` provider as the registry knows it: no program (doctor
/// checks its settings and names its key variable), its own keys on the agent table, hive's
/// operations as an in-process toolbox.
pub(crate) fn descriptor() -> super::ProviderDescriptor {
    super::ProviderDescriptor {
        doctor: doctor::facts,
        operations: super::operations::Operations::InProcess(|toolbox, store| {
            let factory = OpenAiFactory::default().with_toolbox(toolbox);
            Arc::new(match store {
                Some(store) => factory.with_store(store),
                None => factory,
            })
        }),
        settings: super::OwnSettings {
            keys: settings::KEYS,
            check: OpenAiSettings::check,
        },
        mcp_channel: Some("hive's own MCP client (stdio, or streamable HTTP)"),
        ..super::ProviderDescriptor::bare(PROVIDER_ID, Arc::new(OpenAiFactory::default()))
    }
}

/// Builds `openai` provider tasks. The app gives it the toolbox of hive's
/// operations; tests give their own toolbox and history store.
#[derive(Default, Clone)]
pub struct OpenAiFactory {
    toolbox: Option<ToolboxFactory>,
    store: Option<Store>,
}

impl OpenAiFactory {
    pub fn with_toolbox(mut self, toolbox: ToolboxFactory) -> Self {
        self.toolbox = Some(toolbox);
        self
    }

    /// Where the conversation is rebuilt from (default: the user's store).
    pub fn with_store(mut self, store: Store) -> Self {
        self.store = Some(store);
        self
    }
}

impl ProviderFactory for OpenAiFactory {
    fn capabilities(&self, agent: &AgentConfig) -> Capabilities {
        let own = OpenAiSettings::from_agent(agent).unwrap_or_default();
        Capabilities {
            images: true,
            permissions: own.tools != Some(false)
                && own.permission_mode != Some(PermissionMode::Yolo),
            ..Capabilities::structured()
        }
    }

    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned {
        let config = |message: String| ProviderError::config(&spec.agent.id, message);
        let mut settings = Settings::from_agent(&spec.agent).map_err(config)?;
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| config(format!("HTTP client: {e}")))?;
        let toolbox = self.toolbox.as_ref().and_then(|f| f(&spec.agent));
        let own = OpenAiSettings::from_agent(&spec.agent).map_err(|e| config(e.message))?;
        let coding = match own.tools {
            Some(false) => None,
            _ => {
                let cwd = super::process::working_dir(&spec.agent)?;
                settings.system_prompt = Some(coding::context::system_prompt(
                    settings.system_prompt.as_deref(),
                    &spec.agent,
                    &cwd,
                ));
                Some(Arc::new(
                    coding::CodingTools::new(
                        cwd,
                        own.permission_mode.unwrap_or_default(),
                        events.clone(),
                    )
                    .on_host(
                        super::process::exec_for(&spec.agent),
                        super::process::limits_of(&spec.agent),
                    ),
                ))
            }
        };
        let mut agent = Agent {
            settings,
            client,
            toolbox,
            coding,
            tools: Vec::new(),
            events,
            session: String::new(),
            messages: Vec::new(),
            images: Vec::new(),
        };
        agent.offer_tools();
        let servers = (
            mcp::with_shared(own.mcp_servers, &spec.agent),
            spec.agent.cwd.clone(),
        );
        // Read now, not in the task: the runner records the first message
        // of a turn as soon as it is sent, and that must not be replayed.
        let loaded = Start {
            store: self.store.clone().unwrap_or_else(Store::user),
            agent_id: spec.agent.id,
            resume: spec.resume,
        }
        .load();
        Ok(ProviderHandle::spawn(move |rx| async move {
            agent
                .add_mcp_servers(&servers.0, servers.1.as_deref())
                .await;
            run(agent, loaded, rx).await
        }))
    }
}

/// Where the conversation comes from.
struct Start {
    store: Store,
    agent_id: String,
    resume: Option<String>,
}

impl Start {
    /// The history session to continue and its messages. Without a resume
    /// handle the pane's current session is named (the app opened it
    /// before starting the provider), with no messages to replay.
    fn load(self) -> Loaded {
        let mut warnings = Vec::new();
        let session = match self.resume {
            Some(h) => Some(h),
            None => match PaneState::load(&self.store.state_path(&self.agent_id)) {
                Ok(state) => return (state.map(|s| s.session), Vec::new(), warnings),
                Err(e) => {
                    warnings.push(e.to_string());
                    None
                }
            },
        };
        let Some(session) = session else {
            return (None, Vec::new(), warnings);
        };
        let path = self.store.session_path(&self.agent_id, &session);
        match crate::history::store::read_all(&path) {
            Ok(loaded) => {
                warnings.extend(loaded.warnings);
                (
                    Some(session),
                    messages_from_records(loaded.records.iter().map(|(_, r)| r)),
                    warnings,
                )
            }
            Err(e) => {
                warnings.push(format!("conversation not restored: {e}"));
                (Some(session), Vec::new(), warnings)
            }
        }
    }
}

/// The history session, its messages and what went wrong reading it.
type Loaded = (Option<String>, Vec<ChatMessage>, Vec<String>);

async fn run(mut agent: Agent, loaded: Loaded, mut rx: mpsc::UnboundedReceiver<ProviderCommand>) {
    let (session, messages, warnings) = loaded;
    for w in warnings {
        agent.events.diagnostic(DiagnosticLevel::Warn, w);
    }
    agent.messages = messages;
    agent.session = session.clone().unwrap_or_else(|| new_id("session"));
    agent.events.emit(ProviderEvent::Session(SessionInfo {
        resume_handle: session,
        model: Some(agent.settings.model.clone()),
        commands: vec![COMPACT.into()],
    }));
    while let Some(cmd) = rx.recv().await {
        match cmd {
            ProviderCommand::Send { turn_id, text } => {
                let cancel = CancellationToken::new();
                let events = agent.events.clone();
                let coding = agent.coding.clone();
                // Settings changed mid-turn apply from the next request on
                // the next turn (the running one keeps its model).
                let mut later = Vec::new();
                {
                    let turn = agent.turn(&turn_id, text, &cancel);
                    tokio::pin!(turn);
                    loop {
                        tokio::select! {
                            () = &mut turn => break,
                            cmd = rx.recv() => match cmd {
                                Some(ProviderCommand::Cancel) => cancel.cancel(),
                                Some(ProviderCommand::Kill) | None => return,
                                Some(ProviderCommand::Send { turn_id, .. }) => {
                                    events.stream(&turn_id, "busy", Payload::ResponseError {
                                        error: ErrorInfo::new("busy", "the agent is still running the previous turn"),
                                    });
                                }
                                Some(ProviderCommand::Steer { .. }) => not_mid_turn(&events),
                                Some(ProviderCommand::Permission { request_id, decision }) => {
                                    if let Some(c) = &coding {
                                        c.approvals.answer(&request_id, decision);
                                    }
                                }
                                Some(c @ (ProviderCommand::SetModel { .. } | ProviderCommand::SetEffort { .. })) => later.push(c),
                                Some(_) => {}
                            }
                        }
                    }
                }
                for c in later {
                    agent.settings.apply(c);
                }
            }
            ProviderCommand::Kill => return,
            ProviderCommand::Steer { .. } => not_mid_turn(&agent.events),
            c @ (ProviderCommand::SetModel { .. } | ProviderCommand::SetEffort { .. }) => {
                agent.settings.apply(c);
            }
            ProviderCommand::Attach(images) => agent.images = images,
            _ => {}
        }
    }
}

fn not_mid_turn(events: &EventSink) {
    events.diagnostic(
        DiagnosticLevel::Info,
        "the openai agent takes no messages mid-turn: queue it or interrupt",
    );
}

/// The loop's state across turns.
struct Agent {
    settings: Settings,
    client: reqwest::Client,
    toolbox: Option<Arc<dyn Toolbox>>,
    /// `read`, `write`, `edit`, `glob`, `grep`, `bash` (unless `tools = false`).
    coding: Option<Arc<coding::CodingTools>>,
    tools: Vec<ToolSpec>,
    events: EventSink,
    session: String,
    /// The conversation without the system prompt.
    messages: Vec<ChatMessage>,
    /// Images for the next turn's message.
    images: Vec<crate::image::Image>,
}

impl Agent {
    /// Starts the agent's MCP servers and offers their tools beside the
    /// others; a server that fails is reported in the pane and left out.
    async fn add_mcp_servers(
        &mut self,
        servers: &[crate::config::McpServerConfig],
        cwd: Option<&std::path::Path>,
    ) {
        if servers.is_empty() {
            return;
        }
        let (mcp, failures) = mcp::start(servers, cwd).await;
        for f in failures {
            self.events.diagnostic(DiagnosticLevel::Warn, f);
        }
        let Some(mcp) = mcp else {
            return;
        };
        let mcp: Arc<dyn Toolbox> = Arc::new(mcp);
        let toolbox: Arc<dyn Toolbox> = match self.toolbox.take() {
            Some(hive) => Arc::new(tools::Stack::new(vec![hive, mcp])),
            None => mcp,
        };
        self.toolbox = Some(toolbox);
        self.offer_tools();
    }

    /// The tools every request lists: the coding tools, then the toolbox's.
    fn offer_tools(&mut self) {
        let coding = self
            .coding
            .iter()
            .flat_map(|_| coding::CodingTools::definitions());
        let other = self.toolbox.iter().flat_map(|t| t.definitions());
        self.tools = coding.chain(other).map(|d| tools::spec(&d)).collect();
    }

    fn emit(&self, turn_id: &str, payload: Payload) {
        self.events.stream(turn_id, &self.session, payload);
    }

    fn request_messages(&self) -> Vec<ChatMessage> {
        let system = self
            .settings
            .system_prompt
            .iter()
            .map(|s| ChatMessage::System { content: s.clone() });
        system.chain(self.messages.iter().cloned()).collect()
    }

    /// One model call's usage with the context it leaves: its prompt and
    /// answer are the conversation so far; the window is the configured one.
    fn call_usage(&self, u: &Usage) -> Usage {
        Usage {
            context_tokens: Some(u.total_tokens()).filter(|&n| n > 0),
            context_window: self.settings.context_window,
            ..u.clone()
        }
    }

    /// One model call on the conversation so far (retried on its limits).
    async fn call_model(
        &self,
        turn_id: &str,
        cancel: &CancellationToken,
    ) -> Result<step::StepOutput, StepError> {
        let messages = self.request_messages();
        let ctx = step::StepCtx {
            events: &self.events,
            turn_id,
            session_id: &self.session,
            cancel,
        };
        let request = step::StepRequest {
            client: &self.client,
            settings: &self.settings,
            messages: &messages,
            tools: &self.tools,
        };
        step::run(&request, &ctx).await
    }

    async fn turn(&mut self, turn_id: &str, text: String, cancel: &CancellationToken) {
        self.emit(
            turn_id,
            Payload::ResponseStart {
                model_id: self.settings.model.clone(),
                provider_id: PROVIDER_ID.into(),
            },
        );
        if text.trim() == COMPACT {
            return self.compact_now(turn_id, cancel).await;
        }
        let images = std::mem::take(&mut self.images);
        self.messages.push(ChatMessage::user(text, &images));
        let asked = self.messages.len();
        let mut usage: Option<Usage> = None;
        for _ in 0..self.settings.max_steps {
            if let Err(error) = self.fit(cancel).await {
                // Unanswered, as a failed request is: not kept.
                if self.messages.len() == asked {
                    self.messages.pop();
                }
                self.emit(turn_id, failed(error, usage));
                return;
            }
            let out = match self.call_model(turn_id, cancel).await {
                Ok(out) => out,
                Err(StepError::Cancelled) => {
                    self.emit(turn_id, Payload::interrupted(usage));
                    return;
                }
                Err(StepError::Fatal(error)) => {
                    // Unanswered, it is no part of the conversation: sent
                    // again after a limit (`runner::hold`), not twice.
                    if self.messages.len() == asked {
                        self.messages.pop();
                    }
                    let error = self.tools_hint(error);
                    self.emit(turn_id, failed(error, usage));
                    return;
                }
            };
            if let Some(u) = &out.usage {
                usage
                    .get_or_insert_with(Usage::default)
                    .accumulate(&self.call_usage(u));
            }
            let calls = out.tool_calls;
            self.messages.push(ChatMessage::Assistant {
                content: (!out.content.is_empty()).then_some(out.content),
                tool_calls: calls.clone(),
            });
            if calls.is_empty() {
                let reason = out.finish_reason.unwrap_or_else(|| "stop".into());
                self.emit(turn_id, done(Some(reason), usage));
                return;
            }
            if self
                .step_tools(turn_id, &calls, &out.item_ids, cancel)
                .await
            {
                self.emit(turn_id, Payload::interrupted(usage));
                return;
            }
        }
        self.events.diagnostic(
            DiagnosticLevel::Warn,
            format!(
                "the turn stopped after {} model calls (max_steps)",
                self.settings.max_steps
            ),
        );
        self.emit(turn_id, done(Some("max-steps".into()), usage));
    }

    /// A server that refuses the request over its tools: the setting that
    /// turns them off goes with its message.
    fn tools_hint(&self, mut error: ErrorInfo) -> ErrorInfo {
        if self.coding.is_some() && error.message.to_lowercase().contains("tool") {
            error.message.push_str(
                " (this model or server may not take tools: set `tools = false` on the agent)",
            );
        }
        error
    }

    /// Runs a step's calls and records their results; true when the user
    /// interrupted them.
    async fn step_tools(
        &mut self,
        turn_id: &str,
        calls: &[wire::ToolCall],
        item_ids: &[String],
        cancel: &CancellationToken,
    ) -> bool {
        let results = tokio::select! {
            r = self.run_tools(turn_id, calls, item_ids) => Some(r),
            () = cancel.cancelled() => None,
        };
        let interrupted = results.is_none();
        // Every call gets a result message, or the next request would be
        // rejected.
        let results = results.unwrap_or_else(|| {
            calls
                .iter()
                .map(|_| Err("interrupted by the user".to_owned()))
                .collect()
        });
        self.tool_results(calls, results);
        interrupted
    }

    /// Adds each call's output (shown as it finished, in `run_tools`) to
    /// the conversation as the call's tool message.
    fn tool_results(&mut self, calls: &[wire::ToolCall], results: Vec<ToolResult>) {
        for (call, result) in calls.iter().zip(results) {
            let (output, is_error) = match result {
                Ok(o) => (o, false),
                Err(e) => (e, true),
            };
            let content = if is_error {
                format!("error: {output}")
            } else {
                output
            };
            self.messages.push(ChatMessage::Tool {
                tool_call_id: call.id.clone(),
                content: self.kept_output(content),
            });
        }
    }

    /// Runs every call of a step at once; results in call order.
    async fn run_tools(
        &self,
        turn_id: &str,
        calls: &[wire::ToolCall],
        item_ids: &[String],
    ) -> Vec<ToolResult> {
        let runs = calls.iter().zip(item_ids).map(|(call, item_id)| {
            let toolbox = self.toolbox.clone();
            let coding = self
                .coding
                .clone()
                .filter(|_| coding::CodingTools::has(&call.function.name));
            let ctx = coding::CallCtx {
                turn_id: turn_id.to_owned(),
                session_id: self.session.clone(),
                item_id: item_id.clone(),
            };
            let name = call.function.name.clone();
            let shown = (self.events.clone(), ctx.clone(), call.id.clone());
            let args =
                serde_json::from_str::<Value>(if call.function.arguments.trim().is_empty() {
                    "{}"
                } else {
                    &call.function.arguments
                });
            async move {
                let result = match args {
                    Err(e) => Err(format!("the arguments are not valid JSON: {e}")),
                    Ok(args) => match (coding, toolbox) {
                        (Some(coding), _) => coding.call(&name, args, ctx).await,
                        (None, Some(toolbox)) => toolbox.call(&name, args).await,
                        (None, None) => Err(format!("no tool `{name}`: this agent has no tools")),
                    },
                };
                // Shown as soon as it is done: a read-only call of the step
                // does not wait behind another's approval card (#46 item 20).
                let (events, ctx, call_id) = shown;
                let (output, is_error) = match &result {
                    Ok(o) => (o.as_str(), false),
                    Err(e) => (e.as_str(), true),
                };
                let payload = Payload::tool_output(new_id("out"), &call_id, output, is_error);
                events.stream(&ctx.turn_id, &ctx.session_id, payload);
                result
            }
        });
        futures::future::join_all(runs).await
    }
}

/// The turn ended on an error the model call could not get past.
fn failed(error: ErrorInfo, usage: Option<Usage>) -> Payload {
    Payload::ResponseDone {
        status: ResponseStatus::Error,
        finish_reason: Some("error".into()),
        error: Some(error),
        usage,
    }
}

fn done(finish_reason: Option<String>, usage: Option<Usage>) -> Payload {
    Payload::ResponseDone {
        status: ResponseStatus::Completed,
        finish_reason,
        error: None,
        usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_need_a_model_and_a_set_key_variable() {
        let mut a = AgentConfig::new("o", "openai");
        assert!(Settings::from_agent(&a).unwrap_err().contains("model"));
        a.model = Some("m".into());
        a.set("api_key_env", "HIVE_TEST_SURELY_UNSET_KEY").unwrap();
        let e = Settings::from_agent(&a).unwrap_err();
        assert!(e.contains("HIVE_TEST_SURELY_UNSET_KEY"), "{e}");
        a.env
            .insert("HIVE_TEST_SURELY_UNSET_KEY".into(), "sk-secret".into());
        a.set("base_url", "http://127.0.0.1:9/v1/").unwrap();
        let s = Settings::from_agent(&a).unwrap();
        assert_eq!(s.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(s.max_steps, DEFAULT_MAX_STEPS);
        // The key never shows in a debug print of the headers.
        assert!(!format!("{:?}", s.headers).contains("sk-secret"));
    }

    #[test]
    fn a_local_server_needs_no_key() {
        let mut a = AgentConfig::new("o", "openai");
        a.model = Some("m".into());
        a.set("base_url", "http://localhost:11434/v1").unwrap();
        a.thinking = Some("low".into());
        let s = Settings::from_agent(&a).unwrap();
        assert!(s.headers.get(AUTHORIZATION).is_none());
        assert_eq!(s.reasoning_effort.as_deref(), Some("low"));
    }
}
