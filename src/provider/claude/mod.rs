//! The `claude` provider: drives Claude Code the way the Claude Agent SDK does,
//! as one persistent `claude -p --input-format stream-json --output-format
//! stream-json --include-partial-messages --verbose` process per pane.
//!
//! User messages, interrupts and permission answers go to its stdin as JSON
//! lines (`control`); its stdout is translated into canonical events
//! (`translate`). The process lives across turns; when it dies the task
//! reports the turn in flight as failed, then `Exited`, and ends: hive never
//! restarts an agent behind the user's back.

pub(crate) mod content;
pub mod control;
pub(crate) mod doctor;
mod effort;
pub mod import;
pub mod translate;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::provider::paced::AgentStdout;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::process::{AgentProcess, CommandSpec, LineReader};
use super::{
    Capabilities, DiagnosticLevel, EventSink, PermissionDecision, ProviderCommand, ProviderEvent,
    ProviderFactory, ProviderHandle, ProviderSpec, Spawned,
};
use crate::config::AgentConfig;
use crate::event::{ErrorInfo, Payload, StreamEvent};
use crate::image::Image;
use crate::provider::Sink;
use crate::timer;
use translate::Translator;

/// An interrupt Claude does not answer within this ends the turn here (the
/// runner's own backstop, which replaces the process, comes later).
pub(crate) const CANCEL_GRACE: Duration = Duration::from_millis(800);
/// SIGTERM → SIGKILL grace on kill.
const KILL_GRACE: Duration = Duration::from_millis(500);
/// After the process exits, how long stdout may still deliver buffered lines.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);

/// Permission modes in which Claude never asks the host.
const SILENT_MODES: &[&str] = &["bypassPermissions", "dontAsk"];

/// The `claude` provider as the registry knows it. hive's operations
/// reach Claude Code through an `--mcp-config` file hive writes.
pub(crate) fn descriptor() -> super::ProviderDescriptor {
    super::ProviderDescriptor {
        doctor: |agent, probe| Ok(doctor::facts(agent, probe)),
        importer: Some(&import::Transcript),
        npm: &[super::NpmProgram {
            program: "claude",
            package: "@anthropic-ai/claude-code",
        }],
        operations: super::operations::Operations::Mcp(Some(MCP_CONFIG)),
        mcp_channel: Some("`--mcp-config` (a 0600 JSON file hive writes for the pane)"),
        ..super::ProviderDescriptor::bare("claude", std::sync::Arc::new(ClaudeFactory))
    }
}

pub struct ClaudeFactory;

/// The command line for `agent` (resuming `resume`), as documented in
/// docs/claude.md.
pub fn command_spec(agent: &AgentConfig, resume: Option<&str>) -> CommandSpec {
    let (program, mut args) = agent.program("claude");
    args.extend(
        [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
            "--verbose",
        ]
        .map(String::from),
    );
    if let Some(model) = &agent.model {
        args.extend(["--model".into(), model.clone()]);
    }
    if let Some(mode) = &agent.permission_mode {
        args.extend(["--permission-mode".into(), mode.clone()]);
    }
    if asks_host(agent) {
        args.extend(["--permission-prompt-tool".into(), "stdio".into()]);
    }
    let mut allowed = agent.allowed_tools.clone();
    if agent.has_mcp() {
        args.extend(["--mcp-config".into(), mcp_config_file(agent)]);
    }
    if agent.hive_mcp.is_some() {
        // hive's own tools need no approval: can_message bounds them. The
        // user's servers' tools ask as any tool does.
        allowed.push(format!("mcp__{HIVE_MCP}"));
    }
    if !allowed.is_empty() {
        args.extend(["--allowedTools".into(), allowed.join(",")]);
    }
    let mut env = agent.env.clone();
    match agent.thinking.as_deref().map(Thinking::parse) {
        Some(Thinking::Effort(level)) => args.extend(["--effort".into(), level]),
        Some(Thinking::Budget(tokens)) => {
            env.entry("MAX_THINKING_TOKENS".into())
                .or_insert_with(|| tokens.to_string());
        }
        None => {}
    }
    // Claude Code reads CLAUDE.md itself; another instruction file's text
    // goes after the agent's own prompt (issue 51).
    let instructions = crate::provider::instructions::Instructions::for_agent(agent)
        .and_then(|i| i.unless_read_as("CLAUDE.md"));
    let prompt = match &instructions {
        Some(i) => Some(i.after(agent.system_prompt.as_deref())),
        None => agent.system_prompt.clone(),
    };
    if let Some(prompt) = prompt {
        args.extend(["--append-system-prompt".into(), prompt]);
    }
    if let Some(id) = resume {
        args.extend(["--resume".into(), id.to_owned()]);
    }
    // A workspace's repositories (issue 52): each a root of its own.
    for root in &agent.extra_roots {
        args.extend(["--add-dir".into(), root.to_string_lossy().into_owned()]);
    }
    CommandSpec::for_agent(agent, program, args, env)
}

