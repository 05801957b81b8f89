//! Conflicts before they happen and the conflict hand-off (issue 31), on
//! real temporary repositories: the prediction (`git merge-tree` on
//! snapshots, no checkout touched) agrees with a real merge on edits,
//! renames, deletions and additions; a merge that would conflict says so
//! before committing anything; the service predicts after a turn that
//! edited files; the hand-off rebases the agent's branch and lists every
//! conflicted file.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use hive::config::{AgentConfig, WorktreeSetting};
use hive::worktree::predict::Predictor;
use hive::worktree::{self, BringMode, WorktreeError, WorktreeEvent, WorktreeRequest};
use support::git::{git, init_repo};

const LINES: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

/// A repository with `a.txt`, `b.txt` (ten lines each) and `keep.txt`.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir(&root).unwrap();
    init_repo(&root);
    for f in ["a.txt", "b.txt", "keep.txt"] {
        std::fs::write(root.join(f), LINES).unwrap();
    }
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "initial"]);
    (dir, root)
}

fn ensure(id: &str, root: &Path) -> worktree::Worktree {
    let mut a = AgentConfig::new(id, "script");
    a.cwd = Some(root.to_owned());
    a.worktree = Some(WorktreeSetting::Enabled(true));
    let spec = a.worktree_spec(None).unwrap();
    worktree::ensure(root, &spec).unwrap()
}

/// An edit as an agent makes it: files changed, nothing committed.
#[derive(Clone, Copy)]
enum Op {
    /// Replace line `n` (1-based) of a file.
    Line(&'static str, usize, &'static str),
    Delete(&'static str),
    Rename(&'static str, &'static str),
    Add(&'static str, &'static str),
}

fn apply(dir: &Path, ops: &[Op]) {
    for op in ops {
        match *op {
            Op::Line(f, n, text) => {
                let old = std::fs::read_to_string(dir.join(f)).unwrap();
                let mut lines: Vec<&str> = old.lines().collect();
                lines[n - 1] = text;
                std::fs::write(dir.join(f), lines.join("\n") + "\n").unwrap();
            }
            Op::Delete(f) => std::fs::remove_file(dir.join(f)).unwrap(),
            Op::Rename(from, to) => std::fs::rename(dir.join(from), dir.join(to)).unwrap(),
            Op::Add(f, text) => std::fs::write(dir.join(f), text).unwrap(),
        }
    }
}

/// What a real `git merge` of `hive/a`, then `hive/b`, into the main
/// checkout leaves conflicted (sorted), undone afterwards.
fn real_merge(root: &Path, a: &Path, b: &Path) -> Vec<String> {
    for w in [a, b] {
        git(w, &["add", "-A"]);
        git(w, &["commit", "-q", "--allow-empty", "-m", "work"]);
    }
    let before = git(root, &["rev-parse", "HEAD"]);
    git(root, &["merge", "-q", "--no-ff", "--no-edit", "hive/a"]);
    let merged = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["merge", "-q", "--no-ff", "--no-edit", "hive/b"])
        .output()
        .unwrap();
    let mut files: Vec<String> = git(root, &["diff", "--name-only", "--diff-filter=U"])
        .lines()
        .map(str::to_owned)
        .collect();
    if !merged.status.success() {
        let _ = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["merge", "--abort"])
            .output();
        // A failed merge is a conflict even if no path were left unmerged.
        if files.is_empty() {
            files.push("(merge failed)".into());
        }
    }
    git(root, &["reset", "-q", "--hard", before.trim()]);
    files.sort();
    files
}

#[test]
fn the_prediction_agrees_with_a_real_merge() {
    use Op::*;
    let cases: &[(&str, &[Op], &[Op])] = &[
        (
            "same line",
            &[Line("a.txt", 3, "A")],
            &[Line("a.txt", 3, "B")],
        ),
        (
            "other lines",
            &[Line("a.txt", 2, "A")],
            &[Line("a.txt", 8, "B")],
        ),
        (
            "other files",
            &[Line("a.txt", 3, "A")],
            &[Line("b.txt", 3, "B")],
        ),
        (
            "rename and edit",
            &[Rename("a.txt", "moved.txt")],
            &[Line("a.txt", 5, "B")],
        ),
        (
            "rename and delete",
            &[Rename("a.txt", "moved.txt")],
            &[Delete("a.txt")],
        ),
        (
            "delete and edit",
            &[Delete("b.txt")],
            &[Line("b.txt", 1, "B")],
        ),
        ("both delete", &[Delete("b.txt")], &[Delete("b.txt")]),
        (
            "both add, different",
            &[Add("new.txt", "from a\n")],
            &[Add("new.txt", "from b\n")],
        ),
        (
            "both add, same",
            &[Add("new.txt", "same\n")],
            &[Add("new.txt", "same\n")],
        ),
        (
            "both rename, apart",
            &[Rename("a.txt", "x.txt")],
            &[Rename("a.txt", "y.txt")],
        ),
    ];
    for (name, ops_a, ops_b) in cases {
        let (_d, root) = repo();
        let a = ensure("a", &root);
        let b = ensure("b", &root);
        apply(&a.path, ops_a);
        apply(&b.path, ops_b);
        let head = git(&root, &["rev-parse", "HEAD"]);
        let predicted = Predictor::new()
            .refresh(&[((0, 0), &a), ((1, 0), &b)], None)
            .unwrap();
        // Nothing changed outside the object store.
        assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "{name}");
        assert_eq!(git(&root, &["status", "--porcelain"]), "", "{name}");
        assert!(
            !git(&a.path, &["status", "--porcelain"]).is_empty(),
            "{name}: the agent's edits stay uncommitted"
        );
        assert_eq!(predicted.pending, ["a", "b"], "{name}");
        let pair: Vec<_> = predicted
            .conflicts
            .iter()
            .filter(|c| c.b.as_deref() == Some("b"))
            .collect();
        let mut files: Vec<String> = pair.iter().flat_map(|c| c.files.clone()).collect();
        files.sort();
        let real = real_merge(&root, &a.path, &b.path);
        assert_eq!(files, real, "{name}: predicted, then the real merge");
    }
}

