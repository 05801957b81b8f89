//! Review in the diff view (issue 31) on real temporary repositories:
//! rejecting a hunk reverts exactly that hunk in the worktree (the accepted
//! ones stay, line for line); rejecting a file puts it back as the diff's
//! base had it (restored, or removed when the agent added it), for the
//! overall diff and for the last turn's, through the git service.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;

use std::path::{Path, PathBuf};

use hive::config::{AgentConfig, WorktreeSetting};
use hive::worktree::review::{reject_file, reject_hunk};
use hive::worktree::{self, DiffScope, WorktreeEvent, WorktreeRequest};
use support::git::{git, init_repo};

/// Thirty numbered lines: edits far apart make separate hunks.
fn base() -> Vec<String> {
    (1..=30).map(|i| format!("line {i}")).collect()
}

fn text(lines: &[String]) -> String {
    lines.join("\n") + "\n"
}

fn repo() -> (tempfile::TempDir, PathBuf, worktree::Worktree) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    init_repo(&root);
    std::fs::write(root.join("f.txt"), text(&base())).unwrap();
    std::fs::write(root.join("gone.txt"), "to be deleted\n").unwrap();
    std::fs::write(root.join("old.txt"), "to be renamed\n").unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "initial"]);
    let mut a = AgentConfig::new("a", "script");
    a.cwd = Some(root.clone());
    a.worktree = Some(WorktreeSetting::Enabled(true));
    let w = worktree::ensure(&root, &a.worktree_spec(None).unwrap()).unwrap();
    (dir, root, w)
}

/// The agent's edit: lines 2, 15 and 28 replaced.
fn edited() -> Vec<String> {
    let mut lines = base();
    for i in [2, 15, 28] {
        lines[i - 1] = format!("LINE {i} by the agent");
    }
    lines
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap()
}

#[test]
fn rejecting_a_hunk_leaves_exactly_the_accepted_lines() {
    let (_d, root, w) = repo();
    std::fs::write(w.path.join("f.txt"), text(&edited())).unwrap();
    let files = worktree::diff::overall(&root, &w.path).unwrap();
    let f = files.iter().find(|f| f.path == "f.txt").unwrap();
    assert_eq!(f.removed(), 3);
    // The middle hunk is rejected; the first and last are accepted.
    reject_hunk(&w.path, f, 1).unwrap();
    let mut expected = edited();
    expected[14] = "line 15".into();
    assert_eq!(read(&w.path, "f.txt"), text(&expected));
    // Then the first as well, from the diff as it was shown (offsets shift).
    reject_hunk(&w.path, f, 0).unwrap();
    expected[1] = "line 2".into();
    assert_eq!(read(&w.path, "f.txt"), text(&expected));
    // A hunk already reverted cannot be reverted twice: nothing is written.
    let err = reject_hunk(&w.path, f, 0).unwrap_err();
    assert!(
        err.to_string().contains("cannot revert that hunk of f.txt"),
        "{err}"
    );
    assert_eq!(read(&w.path, "f.txt"), text(&expected));
    assert!(reject_hunk(&w.path, f, 9).is_err());
}

#[test]
fn rejecting_a_file_restores_removes_or_renames_it_back() {
    let (_d, root, w) = repo();
    std::fs::write(w.path.join("f.txt"), text(&edited())).unwrap();
    std::fs::write(w.path.join("new.txt"), "added by the agent\n").unwrap();
    std::fs::remove_file(w.path.join("gone.txt")).unwrap();
    std::fs::rename(w.path.join("old.txt"), w.path.join("renamed.txt")).unwrap();
    // Staged or not makes no difference.
    git(&w.path, &["add", "-A"]);
    let files = worktree::diff::overall(&root, &w.path).unwrap();
    let from = worktree::diff::base(&root, &w.path).unwrap();
    for f in &files {
        reject_file(&w.path, &from, f).unwrap();
    }
    assert_eq!(read(&w.path, "f.txt"), text(&base()));
    assert!(!w.path.join("new.txt").exists());
    assert_eq!(read(&w.path, "gone.txt"), "to be deleted\n");
    assert_eq!(read(&w.path, "old.txt"), "to be renamed\n");
    assert!(!w.path.join("renamed.txt").exists());
    assert!(
        worktree::diff::overall(&root, &w.path).unwrap().is_empty(),
        "nothing left to review"
    );
    assert_eq!(git(&w.path, &["status", "--porcelain"]), "");
}

