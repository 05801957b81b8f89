//! Finding and ending every descendant of a process, however it detached.
//!
//! Process groups miss children that call `setsid`/`setpgid`, and the
//! parent-death signal reaches only a direct child. So hive (and its
//! supervisor, see `crate::supervisor`) is a child subreaper — orphans of its
//! descendants are re-parented to it instead of to init — and on exit it walks
//! `/proc` for everything whose parent chain leads back to it and kills it.
//! While it runs, the orphans it adopted are reaped as they end
//! ([`start_orphan_reaper`]), or each would stay a zombie for the session.

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

/// Starts a thread that collects this process's adopted orphans (a child
/// subreaper inherits every orphaned descendant, and a zombie stays until
/// its parent waits for it). Only zombies that are not children hive
/// started and waits for itself are reaped — `tracked` says which those
/// are (agent and terminal process groups) — and only once a zombie has
/// stayed unclaimed for a whole period, so the waits of tokio, std's
/// `Command::output` and the pty's wait thread never lose their status.
pub(crate) fn start_orphan_reaper(tracked: fn(i32) -> bool) {
    let period = Duration::from_secs(1);
    let spawned = std::thread::Builder::new()
        .name("hive-reaper".into())
        .spawn(move || {
            let mut seen = std::collections::HashSet::new();
            loop {
                std::thread::sleep(period);
                seen = reap_adopted(&seen, tracked);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the orphan reaper: {e}");
    }
}

/// Reaps the zombie children of ours that were already zombies, unclaimed,
/// at the last pass (`before`); returns this pass's unclaimed zombies.
fn reap_adopted(
    before: &std::collections::HashSet<i32>,
    tracked: fn(i32) -> bool,
) -> std::collections::HashSet<i32> {
    let mut now = std::collections::HashSet::new();
    for pid in zombie_children() {
        if tracked(pid) {
            continue;
        }
        if before.contains(&pid) {
            let mut status = 0;
            // SAFETY: waitpid on one pid with a valid pointer to a local.
            unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        } else {
            now.insert(pid);
        }
    }
    now
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
