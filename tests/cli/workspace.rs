//! Workspaces (issue 52) through the real binary: `hive run` of an agent
//! with `repos` makes the worktrees under hive's data directory; a kill
//! during their creation (the real process, killed by a `git` it ran) is
//! finished at the next start; a config naming a directory that is no git
//! repository, or `repos` without `worktree`, is refused with the agent's
//! id and the path.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::git::{git, init_repo};

fn hive(args: &[&str], dir: &Path, home: &Path, path: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hive"));
    c.args(args)
        .current_dir(dir)
        .env("HIVE_DATA_DIR", home.join("data"))
        .env("HIVE_STATE_DIR", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("xdg"));
    if let Some(p) = path {
        c.env("PATH", p);
    }
    c.output().expect("hive runs")
}

fn repo(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    init_repo(dir);
    std::fs::write(dir.join("README.md"), "hello\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    dir.canonicalize().unwrap()
}

const CONFIG: &str = "[[agent]]\nid = \"ws\"\nprovider = \"script\"\nscript = \"demo:tour\"\n\
                      worktree = true\nrepos = [\"api\", \"web\"]\n";

/// The one workspace root under the data directory.
fn workspace_root(home: &Path) -> PathBuf {
    let dir = home.join("data/workspaces");
    let mut roots: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(roots.len(), 1, "{roots:?}");
    roots.pop().unwrap()
}

#[test]
fn a_kill_during_creation_is_finished_at_the_next_start() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let _api = repo(&base.join("api"));
    let web = repo(&base.join("web"));
    std::fs::write(base.join("hive.toml"), CONFIG).unwrap();
    // A `git` that kills hive right after it added web's worktree, before
    // hive moved it into place.
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let bin = base.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let wrapper = bin.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n{} \"$@\"; rc=$?\ncase \"$*\" in *'worktree add'*.building-web*) kill -9 $PPID;; esac\nexit $rc\n",
            real.trim()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", &wrapper.display().to_string()])
        .status()
        .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let killed = hive(
        &["run", "--agent", "ws", "hello"],
        &base,
        home.path(),
        Some(&path),
    );
    assert!(!killed.status.success(), "the kill stopped it");
    let root = workspace_root(home.path());
    assert!(root.join(".building-web").is_dir(), "a half-made member");
    assert!(!root.join("web").exists());

    let out = hive(&["run", "--agent", "ws", "hello"], &base, home.path(), None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!root.join(".building-web").exists());
    for name in ["api", "web"] {
        let m = root.join(name);
        assert_eq!(git(&m, &["branch", "--show-current"]).trim(), "hive/ws");
        assert_eq!(
            std::fs::read_to_string(m.join("README.md")).unwrap(),
            "hello\n"
        );
    }
    let list = git(&web, &["worktree", "list"]);
    assert!(!list.contains(".building"), "{list}");
    assert_eq!(list.lines().count(), 2, "{list}");
}

#[test]
fn a_repository_that_is_not_one_is_refused_when_the_config_loads() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    repo(&base.join("api"));
    std::fs::create_dir(base.join("web")).unwrap();
    std::fs::write(base.join("hive.toml"), CONFIG).unwrap();
    let out = hive(&["run", "--agent", "ws", "hello"], &base, home.path(), None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("agent `ws`")
            && err.contains("web")
            && err.contains("not inside a git repository"),
        "{err}"
    );
    std::fs::write(
        base.join("hive.toml"),
        CONFIG.replace("worktree = true\n", ""),
    )
    .unwrap();
    let out = hive(&["run", "--agent", "ws", "hello"], &base, home.path(), None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("set `worktree = true`"),
        "{err}"
    );
    assert!(!home.path().join("data/workspaces").exists());
}

/// Issue 52: `hive worktree list/prune/remove` see each member of a
/// workspace (named `agent/repo`) and apply their rules to each: a clean
/// member is pruned, one with a commit kept; the root goes with the last.
#[test]
fn hive_worktree_lists_and_prunes_each_member_of_a_workspace() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let _api = repo(&base.join("api"));
    let web = repo(&base.join("web"));
    std::fs::write(base.join("hive.toml"), CONFIG).unwrap();
    let out = hive(&["run", "--agent", "ws", "hello"], &base, home.path(), None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = workspace_root(home.path());
    std::fs::write(root.join("api/new.txt"), "x\n").unwrap();
    git(&root.join("api"), &["add", "."]);
    git(&root.join("api"), &["commit", "-q", "-m", "work"]);
    let text = |o: Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let list = text(hive(&["worktree", "list"], &base, home.path(), None));
    let line = |id: &str| {
        list.lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no {id} in {list}"))
            .to_owned()
    };
    assert!(
        line("ws/api").contains("1 commit(s) not in the main checkout"),
        "{list}"
    );
    assert!(line("ws/web").contains("nothing unmerged"), "{list}");
    let pruned = text(hive(&["worktree", "prune"], &base, home.path(), None));
    assert!(pruned.contains("removed ws/web"), "{pruned}");
    assert!(pruned.contains("kept ws/api: 1 commit(s)"), "{pruned}");
    assert!(!root.join("web").exists());
    assert!(
        git(&web, &["branch", "--list", "hive/ws"])
            .trim()
            .is_empty()
    );
    assert!(root.join("api").is_dir());
    let removed = text(hive(
        &["worktree", "remove", "ws/api", "--force"],
        &base,
        home.path(),
        None,
    ));
    assert!(removed.contains("removed"), "{removed}");
    assert!(!root.exists(), "the root went with its last member");
}
