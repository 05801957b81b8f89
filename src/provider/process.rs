//! Child processes for providers: each agent runs in its own process group so
//! that interrupting or killing it reaches everything it started, dies with hive
//! (parent-death signal, a registry of groups and a sweep of all descendants
//! on exit; see reap.rs and `crate::supervisor`), and keeps its last
//! stderr lines for error reports.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};

use super::paced::AgentStdout;
use super::{EventSink, ProviderError};
use crate::config::AgentConfig;
use crate::exec::{ExecHost, Inner, Resources, Wrapped};
use crate::lines::{CappedLines, Line};

/// Lines of stderr kept for the error message of a crash (noise and stack
/// frames included: `stderr::report` picks what to show).
const STDERR_TAIL_LINES: usize = 40;

/// What to run.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
    /// The longest line read from it (`[limits] max_line_bytes`, which
    /// the agent's config carries).
    pub(crate) max_line: usize,
    /// The host it runs on (`host`, `sandbox`; issue 49), this pane's:
    /// the command line above is wrapped by its transport at spawn.
    pub exec: Option<ExecHost>,
    /// The agent's `cpu` and `memory` (issue 49): a wrapper of the command
    /// line, after its host's.
    pub limits: Resources,
}

impl Default for CommandSpec {
    fn default() -> Self {
        Self {
            program: String::new(),
            args: Vec::new(),
            cwd: None,
            env: BTreeMap::new(),
            max_line: crate::config::DEFAULT_MAX_LINE,
            exec: None,
            limits: Resources::default(),
        }
    }
}

impl CommandSpec {
    /// `program args…` followed by the agent's own extra `args`, run in the
    /// agent's cwd.
    pub(crate) fn for_agent(
        agent: &AgentConfig,
        program: String,
        mut args: Vec<String>,
        env: BTreeMap<String, String>,
    ) -> Self {
        args.extend(agent.args.iter().cloned());
        Self {
            program,
            args,
            cwd: agent.cwd.clone(),
            env,
            max_line: agent.max_line_bytes,
            exec: exec_for(agent),
            limits: limits_of(agent),
        }
    }

    /// The command line to start: this one, on its host (made first,
    /// once) and under its limits (`exec::command_line`).
    pub(crate) fn wrapped(&self) -> Result<Wrapped, crate::exec::ExecError> {
        // A host needs it absolute; here it is the same directory.
        let cwd = self.cwd.as_ref().map(|c| absolute(c));
        crate::exec::command_line(
            self.exec.as_ref(),
            &self.limits,
            &Inner {
                program: &self.program,
                args: &self.args,
                cwd: cwd.as_deref(),
                env: &self.env,
                tty: false,
            },
        )
    }
}

/// `dir` taken from hive's own working directory.
fn absolute(dir: &std::path::Path) -> PathBuf {
    std::env::current_dir().map_or_else(|_| dir.to_owned(), |here| here.join(dir))
}

/// The agent's host for its pane: the vendor's files a sandbox seeds are
/// its provider's (`seed::files`).
pub(crate) fn exec_for(agent: &AgentConfig) -> Option<ExecHost> {
    agent.exec.as_ref().map(|h| {
        h.for_pane(&agent.id, super::seed::files(&agent.provider))
            .with_limits(limits_of(agent))
    })
}

/// The agent's `cpu` and `memory`, which loading the config checked (an
/// agent made otherwise with a bad one runs unlimited, said in the log).
pub(crate) fn limits_of(agent: &AgentConfig) -> Resources {
    agent.resources().unwrap_or_else(|e| {
        tracing::warn!(agent = %agent.id, "limits not applied: {e}");
        Resources::default()
    })
}

/// What the pane's details say of where and how its agent runs (`hive ctl
/// status`'s `host`): its host and what is mounted how, its limits and how
/// they apply, its idle stop. Empty for an agent on this machine, unboxed
/// and unlimited.
pub fn details(agent: &AgentConfig) -> Vec<String> {
    let host = exec_for(agent);
    let mut out = Vec::new();
    if let Some(h) = &host {
        // Where its processes start: its cwd, else hive's.
        let cwd = working_dir(agent).ok();
        let env = BTreeMap::new();
        out.extend(h.describe(&Inner {
            program: "",
            args: &[],
            cwd: cwd.as_deref(),
            env: &env,
            tty: false,
        }));
    }
    out.extend(limits_of(agent).describe(host.as_ref()));
    if let Ok(Some(after)) = agent.idle_stop() {
        out.push(format!(
            "idle stop after {}: the process goes, the session resumes",
            humantime::format_duration(after)
        ));
    }
    out
}