/// The `hive mcp` server's name in Claude's config (its tools are
/// `mcp__hive__hive_call`, …).
const HIVE_MCP: &str = "hive";

/// The `--mcp-config` file: hive's server and the user's.
const MCP_CONFIG: super::operations::McpFile = super::operations::McpFile {
    kind: "claude",
    render: mcp_config,
};

fn mcp_config_file(agent: &AgentConfig) -> String {
    MCP_CONFIG.path(agent).to_string_lossy().into_owned()
}

/// The `--mcp-config` file's content: every server of the agent in Claude
/// Code's `mcpServers` shape (stdio or `http`).
pub(crate) fn mcp_config(agent: &AgentConfig) -> serde_json::Value {
    let servers: serde_json::Map<String, serde_json::Value> = agent
        .mcp_servers()
        .map(|s| {
            let entry = match &s.url {
                Some(url) => serde_json::json!({"type": "http", "url": url, "headers": s.headers}),
                None => serde_json::json!({
                    "type": "stdio", "command": s.command, "args": s.args, "env": s.env,
                }),
            };
            (s.name.clone(), entry)
        })
        .collect();
    serde_json::json!({ "mcpServers": servers })
}

/// The agent's `thinking` setting.
enum Thinking {
    /// `--effort <level>` (Claude Code 2.1: low, medium, high, xhigh, max;
    /// the CLI rejects others, visibly).
    Effort(String),
    /// `MAX_THINKING_TOKENS` (a number; `off` is 0).
    Budget(u64),
}

impl Thinking {
    fn parse(s: &str) -> Self {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "off" | "none" | "false" => Self::Budget(0),
            n => n.parse().map(Self::Budget).unwrap_or(Self::Effort(s)),
        }
    }
}

/// Whether tool permission prompts come to hive (`--permission-prompt-tool stdio`).
fn asks_host(agent: &AgentConfig) -> bool {
    agent
        .permission_mode
        .as_deref()
        .is_none_or(|m| !SILENT_MODES.contains(&m))
}

impl ProviderFactory for ClaudeFactory {
    fn capabilities(&self, agent: &AgentConfig) -> Capabilities {
        Capabilities {
            queue_while_streaming: true,
            permissions: asks_host(agent),
            images: true,
            // `/effort` says itself what it did (a restart or a budget).
            confirms_effort: true,
            // Its session keeps a failed turn's prompt (issue 46 item 4).
            keeps_failed_prompt: true,
            ..Capabilities::structured()
        }
    }

    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned {
        let cmd = command_spec(&spec.agent, spec.resume.as_deref());
        MCP_CONFIG.write(&spec.agent, &cmd.program)?;
        let (process, stdout) = AgentProcess::spawn_for(&spec.agent.id, &cmd, &events)?;
        let translator = Translator::new(spec.resume.as_deref());
        let resuming = spec.resume.clone().map(|id| Resuming {
            agent: spec.agent.clone(),
            id,
            stale: false,
            sent: Vec::new(),
        });
        let agent = spec.agent;
        Ok(ProviderHandle::spawn(move |rx| async move {
            Session {
                agent,
                respawn: false,
                process,
                stdout,
                translator,
                events,
                cancel_deadline: None,
                held: Vec::new(),
                images: Vec::new(),
                permissions: HashMap::new(),
                always_allowed: HashSet::new(),
                control_seq: 0,
                resuming,
            }
            .run(rx)
            .await
        }))
    }
}

