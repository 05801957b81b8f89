//! The parts of `hive doctor` that touch the system: PATH lookup, a
//! writability test, and a bounded dry start of an agent's program (its own
//! process group, killed whole if it overstays).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Env;
use crate::config::AgentConfig;

/// How long a dry start may take. Node CLIs started side by side (doctor
/// and `hive init` check every agent at once) on a busy machine take more
/// than 5 s to print their version: #46's walk saw Gemini CLI at 6.4 s and
/// pi at 5.6 s on two loaded cores, and both were called broken.
pub(super) const DRY_START_LIMIT: Duration = Duration::from_secs(15);

/// `program` as the agent's spawn would find it: a path as is (relative to
/// hive's cwd), a bare name on PATH.
pub(crate) fn find_program(program: &str, env: &Env) -> Option<PathBuf> {
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = env.cwd.join(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(&env.path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| env.cwd.join(d).join(program))
        .find(|p| executable(p))
}

pub(super) fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; access() only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[derive(Debug)]
pub(super) enum Outcome {
    Exited(i32),
    /// Still running at the limit (then killed).
    Running,
    Error(String),
}

#[derive(Debug)]
pub(super) struct Tried {
    pub outcome: Outcome,
    pub elapsed: Duration,
    /// stdout then stderr.
    pub output: String,
}

impl Tried {
    /// The first non-empty output line, for a failure message.
    pub(super) fn first_line(&self) -> String {
        let line = self
            .output
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("(no output)");
        line.chars().filter(|c| !c.is_control()).take(200).collect()
    }
}

/// Runs `program args` the way the agent would run (its env, its cwd) and
/// waits at most [`DRY_START_LIMIT`].
pub(super) fn dry_start(program: &Path, args: &[String], agent: &AgentConfig, env: &Env) -> Tried {
    let cwd = agent
        .cwd
        .as_ref()
        .map(|d| env.cwd.join(d))
        .unwrap_or_else(|| env.cwd.clone());
    let start = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(&agent.env)
        .env("PATH", &env.path)
        .env("HOME", &env.home)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Tried {
                outcome: Outcome::Error(e.to_string()),
                elapsed: start.elapsed(),
                output: String::new(),
            };
        }
    };
    let read = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(r) = r {
                let _ = r.take(64 * 1024).read_to_end(&mut s);
            }
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = read(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = read(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let outcome = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Outcome::Exited(status.code().unwrap_or(-1)),
            Ok(None) if start.elapsed() >= DRY_START_LIMIT => break Outcome::Running,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => break Outcome::Error(e.to_string()),
        }
    };
    let elapsed = start.elapsed();
    // The whole group: a launcher's children go too, and the pipes close.
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: signalling our own child's process group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.wait();
    let mut output = out.join().unwrap_or_default();
    output.push_str(&err.join().unwrap_or_default());
    Tried {
        outcome,
        elapsed,
        output,
    }
}
