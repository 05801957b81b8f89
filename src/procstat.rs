//! CPU and memory of a pane's process tree, read from /proc (issue 33
//! item 6): the agent and everything it started (shells, language servers,
//! test runs), found through each thread's `children` list, so a sample
//! costs reads proportional to the tree, not to every process on the
//! machine. CPU % is the ticks used between two samples over the time
//! between them (100 % is one core busy). Each process's ticks include the
//! children it reaped (`cutime`, `cstime`): a test run's short-lived
//! children end between two samples, and their CPU moves to their parent
//! rather than vanishing (issue 46 item 5).
//!
//! The root (`/proc`) is a parameter so that the parsing is tested on a
//! made-up tree as well as on real processes.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

pub use crate::protocol::pane::ProcessSample;

/// One reading of a process tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    /// User and system CPU time of the live processes and of the children
    /// they reaped, in clock ticks.
    pub ticks: u64,
    /// Resident memory of all of them.
    pub rss_bytes: u64,
    pub processes: u32,
}

/// Trees deeper or wider than this are cut (a fork bomb must not make
/// hive read forever).
const MAX_PROCESSES: usize = 4096;

/// The tree rooted at `pid` under `root` (normally `/proc`); `None` when
/// the root process is gone.
pub fn read_tree(root: &Path, pid: u32, page_size: u64) -> Option<Reading> {
    let mut reading = Reading::default();
    let mut seen = HashSet::new();
    let mut stack = vec![pid];
    let mut buf = String::new();
    while let Some(p) = stack.pop() {
        if !seen.insert(p) || seen.len() > MAX_PROCESSES {
            continue;
        }
        let dir = root.join(p.to_string());
        let Some((ticks, rss_pages)) = read_stat(&dir.join("stat"), &mut buf) else {
            if p == pid {
                return None;
            }
            continue;
        };
        reading.ticks += ticks;
        reading.rss_bytes += rss_pages * page_size;
        reading.processes += 1;
        children(&dir, &mut buf, &mut stack);
    }
    Some(reading)
}

/// `utime + stime + cutime + cstime` and `rss` (pages) from a
/// `/proc/<pid>/stat` line. The
/// command name may hold spaces and parentheses, so fields are counted
/// from the last `)`.
fn read_stat(path: &Path, buf: &mut String) -> Option<(u64, u64)> {
    buf.clear();
    use std::io::Read;
    std::fs::File::open(path).ok()?.read_to_string(buf).ok()?;
    parse_stat(buf)
}

pub(crate) fn parse_stat(line: &str) -> Option<(u64, u64)> {
    let rest = &line[line.rfind(')')? + 1..];
    // After the name: state is field 3; utime 14, stime 15, cutime 16,
    // cstime 17, rss 24.
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    let ticks = || Some(field(14)? + field(15)? + field(16)? + field(17)?);
    if fields.first() == Some(&"Z") {
        // A zombie holds no memory; its ticks are counted until its parent
        // reaps it and they move to the parent's `cutime`. A short line
        // (an old kernel's zombie) counts none.
        return Some((ticks().unwrap_or(0), 0));
    }
    Some((ticks()?, field(24)?))
}

/// Pushes the children of every thread of the process at `dir`.
fn children(dir: &Path, buf: &mut String, stack: &mut Vec<u32>) {
    let Ok(tasks) = std::fs::read_dir(dir.join("task")) else {
        return;
    };
    for task in tasks.flatten() {
        buf.clear();
        use std::io::Read;
        let Ok(mut f) = std::fs::File::open(task.path().join("children")) else {
            continue;
        };
        if f.read_to_string(buf).is_ok() {
            stack.extend(buf.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
    }
}

/// The CPU share between two readings `elapsed` apart (100 = one core).
pub fn cpu_percent(before: &Reading, now: &Reading, elapsed: Duration, ticks_per_sec: u64) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 || ticks_per_sec == 0 {
        return 0.0;
    }
    // A child that ended takes its ticks with it: never below zero.
    let used = now.ticks.saturating_sub(before.ticks) as f64 / ticks_per_sec as f64;
    (used / secs * 100.0).max(0.0)
}

/// The machine's page size and clock ticks per second.
pub fn machine() -> (u64, u64) {
    // SAFETY: sysconf reads constants and has no preconditions.
    let (page, tick) = unsafe {
        (
            libc::sysconf(libc::_SC_PAGESIZE),
            libc::sysconf(libc::_SC_CLK_TCK),
        )
    };
    (
        u64::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096),
        u64::try_from(tick).ok().filter(|&t| t > 0).unwrap_or(100),
    )
}

