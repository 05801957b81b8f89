//! The `gemini` provider: Gemini CLI in headless `stream-json` mode, one
//! `gemini -p PROMPT --output-format stream-json` process per turn.
//!
//! The first turn names the session (`--session-id <uuid>`), later turns and a
//! restarted hive continue it (`--resume <id>`), as verified against Gemini CLI
//! 0.61.0 (realcli README). The CLI has no stdin protocol: an interrupt is
//! SIGINT to the process group, after which the CLI exits 0 without a `result`
//! line, so the provider ends the turn as cancelled itself. The headless stream
//! carries no thinking; Gemini's ACP transport (`gemini --acp`) does.

pub mod doctor;
pub mod translate;

use std::collections::BTreeMap;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::process::{AgentProcess, CommandSpec};
use super::{
    Capabilities, DiagnosticLevel, EventSink, ProviderCommand, ProviderError, ProviderEvent,
    ProviderFactory, ProviderHandle, ProviderSpec, SessionInfo,
};
use crate::config::AgentConfig;
use crate::event::{ErrorInfo, Payload, StreamEvent};
use crate::provider::Sink;
use crate::timer;

/// What Gemini CLI writes to stderr on every run (captures/gemini/*.stderr.txt):
/// warnings about the terminal, its approval mode, its search tool and start-up
/// metrics. Logged, never part of a crash message (issue 13 item 10).
pub const STDERR_NOISE: &[&str] = &[
    "Warning: 256-color support not detected",
    "YOLO mode is enabled.",
    "Ripgrep is not available.",
    "[STARTUP] Phase",
    "Could not find promptId in context",
];
pub use translate::GeminiTurn;

/// SIGINT → exit took ~35 ms in the captures; past this the group is killed.
const CANCEL_GRACE: Duration = Duration::from_millis(1500);
/// After stdout closed, how long the process may take to exit.
const EXIT_WAIT: Duration = Duration::from_secs(1);
/// After the process exited, how long a grandchild may keep stdout open.
const DRAIN: Duration = Duration::from_millis(300);
/// SIGTERM → SIGKILL when hive ends the process itself.
const KILL_GRACE: Duration = Duration::from_millis(300);

pub struct GeminiFactory;

impl ProviderFactory for GeminiFactory {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn capabilities(&self, _agent: &AgentConfig) -> Capabilities {
        Capabilities {
            // No stdin protocol in headless mode: mid-turn messages are queued.
            queue_while_streaming: false,
            interrupt: true,
            tool_events: true,
            // stream-json has no thought events (ACP mode has).
            thinking: false,
            resume: true,
            permissions: false,
            set_model: true,
            // Headless mode has no thinking setting.
            set_effort: false,
        }
    }

