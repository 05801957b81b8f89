//! Where a vendor keeps a session on disk, and carrying one from one of its
//! config homes to another (issue 51's `/account`): Claude Code's
//! transcript `projects/<dir>/<session>.jsonl` (and its `<session>/` side
//! files), Codex's rollout `sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl`,
//! Gemini CLI's chat `.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`
//! (its first line names the whole session id). The vendor then resumes
//! the same id under the other home. pi keeps one home (`~/.pi/agent`, no
//! variable moves it), so its accounts differ only in their variables and
//! its sessions stay where they are.
//!
//! A carry copies and never moves: the source stays whole in its home
//! until the user switches back, so a crash at any point leaves the
//! conversation whole in at least one home. The copy goes to a temp file
//! beside the target, its SHA-256 checked against the source's, and is
//! renamed into place (the commit point); the runner records the account
//! only after that. A target that already holds a different copy of the
//! session (the conversation went on there once) is set aside under a
//! `.before-hive-<secs>` name, never overwritten.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::account::home_variable;

/// The largest session file carried (a vendor's transcript of a long
/// conversation is some MB; a planted device is not read).
const MAX_SESSION_BYTES: u64 = 1 << 30;
/// Directory entries looked at when finding a session (a bound against a
/// planted link loop or a huge home).
const MAX_VISITED: usize = 20_000;

