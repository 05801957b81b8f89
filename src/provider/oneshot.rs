//! The per-turn child-process loop shared by the CLIs that run one process
//! per turn (`gemini -p`, `codex exec`): start the CLI in its own process
//! group, feed its stdout lines to the provider's translator, interrupt with
//! SIGINT and end the group when it lingers, and tell how the run ended.
//!
//! The loop knows no agent: a provider implements [`Turn`] for the run in
//! flight and reads the [`Ending`] (with the exit report built from the
//! stderr tail) to decide what the turn's end looks like.

use std::collections::VecDeque;
use std::process::ExitStatus;
use std::time::Duration;

use crate::provider::paced::AgentStdout;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::process::{AgentProcess, CommandSpec, LineReader};
use super::{EventSink, ProviderCommand};
use crate::timer;

/// How long each phase of a run may take before hive ends the group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// The CLI's name in log lines.
    pub name: &'static str,
    /// After stdout closed, how long the process may take to exit.
    pub(crate) exit_wait: Duration,
    /// After the process exited, how long a grandchild may keep stdout open.
    pub drain: Duration,
    /// After SIGINT, how long the CLI has to save its session and exit.
    pub(crate) cancel_grace: Duration,
    /// SIGTERM → SIGKILL when hive ends the process itself.
    pub(crate) kill_grace: Duration,
    /// After the turn ended, how long the CLI may take to write its session
    /// and exit (the next turn resumes it).
    pub settle: Duration,
}

/// The provider's side of the run in flight.
pub(crate) trait Turn {
    /// One stdout line (not called once the turn was interrupted).
    fn line(&mut self, line: &str);
    /// True once the translator saw the turn's end.
    fn ended(&self) -> bool;
    /// The host interrupted the turn; called once, just before SIGINT.
    fn cancel(&mut self) {}
    /// Any other command while the process runs (a steer, a `Send` while
    /// the turn is still going, a setting).
    fn command(&mut self, cmd: ProviderCommand);
}

/// How a run ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// The translator saw the turn's end.
    Ended,
    /// The host interrupted the turn.
    Cancelled,
    /// The host ended the provider.
    Killed,
    /// The process ended before the turn did.
    Exited {
        status: Option<ExitStatus>,
        /// "exited with status 1" and the stderr tail.
        report: String,
    },
}

/// The provider's commands: what arrived after the turn ended, while its
/// process was still exiting (the next `Send`, a `/model`), waits here for
/// the provider's own loop.
pub(crate) struct Commands {
    rx: mpsc::UnboundedReceiver<ProviderCommand>,
    held: VecDeque<ProviderCommand>,
}

impl Commands {
    pub(crate) fn new(rx: mpsc::UnboundedReceiver<ProviderCommand>) -> Self {
        Self {
            rx,
            held: VecDeque::new(),
        }
    }

    /// The held commands first, then the channel; `None` once the host is gone.
    pub(crate) async fn recv(&mut self) -> Option<ProviderCommand> {
        match self.held.pop_front() {
            Some(cmd) => Some(cmd),
            None => self.rx.recv().await,
        }
    }
}

/// One CLI process of one turn.
pub(crate) struct Run {
    proc: AgentProcess,
    lines: LineReader<AgentStdout>,
}

impl Run {
    /// Starts `spec`; `stdin` is written whole and closed (EOF tells the CLI
    /// the prompt is complete), or closed at once when the prompt is in argv.
    /// Its output is read only while `events` has room (`LineReader::gate`).
    pub(crate) async fn start(
        spec: &CommandSpec,
        stdin: Option<&str>,
        events: &EventSink,
    ) -> Result<Self, String> {
        let (mut proc, lines) = AgentProcess::spawn(spec, events)
            .map_err(|e| format!("cannot start `{}`: {e}", spec.program))?;
        if let Some(text) = stdin
            && let Err(e) = proc.write_line(text).await
        {
            // The process's own exit report tells why.
            tracing::debug!("{}: writing the prompt failed: {e}", spec.program);
        }
        proc.close_stdin();
        Ok(Self { proc, lines })
    }

