//! The `pty` provider: runs any interactive command (a shell, aider,
//! interactive Claude Code…) in a pseudo-terminal and keeps its screen in a
//! vt100 emulator the pane renders (`ui::terminal`).
//!
//! Threads: a reader feeds the emulator (`pump`), a writer sends input, a
//! waiter reaps the child. The async task only routes commands and turns
//! reader activity into at most one `TerminalUpdated` per frame, on which
//! the runner (the screen's one reader) sends the app a `ScreenUpdate`.

pub(crate) mod doctor;
mod grid;
pub mod pump;
pub mod scan;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::Duration;

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tui_term::vt100;

use super::process::{register_group, signal_group, unregister_group};
use super::{
    Capabilities, EventSink, ProviderCommand, ProviderError, ProviderEvent, ProviderFactory,
    ProviderHandle, ProviderSpec, Spawned, TerminalScreen,
};
use crate::config::AgentConfig;
use crate::event::{Payload, ResponseStatus, StreamEvent, new_id};
use pump::Activity;

/// Lines of history kept above the live screen.
pub const SCROLLBACK_LINES: usize = 10_000;
/// Size until the pane reports its own.
pub(crate) const INITIAL_COLS: u16 = 80;
pub(crate) const INITIAL_ROWS: u16 = 24;
/// The smallest screen the emulator survives: vt100 0.16 panics on one row
/// at the first wrapped line (`grid.rs` `col_wrap`) and on one column at a
/// wide character (the fuzz target `vt100_tiny` keeps this honest).
pub const MIN_ROWS: u16 = 2;
pub const MIN_COLS: u16 = 2;
/// The largest: a grid costs rows × cols × 32 bytes, twice (the alternate
/// screen), and every scrollback line keeps the width it was written at; a
/// client asking for 3000 × 3000 must not take the server to a gigabyte.
pub const MAX_ROWS: u16 = 500;
pub const MAX_COLS: u16 = 1000;

/// The size a pane asked for, as the emulator and the child get it.
pub fn fit(cols: u16, rows: u16) -> (u16, u16) {
    (
        cols.clamp(MIN_COLS, MAX_COLS),
        rows.clamp(MIN_ROWS, MAX_ROWS),
    )
}

/// At most one `TerminalUpdated` per this interval while output flows.
pub(crate) const FRAME: Duration = Duration::from_millis(16);
/// After the child exits, how long its last output may take to drain.
const DRAIN: Duration = Duration::from_millis(500);
/// Between SIGHUP and SIGKILL on `Kill`.
const KILL_GRACE: Duration = Duration::from_millis(1000);

/// The `pty` provider as the registry knows it: a terminal program, no
/// hive operations.
pub(crate) fn descriptor() -> super::ProviderDescriptor {
    super::ProviderDescriptor {
        doctor: |agent, probe| Ok(doctor::facts(agent, probe)),
        ..super::ProviderDescriptor::bare("pty", std::sync::Arc::new(PtyFactory))
    }
}

pub struct PtyFactory;

impl ProviderFactory for PtyFactory {
    fn capabilities(&self, _agent: &AgentConfig) -> Capabilities {
        // Keys go straight to the program; hive knows nothing of its turns.
        Capabilities::default()
    }

    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned {
        let pane = PtyPane::start(&spec.agent)?;
        if let Ok(pid) = u32::try_from(pane.group.pgid) {
            events.set_agent_pid(pid);
        }
        let screen = pane.screen.clone();
        let mut handle = ProviderHandle::spawn(move |rx| pane.run(rx, events));
        handle.terminal = Some(screen);
        Ok(handle)
    }
}

/// The program line: `command` + `args`, or the user's shell.
pub(crate) fn command_line(agent: &AgentConfig) -> (String, Vec<String>) {
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "/bin/sh".into());
    let (program, mut args) = agent.program(&shell);
    args.extend(agent.args.iter().cloned());
    (program, args)
}

fn resolve_cwd(agent: &AgentConfig) -> Result<PathBuf, ProviderError> {
    let dir = super::process::working_dir(agent)?;
    // portable-pty silently falls back to $HOME for a missing directory.
    if !dir.is_dir() {
        return Err(ProviderError::config(
            &agent.id,
            format!("cwd {} is not a directory", dir.display()),
        ));
    }
    Ok(dir)
}

