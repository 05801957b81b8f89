//! `forge::gh::Gh` against the project's fake `gh` (tests/fake/fake_gh.py)
//! and a real bare repository as its remote: each call hive makes, read
//! back as gh 2.x documents it, and each failure said plainly.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hive::forge::gh::Gh;
use hive::forge::{Forge, ForgeError, MergeMethod, Mergeable, NewPr, Outcome, PrState};
use serde_json::json;

use crate::support::git::{git, repo_with_remote};

struct Lab {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    remote: PathBuf,
    state: PathBuf,
    gh: Gh,
}

fn lab(timeout: Duration) -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let remote = dir.path().join("remote.git");
    let state = dir.path().join("state");
    std::fs::create_dir_all(state.join("issues")).unwrap();
    repo_with_remote(&repo, &remote, "a.txt", "one\n");
    let repo_json = json!({"owner": "acme", "name": "widget", "login": "me",
                           "remote": remote, "default_branch": "main"});
    std::fs::write(state.join("repo.json"), repo_json.to_string()).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    std::fs::copy(
        fixtures.join("fixtures/forge/issue_view.json"),
        state.join("issues/7.json"),
    )
    .unwrap();
    let ci =
        json!({"checks": [{"name": "test", "fails_when": "BROKEN", "log": "test\tRun\tboom\n"}]});
    std::fs::write(state.join("ci.json"), ci.to_string()).unwrap();
    let wrapper = dir.path().join("gh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec python3 '{}' --state '{}' \"$@\"\n",
            fixtures.join("fake/fake_gh.py").display(),
            state.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    Lab {
        gh: Gh::new(wrapper.to_str().unwrap(), timeout),
        _dir: dir,
        repo,
        remote,
        state,
    }
}

fn branch_with(lab: &Lab, branch: &str, file: &str) {
    git(&lab.repo, &["checkout", "-q", "-b", branch]);
    std::fs::write(lab.repo.join(file), "x\n").unwrap();
    git(&lab.repo, &["add", "."]);
    git(&lab.repo, &["commit", "-q", "-m", "change"]);
    git(&lab.repo, &["push", "-q", "origin", branch]);
}

#[test]
fn an_issue_a_pull_request_its_checks_and_its_merge() {
    let lab = lab(Duration::from_secs(20));
    let issue = lab.gh.issue(&lab.repo, 7).unwrap();
    assert_eq!(
        (issue.number, issue.title.as_str()),
        (7, "Fix the parser: it panics")
    );

    let new = NewPr {
        head: "hive/7-x".into(),
        base: None,
        title: "Fix".into(),
        body: "Closes #7.".into(),
        draft: true,
    };
    // Not pushed yet: gh's own refusal.
    let err = lab.gh.open_pr(&lab.repo, &new).unwrap_err();
    assert!(
        matches!(err, ForgeError::Failed { .. }) && err.to_string().contains("Head sha"),
        "{err}"
    );
    branch_with(&lab, "hive/7-x", "BROKEN");
    let (number, url) = lab.gh.open_pr(&lab.repo, &new).unwrap();
    assert_eq!(
        (number, url.as_str()),
        (8, "https://github.com/acme/widget/pull/8")
    );

    let pr = lab.gh.pr(&lab.repo, "hive/7-x").unwrap();
    assert_eq!(
        (pr.state, pr.draft, pr.mergeable),
        (PrState::Open, true, Mergeable::Mergeable)
    );
    assert_eq!(pr.checks.len(), 1);
    assert_eq!(pr.checks[0].outcome, Outcome::Failed);
    let run = pr.checks[0].run_id.clone().unwrap();
    assert_eq!(
        lab.gh.failed_log(&lab.repo, &run).unwrap(),
        "test\tRun\tboom\n"
    );

    // A draft is not merged; ready, it is, onto the remote's main.
    let err = lab.gh.merge(&lab.repo, 8, MergeMethod::Squash).unwrap_err();
    assert!(err.to_string().contains("still a draft"), "{err}");
    lab.gh.ready(&lab.repo, 8).unwrap();
    let said = lab.gh.merge(&lab.repo, 8, MergeMethod::Squash).unwrap();
    assert!(
        said.contains("Squashed and merged pull request acme/widget#8"),
        "{said}"
    );
    assert_eq!(
        git(&lab.remote, &["log", "-1", "--format=%s", "main"]).trim(),
        "Fix (#8)"
    );
    assert_eq!(lab.gh.pr(&lab.repo, "8").unwrap().state, PrState::Merged);
}

