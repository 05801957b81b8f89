//! Preparing a worktree for its agent (issue 31): the agent's
//! `worktree_setup` command (`["npm", "ci"]`) runs once in a new worktree
//! before the agent starts, and each worktree gets a port of its own,
//! `HIVE_PORT` in the agent's environment, so the dev servers of several
//! worktrees do not collide. Both live in the worktree's git admin
//! directory (`.git/worktrees/<id>/`): `hive-setup.done` says the setup
//! ran, `hive-setup.log` holds its output, `hive.port` the port (kept
//! across restarts while it is free).

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::git::Git;
use super::{Worktree, WorktreeError};

/// A setup that takes longer is stopped and reported.
const SETUP_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// Lines of a failed setup's output the pane shows.
pub(crate) const TAIL_LINES: usize = 20;

fn admin_dir(w: &Worktree) -> Result<PathBuf, WorktreeError> {
    let dir = Git::at(&w.path).line(&["rev-parse", "--path-format=absolute", "--git-dir"])?;
    Ok(PathBuf::from(dir))
}

/// Whether the setup ran in this worktree successfully already.
pub(crate) fn done(w: &Worktree) -> bool {
    admin_dir(w).is_ok_and(|d| d.join("hive-setup.done").exists())
}

/// Runs `command` in the worktree (where the agent runs) unless it already
/// ran there successfully. `Ok(None)`: nothing to run; `Ok(Some(output))`:
/// it ran now. A failure carries the end of its output.
pub fn run_setup(
    w: &Worktree,
    command: &[String],
    envs: &[(String, String)],
) -> Result<Option<String>, WorktreeError> {
    let Some((program, args)) = command.split_first() else {
        return Ok(None);
    };
    let admin = admin_dir(w)?;
    let done = admin.join("hive-setup.done");
    if done.exists() {
        return Ok(None);
    }
    let log_path = admin.join("hive-setup.log");
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| WorktreeError::Io { path, source }
    };
    // Never through a link planted in the admin dir.
    let log = crate::private::open_own_file(
        crate::private::file_options()
            .write(true)
            .create(true)
            .truncate(true),
        &log_path,
    )
    .map_err(io(&log_path))?;
    let err = log.try_clone().map_err(io(&log_path))?;
    let shown = command.join(" ");
    let mut child = Command::new(program)
        .args(args)
        .current_dir(&w.cwd)
        .envs(envs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(|e| {
            WorktreeError::Refused(format!("worktree_setup `{shown}` cannot start: {e}"))
        })?;
    let deadline = Instant::now() + SETUP_TIMEOUT;
    let status = loop {
        match child.try_wait().map_err(io(&log_path))? {
            Some(status) => break Some(status),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let output = log_head(&log_path);
    let output = crate::sanitize::neutralize(&String::from_utf8_lossy(&output)).into_owned();
    match status {
        Some(s) if s.success() => {
            crate::private::write_own(&done, b"").map_err(io(&done))?;
            Ok(Some(output))
        }
        other => {
            let why = match other {
                Some(s) => match s.code() {
                    Some(code) => format!("exited with {code}"),
                    None => "was killed by a signal".to_owned(),
                },
                None => format!("took over {} minutes", SETUP_TIMEOUT.as_secs() / 60),
            };
            Err(WorktreeError::Refused(format!(
                "worktree_setup `{shown}` {why}; the agent does not start (its output: {}):\n{}",
                log_path.display(),
                tail(&output, TAIL_LINES)
            )))
        }
    }
}

pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The first `MAX_STATE_BYTES` of the setup's log (a command that prints
/// gigabytes costs hive no more).
fn log_head(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    if let Ok(f) = crate::private::open_own_file(std::fs::OpenOptions::new().read(true), path) {
        let _ = f
            .take(crate::private::MAX_STATE_BYTES)
            .read_to_end(&mut out);
    }
    out
}

/// The worktree's port: the one it had, while it is still free and not
/// `taken` by another worktree of this start, else a new free one.
pub fn port_for(w: &Worktree, taken: &[u16]) -> Result<u16, WorktreeError> {
    let file = admin_dir(w)?.join("hive.port");
    let free = |p: u16| {
        p != 0 && !taken.contains(&p) && TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok()
    };
    if let Some(p) = crate::private::read_own_string(&file, 64)
        .ok()
        .and_then(|s| s.trim().parse::<u16>().ok())
        .filter(|p| free(*p))
    {
        return Ok(p);
    }
    // The kernel's pick of a free port; a few tries in case it repeats one
    // another worktree already has.
    for _ in 0..16 {
        let listener =
            TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|source| WorktreeError::Io {
                path: file.clone(),
                source,
            })?;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        if port != 0 && !taken.contains(&port) {
            crate::private::write_own(&file, port.to_string().as_bytes()).map_err(|source| {
                WorktreeError::Io {
                    path: file.clone(),
                    source,
                }
            })?;
            return Ok(port);
        }
    }
    Err(WorktreeError::Refused("no free port for HIVE_PORT".into()))
}
