//! A repository joins a running pane's workspace (issue 52): `hive ctl
//! repo add` and the console's `/repo add` go through the one verb. The
//! pane (the fake Claude Code of tests/fake, on real git repositories) is
//! refused while its turn runs; between turns the new repository gets a
//! worktree on the pane's branch beside the others, `list --json` names
//! it, and Claude Code starts again on its own session (`--resume`) with
//! every member as `--add-dir`. A repository the workspace has, a
//! directory outside git, a pane without a workspace are refused.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Lab;
use crate::support::git::{git, init_repo};

fn repo(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    init_repo(dir);
    std::fs::write(dir.join("README.md"), "hello\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "init"]);
    dir.canonicalize().unwrap()
}

/// Each start of the fake Claude Code: its arguments.
fn starts(log: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            serde_json::from_value(v["argv"].clone()).unwrap()
        })
        .collect()
}

/// The values of `flag` in `argv`.
fn values<'a>(argv: &'a [String], flag: &str) -> Vec<&'a str> {
    argv.windows(2)
        .filter(|w| w[0] == flag)
        .map(|w| w[1].as_str())
        .collect()
}

fn members(lab: &Lab, pane: &str) -> Vec<PathBuf> {
    let list: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    let p = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == pane)
        .unwrap()
        .clone();
    p["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| PathBuf::from(r.as_str().unwrap()))
        .collect()
}

#[test]
fn repo_add_joins_a_running_workspace_and_claude_resumes_with_the_new_root() {
    let Some(lab) = Lab::new() else { return };
    let api = repo(&lab.path("src/api"));
    let web = repo(&lab.path("src/web"));
    let lib = repo(&lab.path("src/lib"));
    let util = repo(&lab.path("src/util"));
    let fake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake/fake_claude.py");
    let log = lab.path("argv.jsonl");
    let config = lab.path("repotest.toml");
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nid = \"fs\"\nprovider = \"claude\"\ncommand = [\"python3\", \"{fake}\"]\n\
             env = {{ FAKE_CLAUDE_ARGV_FILE = \"{}\", FAKE_CLAUDE_DELAY_MS = \"1\", FAKE_CLAUDE_TRANSCRIPTS = \"1\" }}\n\
             worktree = true\nrepos = [\"{}\", \"{}\"]\n\n\
             [[agent]]\nid = \"solo\"\nprovider = \"claude\"\ncommand = [\"python3\", \"{fake}\"]\n",
            log.display(),
            api.display(),
            web.display()
        ),
    )
    .unwrap();
    lab.launch_with("rp", &config, "repotest.sock");
    lab.wait_until("claude started", || starts(&log).len() == 1);
    let first = starts(&log).remove(0);
    assert_eq!(values(&first, "--add-dir").len(), 2, "{first:?}");
    // A turn, so the pane has a session to go on with.
    let turn = lab.ok(&["send", "fs", "hello"]);
    lab.ok(&["wait", &turn]);
    let l = lib.display().to_string();
    // Mid-turn: refused, nothing made.
    let slow = lab.ok(&["send", "fs", "slow"]);
    let out = lab.fails(&["repo", "add", "fs", &l], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("turn is still running"),
        "{}",
        out.stderr
    );
    lab.ok(&["wait", &slow]);
    assert_eq!(git(&lib, &["worktree", "list"]).lines().count(), 1);
    // Between turns: a worktree of lib on the pane's branch, beside api.
    let added: Value = serde_json::from_str(&lab.ok(&["repo", "add", "fs", &l, "--json"])).unwrap();
    assert_eq!(added["added"], "lib", "{added}");
    let member = PathBuf::from(added["path"].as_str().unwrap());
    let repos = members(&lab, "fs");
    assert_eq!(repos.len(), 3, "{repos:?}");
    assert_eq!(repos[2], member);
    assert_eq!(member.parent(), repos[0].parent());
    assert_eq!(
        git(&member, &["branch", "--show-current"]).trim(),
        "hive/fs"
    );
    assert!(git(&lib, &["worktree", "list"]).contains(&member.display().to_string()));
    assert!(member.join("README.md").is_file());
    // Claude Code again, on the same session, with the three roots.
    lab.wait_until("claude started again", || starts(&log).len() == 2);
    let again = starts(&log).remove(1);
    assert_eq!(values(&again, "--resume").len(), 1, "{again:?}");
    let roots = values(&again, "--add-dir");
    let want: Vec<String> = repos.iter().map(|r| r.display().to_string()).collect();
    assert_eq!(roots, want, "{again:?}");
    // The conversation went on: the resumed session holds both turns.
    let turn = lab.ok(&["send", "fs", "after"]);
    let reply = lab.ok(&["wait", &turn]);
    assert!(reply.contains("(earlier turns: 2)"), "{reply}");
    // The console's /repo add, relative to the workspace's first repository.
    lab.type_line("rp", "/repo add ../util");
    lab.wait_until("util joined", || members(&lab, "fs").len() == 4);
    let util_member = members(&lab, "fs").remove(3);
    assert!(git(&util, &["worktree", "list"]).contains(&util_member.display().to_string()));
    lab.wait_until("the console says so", || {
        lab.screen("rp").contains("added util")
    });
    // Refused: a repository it has, a directory outside git, no workspace.
    let a = api
        .join("README.md")
        .parent()
        .unwrap()
        .display()
        .to_string();
    let out = lab.fails(&["repo", "add", "fs", &a], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("in this workspace already"),
        "{}",
        out.stderr
    );
    let out = lab.fails(&["repo", "add", "fs", "/"], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("not inside a git repository"),
        "{}",
        out.stderr
    );
    let out = lab.fails(&["repo", "add", "solo", &l], 2, "BAD_REQUEST");
    assert!(out.stderr.contains("has no workspace"), "{}", out.stderr);
    lab.stop("rp");
}