/// Why a session could not be carried.
#[derive(Debug, thiserror::Error)]
pub enum CarryError {
    #[error("hive cannot carry a {0} session between config homes")]
    Unsupported(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the copy of {0} does not match its source (the file changed while it was copied)")]
    Mismatch(PathBuf),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> CarryError {
    let what = what.into();
    move |source| CarryError::Io { what, source }
}

/// Whether hive can carry `provider`'s sessions between homes.
pub fn carries(provider: &str) -> bool {
    matches!(provider, "claude" | "codex" | "gemini")
}

/// The config home `provider`'s agent uses with environment `env`: its
/// home variable, else the vendor's default under `$HOME`.
pub fn home_of(provider: &str, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    if let Some(home) = home_variable(provider).and_then(|v| env.get(v)) {
        return Some(PathBuf::from(home));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match provider {
        "claude" => home.map(|h| h.join(".claude")),
        "codex" => home.map(|h| h.join(".codex")),
        // GEMINI_CLI_HOME stands for the user's home: `.gemini` is in it.
        "gemini" => home,
        _ => None,
    }
}

/// The session's file under `home`, if the vendor kept one.
pub fn session_file(provider: &str, home: &Path, session: &str) -> Option<PathBuf> {
    // An id is a file name, never a path.
    if session.is_empty() || session.contains('/') || session.starts_with('.') {
        return None;
    }
    let (root, wanted): (PathBuf, Box<FileTest>) = match provider {
        "claude" => {
            let name = format!("{session}.jsonl");
            (home.join("projects"), Box::new(move |n, _| n == name))
        }
        "codex" => {
            let suffix = format!("-{session}.jsonl");
            (
                home.join("sessions"),
                Box::new(move |n, _| n.starts_with("rollout-") && n.ends_with(&suffix)),
            )
        }
        "gemini" => {
            // The name holds the id's first 8 characters; the first line
            // says which session it is.
            let short: String = session.chars().take(8).collect();
            let suffix = format!("-{short}.jsonl");
            let session = session.to_owned();
            (
                home.join(".gemini/tmp"),
                Box::new(move |n, path| {
                    n.starts_with("session-")
                        && n.ends_with(&suffix)
                        && gemini_session_of(path).is_some_and(|id| id == session)
                }),
            )
        }
        _ => return None,
    };
    find(&root, &*wanted)
}

/// Whether a file (its name, its path) is the one looked for.
type FileTest = dyn Fn(&str, &Path) -> bool;

/// The `sessionId` on a Gemini chat file's first line.
fn gemini_session_of(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    // A first line is a small header; a longer one is not a chat file.
    std::io::BufReader::new(file)
        .take(64 * 1024)
        .read_line(&mut first)
        .ok()?;
    let v: serde_json::Value = serde_json::from_str(first.trim()).ok()?;
    v.get("sessionId")?.as_str().map(str::to_owned)
}

/// The first regular file under `root` (a few levels, never through a
/// link) whose name `wanted` takes.
fn find(root: &Path, wanted: &FileTest) -> Option<PathBuf> {
    let mut dirs = vec![(root.to_owned(), 0)];
    let mut visited = 0;
    while let Some((dir, depth)) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            visited += 1;
            if visited > MAX_VISITED {
                return None;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_file() && wanted(&entry.file_name().to_string_lossy(), &entry.path()) {
                return Some(entry.path());
            }
            if kind.is_dir() && depth < 4 {
                dirs.push((entry.path(), depth + 1));
            }
        }
    }
    None
}

/// What a carry did.
#[derive(Debug, PartialEq, Eq)]
pub enum Carried {
    /// The source home holds nothing of the session (no turn yet).
    Nothing,
    /// The target holds the same bytes already.
    Same(PathBuf),
    /// Copied to this path; `set_aside` is where a different copy that was
    /// there went.
    Copied {
        to: PathBuf,
        set_aside: Option<PathBuf>,
    },
}

/// Carries `provider`'s `session` from config home `from` to `to`.
pub fn carry(provider: &str, session: &str, from: &Path, to: &Path) -> Result<Carried, CarryError> {
    if !carries(provider) {
        return Err(CarryError::Unsupported(provider.to_owned()));
    }
    let Some(src) = session_file(provider, from, session) else {
        return Ok(Carried::Nothing);
    };
    let rel = src.strip_prefix(from).unwrap_or(&src).to_owned();
    let dst = to.join(&rel);
    let bytes = crate::private::read_own(&src, MAX_SESSION_BYTES)
        .map_err(io(format!("reading {}", src.display())))?;
    crash_point("carry-read");
    let digest = Sha256::digest(&bytes);
    let mut set_aside = None;
    if let Ok(there) = crate::private::read_own(&dst, MAX_SESSION_BYTES) {
        if Sha256::digest(&there) == digest {
            return Ok(Carried::Same(dst));
        }
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let aside = free_name(&dst, &format!(".before-hive-{secs}"));
        std::fs::rename(&dst, &aside).map_err(io(format!("setting {} aside", dst.display())))?;
        set_aside = Some(aside);
    }
    crate::private::write_own(&dst, &bytes).map_err(io(format!("writing {}", dst.display())))?;
    // The copy is in the other home, nothing has recorded the switch yet.
    crash_point("carry-written");
    let written = crate::private::read_own(&dst, MAX_SESSION_BYTES)
        .map_err(io(format!("reading back {}", dst.display())))?;
    if Sha256::digest(&written) != digest {
        return Err(CarryError::Mismatch(dst));
    }
    match provider {
        "claude" => carry_side_files(&src.with_extension(""), &dst.with_extension("")),
        // `tmp/<project>/.project_root` names the directory the project's
        // chats are of, so Gemini finds them under the same name there.
        "gemini" => {
            let marker = |chat: &Path| chat.parent()?.parent().map(|p| p.join(".project_root"));
            if let (Some(from), Some(to)) = (marker(&src), marker(&dst))
                && !to.exists()
                && let Ok(bytes) = crate::private::read_own(&from, 64 * 1024)
                && let Err(e) = crate::private::write_own(&to, &bytes)
            {
                tracing::warn!(file = %to.display(), "Gemini's project marker was not carried: {e}");
            }
        }
        _ => {}
    }
    Ok(Carried::Copied { to: dst, set_aside })
}

/// `path` with `suffix`, or `suffix-2`, `-3`, … when that is taken: a copy
/// set aside in the same second as an earlier one never replaces it.
fn free_name(path: &Path, suffix: &str) -> PathBuf {
    let base = path.file_name().unwrap_or_default().to_owned();
    (1..)
        .map(|n| {
            let mut name = base.clone();
            name.push(suffix);
            if n > 1 {
                name.push(format!("-{n}"));
            }
            path.with_file_name(name)
        })
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or_else(|| path.to_owned())
}

/// Test support: `HIVE_CRASH_POINT=NAME` kills the process (SIGKILL: no
/// unwinding, no cleanup, as the OOM killer or a power cut would) when a carry
/// reaches point `NAME`, so the tests can check that a crash halfway loses
/// nothing (tests/cli/ctl/account.rs). Debug builds only: a release build
/// has no such point, whatever its environment.
fn crash_point(name: &str) {
    if cfg!(debug_assertions) && std::env::var_os("HIVE_CRASH_POINT").is_some_and(|v| v == name) {
        tracing::error!("HIVE_CRASH_POINT={name}: ending the process as a crash would");
        // SAFETY: kill(2) on our own pid has no memory effects; SIGKILL
        // cannot be caught, so nothing of hive runs after it.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// Claude Code's `<session>/` directory (sub-agents' transcripts, tool
/// results kept aside): copied file by file, best effort, never through a
/// link; the conversation itself is the `.jsonl`.
fn carry_side_files(src: &Path, dst: &Path) {
    let mut dirs = vec![(src.to_owned(), dst.to_owned(), 0)];
    while let Some((from, to, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&from) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let target = to.join(entry.file_name());
            if kind.is_dir() && depth < 4 {
                dirs.push((entry.path(), target, depth + 1));
            } else if kind.is_file()
                && let Ok(bytes) = crate::private::read_own(&entry.path(), MAX_SESSION_BYTES)
                && let Err(e) = crate::private::write_own(&target, &bytes)
            {
                tracing::warn!(file = %target.display(), "a session side file was not carried: {e}");
            }
        }
    }
}

#[cfg(test)]
#[path = "vendor_home_tests.rs"]
mod tests;
