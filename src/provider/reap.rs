//! Finding and ending every descendant of a process, however it detached.
//!
//! Process groups miss children that call `setsid`/`setpgid`, and the
//! parent-death signal reaches only a direct child. So hive (and its
//! supervisor, see `crate::supervisor`) is a child subreaper — orphans of its
//! descendants are re-parented to it instead of to init — and on exit it walks
//! `/proc` for everything whose parent chain leads back to it and kills it.
//! While it runs, the orphans it adopted are reaped as they end
//! ([`start_orphan_reaper`], woken by SIGCHLD), or each would stay a zombie
//! for the session.

use std::collections::HashMap;
use std::time::Duration;

/// Makes the calling process a child subreaper (Linux); a no-op elsewhere.
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments; no memory involved.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// `(ppid, is_zombie)` of every process, read from `/proc/<pid>/stat`.
fn process_table() -> HashMap<i32, (i32, bool)> {
    let mut table = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return table;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(entry.path().join("stat"))
            && let Some((ppid, zombie)) = parse_stat(&stat)
        {
            table.insert(pid, (ppid, zombie));
        }
    }
    table
}

/// The state and parent from a `stat` line: `pid (comm) S ppid ...`; the
/// command name may itself hold spaces and parentheses.
fn parse_stat(stat: &str) -> Option<(i32, bool)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((ppid, state == "Z" || state == "X"))
}

