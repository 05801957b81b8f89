//! The `script` provider: replays a scenario file as a live agent would, with
//! per-chunk timing, thinking, tool calls, permission prompts, errors and
//! crashes, and honours interrupts mid-stream. It powers the built-in demo
//! agents (hive works with no API key) and the runner's lifecycle tests.
//!
//! Format (TOML), documented in README.md:
//! ```toml
//! model = "demo-1"
//! models = ["demo-1", "demo-2"]   # offered to `/model` (optional)
//! chunk_chars = 6        # characters per streamed delta
//! delay_ms = 15          # pause between deltas
//! [capabilities]         # what the scripted agent claims to support
//! interrupt = true
//! queue_while_streaming = false
//! [[turn]]
//! match = "error"        # optional, case-insensitive substring of the prompt
//! [[turn.step]]
//! thinking = "…"
//! [[turn.step]]
//! tool = "Bash"
//! args = { command = "ls" }
//! output = "…"
//! duration_ms = 800
//! [[turn.step]]
//! text = "You said: {prompt}"   # also {model} and {effort}
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::{
    Capabilities, DiagnosticLevel, EventSink, PermissionDecision, PermissionRequest,
    ProviderCommand, ProviderError, ProviderEvent, ProviderFactory, ProviderHandle, ProviderSpec,
    SessionInfo, Spawned,
};
use crate::config::AgentConfig;
use crate::event::{
    ErrorInfo, FinalItem, ItemType, Origin, Payload, ResponseStatus, Usage, new_id,
};
use crate::processor::estimate_tokens;
use crate::provider::Sink;
use crate::provider::display::{self, COMMON};

/// Largest scenario file read (a scenario is hand-written TOML).
const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// A scenario file's text: a regular file of at most
/// [`MAX_SCENARIO_BYTES`] (`/dev/zero` or a FIFO would read forever).
fn read_capped(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_SCENARIO_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_SCENARIO_BYTES} bytes"
        )));
    }
    Ok(text)
}

/// Scenarios shipped inside the binary, addressed as `demo:<name>`.
const BUILTIN: &[(&str, &str)] = &[
    ("tour", include_str!("../../assets/demo/tour.toml")),
    ("reviewer", include_str!("../../assets/demo/reviewer.toml")),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default = "default_model")]
    pub model: String,
    /// Models offered to `/model`; `SetModel` switches `model` to any name.
    #[serde(default)]
    pub models: Vec<String>,
    #[serde(default = "default_chunk")]
    pub chunk_chars: usize,
    #[serde(default = "default_delay")]
    pub delay_ms: u64,
    #[serde(default)]
    pub capabilities: ScriptCapabilities,
    /// Keep streaming after an interrupt (tests hive's forced stop).
    #[serde(default)]
    pub(crate) ignore_cancel: bool,
    #[serde(default, rename = "turn")]
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCapabilities {
    #[serde(default = "yes")]
    pub interrupt: bool,
    #[serde(default)]
    pub queue_while_streaming: bool,
    #[serde(default)]
    pub permissions: bool,
}