/// The provider task: one Claude Code process (again on the same session
/// when `/effort` needs a new `--effort`).
struct Session {
    /// The agent as the next process starts: `/model` and `/effort` change it.
    agent: AgentConfig,
    /// `/effort` chose a level: Claude Code takes it only as `--effort` at
    /// start, so the process starts again on its session once no turn runs.
    respawn: bool,
    process: AgentProcess,
    stdout: LineReader<AgentStdout>,
    translator: Translator,
    events: EventSink,
    cancel_deadline: Option<Instant>,
    /// Steered messages that arrived after their turn ended; they go out
    /// with the next `Send`.
    held: Vec<String>,
    /// Images for the next `Send`'s message.
    images: Vec<Image>,
    /// Open `can_use_tool` requests: request id → (tool, original input).
    permissions: HashMap<String, (String, Value)>,
    /// Tools the user allowed for the rest of this session.
    always_allowed: HashSet<String>,
    control_seq: u64,
    /// Set while a `--resume` process has not written anything yet: if it
    /// dies saying the conversation is gone, a new session takes over.
    resuming: Option<Resuming>,
}

/// A resumed process on probation (issue 13 item 1).
struct Resuming {
    agent: AgentConfig,
    id: String,
    /// It said the conversation is gone (its stdout `result`).
    stale: bool,
    /// Messages written to it so far, per turn, to send again to the new one.
    sent: Vec<(String, Vec<String>)>,
}

/// What Claude Code says when `--resume` names a conversation it no longer
/// has (cleaned up, another machine, another program's handle).
const STALE_SESSION: &str = "No conversation found";

/// Why the loop stopped.
enum Stop {
    /// Kill, or the host dropped its handle.
    Killed,
    /// The process ended (or its stdout did).
    Exited,
    /// A new `--effort`: start the process again on its session.
    Respawn,
}

