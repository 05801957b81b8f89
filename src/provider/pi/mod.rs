//! The `pi` provider: the pi coding agent in RPC mode, one persistent
//! `pi --mode rpc` process per pane with JSONL commands on stdin (`prompt`,
//! `steer` / `follow_up` mid-turn, `abort`, `get_state`) and events on stdout
//! (see `translate`). A restarted hive resumes pi's session with
//! `--session <id>`.

pub(crate) mod content;
pub(crate) mod doctor;
pub(crate) mod import;
pub mod translate;

use std::process::ExitStatus;
use std::time::Duration;

use super::paced::AgentStdout;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::process::{AgentProcess, CommandSpec, LineReader};
use super::{
    Capabilities, DiagnosticLevel, EventSink, ProviderCommand, ProviderError, ProviderEvent,
    ProviderFactory, ProviderHandle, ProviderSpec, SessionInfo, Spawned,
};
use crate::config::AgentConfig;
use crate::event::{ErrorInfo, Payload, StreamEvent, new_id};
use crate::provider::Sink;
use crate::timer;
pub use translate::PiTranslator;

/// pi answered `abort` within 10 ms in the captures; past this hive ends the
/// turn itself and restarts pi on its session.
const CANCEL_GRACE: Duration = Duration::from_millis(800);
/// After stdout closed, how long pi may take to exit.
const EXIT_WAIT: Duration = Duration::from_secs(1);
/// SIGTERM → SIGKILL when hive ends pi itself.
const KILL_GRACE: Duration = Duration::from_millis(300);

/// The `pi` provider as the registry knows it. pi has no MCP client, so
/// hive's operations do not reach it.
pub(crate) fn descriptor() -> super::ProviderDescriptor {
    super::ProviderDescriptor {
        doctor: |agent, probe| Ok(doctor::facts(agent, probe)),
        importer: Some(&import::Session),
        npm: &[super::NpmProgram {
            program: "pi",
            package: "@mariozechner/pi-coding-agent",
        }],
        ..super::ProviderDescriptor::bare("pi", std::sync::Arc::new(PiFactory))
    }
}

pub struct PiFactory;

impl ProviderFactory for PiFactory {
    fn capabilities(&self, _agent: &AgentConfig) -> Capabilities {
        Capabilities {
            queue_while_streaming: true,
            ..Capabilities::structured()
        }
    }

    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned {
        let steer = steer_command(&spec.agent)?;
        let cmd = command(&spec.agent, spec.resume.as_deref());
        let (proc, lines) = AgentProcess::spawn_for(&spec.agent.id, &cmd, &events)?;
        if spec.agent.hive_tools {
            // pi has no MCP client (by design); say so rather than ignore it.
            events.diagnostic(
                DiagnosticLevel::Warn,
                "hive_tools: pi has no MCP support, so this pane cannot call hive's operations (other panes can still message it)",
            );
        }
        if !spec.agent.shared_mcp.is_empty() {
            // Nor does it get the config's `[[mcp_server]]`s (issue 51).
            let names: Vec<&str> = spec
                .agent
                .shared_mcp
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            events.diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "mcp_server: pi has no MCP support, so this pane does not get {} (set `mcp = false` on it to silence this)",
                    names.join(", ")
                ),
            );
        }
        let session = spec.resume.clone().unwrap_or_else(|| new_id("pi"));
        let tr = PiTranslator::new(&session, spec.agent.model.as_deref());
        let driver = Driver {
            agent: spec.agent,
            resume: spec.resume,
            events,
            proc,
            lines,
            tr,
            steer,
            prompts: 0,
            cancel_deadline: None,
            heard: false,
            unsaved: None,
        };
        Ok(ProviderHandle::spawn(move |rx| driver.run(rx)))
    }
}