    fn spawn(
        &self,
        spec: ProviderSpec,
        events: EventSink,
    ) -> Result<ProviderHandle, ProviderError> {
        let driver = Driver {
            established: spec.resume.is_some(),
            session: spec.resume,
            agent: spec.agent,
            events,
            next: None,
        };
        Ok(ProviderHandle::spawn(move |rx| driver.run(rx)))
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
    args.extend(agent.args.iter().cloned());
    // Without the relaunch the CLI starts in ~2.2 s instead of ~4.8 s; the
    // agent's own env may override both.
    let mut env = BTreeMap::from([
        ("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned()),
        ("NO_COLOR".to_owned(), "1".to_owned()),
    ]);
    env.extend(agent.env.clone());
    CommandSpec {
        program,
        args,
        cwd: agent.cwd.clone(),
        env,
    }
}

struct Driver {
    agent: AgentConfig,
    events: EventSink,
    /// The CLI's session id (ours until the first `init` confirms it).
    session: Option<String>,
    /// The session exists on disk, so `--resume` works.
    established: bool,
    /// A turn sent while the previous process was still exiting.
    next: Option<(String, String)>,
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
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<ProviderCommand>) {
        if let Some(id) = &self.session {
            let _ = self.events.send(ProviderEvent::Session(SessionInfo {
                resume_handle: Some(id.clone()),
                model: self.agent.model.clone(),
                commands: Vec::new(),
            }));
        }
        loop {
            let cmd = match self.next.take() {
                Some((turn_id, text)) => ProviderCommand::Send { turn_id, text },
                None => match rx.recv().await {
                    Some(cmd) => cmd,
                    None => return,
                },
            };
            match cmd {
                ProviderCommand::Send { turn_id, text } => {
                    let keep_going = self.turn(&turn_id, &text, &mut rx).await;
                    if !keep_going {
                        return;
                    }
                }
                ProviderCommand::Kill => return,
                ProviderCommand::Steer { .. } => self.diagnostic(
                    DiagnosticLevel::Info,
                    "gemini takes no messages mid-turn in headless mode",
                ),
                // One process per turn: the next one gets `-m`.
                ProviderCommand::SetModel { model } => self.agent.model = Some(model),
                _ => {}
            }
        }
    }

    fn diagnostic(&self, level: DiagnosticLevel, message: impl Into<String>) {
        self.events.diagnostic(level, message);
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
    async fn turn(
        &mut self,
        turn_id: &str,
        text: &str,
        rx: &mut mpsc::UnboundedReceiver<ProviderCommand>,
    ) -> bool {
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
        match self.run_process(tr, text, &session, retry_fresh, rx).await {
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
                    self.run_process(tr, text, &fresh, false, rx).await,
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
        rx: &mut mpsc::UnboundedReceiver<ProviderCommand>,
    ) -> RunEnd {
        let spec = command(&self.agent, text, session);
        let (mut proc, mut lines) = match AgentProcess::spawn(&spec) {
            Ok(mut p) => {
                p.0.set_stderr_noise(STDERR_NOISE);
                p
            }
            Err(e) => {
                let evs = tr.exited(
                    "spawn_failed",
                    &format!("cannot start `{}`: {e}", spec.program),
                );
                self.forward(evs);
                return RunEnd::Done;
            }
        };
        // The prompt is in argv; an open stdin would be read as more prompt.
        proc.close_stdin();
        let mut eof = false;
        let mut exited = false;
        let mut status: Option<ExitStatus> = None;
        let mut deadline: Option<Instant> = None;
        let mut cancelled = false;
        while !(eof && exited) {
            tokio::select! {
                line = lines.next_line(), if !eof => match line {
                    Ok(Some(l)) => {
                        let evs = tr.push_line(&l);
                        self.forward(evs);
                    }
                    Ok(None) | Err(_) => {
                        eof = true;
                        if !exited {
                            deadline = earliest(deadline, Instant::now() + EXIT_WAIT);
                        }
                    }
                },
                st = proc.wait(), if !exited => {
                    exited = true;
                    status = st.ok();
                    if !eof {
                        deadline = earliest(deadline, Instant::now() + DRAIN);
                    }
                }
                cmd = rx.recv() => match cmd {
                    Some(ProviderCommand::Cancel) => {
                        if !cancelled && !tr.is_ended() {
                            cancelled = true;
                            // The turn ends now; the CLI gets its grace to save
                            // the session before the group is killed.
                            let evs = tr.cancelled();
                            self.forward(evs);
                            proc.signal(libc::SIGINT);
                            deadline = earliest(deadline, Instant::now() + CANCEL_GRACE);
                        }
                    }
                    Some(ProviderCommand::Kill) | None => {
                        proc.terminate(KILL_GRACE).await;
                        return RunEnd::Killed;
                    }
                    Some(ProviderCommand::Send { turn_id, text }) => {
                        if tr.is_ended() && self.next.is_none() {
                            // The turn is over but the CLI is still exiting:
                            // the next turn starts once it is gone.
                            self.next = Some((turn_id, text));
                        } else {
                            // The runner sends one turn at a time; refuse loudly.
                            let _ = self.events.send(ProviderEvent::Stream(StreamEvent::new(
                                &turn_id,
                                &session_label(session),
                                Payload::ResponseError {
                                    error: ErrorInfo::new("busy", "gemini is still running the previous turn"),
                                },
                            )));
                        }
                    }
                    Some(ProviderCommand::Steer { .. }) => self.diagnostic(
                        DiagnosticLevel::Info,
                        "gemini takes no messages mid-turn in headless mode",
                    ),
                    Some(_) => {}
                },
                _ = timer::sleep_until(deadline) => {
                    deadline = None;
                    if !exited {
                        status = proc.terminate(KILL_GRACE).await;
                        exited = true;
                    }
                    // A grandchild may hold stdout open; stop waiting for it.
                    eof = true;
                }
            }
        }
        if !tr.is_ended() {
            // Let the stderr reader catch the last lines for the report.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let report = proc.exit_report(status);
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
        }
        // Dropping the process kills whatever is left of its group.
        drop(proc);
        RunEnd::Done
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

fn earliest(current: Option<Instant>, candidate: Instant) -> Option<Instant> {
    Some(current.map_or(candidate, |c| c.min(candidate)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