/// #53 item 4: the agent adds `dir/new.txt`; after the diff is read it
/// swaps `dir` for a symlink to a directory outside holding a `new.txt` of
/// the user's. Rejecting the added file (from the diff, and as a socket
/// client's `Reject` naming any path under the link would) deletes
/// nothing outside. Failed before: the outside file was removed.
#[test]
fn rejecting_an_added_file_never_deletes_through_a_swapped_symlink() {
    let (_d, root, w) = repo();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("new.txt"), "the user's\n").unwrap();
    std::fs::create_dir(w.path.join("dir")).unwrap();
    std::fs::write(w.path.join("dir/new.txt"), "added by the agent\n").unwrap();
    let files = worktree::diff::overall(&root, &w.path).unwrap();
    let from = worktree::diff::base(&root, &w.path).unwrap();
    let added = files.iter().find(|f| f.path == "dir/new.txt").unwrap();
    std::fs::remove_dir_all(w.path.join("dir")).unwrap();
    std::os::unix::fs::symlink(outside.path(), w.path.join("dir")).unwrap();
    let refused = reject_file(&w.path, &from, added).unwrap_err();
    assert!(refused.to_string().contains("symlink"), "{refused}");
    assert_eq!(read(outside.path(), "new.txt"), "the user's\n");
    // A crafted diff (a socket client's) naming a path out of the worktree.
    let out = outside.path().join("new.txt").display().to_string();
    for path in [out.as_str(), "../../new.txt", "dir/../dir/new.txt"] {
        let mut forged = added.clone();
        forged.path = path.to_owned();
        assert!(reject_file(&w.path, &from, &forged).is_err(), "{path}");
    }
    assert_eq!(read(outside.path(), "new.txt"), "the user's\n");
}

async fn next_rejected(rx: &mut tokio::sync::mpsc::UnboundedReceiver<WorktreeEvent>) -> String {
    loop {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
            .await
            .expect("an event")
            .expect("service alive");
        if let WorktreeEvent::Rejected { result, .. } = ev {
            return result.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_reverts_a_file_of_the_last_turn_to_the_turns_start() {
    let (_d, _root, w) = repo();
    // An earlier turn's work stays; only the last turn's change goes.
    std::fs::write(w.path.join("f.txt"), text(&edited())).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let svc = worktree::spawn_service(vec![(0, w.clone())], tx);
    svc.send(WorktreeRequest::TurnStarted { pane: 0 }).unwrap();
    svc.send(WorktreeRequest::Diff {
        pane: 0,
        scope: DiffScope::Overall,
    })
    .unwrap();
    loop {
        if let Some(WorktreeEvent::Diff { .. }) = rx.recv().await {
            break;
        }
    }
    std::fs::write(w.path.join("f.txt"), "rewritten in the last turn\n").unwrap();
    svc.send(WorktreeRequest::TurnEnded { pane: 0 }).unwrap();
    svc.send(WorktreeRequest::Diff {
        pane: 0,
        scope: DiffScope::LastTurn,
    })
    .unwrap();
    let files = loop {
        if let Some(WorktreeEvent::Diff {
            scope: DiffScope::LastTurn,
            result,
            ..
        }) = rx.recv().await
        {
            break result.unwrap();
        }
    };
    assert_eq!(files.len(), 1);
    svc.send(WorktreeRequest::Reject {
        pane: 0,
        scope: DiffScope::LastTurn,
        file: Box::new(files[0].clone()),
        hunk: None,
    })
    .unwrap();
    assert_eq!(next_rejected(&mut rx).await, "reverted f.txt");
    assert_eq!(read(&w.path, "f.txt"), text(&edited()));
}