/// Live (non-zombie) descendants of `root`, parents before children.
pub fn descendants(root: i32) -> Vec<i32> {
    let table = process_table();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, &(ppid, _)) in &table {
        children.entry(ppid).or_default().push(pid);
    }
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or_default() {
            if c != root {
                stack.push(c);
                if table.get(&c).is_some_and(|&(_, zombie)| !zombie) {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// SIGKILLs every live descendant of this process until none is left (new
/// ones may be forked while the sweep runs; bounded to about half a second).
/// With `reap`, zombie children are collected too (the supervisor has no
/// other code waiting for them). Returns how many processes were killed.
pub(crate) fn sweep_descendants(reap: bool) -> usize {
    let me = std::process::id() as i32;
    let mut killed = 0;
    for _ in 0..100 {
        if reap {
            reap_zombies();
        }
        let live = descendants(me);
        if live.is_empty() {
            break;
        }
        for pid in live {
            // SAFETY: kill(2) on a pid; no memory involved.
            if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    if reap {
        reap_zombies();
    }
    killed
}

fn reap_zombies() {
    let mut status = 0;
    // SAFETY: waitpid with a valid pointer to a local.
    while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
}

/// How long an adopted zombie stays unclaimed before the reaper takes it:
/// tokio, std's `Command::output` and the pty's wait thread wait for the
/// children hive started, and must never lose their status to it.
const GRACE: Duration = Duration::from_secs(1);

/// Starts a thread that collects this process's adopted orphans (a child
/// subreaper inherits every orphaned descendant, and a zombie stays until
/// its parent waits for it). Only zombies that are not children hive
/// started and waits for itself are reaped — `tracked` says which those
/// are (agent and terminal process groups) — and only once a zombie has
/// stayed unclaimed for [`GRACE`]. The thread sleeps until a SIGCHLD (a
/// self-pipe, beside tokio's own handler): an idle hive is never woken by
/// it (it polled once a second before, issue 45 item 3).
pub(crate) fn start_orphan_reaper(tracked: fn(i32) -> bool) {
    let (wake, wakes) = match std::os::unix::net::UnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => {
            tracing::warn!("cannot start the orphan reaper: {e}");
            return;
        }
    };
    // A full pipe means a wake-up is pending already: the handler never
    // blocks.
    let registered = wake
        .set_nonblocking(true)
        .and_then(|()| signal_hook::low_level::pipe::register(libc::SIGCHLD, wake));
    if let Err(e) = registered {
        tracing::warn!("cannot watch SIGCHLD for the orphan reaper: {e}");
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("hive-reaper".into())
        .spawn(move || {
            let mut orphans = Orphans::default();
            loop {
                wait_for_sigchld(&wakes, orphans.next_wait(std::time::Instant::now()));
                orphans.pass(zombie_children(), tracked, std::time::Instant::now());
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the orphan reaper: {e}");
    }
}

/// Blocks until a SIGCHLD arrives (`None`: however long that takes) or
/// `timeout` passes, then empties the pipe.
fn wait_for_sigchld(wakes: &std::os::unix::net::UnixStream, timeout: Option<Duration>) {
    use std::io::Read;
    // A zero timeout is refused by set_read_timeout: wait a millisecond.
    let timeout = timeout.map(|t| t.max(Duration::from_millis(1)));
    if wakes.set_nonblocking(false).is_err() || wakes.set_read_timeout(timeout).is_err() {
        std::thread::sleep(GRACE);
        return;
    }
    let mut buf = [0u8; 64];
    let mut r: &std::os::unix::net::UnixStream = wakes;
    if matches!(r.read(&mut buf), Ok(n) if n > 0) && wakes.set_nonblocking(true).is_ok() {
        while matches!(r.read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// The adopted zombies seen and not yet reaped, with when each was first
/// seen.
#[derive(Debug, Default)]
struct Orphans {
    seen: HashMap<i32, std::time::Instant>,
}

impl Orphans {
    /// How long the reaper may sleep before one of the zombies seen has
    /// waited its grace (`None`: none waits; only a SIGCHLD matters).
    fn next_wait(&self, now: std::time::Instant) -> Option<Duration> {
        self.seen
            .values()
            .map(|&t| (t + GRACE).saturating_duration_since(now))
            .min()
    }

    /// Takes this pass's zombie children: reaps the untracked ones
    /// unclaimed for their whole grace, keeps the others' first sight (a
    /// zombie gone meanwhile was claimed by its waiter and is forgotten).
    fn pass(&mut self, zombies: Vec<i32>, tracked: fn(i32) -> bool, now: std::time::Instant) {
        let mut still = HashMap::new();
        for pid in zombies.into_iter().filter(|&p| !tracked(p)) {
            let first = self.seen.get(&pid).copied().unwrap_or(now);
            if now.duration_since(first) >= GRACE {
                let mut status = 0;
                // SAFETY: waitpid on one pid with a valid pointer to a local.
                unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            } else {
                still.insert(pid, first);
            }
        }
        self.seen = still;
    }
}

/// This process's children that are zombies, from
/// `/proc/self/task/*/children` (a full `/proc` scan where that is missing).
fn zombie_children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut kids = Vec::new();
    let mut listed = false;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
                listed = true;
                kids.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<i32>().ok()),
                );
            }
        }
    }
    if !listed {
        return process_table()
            .into_iter()
            .filter(|&(_, (ppid, zombie))| ppid == me && zombie)
            .map(|(pid, _)| pid)
            .collect();
    }
    kids.retain(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| parse_stat(&s))
            .is_some_and(|(ppid, zombie)| ppid == me && zombie)
    });
    kids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        assert_eq!(parse_stat("12 (bash) S 7 12 12 0"), Some((7, false)));
        assert_eq!(parse_stat("12 (a) b) (c) Z 1 12"), Some((1, true)));
        assert_eq!(parse_stat("garbage"), None);
    }

    /// A zombie of an untracked child is left for its own waiter during
    /// its grace, then reaped; with nothing seen the reaper sleeps until a
    /// SIGCHLD (no timeout: an idle hive is not woken).
    #[test]
    fn an_unclaimed_zombie_is_reaped_after_its_grace_and_nothing_else_wakes_the_reaper() {
        let mut orphans = Orphans::default();
        let start = std::time::Instant::now();
        assert_eq!(orphans.next_wait(start), None);
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let zombie = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| parse_stat(&s))
                .is_some_and(|(_, z)| z)
        };
        while !zombie() {
            std::thread::sleep(Duration::from_millis(5));
        }
        orphans.pass(vec![pid], |_| false, start);
        assert!(zombie(), "reaped before its grace");
        assert_eq!(orphans.next_wait(start), Some(GRACE));
        // A tracked one is never taken.
        let mut other = Orphans::default();
        other.pass(vec![pid], |_| true, start);
        assert_eq!(other.next_wait(start), None);
        orphans.pass(vec![pid], |_| false, start + GRACE);
        assert!(!zombie(), "still a zombie after its grace");
        assert_eq!(orphans.next_wait(start + GRACE), None);
        drop(child);
    }

    #[test]
    fn descendants_include_grandchildren_that_left_the_group() {
        // sh → (setsid sleep) ; the sleep is a grandchild in its own session.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 30 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        let found = descendants(child.id() as i32);
        // SAFETY: kill(2) on pids this test started.
        unsafe {
            libc::kill(grandchild, libc::SIGKILL);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(found.contains(&grandchild), "{found:?} lacks {grandchild}");
    }
}
