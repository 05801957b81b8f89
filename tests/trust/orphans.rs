//! No process outlives hive: a fake ACP agent starts a plain child, a
//! `setsid` child and a double-forked orphan in its own session; then hive is
//! ended — `kill -9` of the process the user started, `kill -9` of the real
//! hive under it, or a clean exit — and none of them may survive.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::{fake_acp_config, hive};

struct Agents {
    _tmp: tempfile::TempDir,
    config: PathBuf,
    pids_file: PathBuf,
}

fn setup() -> Agents {
    let tmp = tempfile::tempdir().unwrap();
    let pids_file = tmp.path().join("pids");
    let pids = pids_file.display().to_string();
    let config = fake_acp_config(tmp.path(), &[("FAKE_ACP_PIDS", &pids)], "");
    Agents {
        _tmp: tmp,
        config,
        pids_file,
    }
}

fn run(a: &Agents, prompt: &str, supervised: bool) -> Child {
    let dir = a.config.parent().unwrap();
    let mut cmd = hive(dir);
    cmd.args([
        "--config",
        a.config.to_str().unwrap(),
        "run",
        "--agent",
        "fake",
        prompt,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    if !supervised {
        cmd.env("HIVE_NO_SUPERVISOR", "1");
    }
    cmd.spawn().expect("hive starts")
}

/// Waits (generously bounded) for `f` to hold.
fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The agent and its three children, once the agent has started them.
fn spawned_pids(a: &Agents) -> Vec<i32> {
    wait_for("the agent's children", || {
        let text = std::fs::read_to_string(&a.pids_file).ok()?;
        let pids: Vec<i32> = text
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        (pids.len() == 4).then_some(pids)
    })
}

/// Running (a zombie has ended; only its parent has not collected it).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace()
                .next()
                .map(|st| st != "Z" && st != "X")
        })
        .unwrap_or(false)
}

fn assert_none_survive(pids: &[i32]) {
    wait_for("every agent process to end", || {
        pids.iter().all(|&p| !alive(p)).then_some(())
    });
}

fn kill9(pid: i32) {
    // SAFETY: kill(2) on a pid this test started (or its child).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
}

#[test]
fn kill_9_of_hive_leaves_no_agent_process() {
    let a = setup();
    let mut child = run(&a, "spawnkids", true);
    let mut pids = spawned_pids(&a);
    let real = hive::provider::reap::descendants(child.id() as i32);
    assert!(!real.is_empty());
    pids.extend(real);
    kill9(child.id() as i32);
    child.wait().unwrap();
    assert_none_survive(&pids);
}

#[test]
fn kill_9_of_the_real_hive_leaves_no_agent_process() {
    let a = setup();
    let mut child = run(&a, "spawnkids", true);
    let pids = spawned_pids(&a);
    // The supervisor's only child is the real hive.
    let sup = child.id();
    let children = std::fs::read_to_string(format!("/proc/{sup}/task/{sup}/children")).unwrap();
    let real: Vec<i32> = children
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(real.len(), 1, "{children}");
    kill9(real[0]);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_none_survive(&pids);
}

#[test]
fn a_clean_exit_leaves_no_detached_child() {
    let a = setup();
    // Unsupervised: the real hive's own sweep must do it.
    let mut child = run(&a, "spawnkids-end", false);
    let pids = spawned_pids(&a);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_none_survive(&pids);
}
