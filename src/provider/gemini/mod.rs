//! The `gemini` provider: Gemini CLI in headless `stream-json` mode, one
//! `gemini -p PROMPT --output-format stream-json` process per turn.
//!
//! The first turn names the session (`--session-id <uuid>`), later turns and a
//! restarted hive continue it (`--resume <id>`), as verified against Gemini CLI
//! 0.61.0 (realcli README). The CLI has no stdin protocol: an interrupt is
//! SIGINT to the process group, after which the CLI exits 0 without a `result`
//! line, so the provider ends the turn as cancelled itself. The headless stream
//! carries no thinking; Gemini's ACP transport (`gemini --acp`) does.

pub(crate) mod doctor;
pub mod translate;

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::sync::mpsc;

use super::oneshot::{Commands, Ending, Run, Timing, Turn};
use super::process::CommandSpec;
use super::{
    Capabilities, DiagnosticLevel, EventSink, ProviderCommand, ProviderEvent, ProviderFactory,
    ProviderHandle, ProviderSpec, SessionInfo, Spawned,
};
use crate::config::AgentConfig;
use crate::event::{ErrorInfo, Payload};
use crate::provider::Sink;

/// What Gemini CLI writes to stderr on every run (captures/gemini/*.stderr.txt):
/// warnings about the terminal, its approval mode, its search tool and start-up
/// metrics. Logged, never part of a crash message (issue 13 item 10).
pub(crate) const STDERR_NOISE: &[&str] = &[
    "Warning: 256-color support not detected",
    "YOLO mode is enabled.",
    "Ripgrep is not available.",
    "[STARTUP] Phase",
    "Could not find promptId in context",
];
pub use translate::GeminiTurn;

const TIMING: Timing = Timing {
    name: "gemini",
    exit_wait: Duration::from_secs(1),
    drain: Duration::from_millis(300),
    // SIGINT → exit took ~35 ms in the captures; past this the group is killed.
    cancel_grace: Duration::from_millis(1500),
    kill_grace: Duration::from_millis(300),
    settle: Duration::from_secs(5),
};

/// The `gemini` provider as the registry knows it. hive's operations
/// reach Gemini CLI through a settings file hive writes (`MCP_SETTINGS`).
pub(crate) fn descriptor() -> super::ProviderDescriptor {
    super::ProviderDescriptor {
        doctor: |agent, probe| Ok(doctor::facts(agent, probe)),
        npm: &[super::NpmProgram {
            program: "gemini",
            package: "@google/gemini-cli",
        }],
        operations: super::operations::Operations::Mcp(Some(MCP_SETTINGS)),
        mcp_channel: Some(
            "`mcpServers` of the system-defaults settings layer (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`)",
        ),
        ..super::ProviderDescriptor::bare("gemini", std::sync::Arc::new(GeminiFactory))
    }
}

pub struct GeminiFactory;

impl ProviderFactory for GeminiFactory {
    fn capabilities(&self, _agent: &AgentConfig) -> Capabilities {
        // No stdin protocol in headless mode: mid-turn messages are queued.
        Capabilities {
            // stream-json has no thought events (ACP mode has).
            thinking: false,
            // Headless mode has no thinking setting.
            set_effort: false,
            ..Capabilities::structured()
        }
    }

    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned {
        let path = MCP_SETTINGS.path(&spec.agent);
        super::operations::write_config(&path, &settings(&spec.agent))
            .map_err(|source| super::ProviderError::spawn(&spec.agent.id, "gemini", source))?;
        let driver = Driver {
            established: spec.resume.is_some(),
            session: spec.resume,
            agent: spec.agent,
            events,
        };
        Ok(ProviderHandle::spawn(move |rx| driver.run(rx)))
    }
}

/// The settings hive gives the Gemini it starts, in the CLI's
/// lowest-precedence layer (system defaults), so the user's and the
/// project's settings still apply on top:
/// - session cleanup off: Gemini CLI 0.61's cleanup deletes a session
///   resumed in a later minute once another session of the project starts
///   (it counts the resumed session's empty second file as broken), and
///   the pane's agent loses its conversation (docs/gemini.md);
/// - `hive_tools`: Gemini reads MCP servers only from settings files, so
///   the `hive mcp` server goes there too.
const SETTINGS_ENV: &str = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH";