/// The RPC command a mid-turn message becomes: `options.steer` is `"steer"`
/// (default: delivered after the running tool) or `"follow_up"` (after the turn).
fn steer_command(agent: &AgentConfig) -> Result<&'static str, ProviderError> {
    match agent.options.get("steer").map(|v| v.as_str()) {
        None | Some(Some("steer")) => Ok("steer"),
        Some(Some("follow_up" | "follow-up" | "followUp")) => Ok("follow_up"),
        Some(other) => Err(ProviderError::config(
            &agent.id,
            format!(
                "options.steer must be \"steer\" or \"follow_up\", not {}",
                other.unwrap_or("a non-string")
            ),
        )),
    }
}

/// `pi --mode rpc [--provider P] [--model M] [--thinking T] [--session ID] ARGS…`.
fn command(agent: &AgentConfig, resume: Option<&str>) -> CommandSpec {
    let (program, mut args) = agent.program("pi");
    args.extend(["--mode".into(), "rpc".into()]);
    if let Some(provider) = agent.options.get("provider").and_then(|v| v.as_str()) {
        args.extend(["--provider".into(), provider.to_owned()]);
    }
    if let Some(model) = &agent.model {
        args.extend(["--model".into(), model.clone()]);
    }
    if let Some(thinking) = &agent.thinking {
        args.extend(["--thinking".into(), thinking.clone()]);
    }
    if let Some(id) = resume {
        args.extend(["--session".into(), id.to_owned()]);
    }
    CommandSpec::for_agent(agent, program, args, agent.env.clone())
}

struct Driver {
    agent: AgentConfig,
    resume: Option<String>,
    events: EventSink,
    proc: AgentProcess,
    lines: LineReader<AgentStdout>,
    tr: PiTranslator,
    steer: &'static str,
    prompts: u64,
    cancel_deadline: Option<Instant>,
    /// pi printed at least one line (it started).
    heard: bool,
    /// The session pi named before it was written (`hold_unsaved_session`).
    unsaved: Option<SessionInfo>,
}