#[test]
fn each_worktree_is_predicted_against_the_main_branch_too() {
    let (_d, root) = repo();
    let a = ensure("a", &root);
    let b = ensure("b", &root);
    let c = ensure("c", &root);
    apply(&a.path, &[Op::Line("a.txt", 1, "agent a")]);
    apply(&b.path, &[Op::Line("b.txt", 1, "agent b")]);
    // The main checkout moved on since the worktrees started.
    apply(&root, &[Op::Line("b.txt", 1, "main")]);
    git(&root, &["commit", "-qam", "main edits b.txt"]);
    let mut p = Predictor::new();
    let found = p
        .refresh(&[((0, 0), &a), ((1, 0), &b), ((2, 0), &c)], None)
        .unwrap();
    assert_eq!(found.conflicts.len(), 1, "{found:?}");
    assert_eq!(found.conflicts[0].a, "b");
    assert_eq!(found.conflicts[0].b, None);
    assert_eq!(found.conflicts[0].files, ["b.txt"]);
    // c has nothing to bring home.
    assert_eq!(found.pending, ["a", "b"]);
    let plan = worktree::merge_order(&found);
    assert_eq!(plan.clean, ["a"]);
    assert_eq!(plan.after[0].agent, "b");

    // Only the pane whose turn ended is snapshotted again.
    apply(&c.path, &[Op::Line("a.txt", 1, "agent c")]);
    let stale = p
        .refresh(&[((0, 0), &a), ((1, 0), &b), ((2, 0), &c)], Some(&[0]))
        .unwrap();
    assert_eq!(stale, found);
    let fresh = p
        .refresh(&[((0, 0), &a), ((1, 0), &b), ((2, 0), &c)], Some(&[2]))
        .unwrap();
    assert!(
        fresh
            .conflicts
            .iter()
            .any(|c| c.a == "a" && c.b.as_deref() == Some("c") && c.files == ["a.txt"]),
        "{fresh:?}"
    );
    assert_eq!(
        worktree::merge_order(&fresh).describe().unwrap(),
        "merge order: a; then b (conflicts with the main branch in b.txt), c (conflicts with a in a.txt)"
    );
}

#[test]
fn a_merge_that_would_conflict_says_so_before_committing_anything() {
    let (_d, root) = repo();
    let b = ensure("b", &root);
    apply(&root, &[Op::Line("a.txt", 3, "main")]);
    git(&root, &["commit", "-qam", "main"]);
    apply(&b.path, &[Op::Line("a.txt", 3, "agent")]);
    let head = git(&root, &["rev-parse", "HEAD"]);
    let branch = git(&b.path, &["rev-parse", "HEAD"]);
    let err =
        worktree::bring_home(&root, &b.path, &b.branch, BringMode::Merge, "work").unwrap_err();
    let WorktreeError::Conflict { files, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(files, &["a.txt"]);
    // Neither the main checkout nor the agent's branch moved; the edit is
    // still uncommitted.
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&b.path, &["rev-parse", "HEAD"]), branch);
    assert_eq!(git(&b.path, &["status", "--porcelain"]).trim(), "M a.txt");
}

