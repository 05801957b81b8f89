//! `/handoff` that carries the work (issue 50), through `hive ctl handoff`
//! against a real server in tmux and a real git repository: refused while
//! the source's turn runs or waits on an approval; `--branched` makes a
//! new pane in a new worktree from the source's branch with its commits,
//! edits and untracked files, the source going on; shared, an open pane
//! starts again in the source's worktree and the source stops. Each brief
//! names the directory the target works in, never one it cannot reach.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::Lab;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@e"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with one commit, and a config: `src` in its own worktree,
/// `other` in the main checkout, `asker` asking before every write.
fn setup(lab: &Lab) -> (std::path::PathBuf, std::path::PathBuf) {
    let repo = lab.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("parse.rs"), "fn parse() {}\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "init"]);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl");
    let config = lab.path("handofftest.toml");
    let agent = |id: &str, script: &str, extra: &str| {
        format!(
            "[[agent]]\nid = \"{id}\"\nprovider = \"script\"\nscript = \"{}\"\ncwd = \"{}\"\n{extra}",
            fixtures.join(script).display(),
            repo.display()
        )
    };
    let text = [
        agent("src", "echo.toml", "worktree = true\n"),
        agent("other", "echo.toml", ""),
        agent("asker", "asker.toml", ""),
    ]
    .join("\n");
    std::fs::write(&config, text).unwrap();
    (repo, config)
}

fn idle(lab: &Lab, pane: &str) {
    lab.wait_until(&format!("{pane} idle"), || {
        lab.status(pane)["state"] == "idle"
    });
}

