//! A workspace made at runtime (issue 52): `hive ctl new … --repo A --repo
//! B` against a running hive gives the new pane a worktree of each
//! repository on its branch, runs `worktree_setup` in each, and `list
//! --json` names them; a `--repo` that is no git repository is refused
//! with the path; `close --discard` removes every member, its branch and
//! the root.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Lab;
use crate::support::git::{git, init_repo};

fn repo(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    init_repo(dir);
    git(dir, &["commit", "-q", "--allow-empty", "-m", "init"]);
    dir.canonicalize().unwrap()
}

#[test]
fn ctl_new_with_repos_makes_a_workspace_and_runs_the_setup_in_each() {
    let Some(lab) = Lab::new() else { return };
    let api = repo(&lab.path("api"));
    let web = repo(&lab.path("web"));
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let config = lab.path("wstest.toml");
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nid = \"echo\"\nprovider = \"script\"\nscript = \"{}\"\n\
             worktree_setup = [\"sh\", \"-c\", \"echo setup-in-$(basename $PWD)\"]\n",
            echo.display()
        ),
    )
    .unwrap();
    lab.launch_with("ws", &config, "wstest.sock");
    let (a, w) = (api.display().to_string(), web.display().to_string());
    let out = lab.fails(
        &[
            "new",
            "bad",
            "--template",
            "echo",
            "--repo",
            &a,
            "--repo",
            "/",
        ],
        2,
        "BAD_REQUEST",
    );
    assert!(
        out.stderr.contains("not inside a git repository"),
        "{}",
        out.stderr
    );
    lab.ok(&[
        "new",
        "fs",
        "--template",
        "echo",
        "--repo",
        &a,
        "--repo",
        &w,
    ]);
    lab.wait_until("the setup ran in both repositories", || {
        let s = lab.screen("ws");
        s.contains("setup-in-api") && s.contains("setup-in-web")
    });
    let list: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    let pane = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "fs")
        .unwrap()
        .clone();
    let repos: Vec<PathBuf> = pane["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect();
    assert_eq!(repos.len(), 2, "{pane}");
    for (member, name) in repos.iter().zip(["api", "web"]) {
        assert!(member.ends_with(name), "{member:?}");
        assert_eq!(git(member, &["branch", "--show-current"]).trim(), "hive/fs");
    }
    // Each member is a worktree of its own repository.
    assert!(git(&api, &["worktree", "list"]).contains(&repos[0].display().to_string()));
    assert!(git(&web, &["worktree", "list"]).contains(&repos[1].display().to_string()));
    // Closed with --discard: every member and its branch go, then the root.
    let root = repos[0].parent().unwrap().to_owned();
    lab.ok(&["close", "fs", "--discard"]);
    lab.wait_until("the workspace removed", || !root.exists());
    assert_eq!(git(&api, &["worktree", "list"]).lines().count(), 1);
    assert!(
        git(&web, &["branch", "--list", "hive/fs"])
            .trim()
            .is_empty()
    );
    lab.stop("ws");
}