impl Session {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<ProviderCommand>) {
        loop {
            let stop = self.serve(&mut rx).await;
            if matches!(stop, Stop::Exited) && self.fresh_after_stale().await {
                continue;
            }
            match stop {
                Stop::Killed => {
                    self.process.terminate(KILL_GRACE).await;
                }
                Stop::Respawn if self.respawn().await => continue,
                Stop::Exited | Stop::Respawn => self.exited().await,
            }
            return;
        }
    }

    /// The process of a stale `--resume` died before it said anything: start
    /// a new session, say so in the pane, and send it what the old one was
    /// sent (hive's own transcript stays as it was). False: not that case.
    async fn fresh_after_stale(&mut self) -> bool {
        let Some(resuming) = self.resuming.take() else {
            return false;
        };
        self.process.terminate(Duration::from_millis(100)).await;
        if !resuming.stale {
            self.settle_stderr().await;
            if !self.process.stderr_tail().contains(STALE_SESSION) {
                return false;
            }
        }
        let cmd = command_spec(&resuming.agent, None);
        let (process, stdout) = match AgentProcess::spawn(&cmd, &self.events) {
            Ok(p) => p,
            Err(e) => {
                self.events.diagnostic(
                    DiagnosticLevel::Error,
                    format!("Claude Code could not be started again: {e}"),
                );
                return false;
            }
        };
        self.process = process;
        self.stdout = stdout;
        self.translator = Translator::new(None);
        self.cancel_deadline = None;
        self.events.diagnostic(
            DiagnosticLevel::Warn,
            format!(
                "Claude Code could not resume session {} (it has no such conversation any more); continuing in a new session",
                resuming.id
            ),
        );
        for (turn_id, texts) in resuming.sent {
            if self.send_messages(&turn_id, &texts).await.is_err() {
                break;
            }
        }
        true
    }

    /// Serves one process until it stops.
    async fn serve(&mut self, rx: &mut mpsc::UnboundedReceiver<ProviderCommand>) -> Stop {
        // The SDK's handshake; the answer lists the slash commands.
        let id = self.next_id("init");
        if self.write(&control::initialize(&id)).await.is_err() {
            return Stop::Exited;
        }
        loop {
            if self.respawn && !self.translator.has_turn() && !self.translator.draining() {
                return Stop::Respawn;
            }
            let deadline = self.cancel_deadline;
            tokio::select! {
                line = self.stdout.next_line() => match line {
                    Ok(Some(line)) => {
                        if self.stdout_line(&line).await.is_err() {
                            return Stop::Exited;
                        }
                    }
                    Ok(None) | Err(_) => return Stop::Exited,
                },
                cmd = rx.recv() => match cmd {
                    None | Some(ProviderCommand::Kill) => return Stop::Killed,
                    Some(cmd) => {
                        if self.on_command(cmd).await.is_err() {
                            return Stop::Exited;
                        }
                    }
                },
                _ = self.process.wait() => {
                    self.drain_stdout().await;
                    return Stop::Exited;
                }
                _ = timer::sleep_until(deadline) => {
                    self.cancel_deadline = None;
                    self.emit_all(vec![ProviderEvent::Unresponsive {
                        reason: format!(
                            "claude did not stop within {} ms of the interrupt",
                            CANCEL_GRACE.as_millis()
                        ),
                    }]);
                    let events = self.translator.force_cancel();
                    self.emit_all(events);
                }
            }
        }
    }

    /// Writes a turn's messages and opens the turn. Err: stdin is broken;
    /// the turn fails unless a stale resume is about to be replaced.
    async fn send_messages(&mut self, turn_id: &str, texts: &[String]) -> std::io::Result<()> {
        if let Some(r) = self.resuming.as_mut() {
            r.sent.push((turn_id.to_owned(), texts.to_vec()));
        }
        let mut uuids = Vec::new();
        let images = std::mem::take(&mut self.images);
        for (n, text) in texts.iter().enumerate() {
            let uuid = uuid::Uuid::new_v4().to_string();
            // The images belong to the newest message (the one just sent).
            let with: &[Image] = if n + 1 == texts.len() { &images } else { &[] };
            if let Err(e) = self.write(&control::user_message(text, with, &uuid)).await {
                if self.resuming.is_none() {
                    // TC-3.2c: no fake success on a dead process.
                    self.emit(ProviderEvent::Stream(StreamEvent::new(
                        turn_id,
                        self.translator.session_id(),
                        Payload::ResponseError {
                            error: ErrorInfo::new(
                                "process_crash",
                                format!("cannot send to Claude Code: {e}"),
                            ),
                        },
                    )));
                }
                return Err(e);
            }
            uuids.push(uuid);
        }
        self.translator.begin_turn(turn_id, uuids);
        Ok(())
    }

    fn next_id(&mut self, what: &str) -> String {
        self.control_seq += 1;
        format!("hive_{what}_{}", self.control_seq)
    }

    fn emit(&self, ev: ProviderEvent) {
        self.events.emit(ev);
    }

    fn emit_all(&self, events: Vec<ProviderEvent>) {
        for ev in events {
            self.emit(ev);
        }
    }

    async fn write(&mut self, line: &str) -> std::io::Result<()> {
        self.process.write_line(line).await
    }

    /// One stdout line. Err: stdin is broken (the process is going away).
    async fn on_line(&mut self, line: &str) -> std::io::Result<()> {
        let out = self.translator.line(line);
        for reply in &out.replies {
            self.write(reply).await?;
        }
        for ev in out.events {
            match ev {
                ProviderEvent::Permission(req) => {
                    if self.always_allowed.contains(&req.tool_name) {
                        self.write(&control::permission_allow(&req.request_id, &req.input))
                            .await?;
                    } else {
                        self.permissions.insert(
                            req.request_id.clone(),
                            (req.tool_name.clone(), req.input.clone()),
                        );
                        self.emit(ProviderEvent::Permission(req));
                    }
                }
                ev => self.emit(ev),
            }
        }
        if !self.translator.has_turn() {
            self.cancel_deadline = None;
        }
        Ok(())
    }

    /// The user's answer to one of Claude's permission requests.
    async fn answer_permission(
        &mut self,
        request_id: String,
        decision: PermissionDecision,
    ) -> std::io::Result<()> {
        let Some((tool, input)) = self.permissions.remove(&request_id) else {
            self.emit(ProviderEvent::Diagnostic {
                level: DiagnosticLevel::Warn,
                message: format!("no open permission request `{request_id}`"),
            });
            return Ok(());
        };
        let line = match decision {
            PermissionDecision::AllowOnce => control::permission_allow(&request_id, &input),
            PermissionDecision::AllowAlways => {
                self.always_allowed.insert(tool);
                control::permission_allow(&request_id, &input)
            }
            PermissionDecision::Deny { reason } => {
                let reason = if reason.trim().is_empty() {
                    "The user denied this tool use.".to_owned()
                } else {
                    reason
                };
                control::permission_deny(&request_id, &reason)
            }
            PermissionDecision::Option { option_id } => {
                if option_id.starts_with("allow") {
                    if option_id == "allow_always" {
                        self.always_allowed.insert(tool);
                    }
                    control::permission_allow(&request_id, &input)
                } else {
                    control::permission_deny(&request_id, "The user denied this tool use.")
                }
            }
        };
        self.write(&line).await
    }

    async fn on_command(&mut self, cmd: ProviderCommand) -> std::io::Result<()> {
        match cmd {
            ProviderCommand::Send { turn_id, text } => {
                let mut texts = std::mem::take(&mut self.held);
                texts.push(text);
                self.send_messages(&turn_id, &texts).await?;
            }
            ProviderCommand::Steer { text } => {
                if self.translator.has_turn() {
                    let uuid = uuid::Uuid::new_v4().to_string();
                    self.write(&control::user_message(&text, &[], &uuid))
                        .await?;
                    self.translator.add_message(&uuid);
                } else {
                    self.held.push(text);
                    self.emit(ProviderEvent::Diagnostic {
                        level: DiagnosticLevel::Info,
                        message: "the turn had just ended: your message goes out with the next one"
                            .into(),
                    });
                }
            }
            ProviderCommand::Attach(images) => self.images = images,
            ProviderCommand::Cancel => {
                if self.translator.request_cancel() && self.cancel_deadline.is_none() {
                    let id = self.next_id("interrupt");
                    self.write(&control::interrupt(&id)).await?;
                    self.cancel_deadline = Some(Instant::now() + CANCEL_GRACE);
                }
            }
            ProviderCommand::Permission {
                request_id,
                decision,
            } => self.answer_permission(request_id, decision).await?,
            ProviderCommand::SetModel { model } => {
                // A later process (a new `--effort`, a stale resume's
                // replacement) starts with it too.
                self.agent.model = Some(model.clone());
                if let Some(r) = self.resuming.as_mut() {
                    r.agent.model = Some(model.clone());
                }
                let id = self.next_id("model");
                self.write(&control::set_model(&id, &model)).await?;
            }
            ProviderCommand::SetEffort { effort } => self.set_effort(effort).await?,
            ProviderCommand::Input(_) | ProviderCommand::Resize { .. } => {}
            ProviderCommand::Kill => {}
        }
        Ok(())
    }

    /// The process exited: read what it still wrote, then wait briefly.
    async fn drain_stdout(&mut self) {
        let until = Instant::now() + DRAIN_AFTER_EXIT;
        while let Ok(Ok(Some(line))) = tokio::time::timeout_at(until, self.stdout.next_line()).await
        {
            if self.stdout_line(&line).await.is_err() {
                break;
            }
        }
    }

    /// One stdout line, minding a resumed process still on probation: its
    /// error `result` about the resume is not about a turn.
    async fn stdout_line(&mut self, line: &str) -> std::io::Result<()> {
        if let Some(r) = self.resuming.as_mut() {
            if line.contains(STALE_SESSION) {
                r.stale = true;
                return Ok(());
            }
            self.resuming = None;
        }
        self.on_line(line).await
    }

    /// stderr is collected by a separate task that may not have read the
    /// dying process's last words yet: give it a moment.
    async fn settle_stderr(&self) {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let settle = Instant::now() + Duration::from_millis(200);
        while self.process.stderr_tail().is_empty() && Instant::now() < settle {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The process is gone (or going): fail the turn in flight with its exit
    /// status and last stderr lines, report `Exited`, sweep its group.
    async fn exited(&mut self) {
        self.drain_stdout().await;
        let status = match tokio::time::timeout(DRAIN_AFTER_EXIT, self.process.wait()).await {
            Ok(Ok(s)) => Some(s),
            // stdout closed but the process lingers: it is of no use any more.
            _ => self.process.terminate(Duration::from_millis(200)).await,
        };
        // Stragglers in its group go too.
        self.process.terminate(Duration::from_millis(100)).await;
        self.settle_stderr().await;
        let report = self.process.exit_report(status);
        let message = format!("Claude Code {report}");
        let events = self.translator.fail_turn("agent_exited", &message);
        self.emit_all(events);
        self.emit(ProviderEvent::Exited {
            code: status.and_then(|s| s.code()),
            message,
        });
    }
}

#[cfg(test)]
mod tests;