/// The terminal program's command line on the agent's host and under its
/// limits (issue 49): itself, or wrapped by the host's transport with a
/// terminal asked for.
fn on_host(
    agent: &AgentConfig,
    program: &str,
    args: &[String],
    cwd: &std::path::Path,
    env: &std::collections::BTreeMap<String, String>,
) -> std::io::Result<crate::exec::Wrapped> {
    crate::exec::command_line(
        super::process::exec_for(agent).as_ref(),
        &super::process::limits_of(agent),
        &crate::exec::Inner {
            program,
            args,
            cwd: Some(cwd),
            env,
            tty: true,
        },
    )
    .map_err(std::io::Error::other)
}

/// A started child and the pieces the async task drives.
struct PtyPane {
    screen: TerminalScreen,
    master: Box<dyn MasterPty + Send>,
    input: std_mpsc::Sender<Vec<u8>>,
    activity: Arc<Activity>,
    exited: oneshot::Receiver<portable_pty::ExitStatus>,
    drained: oneshot::Receiver<()>,
    group: GroupGuard,
    /// Session id on the events of typed-in turns.
    session: String,
}

impl PtyPane {
    fn start(agent: &AgentConfig) -> Result<Self, ProviderError> {
        let (program, args) = command_line(agent);
        let spawn_err = |e: std::io::Error| ProviderError::spawn(&agent.id, &program, e);
        let other = |e: anyhow::Error| spawn_err(std::io::Error::other(format!("{e:#}")));

        let cwd = resolve_cwd(agent)?;
        let mut env = agent.env.clone();
        env.entry("TERM".into())
            .or_insert_with(|| "xterm-256color".into());
        let run = on_host(agent, &program, &args, &cwd, &env).map_err(spawn_err)?;
        let mut cmd = CommandBuilder::new(&run.program);
        cmd.args(&run.args);
        cmd.cwd(run.cwd.unwrap_or(cwd));
        for (k, v) in &run.env {
            cmd.env(k, v);
        }

        let pair = native_pty_system()
            .openpty(PtySize {
                rows: INITIAL_ROWS,
                cols: INITIAL_COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(other)?;
        // portable-pty makes the child a session leader (setsid + TIOCSCTTY),
        // so its pid is its process group id.
        let mut child = pair.slave.spawn_command(cmd).map_err(other)?;
        // Our copy of the slave must go, or the reader never sees EOF.
        drop(pair.slave);
        let pgid = child.process_id().map(|p| p as i32).unwrap_or(0);
        let group = GroupGuard::new(pgid);

        let screen = TerminalScreen(Arc::new(Mutex::new(vt100::Parser::new(
            INITIAL_ROWS,
            INITIAL_COLS,
            SCROLLBACK_LINES,
        ))));
        let activity = Arc::new(Activity::default());
        let (input, input_rx) = std_mpsc::channel();
        let (drained_tx, drained) = oneshot::channel();
        let (exited_tx, exited) = oneshot::channel();

        let reader = pair.master.try_clone_reader().map_err(other)?;
        let writer = pair.master.take_writer().map_err(other)?;
        pump::spawn_writer(writer, input_rx).map_err(spawn_err)?;
        pump::spawn_reader(
            reader,
            screen.clone(),
            Arc::clone(&activity),
            input.clone(),
            drained_tx,
        )
        .map_err(spawn_err)?;
        std::thread::Builder::new()
            .name("hive-pty-wait".into())
            .spawn(move || {
                let status = child
                    .wait()
                    .unwrap_or_else(|_| portable_pty::ExitStatus::with_exit_code(1));
                let _ = exited_tx.send(status);
            })
            .map_err(spawn_err)?;

        Ok(Self {
            screen,
            master: pair.master,
            input,
            activity,
            exited,
            drained,
            group,
            session: new_id("pty"),
        })
    }

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<ProviderCommand>, events: EventSink) {
        let mut last_frame = Instant::now() - FRAME;
        let mut pending = false;
        loop {
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(ProviderCommand::Kill) | None => {
                        self.kill().await;
                        return;
                    }
                    Some(cmd) => self.command(cmd, &events),
                },
                _ = self.activity.notify.notified(), if !pending => pending = true,
                _ = tokio::time::sleep_until(last_frame + FRAME), if pending => {
                    pending = false;
                    last_frame = Instant::now();
                    self.publish(&events);
                }
                status = &mut self.exited => {
                    // The last output may still be in the PTY buffer.
                    let _ = tokio::time::timeout(DRAIN, &mut self.drained).await;
                    // Background jobs of the shell must not outlive the pane.
                    self.group.kill();
                    self.publish(&events);
                    let (code, message) = match (self.activity.failure(), status) {
                        (Some(why), _) => (
                            None,
                            format!("stopped: the terminal emulator failed ({why})"),
                        ),
                        (None, Ok(s)) => describe(&s),
                        (None, Err(_)) => (None, "ended".into()),
                    };
                    let _ = events.send(ProviderEvent::Exited { code, message });
                    return;
                }
            }
        }
    }

    fn command(&mut self, cmd: ProviderCommand, events: &EventSink) {
        match cmd {
            ProviderCommand::Input(bytes) => {
                let _ = self.input.send(bytes);
            }
            ProviderCommand::Resize { cols, rows } => self.resize(cols, rows),
            // Never sent: a terminal pane takes no images.
            ProviderCommand::Attach(_) => {}
            ProviderCommand::Send { turn_id, text } => {
                // `hive run` or a composer submit: type the line into the
                // program. The turn ends at once; hive cannot know when the
                // program is "done".
                let mut bytes = text.into_bytes();
                bytes.push(b'\r');
                let _ = self.input.send(bytes);
                let session = &self.session;
                let _ = events.send(ProviderEvent::Stream(StreamEvent::new(
                    &turn_id,
                    session,
                    Payload::ResponseStart {
                        model_id: "pty".into(),
                        provider_id: "pty".into(),
                    },
                )));
                let _ = events.send(ProviderEvent::Stream(StreamEvent::new(
                    &turn_id,
                    session,
                    Payload::ResponseDone {
                        status: ResponseStatus::Completed,
                        finish_reason: Some("sent_to_terminal".into()),
                        error: None,
                        usage: None,
                    },
                )));
            }
            ProviderCommand::Steer { .. }
            | ProviderCommand::Cancel
            | ProviderCommand::Permission { .. }
            | ProviderCommand::SetModel { .. }
            | ProviderCommand::SetEffort { .. }
            | ProviderCommand::Kill => {}
        }
    }

    fn resize(&mut self, cols: u16, rows: u16) {
        let (cols, rows) = fit(cols, rows);
        if !grid::set_size(&self.screen, rows, cols) {
            return;
        }
        // The pane draws what the runner sends: a new size is news.
        self.activity.touch();
        // The ioctl sends SIGWINCH to the child's foreground group.
        if let Err(e) = self.master.resize(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        }) {
            tracing::debug!("pty resize failed: {e:#}");
        }
    }

    fn publish(&self, events: &EventSink) {
        if self.activity.failure().is_some() {
            // Nothing reads the child's output any more: it goes.
            self.group.kill();
        }
        let (dirty, bell) = self.activity.take();
        if dirty {
            let _ = events.send(ProviderEvent::TerminalUpdated);
        }
        if bell {
            let _ = events.send(ProviderEvent::Bell);
        }
    }

    /// SIGHUP (what closing a terminal sends), then SIGKILL for holdouts.
    async fn kill(&mut self) {
        signal_group(self.group.pgid, libc::SIGHUP);
        if tokio::time::timeout(KILL_GRACE, &mut self.exited)
            .await
            .is_err()
        {
            self.group.kill();
            let _ = tokio::time::timeout(KILL_GRACE, &mut self.exited).await;
        }
        self.group.kill();
    }
}