fn settings(agent: &AgentConfig) -> serde_json::Value {
    let mut v = serde_json::json!({"general": {"sessionRetention": {"enabled": false}}});
    // Gemini CLI finds GEMINI.md itself; told another file's name, it
    // finds that too, as it finds its own (issue 51).
    if let Some(i) = crate::provider::instructions::Instructions::for_agent(agent)
        .and_then(|i| i.unless_read_as("GEMINI.md"))
    {
        v["context"] = serde_json::json!({"fileName": [i.name, "GEMINI.md"]});
    }
    if agent.has_mcp() {
        let servers: serde_json::Map<String, serde_json::Value> = agent
            .mcp_servers()
            .map(|s| {
                let mut entry = match &s.url {
                    // `httpUrl`: streamable HTTP (`url` is SSE to Gemini).
                    Some(url) => serde_json::json!({"httpUrl": url, "headers": s.headers}),
                    None => serde_json::json!({"command": s.command, "args": s.args, "env": s.env}),
                };
                // hive's own is trusted: its calls are bounded by
                // `can_message`, so Gemini need not confirm each. The
                // user's servers' calls are confirmed as Gemini's setting
                // says.
                if agent.hive_mcp.as_ref().is_some_and(|h| std::ptr::eq(h, s)) {
                    entry["trust"] = true.into();
                }
                (s.name.clone(), entry)
            })
            .collect();
        v["mcpServers"] = servers.into();
    }
    v
}

/// The settings file, with the agent's MCP servers.
const MCP_SETTINGS: super::operations::McpFile = super::operations::McpFile {
    kind: "gemini",
    render: settings,
};

/// The approval mode the CLI runs in: `permission_mode`, unless the
/// agent's own arguments name one (`--yolo`, `--approval-mode X`).
fn approval_mode(agent: &AgentConfig) -> Option<String> {
    let mut mode = agent.permission_mode.clone();
    let mut args = agent.command.iter().chain(&agent.args);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--yolo" | "-y" => mode = Some("yolo".into()),
            "--approval-mode" => mode = args.next().cloned(),
            _ => {
                if let Some(m) = a.strip_prefix("--approval-mode=") {
                    mode = Some(m.to_owned());
                }
            }
        }
    }
    mode
}

/// What the pane is told its Gemini cannot do: headless, the CLI's policy
/// denies every call that would ask (Gemini CLI 0.61: shell commands,
/// file writes and edits), and the model only hears "not found" (issue 46
/// item 7).
fn lacking_tools(agent: &AgentConfig) -> Option<&'static str> {
    match approval_mode(agent).as_deref() {
        Some("yolo") => None,
        Some("auto_edit") => Some(
            "Gemini runs headless: under permission_mode = \"auto_edit\" it runs no shell commands (what would ask is denied); \"yolo\" allows them",
        ),
        _ => Some(
            "Gemini runs headless: without permission_mode it has no shell, write or edit tools (what would ask is denied); set permission_mode = \"auto_edit\" for edits or \"yolo\" for edits and commands",
        ),
    }
}

/// How the CLI is told which session a turn belongs to.
#[derive(Debug, Clone, PartialEq)]
enum SessionArg {
    New(String),
    Resume(String),
}