#[test]
fn handoff_carries_the_worktree_shared_or_branched() {
    let Some(lab) = Lab::new() else { return };
    let (repo, config) = setup(&lab);
    lab.launch_with("handoff", &config, "handofftest.sock");
    idle(&lab, "src");
    let turn = lab.ok(&["send", "src", "port the parser to nom"]);
    lab.ok(&["wait", &turn]);
    // The source's work: a commit, an edit, a new file.
    let wt = repo.join(".hive/worktrees/src");
    std::fs::write(wt.join("lexer.rs"), "fn lex() {}\n").unwrap();
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-qm", "lexer"]);
    std::fs::write(wt.join("parse.rs"), "fn parse() { todo!() }\n").unwrap();
    std::fs::write(wt.join("grammar.txt"), "expr := term\n").unwrap();

    // Refused while a turn runs, and while an approval waits.
    lab.ok(&["send", "src", "slow"]);
    lab.wait_until("src busy", || lab.status("src")["state"] == "streaming");
    let out = lab.fails(&["handoff", "src", "--new", "other"], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("turn is still running"),
        "{}",
        out.stderr
    );
    lab.ok(&["cancel", "src"]);
    idle(&lab, "src");
    lab.ok(&["send", "asker", "write"]);
    lab.wait_until("asker asks", || {
        lab.status("asker")["state"] == "awaiting_approval"
    });
    let out = lab.fails(&["handoff", "asker", "--to", "other"], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("waits on an approval"),
        "{}",
        out.stderr
    );

    // Branched: a new pane in a new worktree with all of the work.
    let done: Value = serde_json::from_str(&lab.ok(&[
        "handoff",
        "src",
        "--new",
        "other",
        "--branched",
        "--json",
    ]))
    .unwrap();
    assert_eq!(done["to"], "other-2", "{done}");
    assert_eq!(done["branch"], "hive/other-2", "{done}");
    let nwt = repo.join(".hive/worktrees/other-2");
    assert_eq!(
        std::fs::read_to_string(nwt.join("lexer.rs")).unwrap(),
        "fn lex() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(nwt.join("parse.rs")).unwrap(),
        "fn parse() { todo!() }\n"
    );
    assert_eq!(
        std::fs::read_to_string(nwt.join("grammar.txt")).unwrap(),
        "expr := term\n"
    );
    assert_eq!(
        git(&nwt, &["rev-parse", "HEAD"]),
        git(&wt, &["rev-parse", "HEAD"])
    );
    lab.wait_until("the brief answered", || {
        lab.ok(&["history", "other-2"])
            .contains("Hand-off from src")
            && lab.status("other-2")["turns"] == 1
    });
    let brief = lab.ok(&["history", "other-2"]);
    assert!(brief.contains("1. port the parser to nom"), "{brief}");
    assert!(brief.contains(".hive/worktrees/other-2"), "{brief}");
    assert!(
        !brief.contains(".hive/worktrees/src"),
        "names a path the target does not work in: {brief}"
    );
    assert!(
        lab.status("src")["alive"] == true,
        "branched: the source goes on"
    );

    // Shared: `other` starts again in src's worktree; src stops.
    let done: Value =
        serde_json::from_str(&lab.ok(&["handoff", "src", "--to", "other", "--json"])).unwrap();
    assert_eq!(
        std::fs::canonicalize(done["cwd"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(&wt).unwrap(),
        "{done}"
    );
    lab.wait_until("other took the work", || {
        lab.ok(&["history", "other"]).contains("Hand-off from src")
    });
    let brief = lab.ok(&["history", "other"]);
    assert!(
        brief.contains(".hive/worktrees/src") && brief.contains("(branch hive/src)"),
        "{brief}"
    );
    let src = lab.status("src");
    assert_eq!(src["alive"], false, "{src}");
    assert!(
        src["failed"]
            .as_str()
            .unwrap()
            .contains("handed off to other"),
        "{src}"
    );
    lab.stop("handoff");
}

/// Issue 52: a branched hand-off of a workspace pane makes a new workspace
/// with a branch of every repository, each with its member's commits and
/// uncommitted work; the new pane gets both as its repositories.
#[test]
fn a_branched_handoff_of_a_workspace_branches_every_repository() {
    let Some(lab) = Lab::new() else { return };
    let mut repos = Vec::new();
    for name in ["api", "web"] {
        let repo = lab.path(name);
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("README.md"), format!("{name}\n")).unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "init"]);
        repos.push(repo.canonicalize().unwrap());
    }
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let config = lab.path("wshandoff.toml");
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nid = \"ws\"\nprovider = \"script\"\nscript = \"{e}\"\nworktree = true\n\
             repos = [\"{}\", \"{}\"]\n\n[[agent]]\nid = \"other\"\nprovider = \"script\"\n\
             script = \"{e}\"\ncwd = \"{}\"\n",
            repos[0].display(),
            repos[1].display(),
            repos[0].display(),
            e = echo.display()
        ),
    )
    .unwrap();
    lab.launch_with("wsh", &config, "wshandoff.sock");
    idle(&lab, "ws");
    let list: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    let members: Vec<std::path::PathBuf> = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "ws")
        .unwrap()["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().into())
        .collect();
    // api: an uncommitted edit and a new file; web: a commit.
    std::fs::write(members[0].join("README.md"), "api, edited\n").unwrap();
    std::fs::write(members[0].join("new.rs"), "fn new() {}\n").unwrap();
    std::fs::write(members[1].join("client.js"), "call()\n").unwrap();
    git(&members[1], &["add", "."]);
    git(&members[1], &["commit", "-qm", "client"]);

    let done: Value =
        serde_json::from_str(&lab.ok(&["handoff", "ws", "--new", "other", "--branched", "--json"]))
            .unwrap();
    assert_eq!(done["to"], "other-2", "{done}");
    assert_eq!(done["branch"], "hive/other-2", "{done}");
    let root = std::path::PathBuf::from(done["worktree"].as_str().unwrap());
    let (api, web) = (root.join("api"), root.join("web"));
    for m in [&api, &web] {
        assert_eq!(git(m, &["branch", "--show-current"]).trim(), "hive/other-2");
    }
    assert_eq!(
        std::fs::read_to_string(api.join("README.md")).unwrap(),
        "api, edited\n"
    );
    assert_eq!(
        std::fs::read_to_string(api.join("new.rs")).unwrap(),
        "fn new() {}\n"
    );
    assert_eq!(
        git(&web, &["rev-parse", "HEAD"]),
        git(&members[1], &["rev-parse", "HEAD"])
    );
    assert!(git(&repos[1], &["worktree", "list"]).contains(&web.display().to_string()));
    // The source is only read; the new pane has both repositories.
    assert_eq!(
        git(&members[0], &["status", "--porcelain"]).lines().count(),
        2
    );
    lab.wait_until("the brief answered", || lab.status("other-2")["turns"] == 1);
    let brief = lab.ok(&["history", "other-2"]);
    assert!(brief.contains(&root.display().to_string()), "{brief}");
    let list: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    let theirs = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "other-2")
        .unwrap()["repos"]
        .clone();
    assert_eq!(theirs, serde_json::json!([api, web]), "{theirs}");
    lab.stop("wsh");
}