    /// Lines the CLI always writes to stderr, kept out of its exit report.
    pub(crate) fn set_stderr_noise(&mut self, noise: &'static [&'static str]) {
        self.proc.set_stderr_noise(noise);
    }

    /// The last stderr lines, oldest first.
    pub(crate) fn stderr_tail(&self) -> String {
        self.proc.stderr_tail()
    }

    /// Reads the run to its end: the turn ended and the CLI exited (or was
    /// ended after `settle`), the host interrupted it, or the process died.
    /// The whole group is gone when this returns.
    pub(crate) async fn follow(
        &mut self,
        turn: &mut impl Turn,
        commands: &mut Commands,
        timing: &Timing,
    ) -> Ending {
        let mut seen = Seen::default();
        while !(seen.eof && seen.status.is_some()) {
            if !seen.settling && turn.ended() {
                seen.settling = true;
                seen.limit(timing.settle);
            }
            tokio::select! {
                line = self.lines.next_line(), if !seen.eof => match line {
                    // After SIGINT the turn is over for hive; late lines are dropped.
                    Ok(Some(l)) => if !seen.cancelled {
                        turn.line(&l);
                    },
                    Ok(None) | Err(_) => {
                        seen.eof = true;
                        // An interrupted or finished CLI has its own limit.
                        if seen.status.is_none() && !seen.cancelled && !seen.settling {
                            seen.limit(timing.exit_wait);
                        }
                    }
                },
                // A child that inherited stdout can keep the pipe open after
                // the CLI died: its exit bounds the wait for EOF.
                st = self.proc.wait(), if seen.status.is_none() => {
                    seen.status = Some(st.ok());
                    if !seen.eof {
                        seen.limit(timing.drain);
                    }
                }
                cmd = commands.rx.recv() => {
                    if !self.command(cmd, turn, commands, &mut seen, timing).await {
                        return Ending::Killed;
                    }
                }
                _ = timer::sleep_until(seen.deadline) => self.expired(&mut seen, timing).await,
            }
        }
        // Grandchildren (a tool's `sleep`) share the group: end them too.
        self.proc.terminate(Duration::ZERO).await;
        if seen.cancelled {
            return Ending::Cancelled;
        }
        if turn.ended() {
            return Ending::Ended;
        }
        // Let the stderr reader catch the last lines for the report.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let status = seen.status.flatten();
        Ending::Exited {
            status,
            report: self.proc.exit_report(status),
        }
    }

    /// A host command while the process runs; false once the host ended the
    /// provider (the group is gone then).
    async fn command(
        &mut self,
        cmd: Option<ProviderCommand>,
        turn: &mut impl Turn,
        commands: &mut Commands,
        seen: &mut Seen,
        timing: &Timing,
    ) -> bool {
        match cmd {
            Some(ProviderCommand::Cancel) => {
                if !seen.cancelled && !turn.ended() {
                    seen.cancelled = true;
                    turn.cancel();
                    self.proc.signal(libc::SIGINT);
                    seen.limit(timing.cancel_grace);
                }
            }
            Some(ProviderCommand::Kill) | None => {
                self.proc.terminate(timing.kill_grace).await;
                return false;
            }
            // The turn is over but the CLI is still exiting: the next turn
            // (and a setting for it) waits until it is gone.
            Some(cmd) if turn.ended() || seen.cancelled => commands.held.push_back(cmd),
            Some(cmd) => turn.command(cmd),
        }
        true
    }

    /// The phase's limit passed: end the process, stop waiting for EOF.
    async fn expired(&mut self, seen: &mut Seen, timing: &Timing) {
        seen.deadline = None;
        if seen.status.is_none() {
            if seen.settling {
                tracing::warn!("{} did not exit after its turn; ending it", timing.name);
            }
            // An interrupted CLI already had its grace.
            let grace = if seen.cancelled {
                Duration::ZERO
            } else {
                timing.kill_grace
            };
            seen.status = Some(self.proc.terminate(grace).await);
        }
        // A grandchild may hold stdout open; stop waiting for it.
        seen.eof = true;
    }
}

/// What the loop has seen of one run.
#[derive(Debug, Default)]
struct Seen {
    eof: bool,
    /// `Some` once the process exited (with its status, when it was read).
    status: Option<Option<ExitStatus>>,
    cancelled: bool,
    /// The turn ended; the CLI is finishing up.
    settling: bool,
    /// The current phase's limit; a later phase only ever brings it closer.
    deadline: Option<Instant>,
}

