//! Which worktrees a running hive is using, so `hive worktree prune` and
//! `remove` (another process) never delete one under a live pane: a hive
//! that runs an agent in a worktree holds a shared `flock` on `hive.lock` in
//! that worktree's git admin directory for as long as it runs. The kernel
//! drops the lock when the process ends, however it ends (`kill -9`
//! included), so a crashed hive never leaves a worktree stuck "in use".

use std::collections::HashMap;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::WorktreeError;
use super::git::Git;

/// The lock file's name in a worktree's admin directory
/// (`.git/worktrees/<name>/`, removed with the worktree).
const LOCK: &str = "hive.lock";

/// How long a busy lock must stay busy before it means a live hive: a
/// probe's exclusive hold lasts microseconds.
const PROBE_RETRIES: usize = 10;
const PROBE_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// The locks this process holds, by worktree path (dropping a `File`
/// releases its lock).
static HELD: Mutex<Option<HashMap<PathBuf, File>>> = Mutex::new(None);

fn lock_path(worktree: &Path) -> Result<PathBuf, WorktreeError> {
    let dir = Git::at(worktree).line(&["rev-parse", "--path-format=absolute", "--git-dir"])?;
    Ok(Path::new(&dir).join(LOCK))
}

/// Marks the worktree at `path` as in use by this process until it exits
/// (or [`release`]). Holding it twice is holding it once.
pub fn hold(path: &Path) -> Result<(), WorktreeError> {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let held = held.get_or_insert_with(HashMap::new);
    if held.contains_key(path) {
        return Ok(());
    }
    let file_path = lock_path(path)?;
    let io = |source| WorktreeError::Io {
        path: file_path.clone(),
        source,
    };
    // Never through a planted symlink; 0600 like hive's other files.
    let mut file = crate::private::open_own_file(
        crate::private::file_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
        &file_path,
    )
    .map_err(io)?;
    file.lock_shared().map_err(io)?;
    // Who holds it, for the refusal's message (the lock is the truth).
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    held.insert(path.to_owned(), file);
    Ok(())
}

/// Stops marking the worktree at `path` as in use (before this hive removes
/// it itself).
pub fn release(path: &Path) {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(held) = held.as_mut() {
        held.remove(path);
    }
}

/// Why the worktree at `path` must be left alone: a running hive (this one
/// included) holds it. `None`: nobody does, or the directory is gone.
pub fn in_use(path: &Path) -> Option<String> {
    let file_path = lock_path(path).ok()?;
    // A FIFO planted as the lock would hang the open; a link is not ours.
    let mut file =
        crate::private::open_own_file(std::fs::OpenOptions::new().read(true), &file_path).ok()?;
    // Another probe (a removal or prune listing its worktrees, in this
    // process or another) holds the lock exclusively for an instant; a live
    // hive holds it for as long as it runs. So a refusal is only believed
    // when it lasts.
    let mut result = file.try_lock();
    for _ in 0..PROBE_RETRIES {
        if !matches!(result, Err(TryLockError::WouldBlock)) {
            break;
        }
        std::thread::sleep(PROBE_PAUSE);
        result = file.try_lock();
    }
    match result {
        // Dropping `file` unlocks it again.
        Ok(()) => None,
        Err(TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let pid = pid.trim();
            Some(if pid.is_empty() {
                "in use by a running hive".to_owned()
            } else {
                format!("in use by a running hive (pid {pid})")
            })
        }
        Err(TryLockError::Error(e)) => {
            tracing::warn!(path = %file_path.display(), "worktree lock: {e}");
            None
        }
    }
}