impl Default for ScriptCapabilities {
    fn default() -> Self {
        Self {
            interrupt: true,
            queue_while_streaming: false,
            permissions: false,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    #[serde(default, rename = "match")]
    pub matches: Option<String>,
    #[serde(default, rename = "step")]
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub text: Option<String>,
    pub thinking: Option<String>,
    pub tool: Option<String>,
    #[serde(default)]
    pub args: Option<toml::Table>,
    pub output: Option<String>,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub duration_ms: u64,
    /// Ask the host before the next tool step.
    pub permission: Option<String>,
    /// What this step says instead of `text` when the user denied the
    /// turn's last approval (the demo said its command ran either way).
    pub denied_text: Option<String>,
    pub error: Option<ScriptError>,
    /// Agent process exits with this code (a crash).
    pub exit: Option<i32>,
    pub(crate) sleep_ms: Option<u64>,
    /// Overrides the scenario's pacing for this step.
    pub chunk_chars: Option<usize>,
    pub delay_ms: Option<u64>,
    /// A diagnostic the provider reports (e.g. a malformed line it skipped).
    pub(crate) diagnostic: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptError {
    pub code: String,
    pub message: String,
}

fn default_model() -> String {
    "scripted".into()
}
fn default_chunk() -> usize {
    6
}
fn default_delay() -> u64 {
    15
}
fn yes() -> bool {
    true
}

impl Scenario {
    pub fn parse(text: &str, origin: &str) -> Result<Self, String> {
        let s: Scenario = toml::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
        if s.turns.is_empty() {
            return Err(format!("{origin}: a scenario needs at least one [[turn]]"));
        }
        Ok(s)
    }

    /// Loads `demo:<name>` from the binary or a file path.
    pub fn load(source: &Path) -> Result<Self, String> {
        Self::parse(&Self::text(source)?, &source.display().to_string())
    }

    /// The text of `demo:<name>` or of a file.
    fn text(source: &Path) -> Result<String, String> {
        let name = source.to_string_lossy();
        if let Some(builtin) = name.strip_prefix("demo:") {
            let (_, text) = BUILTIN.iter().find(|(n, _)| *n == builtin).ok_or_else(|| {
                let known: Vec<_> = BUILTIN.iter().map(|(n, _)| format!("demo:{n}")).collect();
                format!("no built-in scenario `{name}`; known: {}", known.join(", "))
            })?;
            return Ok((*text).to_owned());
        }
        read_capped(source).map_err(|e| format!("cannot read scenario {}: {e}", source.display()))
    }

    /// The words that pick a special turn (`match`), in the scenario's order.
    pub fn match_words(&self) -> Vec<String> {
        self.turns
            .iter()
            .filter_map(|t| t.matches.clone())
            .collect()
    }

    /// The index of the turn that answers `prompt`.
    fn pick(&self, prompt: &str, counter: usize) -> usize {
        let lower = prompt.to_lowercase();
        if let Some(i) = self.turns.iter().position(|t| {
            t.matches
                .as_ref()
                .is_some_and(|m| lower.contains(&m.to_lowercase()))
        }) {
            return i;
        }
        let plain: Vec<usize> = (0..self.turns.len())
            .filter(|&i| self.turns[i].matches.is_none())
            .collect();
        if plain.is_empty() {
            counter % self.turns.len()
        } else {
            plain[counter % plain.len()]
        }
    }

    /// The scenario at `source`, shared with every live pane that loaded
    /// the same text: panes of one scenario hold its steps once (the attach
    /// bench's turn of 10,000 steps cost about 11 MB in each of 9 panes).
    pub(crate) fn load_shared(source: &Path) -> Result<Arc<Self>, String> {
        use std::hash::{Hash, Hasher};
        let text = Self::text(source)?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let key = (source.to_owned(), h.finish());
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        loaded.retain(|(_, held)| held.strong_count() > 0);
        if let Some(s) = loaded
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, held)| held.upgrade())
        {
            return Ok(s);
        }
        let s = Arc::new(Self::parse(&text, &source.display().to_string())?);
        loaded.push((key, Arc::downgrade(&s)));
        Ok(s)
    }
}

/// Scenarios live panes hold, by path and a hash of their text.
type Loaded = Vec<((std::path::PathBuf, u64), std::sync::Weak<Scenario>)>;
static LOADED: std::sync::Mutex<Loaded> = std::sync::Mutex::new(Vec::new());

/// The `script` provider as the registry knows it: no program, no login,
/// nothing to install; doctor loads the scenario.
pub(crate) fn descriptor() -> super::ProviderDescriptor {
    super::ProviderDescriptor {
        doctor: doctor_facts,
        ..super::ProviderDescriptor::bare("script", std::sync::Arc::new(ScriptFactory))
    }
}

fn doctor_facts(
    agent: &AgentConfig,
    _: &super::doctor::Probe,
) -> Result<super::doctor::Facts, String> {
    let Some(path) = &agent.script else {
        return Err("provider `script` needs `script = \"path/to/scenario.toml\"`".into());
    };
    Scenario::load(path).map(|_| super::doctor::Facts {
        program: None,
        auth: None,
        start: super::doctor::DryStart::None,
    })
}

/// The `match` words of a `script` agent's scenario, for its empty pane to
/// offer (the demo's `slow`, `approve`, `error`, `crash`: issue 34 item 15);
/// none for other agents or a scenario that does not load.
pub fn match_words(agent: &AgentConfig) -> Vec<String> {
    match &agent.script {
        Some(path) if agent.provider == "script" => Scenario::load(path)
            .map(|s| s.match_words())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

pub struct ScriptFactory;

impl ScriptFactory {
    fn scenario(agent: &AgentConfig) -> Result<Arc<Scenario>, ProviderError> {
        let path = agent.script.as_ref().ok_or_else(|| {
            ProviderError::config(
                &agent.id,
                "provider `script` needs `script = \"path/to/scenario.toml\"` (or demo:tour)",
            )
        })?;
        Scenario::load_shared(path).map_err(|message| ProviderError::config(&agent.id, message))
    }
}

impl ProviderFactory for ScriptFactory {
    fn capabilities(&self, agent: &AgentConfig) -> Capabilities {
        let caps = Self::scenario(agent)
            .map(|s| s.capabilities.clone())
            .unwrap_or_default();
        Capabilities {
            queue_while_streaming: caps.queue_while_streaming,
            interrupt: caps.interrupt,
            permissions: caps.permissions,
            ..Capabilities::structured()
        }
    }

    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned {
        let scenario = Self::scenario(&spec.agent)?;
        let model = spec
            .agent
            .model
            .clone()
            .unwrap_or_else(|| scenario.model.clone());
        let effort = spec
            .agent
            .thinking
            .clone()
            .unwrap_or_else(|| "medium".into());
        let session_id = spec.resume.unwrap_or_else(|| new_id("script"));
        Ok(ProviderHandle::spawn(move |rx| async move {
            Player {
                scenario,
                model,
                effort,
                session_id,
                events,
                rx,
                counter: 0,
            }
            .run()
            .await
        }))
    }
}

/// Returns from the enclosing step when playback must stop (`Some(End)`);
/// `None` means carry on. (`?` would do the opposite on an `Option`.)
macro_rules! ends {
    ($e:expr) => {
        if let Some(end) = $e {
            return Some(end);
        }
    };
}

struct Player {
    scenario: Arc<Scenario>,
    /// The model last set (the scenario's, the agent's, or `/model`'s).
    model: String,
    /// The effort level last set (`{effort}` in a scenario's text).
    effort: String,
    session_id: String,
    events: EventSink,
    rx: mpsc::UnboundedReceiver<ProviderCommand>,
    counter: usize,
}

/// How a turn's playback ended.
enum End {
    Done,
    Cancelled,
    Failed,
    Exit(i32),
    Killed,
}

/// Playback state of one turn.
struct TurnCtx {
    turn_id: String,
    prompt: String,
    steered: Vec<String>,
    output_tokens: u64,
    denied: Option<String>,
    /// The turn's last approval was denied (`Step::denied_text`).
    refused: bool,
    cancel_requested: bool,
}

impl Player {
    async fn run(mut self) {
        let _ = self.events.send(ProviderEvent::Session(SessionInfo {
            resume_handle: Some(self.session_id.clone()),
            model: Some(self.model.clone()),
            commands: Vec::new(),
        }));
        if !self.scenario.models.is_empty() {
            self.events
                .emit(ProviderEvent::Models(self.scenario.models.clone()));
        }
        while let Some(cmd) = self.rx.recv().await {
            match cmd {
                ProviderCommand::Send { turn_id, text } => match self.play(turn_id, text).await {
                    End::Exit(code) => {
                        let _ = self.events.send(ProviderEvent::Exited {
                            code: Some(code),
                            message: format!("exited with status {code}: scripted crash"),
                        });
                        return;
                    }
                    End::Killed => return,
                    End::Done | End::Cancelled | End::Failed => {}
                },
                ProviderCommand::Kill => return,
                ProviderCommand::SetModel { model } => self.model = model,
                ProviderCommand::SetEffort { effort } => self.effort = effort,
                _ => {}
            }
        }
    }

    fn emit(&self, turn_id: &str, payload: Payload) {
        self.events.stream(turn_id, &self.session_id, payload);
    }

    async fn play(&mut self, turn_id: String, prompt: String) -> End {
        let scenario = Arc::clone(&self.scenario);
        let turn = &scenario.turns[scenario.pick(&prompt, self.counter)];
        self.counter += 1;
        let mut ctx = TurnCtx {
            turn_id: turn_id.clone(),
            prompt,
            steered: Vec::new(),
            output_tokens: 0,
            denied: None,
            refused: false,
            cancel_requested: false,
        };
        self.emit(
            &turn_id,
            Payload::ResponseStart {
                model_id: self.model.clone(),
                provider_id: "script".into(),
            },
        );
        for step in &turn.steps {
            if let Some(end) = self.step(step, &mut ctx).await {
                return self.finish(&ctx, end);
            }
        }
        // Messages steered in mid-turn are acknowledged before the turn ends.
        for text in std::mem::take(&mut ctx.steered) {
            let reply = format!("Noted your follow-up: *{text}*");
            let step = Step {
                text: Some(reply),
                ..Step::default()
            };
            if let Some(end) = self.step(&step, &mut ctx).await {
                return self.finish(&ctx, end);
            }
        }
        let input_tokens = estimate_tokens(&ctx.prompt);
        self.emit(
            &turn_id,
            Payload::ResponseDone {
                status: ResponseStatus::Completed,
                finish_reason: Some("end_turn".into()),
                error: None,
                usage: Some(Usage {
                    input_tokens,
                    output_tokens: ctx.output_tokens,
                    ..Usage::default()
                }),
            },
        );
        End::Done
    }

    /// Plays one step; `Some` ends the turn.
    async fn step(&mut self, step: &Step, ctx: &mut TurnCtx) -> Option<End> {
        let chunk = step.chunk_chars.unwrap_or(self.scenario.chunk_chars).max(1);
        let delay = Duration::from_millis(step.delay_ms.unwrap_or(self.scenario.delay_ms));
        if let Some(ms) = step.sleep_ms {
            ends!(self.wait(Duration::from_millis(ms), ctx).await);
        }
        if let Some(msg) = &step.diagnostic {
            self.events.diagnostic(DiagnosticLevel::Warn, msg.clone());
        }
        if let Some(thinking) = &step.thinking {
            ends!(
                self.stream_text(ItemType::Reasoning, thinking, chunk, delay, ctx)
                    .await
            );
        }
        if let Some(question) = &step.permission {
            ends!(self.ask_permission(question, step, ctx).await);
        }
        if let Some(tool) = &step.tool {
            ends!(self.run_tool(tool, step, ctx).await);
        }
        let text = match &step.denied_text {
            Some(instead) if ctx.refused => Some(instead),
            _ => step.text.as_ref(),
        };
        if let Some(text) = text {
            let text = text
                .replace("{prompt}", &ctx.prompt)
                .replace("{model}", &self.model)
                .replace("{effort}", &self.effort);
            ends!(
                self.stream_text(ItemType::Message, &text, chunk, delay, ctx)
                    .await
            );
        }
        if let Some(err) = &step.error {
            self.emit(
                &ctx.turn_id,
                Payload::ResponseError {
                    error: ErrorInfo::new(err.code.clone(), err.message.clone()),
                },
            );
            return Some(End::Failed);
        }
        if let Some(code) = step.exit {
            return Some(End::Exit(code));
        }
        None
    }

    async fn stream_text(
        &mut self,
        item_type: ItemType,
        text: &str,
        chunk: usize,
        delay: Duration,
        ctx: &mut TurnCtx,
    ) -> Option<End> {
        let item_id = new_id("item");
        self.emit(
            &ctx.turn_id,
            Payload::item_start(item_id.clone(), item_type),
        );
        // Pieces of `chunk` chars cut from the text itself (a `Vec<char>`
        // of it held four bytes per char for the whole turn).
        let mut rest = text;
        while !rest.is_empty() {
            let cut = rest
                .char_indices()
                .nth(chunk.max(1))
                .map_or(rest.len(), |(i, _)| i);
            let (piece, tail) = rest.split_at(cut);
            rest = tail;
            if let Some(end) = self.wait(delay, ctx).await {
                self.emit(&ctx.turn_id, Payload::item_interrupted(item_id.clone()));
                return Some(end);
            }
            let delta = piece.to_owned();
            ctx.output_tokens += estimate_tokens(&delta);
            self.emit(
                &ctx.turn_id,
                Payload::ItemDelta {
                    item_id: item_id.clone(),
                    delta_content: delta,
                },
            );
        }
        let final_item = match item_type {
            ItemType::Reasoning => FinalItem::Reasoning {
                content: text.to_owned(),
                provider_id: "script".into(),
            },
            _ => FinalItem::Message {
                content: text.to_owned(),
                origin: Origin::Agent,
            },
        };
        self.emit(
            &ctx.turn_id,
            Payload::ItemDone {
                item_id,
                final_item,
            },
        );
        None
    }

    async fn ask_permission(
        &mut self,
        question: &str,
        step: &Step,
        ctx: &mut TurnCtx,
    ) -> Option<End> {
        let request_id = new_id("perm");
        let _ = self
            .events
            .send(ProviderEvent::Permission(PermissionRequest {
                request_id: request_id.clone(),
                tool_name: step.tool.clone().unwrap_or_else(|| "tool".into()),
                input: args_value(step),
                description: Some(question.to_owned()),
                options: Vec::new(),
                display: Some(display::describe(&args_value(step), &COMMON)),
                ..Default::default()
            }));
        loop {
            match self.rx.recv().await {
                Some(ProviderCommand::Permission {
                    request_id: id,
                    decision,
                }) if id == request_id => {
                    ctx.denied = match decision {
                        PermissionDecision::Deny { reason } => Some(reason),
                        PermissionDecision::Option { option_id }
                            if option_id.starts_with("reject") =>
                        {
                            Some("rejected".into())
                        }
                        _ => None,
                    };
                    ctx.refused = ctx.denied.is_some();
                    return None;
                }
                Some(cmd) => {
                    if let Some(end) = self.command_mid_turn(cmd, ctx) {
                        return Some(end);
                    }
                }
                None => return Some(End::Killed),
            }
        }
    }

    async fn run_tool(&mut self, tool: &str, step: &Step, ctx: &mut TurnCtx) -> Option<End> {
        let item_id = new_id("tool");
        let call_id = new_id("call");
        let args = args_value(step);
        self.emit(
            &ctx.turn_id,
            Payload::tool_start(item_id.clone(), tool.to_owned(), call_id.clone()),
        );
        let arguments = match &args {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        self.emit(
            &ctx.turn_id,
            Payload::ItemDone {
                item_id: item_id.clone(),
                final_item: display::function_call(tool, call_id.clone(), arguments, &COMMON),
            },
        );
        let (output, is_error) = match ctx.denied.take() {
            Some(reason) => (format!("Permission denied: {reason}"), true),
            None => {
                if let Some(end) = self
                    .wait(Duration::from_millis(step.duration_ms), ctx)
                    .await
                {
                    return Some(end);
                }
                (step.output.clone().unwrap_or_default(), step.is_error)
            }
        };
        self.emit(
            &ctx.turn_id,
            Payload::tool_output(new_id("out"), call_id, output, is_error),
        );
        None
    }

    /// Sleeps while staying responsive to commands. `Some` ends the turn.
    async fn wait(&mut self, d: Duration, ctx: &mut TurnCtx) -> Option<End> {
        // Checked: a scenario's absurd delay waits "forever", no panic.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(d)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        loop {
            tokio::select! {
                // A scenario with no delay streams only as fast as the runner takes it.
                () = async {
                    tokio::time::sleep_until(deadline).await;
                    self.events.room().await;
                } => return None,
                cmd = self.rx.recv() => match cmd {
                    Some(cmd) => if let Some(end) = self.command_mid_turn(cmd, ctx) {
                        return Some(end);
                    },
                    None => return Some(End::Killed),
                },
            }
        }
    }

    fn command_mid_turn(&mut self, cmd: ProviderCommand, ctx: &mut TurnCtx) -> Option<End> {
        match cmd {
            ProviderCommand::Cancel if !self.scenario.ignore_cancel => {
                ctx.cancel_requested = true;
                Some(End::Cancelled)
            }
            ProviderCommand::Steer { text } => {
                ctx.steered.push(text);
                None
            }
            ProviderCommand::Kill => Some(End::Killed),
            ProviderCommand::SetModel { model } => {
                self.model = model;
                None
            }
            ProviderCommand::SetEffort { effort } => {
                self.effort = effort;
                None
            }
            _ => None,
        }
    }

    /// A turn cut short by an interrupt still ends with `response_done`.
    fn finish(&self, ctx: &TurnCtx, end: End) -> End {
        if matches!(end, End::Cancelled) && ctx.cancel_requested {
            self.emit(&ctx.turn_id, Payload::interrupted(None));
        }
        end
    }
}

fn args_value(step: &Step) -> Value {
    step.args
        .as_ref()
        .and_then(|t| serde_json::to_value(t).ok())
        .unwrap_or_else(|| Value::Object(Map::new()))
}

#[cfg(test)]
#[path = "script_tests.rs"]
mod tests;