#[test]
fn a_conflicting_branch_reads_as_conflicting() {
    let lab = lab(Duration::from_secs(20));
    branch_with(&lab, "hive/1-a", "a.txt");
    git(&lab.repo, &["checkout", "-q", "main"]);
    std::fs::write(lab.repo.join("a.txt"), "two\n").unwrap();
    git(&lab.repo, &["commit", "-q", "-am", "main moves"]);
    git(&lab.repo, &["push", "-q", "origin", "main"]);
    let new = NewPr {
        head: "hive/1-a".into(),
        base: None,
        // A title that looks like a flag is still the title.
        title: "-R evil/widget".into(),
        body: "--draft".into(),
        draft: false,
    };
    lab.gh.open_pr(&lab.repo, &new).unwrap();
    let pr = lab.gh.pr(&lab.repo, "hive/1-a").unwrap();
    assert_eq!(pr.mergeable, Mergeable::Conflicting);
    assert!(!pr.draft);
    let saved = std::fs::read_to_string(lab.state.join(format!("prs/{}.json", pr.number))).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(
        (saved["title"].as_str(), saved["body"].as_str()),
        (Some("-R evil/widget"), Some("--draft"))
    );
    let err = lab
        .gh
        .merge(&lab.repo, pr.number, MergeMethod::Squash)
        .unwrap_err();
    assert!(err.to_string().contains("not mergeable"), "{err}");
}

#[test]
fn logged_out_missing_and_hung_are_said_not_waited_for() {
    let lab = lab(Duration::from_secs(1));
    std::fs::write(lab.state.join("logged_out"), "").unwrap();
    let err = lab.gh.issue(&lab.repo, 7).unwrap_err();
    assert!(matches!(err, ForgeError::LoggedOut { .. }), "{err:?}");
    std::fs::remove_file(lab.state.join("logged_out")).unwrap();

    std::fs::write(lab.state.join("hang"), "").unwrap();
    let start = std::time::Instant::now();
    let err = lab.gh.pr(&lab.repo, "x").unwrap_err();
    assert!(
        matches!(err, ForgeError::Timeout { secs: 1, .. }),
        "{err:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    std::fs::remove_file(lab.state.join("hang")).unwrap();

    let err = lab.gh.issue(&lab.repo, 99).unwrap_err();
    assert!(
        err.to_string().contains("Could not resolve to an issue"),
        "{err}"
    );
    let missing = Gh::new("/nonexistent/gh", Duration::from_secs(1));
    let err = missing.issue(&lab.repo, 7).unwrap_err();
    assert!(matches!(err, ForgeError::Missing { .. }), "{err:?}");
}

#[test]
fn the_files_in_conflict_come_from_git() {
    let lab = lab(Duration::from_secs(20));
    std::fs::write(lab.repo.join("b.txt"), "b\n").unwrap();
    git(&lab.repo, &["add", "."]);
    git(&lab.repo, &["commit", "-q", "-m", "b"]);
    git(&lab.repo, &["push", "-q", "origin", "main"]);
    git(&lab.repo, &["checkout", "-q", "-b", "topic"]);
    std::fs::write(lab.repo.join("a.txt"), "topic\n").unwrap();
    std::fs::write(lab.repo.join("b.txt"), "topic\n").unwrap();
    std::fs::write(lab.repo.join("c.txt"), "new\n").unwrap();
    git(&lab.repo, &["add", "."]);
    git(&lab.repo, &["commit", "-q", "-m", "topic"]);
    let timeout = Duration::from_secs(20);
    assert!(hive::forge::conflicts::files(&lab.repo, "main", timeout).is_empty());
    // Someone else moves main on the remote, in a.txt only.
    let other = lab.repo.parent().unwrap().join("other");
    git(
        lab.repo.parent().unwrap(),
        &[
            "clone",
            "-q",
            lab.remote.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    git(&other, &["config", "user.email", "o@example.com"]);
    git(&other, &["config", "user.name", "O"]);
    std::fs::write(other.join("a.txt"), "main\n").unwrap();
    git(&other, &["commit", "-q", "-am", "main moves"]);
    git(&other, &["push", "-q", "origin", "main"]);
    assert_eq!(
        hive::forge::conflicts::files(&lab.repo, "main", timeout),
        ["a.txt"]
    );
    // The worktree is untouched.
    assert_eq!(
        std::fs::read_to_string(lab.repo.join("a.txt")).unwrap(),
        "topic\n"
    );
}