impl Driver {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<ProviderCommand>) {
        // Learn the session id and model; pi answers once it is up.
        if !self.write(&PiTranslator::state_request()).await
            || !self.write(&PiTranslator::models_request()).await
        {
            return self.exited().await;
        }
        loop {
            tokio::select! {
                line = self.lines.next_line() => match line {
                    Ok(Some(line)) => {
                        self.heard = true;
                        let mut evs = self.tr.push_line(&line);
                        self.hold_unsaved_session(&mut evs);
                        self.forward(evs);
                        if !self.flush_outbox().await {
                            return self.exited().await;
                        }
                        if !self.tr.has_turn() {
                            self.cancel_deadline = None;
                        }
                    }
                    Ok(None) | Err(_) => {
                        if !self.heard && self.resume.is_some() && self.fresh_session().await {
                            continue;
                        }
                        return self.exited().await;
                    }
                },
                cmd = rx.recv() => match cmd {
                    Some(ProviderCommand::Send { turn_id, text }) => {
                        if !self.send(&turn_id, &text).await {
                            return self.exited().await;
                        }
                    }
                    Some(ProviderCommand::Steer { text }) => {
                        if !self.steer(&text).await {
                            return self.exited().await;
                        }
                    }
                    Some(ProviderCommand::Cancel) => {
                        if self.tr.has_turn() && self.cancel_deadline.is_none() {
                            self.tr.cancel_requested();
                            self.cancel_deadline = Some(Instant::now() + CANCEL_GRACE);
                            let abort = json!({"id": "hive-abort", "type": "abort"}).to_string();
                            if !self.write(&abort).await {
                                return self.exited().await;
                            }
                        }
                    }
                    Some(ProviderCommand::Kill) | None => {
                        self.proc.terminate(KILL_GRACE).await;
                        return;
                    }
                    Some(ProviderCommand::SetModel { model }) => {
                        if !self.set_model(&model).await {
                            return self.exited().await;
                        }
                    }
                    Some(ProviderCommand::SetEffort { effort }) => {
                        let line = json!({"id": "hive-thinking", "type": "set_thinking_level", "level": effort}).to_string();
                        if !self.write(&line).await {
                            return self.exited().await;
                        }
                    }
                    Some(_) => {}
                },
                _ = timer::sleep_until(self.cancel_deadline) => {
                    self.cancel_deadline = None;
                    if self.tr.has_turn() && !self.abort_ignored().await {
                        return;
                    }
                }
            }
        }
    }

    /// pi names a new session before it has written it (it does so with the
    /// first message): a handle offered now would fail to open on the next
    /// start (issue 13 item 9). Held back until the first prompt goes out.
    fn hold_unsaved_session(&mut self, events: &mut [ProviderEvent]) {
        if self.resume.is_some() || self.prompts > 0 {
            return;
        }
        for ev in events {
            if let ProviderEvent::Session(info) = ev
                && info.resume_handle.is_some()
            {
                self.unsaved = Some(info.clone());
                info.resume_handle = None;
            }
        }
    }

    fn forward(&self, events: Vec<ProviderEvent>) {
        self.events.forward(events);
    }

    fn diagnostic(&self, level: DiagnosticLevel, message: impl Into<String>) {
        self.events.diagnostic(level, message);
    }

    /// Writes one line; false when pi's stdin is gone.
    async fn write(&mut self, line: &str) -> bool {
        self.proc.write_line(line).await.is_ok()
    }

    async fn flush_outbox(&mut self) -> bool {
        for line in self.tr.take_outbox() {
            if !self.write(&line).await {
                return false;
            }
        }
        true
    }

    async fn send(&mut self, turn_id: &str, text: &str) -> bool {
        if self.tr.has_turn() {
            // The runner sends one turn at a time; refuse loudly.
            let _ = self.events.send(ProviderEvent::Stream(StreamEvent::new(
                turn_id,
                self.tr.agent_session().unwrap_or("pi"),
                Payload::ResponseError {
                    error: ErrorInfo::new("busy", "pi is still running the previous turn"),
                },
            )));
            return true;
        }
        self.prompts += 1;
        if let Some(info) = self.unsaved.take() {
            // pi writes the session with its first message: now it resumes.
            let _ = self.events.send(ProviderEvent::Session(info));
        }
        let id = format!("hive-prompt-{}", self.prompts);
        let line = json!({"id": id, "type": "prompt", "message": text}).to_string();
        self.tr.begin_turn(turn_id, &id, &line);
        self.write(&line).await
    }

    /// `set_model` names pi's provider and model: `provider/model`, or the
    /// agent's `options.provider` with a bare model name.
    async fn set_model(&mut self, model: &str) -> bool {
        let configured = self.agent.options.get("provider").and_then(|v| v.as_str());
        let (provider, id) = match model.split_once('/') {
            Some((p, m)) => (p, m),
            None => match configured {
                Some(p) => (p, model),
                None => {
                    self.diagnostic(
                        DiagnosticLevel::Warn,
                        "pi needs the provider with the model: /model provider/model",
                    );
                    return true;
                }
            },
        };
        let line =
            json!({"id": "hive-model", "type": "set_model", "provider": provider, "modelId": id})
                .to_string();
        self.write(&line).await
    }

    async fn steer(&mut self, text: &str) -> bool {
        if !self.tr.has_turn() {
            self.diagnostic(
                DiagnosticLevel::Warn,
                "pi: no turn is running to steer; send the message again",
            );
            return true;
        }
        let line = json!({"id": "hive-steer", "type": self.steer, "message": text}).to_string();
        self.write(&line).await
    }

    /// pi did not end the turn after `abort`: end it here and replace the
    /// process, resuming its session. False when pi cannot be restarted.
    async fn abort_ignored(&mut self) -> bool {
        let evs = self.tr.end_cancelled();
        self.forward(evs);
        self.diagnostic(
            DiagnosticLevel::Warn,
            "pi did not stop when interrupted: hive ended its process and started it again",
        );
        self.proc.terminate(KILL_GRACE).await;
        let session = self
            .tr
            .agent_session()
            .map(str::to_owned)
            .or_else(|| self.resume.clone());
        let cmd = command(&self.agent, session.as_deref());
        match AgentProcess::spawn(&cmd, &self.events) {
            Ok((proc, lines)) => {
                self.proc = proc;
                self.lines = lines;
                self.resume = session;
                self.write(&PiTranslator::state_request()).await || {
                    self.exited().await;
                    false
                }
            }
            Err(e) => {
                let _ = self.events.send(ProviderEvent::Exited {
                    code: None,
                    message: format!("cannot restart `{}`: {e}", cmd.program),
                });
                false
            }
        }
    }

    /// pi ended before saying anything while opening a saved session (it no
    /// longer exists, seed 004 "stale thread"): start a new session, visibly.
    /// False when that is not possible either.
    async fn fresh_session(&mut self) -> bool {
        let status = match tokio::time::timeout(EXIT_WAIT, self.proc.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => self.proc.terminate(KILL_GRACE).await,
        };
        if status.is_some_and(|s| s.success()) {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        let report = self.proc.exit_report(status);
        let old = self.resume.take().unwrap_or_default();
        let cmd = command(&self.agent, None);
        let Ok((proc, lines)) = AgentProcess::spawn(&cmd, &self.events) else {
            return false;
        };
        self.proc = proc;
        self.lines = lines;
        self.diagnostic(
            DiagnosticLevel::Warn,
            format!("pi could not open session {old} ({report}); started a new session"),
        );
        // The prompt written to the dead process is lost: it is written again.
        let pending = self.tr.pending_prompt();
        let evs = self.tr.system_notice(&format!(
            "pi could not resume session {old}; this conversation continues in a new session."
        ));
        self.forward(evs);
        let mut ok = self.write(&PiTranslator::state_request()).await;
        if let Some(prompt) = pending {
            ok = ok && self.write(&prompt).await;
        }
        ok
    }

    /// pi's stdout closed or its stdin broke: report the exit (which fails
    /// the turn in flight) and end the task.
    async fn exited(&mut self) {
        let status: Option<ExitStatus> =
            match tokio::time::timeout(EXIT_WAIT, self.proc.wait()).await {
                Ok(Ok(s)) => Some(s),
                _ => self.proc.terminate(KILL_GRACE).await,
            };
        // Let the stderr reader catch the last lines for the report.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let report = self.proc.exit_report(status);
        // The turn in flight fails with the exit (the runner's one error
        // line for it), not before it: a turn error first lets the runner
        // send a queued message into the dying pi, a second failed turn
        // (issue 34 item 6).
        let _ = self.events.send(ProviderEvent::Exited {
            code: status.and_then(|s| s.code()),
            message: format!("pi {report}"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_from_config() {
        let mut agent = AgentConfig::new("p", "pi");
        agent.model = Some("mock-model".into());
        agent.thinking = Some("high".into());
        agent.options.insert("provider".into(), "mock".into());
        agent.args = vec!["--no-skills".into()];
        agent
            .env
            .insert("PI_CODING_AGENT_DIR".into(), "/tmp/pi-agent".into());
        let spec = command(&agent, Some("sess-1"));
        assert_eq!(spec.program, "pi");
        assert_eq!(
            spec.args,
            [
                "--mode",
                "rpc",
                "--provider",
                "mock",
                "--model",
                "mock-model",
                "--thinking",
                "high",
                "--session",
                "sess-1",
                "--no-skills"
            ]
        );
        assert_eq!(spec.env["PI_CODING_AGENT_DIR"], "/tmp/pi-agent");
    }

    #[test]
    fn steer_option() {
        let mut agent = AgentConfig::new("p", "pi");
        assert_eq!(steer_command(&agent).ok(), Some("steer"));
        agent.options.insert("steer".into(), "follow_up".into());
        assert_eq!(steer_command(&agent).ok(), Some("follow_up"));
        agent.options.insert("steer".into(), "later".into());
        assert!(steer_command(&agent).is_err());
    }
}