/// The agent's working directory: its `cwd` taken from hive's own, or hive's
/// own where it names none.
pub(crate) fn working_dir(agent: &AgentConfig) -> Result<PathBuf, ProviderError> {
    let here = std::env::current_dir().map_err(|e| {
        ProviderError::config(&agent.id, format!("cannot read the current directory: {e}"))
    })?;
    Ok(match &agent.cwd {
        Some(dir) => here.join(dir),
        None => here,
    })
}

fn live_groups() -> &'static Mutex<HashSet<i32>> {
    static GROUPS: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    GROUPS.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Kills every agent process group still alive, then every other descendant
/// (children that made their own group or session, orphans re-parented to
/// hive as subreaper). hive calls this on exit, on SIGTERM/SIGHUP and from
/// its panic hook, so no agent outlives it.
pub(crate) fn kill_all() {
    let groups: Vec<i32> = live_groups()
        .lock()
        .map(|g| g.iter().copied().collect())
        .unwrap_or_default();
    for pgid in groups {
        signal_group(pgid, libc::SIGKILL);
    }
    // Containers hive made for panes go with it (their own time limits).
    crate::exec::steps::stop_all();
    super::reap::sweep_descendants(false);
}

/// Whether `pid` leads a process group hive started and waits for itself
/// (an agent, a terminal pane's child): never reaped as an orphan.
pub(crate) fn is_tracked(pid: i32) -> bool {
    live_groups().lock().map_or(true, |g| g.contains(&pid))
}

/// Registers a process group started outside `AgentProcess` (a PTY child)
/// so that `kill_all` sweeps it too.
pub(crate) fn register_group(pgid: i32) {
    if pgid > 0
        && let Ok(mut g) = live_groups().lock()
    {
        g.insert(pgid);
    }
}

/// Forgets a group registered with `register_group` once it is gone.
pub(crate) fn unregister_group(pgid: i32) {
    if let Ok(mut g) = live_groups().lock() {
        g.remove(&pgid);
    }
}

/// Sends `sig` to a whole process group.
pub(crate) fn signal_group(pgid: i32, sig: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid addresses the group; no memory involved.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

/// A running agent process.
#[derive(Debug)]
pub(crate) struct AgentProcess {
    child: Child,
    pgid: i32,
    stdin: Option<ChildStdin>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Stderr lines the agent always writes: left out of crash messages.
    stderr_noise: &'static [&'static str],
    status: Option<ExitStatus>,
    /// Its limits and host, for a report that says it ran out of memory.
    limits: (Resources, Option<ExecHost>),
    /// hive sent it SIGKILL itself: not the OOM killer's.
    killed: bool,
}

