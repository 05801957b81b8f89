//! Workspaces (issue 52) on real temporary repositories: one pane's
//! worktrees of two repositories, made under one root; the service's diff
//! grouped by repository (each against its own main checkout), a conflict
//! with another pane predicted in the one repository they share, one
//! repository merged and not the other; a member a kill left half made is
//! removed and built again; two repositories of one name get two
//! directories.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

use crate::support;

use std::path::{Path, PathBuf};

use hive::config::{AgentConfig, WorktreeSetting};
use hive::worktree::{self, BringMode, DiffScope, WorktreeEvent, WorktreeRequest, workspace};
use support::git::{git, init_repo};

/// A repository at `dir` with `README.md` committed on `main`.
fn repo(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    init_repo(dir);
    std::fs::write(dir.join("README.md"), "one\ntwo\nthree\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    dir.canonicalize().unwrap()
}

fn spec(id: &str) -> worktree::WorktreeRequestSpec {
    let mut a = AgentConfig::new(id, "script");
    a.worktree = Some(WorktreeSetting::Enabled(true));
    a.worktree_spec(None).unwrap()
}

async fn until<T>(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<WorktreeEvent>,
    pick: impl Fn(WorktreeEvent) -> Option<T>,
) -> T {
    loop {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
            .await
            .expect("a worktree event")
            .expect("service alive");
        if let Some(t) = pick(ev) {
            return t;
        }
    }
}

/// The worktrees git lists for `repo` (their paths).
fn listed(repo: &Path) -> Vec<String> {
    git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree ").map(str::to_owned))
        .collect()
}

#[test]
fn a_workspace_is_real_worktrees_on_one_branch_under_one_root() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let api = repo(&base.join("api"));
    let web = repo(&base.join("web"));
    let root = base.join("ws");
    let w = workspace::ensure_at(&root, &spec("t"), &[api.clone(), web.clone()]).unwrap();
    assert_eq!(w.cwd, root.canonicalize().unwrap());
    let names: Vec<&str> = w.repos.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["api", "web"]);
    for (m, main) in w.repos.iter().zip([&api, &web]) {
        // A real directory (not a link), a worktree of its repository.
        let meta = std::fs::symlink_metadata(&m.path).unwrap();
        assert!(meta.is_dir() && !meta.file_type().is_symlink());
        assert_eq!(git(&m.path, &["branch", "--show-current"]).trim(), "hive/t");
        assert!(listed(main).contains(&m.path.display().to_string()));
        assert_eq!(&m.repo, main);
    }
    // Made again (a restart): the same worktrees, nothing new.
    let again = workspace::ensure_at(&root, &spec("t"), &[api.clone(), web.clone()]).unwrap();
    assert!(!again.created);
    assert_eq!(
        again.repos,
        w.repos
            .iter()
            .map(|m| worktree::Worktree {
                created: false,
                ..m.clone()
            })
            .collect::<Vec<_>>()
    );
    // Removal takes each member and its branch, then the root.
    workspace::remove(&again, true).unwrap();
    assert!(!root.exists());
    assert_eq!(listed(&api).len(), 1);
    assert!(git(&web, &["branch", "--list", "hive/t"]).trim().is_empty());
}

#[test]
fn two_repositories_of_one_name_get_two_directories() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let a = repo(&base.join("one/app"));
    let b = repo(&base.join("two/app"));
    let root = base.join("ws");
    let w = workspace::ensure_at(&root, &spec("t"), &[a.clone(), b.clone()]).unwrap();
    let names: Vec<&str> = w.repos.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["app", "app-2"]);
    assert_eq!(w.repos[1].repo, b);
    // One repository twice is refused, saying so.
    let err = workspace::ensure(&spec("u"), &[a.clone(), a.join(".")]).unwrap_err();
    assert!(err.to_string().contains("are one repository"), "{err}");
}