/// `Exited` fields for a status.
fn describe(s: &portable_pty::ExitStatus) -> (Option<i32>, String) {
    match s.signal() {
        Some(sig) => (None, format!("killed by signal: {sig}")),
        None => {
            let code = i32::try_from(s.exit_code()).unwrap_or(i32::MAX);
            (Some(code), format!("exited with status {code}"))
        }
    }
}

/// Owns the child's process group: registered for `process::kill_all`,
/// killed when the pane goes away however that happens.
struct GroupGuard {
    pgid: i32,
}

impl GroupGuard {
    fn new(pgid: i32) -> Self {
        register_group(pgid);
        Self { pgid }
    }

    /// SIGKILL to the group and to every other process of the child's
    /// session: job-control shells put background jobs in groups of their
    /// own, and those would otherwise survive holding the PTY open.
    fn kill(&self) {
        signal_group(self.pgid, libc::SIGKILL);
        for pid in session_members(self.pgid) {
            // SAFETY: kill(2) on a pid; no memory involved.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Processes whose session id is `sid` (the child is its session leader).
#[cfg(target_os = "linux")]
fn session_members(sid: i32) -> Vec<i32> {
    if sid <= 0 {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    // "pid (comm) state ppid pgrp session …"; comm may hold spaces.
                    let rest = &stat[stat.rfind(')')? + 1..];
                    rest.split_whitespace().nth(3)?.parse::<i32>().ok()
                })
                == Some(sid)
        })
        .collect()
}

#[cfg(not(target_os = "linux"))]
fn session_members(_sid: i32) -> Vec<i32> {
    Vec::new()
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
        unregister_group(self.pgid);
    }
}