/// The child gets SIGKILL when hive dies (Linux), so no agent or server
/// hive started outlives it.
pub(crate) fn die_with_parent(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe; runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

impl AgentProcess {
    /// Spawns `spec` with piped stdio in a new process group. Its stdout is
    /// read only while `events` has room (`LineReader::gate`), at the pace
    /// `events` asks for (`paced::AgentStdout`).
    pub(crate) fn spawn(
        spec: &CommandSpec,
        events: &EventSink,
    ) -> io::Result<(Self, LineReader<AgentStdout>)> {
        let run = spec.wrapped().map_err(io::Error::other)?;
        for line in spec.limits.describe(spec.exec.as_ref()) {
            tracing::info!(program = %spec.program, "limits: {line}");
        }
        let mut cmd = Command::new(&run.program);
        cmd.args(&run.args)
            .envs(&run.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &run.cwd {
            cmd.current_dir(cwd);
        }
        die_with_parent(&mut cmd);
        let mut child = cmd.spawn()?;
        let pgid = child.id().map(|p| p as i32).unwrap_or(0);
        if let Some(pid) = child.id() {
            events.set_agent_pid(pid);
        }
        if let Ok(mut g) = live_groups().lock() {
            g.insert(pgid);
        }
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("child has no stdout"))?;
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(collect_stderr(
                stderr,
                Arc::clone(&stderr_tail),
                events.clone(),
                spec.program.clone(),
                spec.max_line,
            ));
        }
        let proc = Self {
            child,
            pgid,
            stdin,
            stderr_tail,
            stderr_noise: &[],
            status: None,
            limits: (spec.limits, spec.exec.clone()),
            killed: false,
        };
        let stdout = AgentStdout::new(stdout, events.pace_reads())?;
        let mut lines = LineReader::with_max(stdout, spec.max_line);
        lines.gate(events);
        Ok((proc, lines))
    }

    /// `spawn`, a failure told as agent `agent`'s `ProviderError::Spawn`.
    pub(crate) fn spawn_for(
        agent: &str,
        spec: &CommandSpec,
        events: &EventSink,
    ) -> Result<(Self, LineReader<AgentStdout>), ProviderError> {
        Self::spawn(spec, events)
            .map_err(|source| ProviderError::spawn(agent, &spec.program, source))
    }

    /// Writes one line (a newline is appended) and flushes it.
    pub(crate) async fn write_line(&mut self, line: &str) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin closed"))?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        stdin.write_all(&bytes).await?;
        stdin.flush().await
    }

    /// Closes stdin (EOF for the agent).
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Signals the whole group (SIGINT to interrupt a turn, for instance).
    pub(crate) fn signal(&mut self, sig: i32) {
        self.killed |= sig == libc::SIGKILL;
        if self.status.is_none() {
            signal_group(self.pgid, sig);
        }
    }

    /// Waits for the process to exit.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        let s = self.child.wait().await?;
        self.reaped(s);
        Ok(s)
    }

    /// Non-blocking: the exit status if the process has ended.
    pub(crate) fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.status.is_none()
            && let Ok(Some(s)) = self.child.try_wait()
        {
            self.reaped(s);
        }
        self.status
    }

    /// SIGTERM to the group, then SIGKILL after `grace`; returns the exit status.
    pub(crate) async fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(s) = self.try_wait() {
            // The leader is gone; stragglers in its group go too.
            signal_group(self.pgid, libc::SIGKILL);
            return Some(s);
        }
        self.close_stdin();
        signal_group(self.pgid, libc::SIGTERM);
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => {
                self.killed = true;
                signal_group(self.pgid, libc::SIGKILL);
                self.child.wait().await.ok()
            }
        };
        signal_group(self.pgid, libc::SIGKILL);
        if let Some(s) = status {
            self.reaped(s);
        }
        status
    }

    /// The last stderr lines, oldest first.
    pub(crate) fn stderr_tail(&self) -> String {
        self.stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }

    /// Stderr lines this agent writes on every run (warnings about the
    /// terminal, its modes): they go to the log only, not into crash
    /// messages. Each entry matches the start of a line.
    pub(crate) fn set_stderr_noise(&mut self, noise: &'static [&'static str]) {
        self.stderr_noise = noise;
    }

    /// "exited with status 1", then the telling stderr lines one per line
    /// (`stderr::report`), for turn errors.
    pub(crate) fn exit_report(&self, status: Option<ExitStatus>) -> String {
        let tail = self
            .stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let mut report =
            super::stderr::report(status, tail.iter().map(String::as_str), self.stderr_noise);
        let (limits, host) = &self.limits;
        let said = tail.join("\n");
        let ended = status.filter(|_| !self.killed);
        if let Some(line) = ended.and_then(|s| limits.exceeded(host.as_ref(), &said, s)) {
            report.push('\n');
            report.push_str(&line);
        }
        report
    }

    fn reaped(&mut self, s: ExitStatus) {
        self.status = Some(s);
        if let Ok(mut g) = live_groups().lock() {
            g.remove(&self.pgid);
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        // Grandchildren share the group; the leader's kill_on_drop misses them.
        signal_group(self.pgid, libc::SIGKILL);
        if let Ok(mut g) = live_groups().lock() {
            g.remove(&self.pgid);
        }
    }
}