#[test]
fn the_hand_off_rebases_and_lists_every_conflicted_file() {
    let (_d, root) = repo();
    let b = ensure("b", &root);
    apply(
        &root,
        &[
            Op::Line("a.txt", 3, "main 3"),
            Op::Line("a.txt", 9, "main 9"),
            Op::Line("b.txt", 1, "main"),
            Op::Delete("keep.txt"),
        ],
    );
    git(&root, &["commit", "-qam", "main"]);
    apply(
        &b.path,
        &[
            Op::Line("a.txt", 3, "agent 3"),
            Op::Line("a.txt", 9, "agent 9"),
            Op::Line("b.txt", 1, "agent"),
            Op::Line("keep.txt", 1, "agent"),
        ],
    );
    let head = git(&root, &["rev-parse", "HEAD"]);
    let h = worktree::handoff::rebase_onto_main(&root, &b.path, &b.branch, "agent work").unwrap();
    let names: Vec<_> = h.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["a.txt", "b.txt", "keep.txt"]);
    assert_eq!(h.files[0].regions.len(), 2, "{:?}", h.files[0]);
    assert_eq!(h.target, "main");
    let msg = h.message();
    for f in &h.files {
        assert!(msg.contains(&format!("- {}", f.describe())), "{msg}");
    }
    assert!(msg.contains("keep.txt: deleted on one side, changed on the other"));
    assert!(msg.contains("a.txt: conflict markers at lines"));
    // The main checkout is untouched; the worktree holds the markers.
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&root, &["status", "--porcelain"]), "");
    let text = std::fs::read_to_string(b.path.join("a.txt")).unwrap();
    assert!(text.contains("<<<<<<<") && text.contains(">>>>>>>"));

    // The agent resolves as told; then the merge goes through.
    std::fs::write(b.path.join("a.txt"), LINES).unwrap();
    std::fs::write(b.path.join("b.txt"), LINES).unwrap();
    git(&b.path, &["add", "a.txt", "b.txt"]);
    git(&b.path, &["rm", "-q", "keep.txt"]);
    let cont = Command::new("git")
        .arg("-C")
        .arg(&b.path)
        .args(["rebase", "--continue"])
        .env("GIT_EDITOR", "true")
        .output()
        .unwrap();
    assert!(
        cont.status.success(),
        "{}",
        String::from_utf8_lossy(&cont.stderr)
    );
    let merged =
        worktree::bring_home(&root, &b.path, &b.branch, BringMode::Merge, "resolved").unwrap();
    assert_eq!(merged.commits, 1);
}

#[test]
fn a_hand_off_without_conflicts_just_rebases() {
    let (_d, root) = repo();
    let b = ensure("b", &root);
    apply(&root, &[Op::Line("a.txt", 1, "main")]);
    git(&root, &["commit", "-qam", "main"]);
    apply(&b.path, &[Op::Line("b.txt", 1, "agent")]);
    let h = worktree::handoff::rebase_onto_main(&root, &b.path, &b.branch, "agent work").unwrap();
    assert!(h.files.is_empty());
    let main_head = git(&root, &["rev-parse", "HEAD"]);
    assert_eq!(git(&b.path, &["rev-parse", "HEAD~1"]), main_head);
}

/// Events until one matches, skipping the others the service sends on the way.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_predicts_after_a_turn_that_edited_files() {
    let (_d, root) = repo();
    let a = ensure("a", &root);
    let b = ensure("b", &root);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let svc = worktree::spawn_service(vec![(0, a.clone()), (1, b.clone())], tx);
    apply(&b.path, &[Op::Line("a.txt", 4, "b")]);
    svc.send(WorktreeRequest::TurnStarted { pane: 0 }).unwrap();
    // Requests run in order: once this diff is answered, the turn's start
    // snapshot is taken.
    svc.send(WorktreeRequest::Diff {
        pane: 1,
        scope: worktree::DiffScope::LastTurn,
    })
    .unwrap();
    until(&mut rx, |ev| {
        matches!(ev, WorktreeEvent::Diff { .. }).then_some(())
    })
    .await;
    apply(&a.path, &[Op::Line("a.txt", 4, "a")]);
    svc.send(WorktreeRequest::TurnEnded { pane: 0 }).unwrap();
    let found = until(&mut rx, |ev| match ev {
        WorktreeEvent::Conflicts(p) => Some(p),
        _ => None,
    })
    .await;
    assert_eq!(found.conflicts.len(), 1, "{found:?}");
    assert_eq!(
        (
            found.conflicts[0].a.as_str(),
            found.conflicts[0].b.as_deref()
        ),
        ("a", Some("b"))
    );
    assert_eq!(found.conflicts[0].files, ["a.txt"]);

    // Merging b is refused with the files; the hand-off then gives b the
    // conflict with the main branch once a is home.
    svc.send(WorktreeRequest::Bring {
        pane: 0,
        mode: BringMode::Merge,
        message: None,
        repos: Vec::new(),
    })
    .unwrap();
    let brought = until(&mut rx, |ev| match ev {
        WorktreeEvent::Brought { result, .. } => Some(result),
        _ => None,
    })
    .await;
    assert!(brought.is_ok(), "{brought:?}");
    let after = until(&mut rx, |ev| match ev {
        WorktreeEvent::Conflicts(p) => Some(p),
        _ => None,
    })
    .await;
    assert_eq!(after.conflicts.len(), 1, "{after:?}");
    assert_eq!(after.conflicts[0].a, "b");
    assert_eq!(after.conflicts[0].b, None);
    svc.send(WorktreeRequest::Bring {
        pane: 1,
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
    assert_eq!(conflicted, ["a.txt"]);
    svc.send(WorktreeRequest::HandOff {
        pane: 1,
        message: None,
    })
    .unwrap();
    let handed = until(&mut rx, |ev| match ev {
        WorktreeEvent::HandedOff { result, .. } => Some(result),
        _ => None,
    })
    .await
    .unwrap();
    assert_eq!(handed.files.len(), 1);
    assert!(
        handed
            .message()
            .contains("- a.txt: conflict markers at lines 4-8")
    );
}
