//! `hive worktree list | remove | prune` and `hive run` with `worktree = true`:
//! the real binary in a temporary repository, as a user would type them.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use support::git::{git, init_repo};

fn hive(args: &[&str], repo: &Path, home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hive"))
        .args(args)
        .current_dir(repo)
        .env("HIVE_DATA_DIR", home.join("data"))
        .env("HIVE_STATE_DIR", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .output()
        .expect("hive runs")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn run_creates_the_worktree_and_the_commands_manage_it() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    init_repo(&repo);
    std::fs::write(repo.join("README.md"), "hello\n").unwrap();
    std::fs::write(
        repo.join("hive.toml"),
        "[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"demo:tour\"\nworktree = true\n\n\
         [[agent]]\nid = \"b\"\nprovider = \"script\"\nscript = \"demo:tour\"\nworktree = true\n",
    )
    .unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "initial"]);
    let home = home.path();

    assert_eq!(
        ok(&hive(&["worktree", "list"], &repo, home)).trim(),
        "no hive worktrees"
    );
    ok(&hive(&["run", "--agent", "a", "hello"], &repo, home));
    let wa = repo.join(".hive/worktrees/a");
    assert_eq!(git(&wa, &["branch", "--show-current"]).trim(), "hive/a");
    std::fs::write(wa.join("draft.txt"), "unsaved\n").unwrap();
    ok(&hive(&["run", "--agent", "b", "hello"], &repo, home));

    let list = ok(&hive(&["worktree", "list"], &repo, home));
    let rows: Vec<&str> = list.lines().collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(
        rows[0].starts_with("a ") && rows[0].contains("hive/a"),
        "{list}"
    );
    assert!(rows[0].contains("1 uncommitted change(s)"), "{list}");
    assert!(
        rows[1].contains("hive/b") && rows[1].contains("nothing unmerged"),
        "{list}"
    );

    // Unmerged work: no terminal to ask on, so it is refused.
    let refused = hive(&["worktree", "remove", "a"], &repo, home);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("--force"), "{err}");
    assert!(wa.join("draft.txt").is_file());

    let pruned = ok(&hive(&["worktree", "prune"], &repo, home));
    assert!(pruned.contains("removed b"), "{pruned}");
    assert!(
        pruned.contains("kept a: 1 uncommitted change(s)"),
        "{pruned}"
    );
    assert!(!repo.join(".hive/worktrees/b").exists());

    ok(&hive(&["worktree", "remove", "a", "--force"], &repo, home));
    assert!(!wa.exists());
    assert_eq!(
        ok(&hive(&["worktree", "list"], &repo, home)).trim(),
        "no hive worktrees"
    );
    let missing = hive(&["worktree", "remove", "a"], &repo, home);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no hive worktree for agent `a`"));
}

#[test]
fn run_outside_a_repository_refuses_instead_of_using_the_shared_directory() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hive.toml"),
        "[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"demo:tour\"\nworktree = true\n",
    )
    .unwrap();
    let out = hive(&["run", "--agent", "a", "hello"], dir.path(), home.path());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("wants a worktree") && err.contains("not inside a git repository"),
        "{err}"
    );
}

#[test]
fn prune_and_remove_leave_a_worktree_under_a_live_pane_alone() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    let home = home.path();
    init_repo(&repo);
    // An agent whose turn lasts until the test ends it.
    let scenario = home.join("slow.toml");
    std::fs::write(
        &scenario,
        "[[turn]]\n[[turn.step]]\nsleep_ms = 600000\n[[turn.step]]\ntext = \"done\"\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("hive.toml"),
        format!(
            "[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"{}\"\nworktree = true\n",
            scenario.display()
        ),
    )
    .unwrap();
    std::fs::write(repo.join("README.md"), "hello\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "initial"]);

    let running = Command::new(env!("CARGO_BIN_EXE_hive"))
        .args(["run", "--agent", "a", "hello"])
        .current_dir(&repo)
        .env("HIVE_DATA_DIR", home.join("data"))
        .env("HIVE_STATE_DIR", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed even when an assertion fails first.
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut running = KillOnDrop(running);
    // The pid of the hive process that runs the pane (`hive run` may hand
    // the agent to a process of its own).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let why = loop {
        let list = ok(&hive(&["worktree", "list"], &repo, home));
        if let Some(at) = list.find("in use by a running hive (pid ") {
            let end = at + list[at..].find(')').unwrap() + 1;
            break list[at..end].to_owned();
        }
        assert!(std::time::Instant::now() < deadline, "never in use: {list}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };

    // Clean and merged: prune would remove it if no pane ran in it.
    let pruned = ok(&hive(&["worktree", "prune"], &repo, home));
    assert_eq!(pruned.trim(), format!("kept a: {why}"));
    let refused = hive(&["worktree", "remove", "a", "--force"], &repo, home);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains(&why) && err.contains("stop that pane"),
        "{err}"
    );
    let wa = repo.join(".hive/worktrees/a");
    assert!(wa.is_dir());

    // The pane is gone (even killed, nothing to clean up): prune may now.
    running.0.kill().unwrap();
    running.0.wait().unwrap();
    // The process that held the pane may end a moment after the one killed
    // (the agent's supervisor notices its parent gone): wait for the mark.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while ok(&hive(&["worktree", "list"], &repo, home)).contains("in use by a running hive") {
        assert!(
            std::time::Instant::now() < deadline,
            "still in use after the kill"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let pruned = ok(&hive(&["worktree", "prune"], &repo, home));
    assert_eq!(pruned.trim(), "removed a");
    assert!(!wa.exists());
}