impl Seen {
    fn limit(&mut self, after: Duration) {
        let at = Instant::now() + after;
        self.deadline = Some(self.deadline.map_or(at, |d| d.min(at)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what the loop hands the provider; the turn ends on `end`. On
    /// a line it has a reply for, it sends those commands as the host would.
    /// A command it is handed creates `handed` (if set), for a script that
    /// waits for it.
    struct Probe {
        lines: Vec<String>,
        commands: Vec<ProviderCommand>,
        cancelled: bool,
        host: mpsc::UnboundedSender<ProviderCommand>,
        replies: Vec<(&'static str, ProviderCommand)>,
        handed: Option<std::path::PathBuf>,
    }

    impl Turn for Probe {
        fn line(&mut self, line: &str) {
            self.lines.push(line.to_owned());
            for (on, cmd) in &self.replies {
                if *on == line {
                    self.host.send(cmd.clone()).unwrap();
                }
            }
        }
        fn ended(&self) -> bool {
            self.lines.iter().any(|l| l == "end")
        }
        fn cancel(&mut self) {
            self.cancelled = true;
        }
        fn command(&mut self, cmd: ProviderCommand) {
            self.commands.push(cmd);
            if let Some(path) = &self.handed {
                std::fs::write(path, "").unwrap();
            }
        }
    }

    const TEST: Timing = Timing {
        name: "test",
        exit_wait: Duration::from_secs(5),
        drain: Duration::from_millis(100),
        cancel_grace: Duration::from_secs(5),
        kill_grace: Duration::from_millis(100),
        settle: Duration::from_millis(100),
    };

    async fn follow(
        script: &str,
        replies: Vec<(&'static str, ProviderCommand)>,
    ) -> (Ending, Probe, Commands) {
        follow_handed(script, replies, None).await
    }

    async fn follow_handed(
        script: &str,
        replies: Vec<(&'static str, ProviderCommand)>,
        handed: Option<std::path::PathBuf>,
    ) -> (Ending, Probe, Commands) {
        let (host, rx) = mpsc::unbounded_channel();
        let mut commands = Commands::new(rx);
        let spec = CommandSpec {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            ..Default::default()
        };
        let mut run = Run::start(&spec, Some("hi"), &crate::provider::channel::channel().0)
            .await
            .unwrap();
        let mut probe = Probe {
            lines: Vec::new(),
            commands: Vec::new(),
            cancelled: false,
            host,
            replies,
            handed,
        };
        let ending = run.follow(&mut probe, &mut commands, &TEST).await;
        (ending, probe, commands)
    }

    fn send(text: &str) -> ProviderCommand {
        ProviderCommand::Send {
            turn_id: "t".into(),
            text: text.into(),
        }
    }

    #[tokio::test]
    async fn a_process_that_dies_mid_turn_is_reported_with_its_stderr() {
        let (ending, probe, _) =
            follow("read p; echo \"got $p\"; echo boom >&2; exit 3", vec![]).await;
        assert_eq!(probe.lines, ["got hi"]);
        let Ending::Exited { status, report } = ending else {
            panic!("{ending:?}");
        };
        assert_eq!(status.and_then(|s| s.code()), Some(3));
        assert!(report.contains("boom"), "{report}");
    }

    #[tokio::test]
    async fn commands_after_the_turn_ended_wait_for_the_next_turn() {
        // The CLI lingers after its turn (writing its session): the settle
        // limit ends it, and what the host sent meanwhile is kept in order.
        // It ends its turn once the turn was handed the early message (or
        // after 5 s, to fail rather than hang if it never is).
        let dir = tempfile::tempdir().unwrap();
        let handed = dir.path().join("handed");
        let script = format!(
            "echo busy; for i in $(seq 500); do [ -e '{}' ] && break; sleep 0.01; done; \
             echo end; exec sleep 30",
            handed.display()
        );
        let (ending, probe, mut commands) = follow_handed(
            &script,
            vec![
                ("busy", send("too early")),
                ("end", ProviderCommand::SetModel { model: "m".into() }),
                ("end", send("next")),
            ],
            Some(handed),
        )
        .await;
        assert!(matches!(ending, Ending::Ended), "{ending:?}");
        assert!(
            matches!(&probe.commands[..], [ProviderCommand::Send { text, .. }] if text == "too early")
        );
        assert!(
            matches!(commands.recv().await, Some(ProviderCommand::SetModel { model }) if model == "m")
        );
        assert!(
            matches!(commands.recv().await, Some(ProviderCommand::Send { text, .. }) if text == "next")
        );
    }

    #[tokio::test]
    async fn an_interrupt_ends_the_run_as_cancelled_and_drops_late_lines() {
        let (ending, probe, _) = follow(
            "echo start; trap 'echo late; exit 130' INT; while :; do sleep 0.05; done",
            vec![("start", ProviderCommand::Cancel)],
        )
        .await;
        assert!(matches!(ending, Ending::Cancelled), "{ending:?}");
        assert!(probe.cancelled);
        assert_eq!(probe.lines, ["start"]);
    }

    #[tokio::test]
    async fn kill_ends_the_group_at_once() {
        let (ending, _, _) = follow(
            "echo start; exec sleep 30",
            vec![("start", ProviderCommand::Kill)],
        )
        .await;
        assert!(matches!(ending, Ending::Killed), "{ending:?}");
    }
}
