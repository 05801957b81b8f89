//! What the streaming benchmarks share: the long answer they stream (the
//! peer benchmark's shape: headed sections of prose, lists, code and
//! quotes), their environment knobs, and reading a process tree's CPU and
//! memory from /proc (hive runs its console in a child of the process it
//! was started as).
#![allow(dead_code)] // each bench uses a different subset

pub fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Markdown like a long model answer: headed sections of prose, lists and
/// code, `chars` characters long.
pub fn answer(chars: usize) -> String {
    let mut s = String::new();
    let mut n = 1;
    while s.len() < chars {
        s.push_str(&format!("## Section {n} of the long answer\n\n"));
        s.push_str(
            "The **runner** owns the queue and the *processor* batches deltas into upserts; ",
        );
        s.push_str(
            "the console reads the app state and draws it, and nothing in `ui` writes back. ",
        );
        s.push_str(
            "Each paragraph wraps across several lines of a wide pane so wrapping matters.\n\n",
        );
        s.push_str("- first point, with `inline code` and a [link](https://example.com)\n");
        s.push_str(
            "- second point, a little longer so that it wraps in narrow side-by-side panes\n",
        );
        s.push_str("  1. a nested item\n\n");
        s.push_str("```rust\nfn section() -> usize {\n    let v: Vec<u32> = (0..10).collect();\n    v.iter().map(|x| *x as usize).sum()\n}\n```\n\n");
        s.push_str("> A quoted remark that closes the section, then a blank line.\n\n");
        for _ in 0..3 {
            s.push_str(
                "More prose follows here: measured, repeated and plain, as long answers are. ",
            );
        }
        s.push_str("\n\n");
        n += 1;
    }
    s.truncate(chars);
    s
}

/// (parent pid, utime + stime ticks) of a process.
fn stat(pid: u32) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((fields.get(1)?.parse().ok()?, ticks))
}

/// `root` and every process below it.
pub fn tree(root: u32) -> Vec<u32> {
    let procs: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| stat(pid).map(|(ppid, _)| (pid, ppid)))
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while let Some(&p) = found.get(i) {
        found.extend(procs.iter().filter(|(_, pp)| *pp == p).map(|(pid, _)| *pid));
        i += 1;
    }
    found
}

/// CPU seconds (utime + stime) of `root`'s process tree.
pub fn tree_cpu(root: u32) -> f64 {
    tree_cpu_but(root, None)
}

/// `tree_cpu` leaving out the processes whose command line holds `but`
/// (an agent hive started, whose CPU is not hive's).
pub fn tree_cpu_but(root: u32, but: Option<&str>) -> f64 {
    let ticks: u64 = tree(root)
        .into_iter()
        .filter(|p| {
            but.is_none_or(|b| {
                let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                !String::from_utf8_lossy(&cmdline).contains(b)
            })
        })
        .filter_map(|p| stat(p).map(|s| s.1))
        .sum();
    ticks as f64 / 100.0 // USER_HZ on Linux
}

/// A `/proc/<pid>/status` field in MB (`VmRSS:`, `VmHWM:`), 0 if gone.
pub fn status_mb(pid: u32, field: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The largest `field` over `root`'s process tree, in MB.
pub fn tree_max_mb(root: u32, field: &str) -> f64 {
    tree(root)
        .into_iter()
        .map(|p| status_mb(p, field))
        .fold(0.0, f64::max)
}

/// Context switches (voluntary and not) of every thread now alive in
/// `root`'s process tree, but the processes whose command line holds
/// `but`: how often hive's processes woke (a thread that ended is left
/// out, so read it while they all run).
pub fn tree_switches_but(root: u32, but: Option<&str>) -> u64 {
    tree(root)
        .into_iter()
        .filter(|p| {
            but.is_none_or(|b| {
                let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                !String::from_utf8_lossy(&cmdline).contains(b)
            })
        })
        .flat_map(|p| {
            std::fs::read_dir(format!("/proc/{p}/task"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .map(|status| {
            status
                .lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
}