/// Builds the command line of one turn.
fn command(agent: &AgentConfig, prompt: &str, session: &SessionArg) -> CommandSpec {
    let (program, mut args) = agent.program("gemini");
    // yargs would read a prompt starting with `-` as a flag.
    if prompt.starts_with('-') {
        args.push(format!("--prompt={prompt}"));
    } else {
        args.push("-p".into());
        args.push(prompt.to_owned());
    }
    args.extend(["--output-format".into(), "stream-json".into()]);
    if let Some(model) = &agent.model {
        args.extend(["--model".into(), model.clone()]);
    }
    if let Some(mode) = &agent.permission_mode {
        args.extend(["--approval-mode".into(), mode.clone()]);
    }
    match session {
        SessionArg::New(id) => args.extend(["--session-id".into(), id.clone()]),
        SessionArg::Resume(id) => args.extend(["--resume".into(), id.clone()]),
    }
    // A workspace's repositories (issue 52): each a root of its own.
    if !agent.extra_roots.is_empty() {
        let roots: Vec<String> = agent
            .extra_roots
            .iter()
            .map(|r| r.to_string_lossy().into_owned())
            .collect();
        args.extend(["--include-directories".into(), roots.join(",")]);
    }
    // Without the relaunch the CLI starts in ~2.2 s instead of ~4.8 s; the
    // agent's own env may override both.
    let mut env = BTreeMap::from([
        ("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned()),
        ("NO_COLOR".to_owned(), "1".to_owned()),
    ]);
    // The agent's own env may point elsewhere.
    let file = MCP_SETTINGS.path(agent);
    env.insert(SETTINGS_ENV.into(), file.to_string_lossy().into_owned());
    env.extend(agent.env.clone());
    CommandSpec::for_agent(agent, program, args, env)
}

struct Driver {
    agent: AgentConfig,
    events: EventSink,
    /// The CLI's session id (ours until the first `init` confirms it).
    session: Option<String>,
    /// The session exists on disk, so `--resume` works.
    established: bool,
}

/// How one process run ended.
enum RunEnd {
    /// The turn ended (completed, failed or cancelled).
    Done,
    /// A resumed session failed before the CLI started the turn.
    ResumeFailed(String),
    /// The host killed the provider.
    Killed,
}

impl Driver {
    async fn run(mut self, rx: mpsc::UnboundedReceiver<ProviderCommand>) {
        if let Some(note) = lacking_tools(&self.agent) {
            self.events.diagnostic(DiagnosticLevel::Warn, note);
        }
        if let Some(id) = &self.session {
            let _ = self.events.send(ProviderEvent::Session(SessionInfo {
                resume_handle: Some(id.clone()),
                model: self.agent.model.clone(),
                commands: Vec::new(),
            }));
        }
        let mut commands = Commands::new(rx);
        while let Some(cmd) = commands.recv().await {
            match cmd {
                ProviderCommand::Send { turn_id, text } => {
                    let keep_going = self.turn(&turn_id, &text, &mut commands).await;
                    if !keep_going {
                        return;
                    }
                }
                ProviderCommand::Kill => return,
                ProviderCommand::Steer { .. } => self.no_steer(),
                // One process per turn: the next one gets `-m`.
                ProviderCommand::SetModel { model } => self.agent.model = Some(model),
                _ => {}
            }
        }
    }

    fn no_steer(&self) {
        self.events.diagnostic(
            DiagnosticLevel::Info,
            "gemini takes no messages mid-turn in headless mode",
        );
    }

    fn forward(&mut self, events: Vec<ProviderEvent>) {
        for ev in events {
            if let ProviderEvent::Session(info) = &ev
                && let Some(id) = &info.resume_handle
            {
                self.session = Some(id.clone());
                self.established = true;
            }
            self.events.emit(ev);
        }
    }

    /// Runs one turn; false when the provider must stop.
    async fn turn(&mut self, turn_id: &str, text: &str, commands: &mut Commands) -> bool {
        let session = match (&self.session, self.established) {
            (Some(id), true) => SessionArg::Resume(id.clone()),
            (Some(id), false) => SessionArg::New(id.clone()),
            (None, _) => {
                let id = uuid::Uuid::new_v4().to_string();
                self.session = Some(id.clone());
                SessionArg::New(id)
            }
        };
        // A session that no longer resumes (restored after a restart, or its
        // file removed) falls back to a new one.
        let retry_fresh = matches!(session, SessionArg::Resume(_));
        let tr = GeminiTurn::new(
            turn_id,
            &session_label(&session),
            self.agent.model.as_deref(),
        );
        match self
            .run_process(tr, text, &session, retry_fresh, commands)
            .await
        {
            RunEnd::Done => true,
            RunEnd::Killed => false,
            RunEnd::ResumeFailed(report) => {
                // seed 004 "stale thread": a session that no longer exists
                // falls back to a new one, visibly.
                let old = session_label(&session);
                let id = uuid::Uuid::new_v4().to_string();
                self.session = Some(id.clone());
                self.established = false;
                let fresh = SessionArg::New(id);
                let mut tr =
                    GeminiTurn::new(turn_id, &session_label(&fresh), self.agent.model.as_deref());
                let last_line = report.lines().last().unwrap_or_default().to_owned();
                let notice = tr.system_notice(&format!(
                    "Gemini could not resume session {old} ({last_line}); continuing in a new session."
                ));
                self.forward(notice);
                !matches!(
                    self.run_process(tr, text, &fresh, false, commands).await,
                    RunEnd::Killed
                )
            }
        }
    }

    async fn run_process(
        &mut self,
        mut tr: GeminiTurn,
        text: &str,
        session: &SessionArg,
        may_retry_fresh: bool,
        commands: &mut Commands,
    ) -> RunEnd {
        let spec = command(&self.agent, text, session);
        // The prompt is in argv; an open stdin would be read as more prompt.
        let mut run = match Run::start(&spec, None, &self.events).await {
            Ok(run) => run,
            Err(message) => {
                let evs = tr.exited("spawn_failed", &message);
                self.forward(evs);
                return RunEnd::Done;
            }
        };
        run.set_stderr_noise(STDERR_NOISE);
        let mut turn = GeminiRun {
            driver: self,
            tr,
            session: session_label(session),
        };
        let ending = run.follow(&mut turn, commands, &TIMING).await;
        let mut tr = turn.tr;
        match ending {
            Ending::Killed => RunEnd::Killed,
            Ending::Ended | Ending::Cancelled => RunEnd::Done,
            Ending::Exited { status, report } => {
                let failed = status.is_some_and(|s| !s.success());
                if may_retry_fresh && failed && !tr.started() && looks_like_session_error(&report) {
                    return RunEnd::ResumeFailed(report);
                }
                let message = if status.is_some_and(|s| s.success()) {
                    format!("gemini ended without a result ({report})")
                } else {
                    format!("gemini {report}")
                };
                let evs = tr.exited("agent_exited", &message);
                self.forward(evs);
                RunEnd::Done
            }
        }
    }
}

/// The turn in flight, as the per-turn loop sees it.
struct GeminiRun<'a> {
    driver: &'a mut Driver,
    tr: GeminiTurn,
    session: String,
}