/// A kill after `git worktree add` of the second member and before its
/// move: the marker, a whole first member and `.building-web` registered
/// in web's repository. The next start removes the half-made one and
/// builds it again; git lists no trace of it.
#[test]
fn a_member_a_kill_left_half_made_is_removed_and_built_again() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let api = repo(&base.join("api"));
    let web = repo(&base.join("web"));
    let root = base.join("ws");
    workspace::ensure_at(&root, &spec("t"), std::slice::from_ref(&api)).unwrap();
    // What the killed start left: its marker names web, and web's member
    // is still being built (half checked out: a file missing).
    let marker = root.join(workspace::MARKER);
    let text = std::fs::read_to_string(&marker).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["repos"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "web", "repo": web}));
    std::fs::write(&marker, m.to_string()).unwrap();
    let building = root.join(".building-web");
    git(
        &web,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "hive/t",
            &building.display().to_string(),
            "HEAD",
        ],
    );
    std::fs::remove_file(building.join("README.md")).unwrap();

    let w = workspace::ensure_at(&root, &spec("t"), &[api, web.clone()]).unwrap();
    assert!(!building.exists());
    let web_member = &w.repos[1];
    assert_eq!(web_member.path, root.join("web"));
    assert!(web_member.created);
    assert_eq!(
        std::fs::read_to_string(web_member.path.join("README.md")).unwrap(),
        "one\ntwo\nthree\n"
    );
    let web_list = listed(&web);
    assert!(
        !web_list.iter().any(|p| p.contains(".building")),
        "{web_list:?}"
    );
    assert!(
        git(&web_member.path, &["status", "--porcelain"])
            .trim()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diff_is_grouped_by_repository_and_one_repository_merges_alone() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let api = repo(&base.join("api"));
    let web = repo(&base.join("web"));
    let ws =
        workspace::ensure_at(&base.join("ws"), &spec("t"), &[api.clone(), web.clone()]).unwrap();
    // Another pane in a worktree of api alone.
    let mut other = AgentConfig::new("b", "script");
    other.worktree = Some(WorktreeSetting::Enabled(true));
    let b = worktree::ensure(&api, &other.worktree_spec(None).unwrap()).unwrap();

    // The agent edits both repositories from the workspace root; b edits
    // the same line of api's README.
    std::fs::write(ws.cwd.join("api/README.md"), "one\nTWO from t\nthree\n").unwrap();
    std::fs::write(ws.cwd.join("web/page.html"), "<p>new</p>\n").unwrap();
    std::fs::write(b.path.join("README.md"), "one\nTWO from b\nthree\n").unwrap();

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let svc = worktree::spawn_service(vec![(0, ws.clone()), (1, b.clone())], tx);
    svc.send(WorktreeRequest::Diff {
        pane: 0,
        scope: DiffScope::Overall,
    })
    .unwrap();
    let files = until(&mut rx, |ev| match ev {
        WorktreeEvent::Diff { result, .. } => Some(result),
        _ => None,
    })
    .await
    .unwrap();
    let shown: Vec<(String, String)> = files
        .iter()
        .map(|f| (f.repo.clone(), f.path.clone()))
        .collect();
    assert_eq!(
        shown,
        [
            ("api".to_owned(), "README.md".to_owned()),
            ("web".to_owned(), "page.html".to_owned())
        ]
    );
    assert_eq!(files[0].shown(), "api/README.md");

    // The conflict with b is in api, named as the workspace names it.
    let found = until(&mut rx, |ev| match ev {
        WorktreeEvent::Conflicts(p) if !p.conflicts.is_empty() => Some(p),
        _ => None,
    })
    .await;
    assert_eq!(found.conflicts.len(), 1, "{found:?}");
    let c = &found.conflicts[0];
    assert_eq!((c.a.as_str(), c.b.as_deref()), ("t", Some("b")));
    assert_eq!(c.files, ["api/README.md"]);
    assert_eq!(found.pending, ["t", "b"]);

    // Merging web alone: web's main checkout gets the page, api's is as
    // it was.
    svc.send(WorktreeRequest::Bring {
        pane: 0,
        mode: BringMode::Merge,
        message: Some("the page".into()),
        repos: vec!["web".into()],
    })
    .unwrap();
    let brought = until(&mut rx, |ev| match ev {
        WorktreeEvent::Brought { result, .. } => Some(result),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(brought.files, ["web/page.html"]);
    assert_eq!(
        std::fs::read_to_string(web.join("page.html")).unwrap(),
        "<p>new</p>\n"
    );
    assert_eq!(
        std::fs::read_to_string(api.join("README.md")).unwrap(),
        "one\ntwo\nthree\n"
    );
    // A name that is not one of the pane's repositories is said.
    svc.send(WorktreeRequest::Bring {
        pane: 0,
        mode: BringMode::Merge,
        message: None,
        repos: vec!["lib".into()],
    })
    .unwrap();
    let refused = until(&mut rx, |ev| match ev {
        WorktreeEvent::Brought { result, .. } => Some(result),
        _ => None,
    })
    .await
    .unwrap_err();
    assert!(
        refused.contains("no repository `lib`") && refused.contains("api, web"),
        "{refused}"
    );
    // Then all: api would conflict once b is home, so b goes first.
    svc.send(WorktreeRequest::Bring {
        pane: 1,
        mode: BringMode::Merge,
        message: None,
        repos: Vec::new(),
    })
    .unwrap();
    until(&mut rx, |ev| match ev {
        WorktreeEvent::Brought { result, .. } => Some(result.unwrap()),
        _ => None,
    })
    .await;
    svc.send(WorktreeRequest::Bring {
        pane: 0,
        mode: BringMode::Merge,
        message: None,
        repos: Vec::new(),
    })
    .unwrap();
    let conflicted = until(&mut rx, |ev| match ev {
        WorktreeEvent::Brought { conflicted, .. } => Some(conflicted),
        _ => None,
    })
    .await;
    assert_eq!(conflicted, ["api/README.md"]);
}
