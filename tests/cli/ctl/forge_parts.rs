//! A workspace pane's pull requests (issue 52) through `hive ctl`, with
//! the project's fake `gh` (tests/fake/fake_gh.py) serving two
//! repositories, each with its own bare remote and forge as gh finds them
//! (by the checkout's `origin`): `pr open` pushes each repository's
//! branch and opens one pull request in each, each body saying which part
//! it is and naming the other by address; both are watched together (the
//! title carries both, a failed check of one reaches the pane naming its
//! repository, `pr status` shows both); `pr merge` merges both.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Lab;
use crate::support::git::{git, repo_with_remote};

/// A repository `name` with a bare remote and its fake forge's state.
fn forge_repo(lab: &Lab, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let repo = lab.path(name);
    let remote = lab.path(&format!("{name}.git"));
    let state = lab.path(&format!("forge-{name}"));
    std::fs::create_dir_all(&state).unwrap();
    repo_with_remote(&repo, &remote, "README.md", &format!("{name}\n"));
    let write = |file: &str, v: Value| std::fs::write(state.join(file), v.to_string()).unwrap();
    write(
        "repo.json",
        json!({"owner": "acme", "name": name, "login": "me",
               "remote": remote, "default_branch": "main"}),
    );
    write(
        "ci.json",
        json!({"checks": [{"name": "test", "workflow": "CI", "fails_when": "BROKEN",
               "log": format!("test\tRun tests\t2026-12-02T10:00:00Z error: BROKEN in {name}\n")}]}),
    );
    (repo.canonicalize().unwrap(), remote, state)
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn pane(lab: &Lab, id: &str) -> Value {
    let list: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_workspace_opens_one_pull_request_per_repository_each_naming_the_other() {
    let Some(lab) = Lab::new() else { return };
    let (api, api_remote, api_state) = forge_repo(&lab, "api");
    let (web, web_remote, web_state) = forge_repo(&lab, "web");
    let all = lab.path("forges");
    std::fs::create_dir_all(&all).unwrap();
    std::fs::write(
        all.join("forges.json"),
        json!({api_remote.display().to_string(): api_state,
               web_remote.display().to_string(): web_state})
        .to_string(),
    )
    .unwrap();
    let gh = lab.path("bin/gh");
    std::fs::create_dir_all(gh.parent().unwrap()).unwrap();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_gh.py");
    std::fs::write(
        &gh,
        format!(
            "#!/bin/sh\nexec python3 '{}' --state '{}' \"$@\"\n",
            fake.display(),
            all.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let config = lab.path("partstest.toml");
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nid = \"echo\"\nprovider = \"script\"\nscript = \"{}\"\n\n\
             [forge]\ngh = \"{}\"\nwatch_every_secs = 1\ntimeout_secs = 10\nmax_attempts = 4\n",
            echo.display(),
            gh.display()
        ),
    )
    .unwrap();
    lab.launch_with("parts", &config, "partstest.sock");
    let (a, w) = (api.display().to_string(), web.display().to_string());
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
    let members: Vec<PathBuf> = pane(&lab, "fs")["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| PathBuf::from(r.as_str().unwrap()))
        .collect();
    assert_eq!(members.len(), 2);
    let (wa, ww) = (&members[0], &members[1]);
    // The change: a commit in each repository (api's breaks its check).
    std::fs::write(wa.join("BROKEN"), "oops\n").unwrap();
    git(wa, &["add", "."]);
    git(wa, &["commit", "-q", "-m", "Add the endpoint"]);
    std::fs::write(ww.join("client.js"), "call()\n").unwrap();
    git(ww, &["add", "."]);
    git(ww, &["commit", "-q", "-m", "Call the endpoint"]);

    let opened = lab.ok(&["pr", "open", "fs"]);
    assert_eq!(
        opened,
        "opened 2 pull requests from fs:\n  api #1: https://github.com/acme/api/pull/1\n  \
         web #1: https://github.com/acme/web/pull/1"
    );
    for (remote, wt) in [(&api_remote, wa), (&web_remote, ww)] {
        let pushed = git(remote, &["rev-parse", "refs/heads/hive/fs"]);
        assert_eq!(pushed.trim(), git(wt, &["rev-parse", "HEAD"]).trim());
    }
    let pa = read(&api_state.join("prs/1.json"));
    let pw = read(&web_state.join("prs/1.json"));
    let (ba, bw) = (pa["body"].as_str().unwrap(), pw["body"].as_str().unwrap());
    assert!(
        ba.starts_with("Part 1 of 2 of one change across repositories (api, web):"),
        "{ba}"
    );
    assert!(
        ba.contains("- api: this pull request\n- web: https://github.com/acme/web/pull/1\n"),
        "{ba}"
    );
    assert!(bw.starts_with("Part 2 of 2"), "{bw}");
    assert!(
        bw.contains("- api: https://github.com/acme/api/pull/1\n- web: this pull request\n"),
        "{bw}"
    );
    assert!(bw.contains("- Call the endpoint"), "{bw}");
    assert_eq!(pa["title"], "Add the endpoint (api, 1 of 2)");
    assert_eq!(pa["isDraft"], true);

    // Watched together: both in the title, api's failure in the pane.
    lab.wait_until("both pull requests in the title", || {
        pane(&lab, "fs")["name"]
            .as_str()
            .is_some_and(|n| n.contains("api #1 draft ✗1") && n.contains("web #1 draft ✓1"))
    });
    lab.wait_until("api's failed check in the pane", || {
        let h = lab.ok(&["history", "fs"]);
        h.contains("About the pull request of repository api (#1")
            && h.contains("check `test` failed")
    });
    assert!(!lab.ok(&["history", "fs"]).contains("repository web (#1"));
    let status: Value = serde_json::from_str(&lab.ok(&["--json", "pr", "status", "fs"])).unwrap();
    assert_eq!(status["repo"], "api", "{status}");
    assert_eq!(status["parts"][0]["repo"], "web", "{status}");
    assert_eq!(status["parts"][0]["number"], 1, "{status}");
    // A second `pr open` is refused: the pane has its pull requests.
    lab.fails(&["pr", "open", "fs"], 7, "INVALID_STATE");

    // Merged on the user's word: each remote's main has its part.
    let merged = lab.ok(&["pr", "merge", "fs"]);
    assert!(
        merged.contains("api #1") && merged.contains("web #1"),
        "{merged}"
    );
    for (remote, subject) in [
        (&api_remote, "Add the endpoint (api, 1 of 2) (#1)"),
        (&web_remote, "Call the endpoint (web, 2 of 2) (#1)"),
    ] {
        let log = git(remote, &["log", "--format=%s", "main"]);
        assert!(log.starts_with(subject), "{log}");
    }
    lab.stop("parts");
}