impl Turn for GeminiRun<'_> {
    fn line(&mut self, line: &str) {
        let evs = self.tr.push_line(line);
        self.driver.forward(evs);
    }

    fn ended(&self) -> bool {
        self.tr.is_ended()
    }

    /// The turn ends now; the CLI gets its grace to save the session before
    /// the group is killed.
    fn cancel(&mut self) {
        let evs = self.tr.cancelled();
        self.driver.forward(evs);
    }

    fn command(&mut self, cmd: ProviderCommand) {
        match cmd {
            // The runner sends one turn at a time; refuse loudly.
            ProviderCommand::Send { turn_id, .. } => self.driver.events.stream(
                &turn_id,
                &self.session,
                Payload::ResponseError {
                    error: ErrorInfo::new("busy", "gemini is still running the previous turn"),
                },
            ),
            ProviderCommand::Steer { .. } => self.driver.no_steer(),
            _ => {}
        }
    }
}

fn looks_like_session_error(report: &str) -> bool {
    let lower = report.to_lowercase();
    lower.contains("session") || lower.contains("resume")
}

fn session_label(session: &SessionArg) -> String {
    match session {
        SessionArg::New(id) | SessionArg::Resume(id) => id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 52: a workspace's repositories are extra roots.
    #[test]
    fn a_workspaces_repositories_are_included_directories() {
        let mut agent = AgentConfig::new("g", "gemini");
        agent.extra_roots = vec!["/ws/api".into(), "/ws/web".into()];
        let spec = command(&agent, "hi", &SessionArg::New("abc".into()));
        assert!(
            spec.args
                .windows(2)
                .any(|w| w == ["--include-directories", "/ws/api,/ws/web"]),
            "{:?}",
            spec.args
        );
    }

    #[test]
    fn command_line_new_then_resume() {
        let mut agent = AgentConfig::new("g", "gemini");
        agent.model = Some("gemini-2.5-pro".into());
        agent.args = vec!["--yolo".into()];
        agent
            .env
            .insert("GOOGLE_GEMINI_BASE_URL".into(), "http://127.0.0.1:1".into());
        let spec = command(&agent, "hi", &SessionArg::New("abc".into()));
        assert_eq!(spec.program, "gemini");
        assert_eq!(
            spec.args,
            [
                "-p",
                "hi",
                "--output-format",
                "stream-json",
                "--model",
                "gemini-2.5-pro",
                "--session-id",
                "abc",
                "--yolo"
            ]
        );
        assert_eq!(spec.env["GOOGLE_GEMINI_BASE_URL"], "http://127.0.0.1:1");
        assert_eq!(spec.env["GEMINI_CLI_NO_RELAUNCH"], "true");
        let spec = command(&agent, "-x", &SessionArg::Resume("abc".into()));
        assert_eq!(spec.args[0], "--prompt=-x");
        assert!(spec.args.windows(2).any(|w| w == ["--resume", "abc"]));
    }

    #[test]
    fn command_override_and_env_override() {
        let mut agent = AgentConfig::new("g", "gemini");
        agent.command = vec!["python3".into(), "fake.py".into()];
        agent.env.insert("NO_COLOR".into(), "0".into());
        let spec = command(&agent, "hi", &SessionArg::New("s".into()));
        assert_eq!(spec.program, "python3");
        assert_eq!(spec.args[0], "fake.py");
        assert_eq!(spec.env["NO_COLOR"], "0");
    }

    /// Every pane's Gemini reads hive's settings as its system defaults:
    /// session cleanup off (it deletes resumed sessions, docs/gemini.md),
    /// and with `hive_tools` the `hive mcp` server; the agent's env wins.
    #[test]
    fn the_system_defaults_are_hives_settings() {
        let mut agent = AgentConfig::new("g", "gemini");
        let spec = command(&agent, "hi", &SessionArg::New("s".into()));
        assert!(spec.env[SETTINGS_ENV].ends_with("mcp/g.gemini.json"));
        assert_eq!(
            settings(&agent),
            serde_json::json!({"general": {"sessionRetention": {"enabled": false}}})
        );
        agent.hive_mcp =
            crate::provider::operations::server_for("g", std::path::Path::new("/run/hive/p.sock"));
        let with_tools = settings(&agent);
        assert_eq!(with_tools["general"]["sessionRetention"]["enabled"], false);
        let hive = &with_tools["mcpServers"]["hive"];
        assert_eq!(hive["trust"], true);
        assert_eq!(hive["args"][4], "g");
        agent
            .env
            .insert(SETTINGS_ENV.into(), "/etc/mine.json".into());
        let spec = command(&agent, "hi", &SessionArg::New("s".into()));
        assert_eq!(spec.env[SETTINGS_ENV], "/etc/mine.json");
    }

    /// Issue 51: the user's `[[mcp_server]]`s go into the system-defaults
    /// layer beside hive's own, untrusted (Gemini confirms their calls as
    /// its settings say); an HTTP one as `httpUrl`.
    #[test]
    fn the_users_mcp_servers_go_into_the_system_defaults() {
        let mut agent = AgentConfig::new("g", "gemini");
        agent.shared_mcp = crate::config::mcp::sample_servers();
        let v = settings(&agent);
        assert_eq!(
            v["mcpServers"]["files"],
            serde_json::json!({"command": "npx", "args": ["-y", "mcp-files", "/srv"],
                "env": {"FILES_TOKEN": "s3cr3t-env"}})
        );
        assert_eq!(
            v["mcpServers"]["docs"],
            serde_json::json!({"httpUrl": "https://mcp.example.com/mcp",
                "headers": {"Authorization": "Bearer s3cr3t-hdr"}})
        );
        assert_eq!(v["general"]["sessionRetention"]["enabled"], false);
        agent.hive_mcp =
            crate::provider::operations::server_for("g", std::path::Path::new("/run/h.sock"));
        let v = settings(&agent);
        assert_eq!(v["mcpServers"]["hive"]["trust"], true);
        assert!(v["mcpServers"]["files"].get("trust").is_none());
    }

    /// Issue 51: Gemini CLI is told the instruction file's name in
    /// `context.fileName` of the system-defaults layer, beside its own
    /// GEMINI.md; named GEMINI.md, nothing is added.
    #[test]
    fn the_instruction_file_is_named_in_the_context_setting() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut agent = AgentConfig::new("g", "gemini");
        agent.cwd = Some(dir.path().to_owned());
        assert!(settings(&agent).get("context").is_none());
        std::fs::write(dir.path().join("AGENTS.md"), "run make test").expect("write");
        assert_eq!(
            settings(&agent)["context"]["fileName"],
            serde_json::json!(["AGENTS.md", "GEMINI.md"])
        );
        std::fs::write(dir.path().join("GEMINI.md"), "g").expect("write");
        agent.instructions = Some("GEMINI.md".into());
        assert!(settings(&agent).get("context").is_none());
    }
}