/// Follows one pane's tree: the last reading, for the next CPU share.
#[derive(Debug)]
pub struct Sampler {
    pid: u32,
    last: Option<(Reading, std::time::Instant)>,
    page_size: u64,
    ticks_per_sec: u64,
}

impl Sampler {
    pub fn new(pid: u32) -> Self {
        let (page_size, ticks_per_sec) = machine();
        Self {
            pid,
            last: None,
            page_size,
            ticks_per_sec,
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Samples the tree now; `None` once its root process is gone. The
    /// first sample's CPU share is 0 (nothing to compare with yet).
    pub fn sample(&mut self) -> Option<ProcessSample> {
        let now = std::time::Instant::now();
        let reading = read_tree(Path::new("/proc"), self.pid, self.page_size)?;
        let cpu = match &self.last {
            Some((before, at)) => cpu_percent(
                before,
                &reading,
                now.duration_since(*at),
                self.ticks_per_sec,
            ),
            None => 0.0,
        };
        self.last = Some((reading, now));
        Some(ProcessSample {
            cpu_percent: cpu,
            rss_bytes: reading.rss_bytes,
            processes: reading.processes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_a_strange_name_parses() {
        // Fields after the name: state ppid pgrp session tty tpgid flags
        // minflt cminflt majflt cmajflt utime stime cutime cstime priority
        // nice threads itrealvalue starttime vsize rss …
        let line = "42 (a) b (c)) S 1 42 42 0 -1 4194304 10 0 0 0 7 5 3 2 20 0 1 0 100 1000 33 18446744073709551615";
        assert_eq!(parse_stat(line), Some((17, 33)));
        let zombie = "42 (x) Z 1 42 42 0 -1 4194304 10 0 0 0 7 5 3 2 20 0 1 0 100 0 0";
        assert_eq!(parse_stat(zombie), Some((17, 0)));
        assert_eq!(parse_stat("42 (x) Z 1 42"), Some((0, 0)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_made_up_tree_adds_up_and_ignores_a_loop() {
        let root = tempfile::tempdir().unwrap();
        let proc_ = |pid: u32, ticks: (u64, u64), rss: u64, kids: &str| {
            let dir = root.path().join(pid.to_string());
            std::fs::create_dir_all(dir.join(format!("task/{pid}"))).unwrap();
            std::fs::write(
                dir.join("stat"),
                format!(
                    "{pid} (p) S 1 1 1 0 -1 0 0 0 0 0 {} {} 0 0 20 0 1 0 1 1 {rss} 0",
                    ticks.0, ticks.1
                ),
            )
            .unwrap();
            std::fs::write(dir.join(format!("task/{pid}/children")), kids).unwrap();
        };
        proc_(10, (100, 50), 10, "11 12 ");
        proc_(11, (5, 5), 20, "13");
        proc_(12, (0, 0), 30, "10");
        // 13 is gone (no directory): skipped.
        let r = read_tree(root.path(), 10, 4096).unwrap();
        assert_eq!(r.processes, 3);
        assert_eq!(r.ticks, 160);
        assert_eq!(r.rss_bytes, 60 * 4096);
        assert_eq!(read_tree(root.path(), 99, 4096), None);
        let later = Reading { ticks: 260, ..r };
        let pct = cpu_percent(&r, &later, Duration::from_secs(2), 100);
        assert!((pct - 50.0).abs() < 1e-9, "{pct}");
    }

    /// A shell whose child burned CPU and ended keeps that CPU in its
    /// tree: the reaped child's ticks are in the shell's `cstime`/`cutime`.
    #[test]
    fn a_reaped_childs_cpu_stays_in_the_tree() {
        let (page, tick) = machine();
        let burn = format!("import os\nwhile sum(os.times()[:2]) * {tick} < 30: pass\n");
        let mut sh = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("python3 -c '{burn}'; echo done; exec sleep 30"))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let out = sh.stdout.take().unwrap();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).unwrap();
        assert_eq!(line, "done\n");
        let r = read_tree(Path::new("/proc"), sh.id(), page).unwrap();
        sh.kill().unwrap();
        sh.wait().unwrap();
        assert_eq!(r.processes, 1, "only the shell (now sleep) is left");
        assert!(r.ticks >= 30, "the ended child's ticks are counted: {r:?}");
    }
}