async fn collect_stderr(
    stderr: impl AsyncRead + Unpin,
    tail: Arc<Mutex<VecDeque<String>>>,
    events: EventSink,
    program: String,
    max_line: usize,
) {
    let mut reader = LineReader::with_max(stderr, max_line);
    while let Ok(Some(line)) = reader.next_line().await {
        tracing::debug!(target: "agent_stderr", program = %program, "{line}");
        // Codex and Gemini say an MCP server failed to start only here.
        for (name, vendor, why) in super::mcp_status::failed_in_stderr(&line) {
            events.mcp_failed(&name, vendor, &why);
        }
        if let Ok(mut t) = tail.lock() {
            if t.len() == STDERR_TAIL_LINES {
                t.pop_front();
            }
            t.push_back(line);
        }
    }
}

/// Reads newline-terminated lines from an agent, which may send anything:
/// - invalid UTF-8 is replaced, not fatal;
/// - lone UTF-16 surrogate escapes (`\ud83d` without its pair, as JavaScript
///   writes when it cuts an emoji in half), which would make the whole JSON
///   line unparseable, become `\ufffd`;
/// - a line longer than the cap is not buffered: the reader returns a notice
///   line (`hive: ...`, not JSON, so every provider shows it as a diagnostic)
///   as soon as the cap is passed, drops the rest up to the newline, and goes
///   on with the next line.
///
/// `next_line` is cancel-safe: a partial line survives a lost `select!` race.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    lines: CappedLines<R>,
    /// The events channel this reader's lines end up in: no line is read
    /// while its runner is behind (`channel::EventSink::room`).
    gate: Option<EventSink>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader with the default cap (`[limits] max_line_bytes`).
    #[cfg(test)]
    pub(crate) fn new(inner: R) -> Self {
        Self::with_max(inner, crate::config::DEFAULT_MAX_LINE)
    }

    pub(crate) fn with_max(inner: R, max: usize) -> Self {
        Self {
            lines: CappedLines::new(inner, max),
            gate: None,
        }
    }

    /// Reads a line only when `events` has room: an agent faster than its
    /// runner waits on its pipe instead of queueing events without bound.
    pub(crate) fn gate(&mut self, events: &EventSink) {
        self.gate = Some(events.clone());
    }

    /// The next line without its terminator; `None` at EOF.
    pub(crate) async fn next_line(&mut self) -> io::Result<Option<String>> {
        if let Some(gate) = &self.gate {
            gate.room().await;
        }
        Ok(match self.lines.next().await? {
            None => None,
            Some(Line::Text(text)) => Some(repair_surrogates(text)),
            Some(Line::TooLong { .. }) => Some(format!(
                "hive: the agent wrote a line longer than {} bytes (the limit, \
                 `[limits] max_line_bytes`); it was dropped",
                self.lines.max()
            )),
        })
    }
}

/// Replaces JSON `\uXXXX` escapes of unpaired UTF-16 surrogates with
/// `\ufffd`; everything else (including escaped backslashes) is untouched.
pub(crate) fn repair_surrogates(line: String) -> String {
    fn hex4(b: &[u8], at: usize) -> Option<u32> {
        let digits = b.get(at..at + 4)?;
        let s = std::str::from_utf8(digits).ok()?;
        u32::from_str_radix(s, 16).ok()
    }
    let b = line.as_bytes();
    let mut bad = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b[i + 1] != b'u' {
            i += 2;
            continue;
        }
        let Some(v) = hex4(b, i + 2) else {
            i += 2;
            continue;
        };
        let low = |at: usize| {
            b.get(at) == Some(&b'\\')
                && b.get(at + 1) == Some(&b'u')
                && hex4(b, at + 2).is_some_and(|w| (0xDC00..0xE000).contains(&w))
        };
        match v {
            0xD800..=0xDBFF if low(i + 6) => i += 12,
            0xD800..=0xDFFF => {
                bad.push(i);
                i += 6;
            }
            _ => i += 6,
        }
    }
    if bad.is_empty() {
        return line;
    }
    let mut out = String::with_capacity(line.len());
    let mut last = 0;
    for at in bad {
        out.push_str(&line[last..at]);
        out.push_str("\\ufffd");
        last = at + 6;
    }
    out.push_str(&line[last..]);
    out
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
