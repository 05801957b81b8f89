//! hive is a child subreaper, so an agent's double-forked orphans become
//! hive's children when they end: it must collect them, or every short
//! background job of a long session stays a zombie until hive exits.

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{fake_acp_config, hive};

/// Zombies whose parent is `parent`.
fn zombie_children(parent: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let mut f = stat[close + 1..].split_whitespace();
        let (state, ppid) = (f.next(), f.next().and_then(|p| p.parse::<i32>().ok()));
        if state == Some("Z") && ppid == Some(parent) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn adopted_orphans_are_reaped_while_hive_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("forked");
    let config = fake_acp_config(
        tmp.path(),
        &[("FAKE_ACP_PIDS", marker.to_str().unwrap())],
        "",
    );
    // Unsupervised: the process started is the real hive, the subreaper.
    let mut child = hive(tmp.path())
        .args(["--config", config.to_str().unwrap()])
        .args(["run", "--agent", "fake", "doublefork"])
        .env("HIVE_NO_SUPERVISOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the agent never forked");
        std::thread::sleep(Duration::from_millis(50));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let left = loop {
        let z = zombie_children(pid);
        if z.is_empty() || Instant::now() > deadline {
            break z;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(left.is_empty(), "{} zombie(s) left under hive", left.len());
}
