//! Packing a worktree here and unpacking it in another clone (the other
//! machine's checkout), with real git: the branch, its commits, the edits,
//! deletions and untracked files all arrive, `git status` reads the same,
//! the source is untouched, and moving back fast-forwards the branch.

use std::path::Path;
use std::process::Command;

use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

fn status(dir: &Path) -> String {
    git(dir, &["status", "--porcelain", "--untracked-files=all"])
}

/// Here: a repository with a worktree on `hive/p` holding a commit, an
/// edit, a deletion, a new file and an ignored one. There: a clone of
/// its main branch only.
fn two_machines(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let here = dir.join("here");
    std::fs::create_dir_all(&here).unwrap();
    git(&here, &["init", "-q", "-b", "main"]);
    std::fs::write(here.join("a.txt"), "one\n").unwrap();
    std::fs::write(here.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(here.join(".gitignore"), "*.log\n").unwrap();
    git(&here, &["add", "."]);
    git(&here, &["commit", "-qm", "first"]);
    let wt = dir.join("wt");
    git(
        &here,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "hive/p",
            wt.to_str().unwrap(),
        ],
    );
    std::fs::write(wt.join("b.txt"), "committed\n").unwrap();
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-qm", "second"]);
    std::fs::write(wt.join("a.txt"), "one\nedited\n").unwrap();
    std::fs::remove_file(wt.join("gone.txt")).unwrap();
    std::fs::create_dir_all(wt.join("new")).unwrap();
    std::fs::write(wt.join("new/c.txt"), "untracked\n").unwrap();
    std::fs::write(wt.join("build.log"), "ignored\n").unwrap();
    let there = dir.join("there");
    git(
        dir,
        &[
            "clone",
            "-q",
            "--single-branch",
            here.to_str().unwrap(),
            "there",
        ],
    );
    (here, wt, there)
}

#[test]
fn the_work_crosses_whole_and_the_source_stays_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let (_here, wt, there) = two_machines(dir.path());
    let before = status(&wt);
    let packed = pack(&wt, "hive/p", &dir.path().join("p.bundle")).unwrap();
    assert!(packed.dirty.is_some());
    assert_eq!(status(&wt), before, "packing only reads the worktree");
    let mode = std::fs::metadata(&packed.bundle).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );

    let moved = dir.path().join("there-wt");
    unpack(&there, &packed, &moved).unwrap();
    assert_eq!(git(&moved, &["branch", "--show-current"]), "hive/p");
    assert_eq!(git(&moved, &["rev-parse", "HEAD"]), packed.head);
    assert_eq!(
        std::fs::read_to_string(moved.join("b.txt")).unwrap(),
        "committed\n"
    );
    assert_eq!(
        std::fs::read_to_string(moved.join("a.txt")).unwrap(),
        "one\nedited\n"
    );
    assert_eq!(
        std::fs::read_to_string(moved.join("new/c.txt")).unwrap(),
        "untracked\n"
    );
    assert!(!moved.join("gone.txt").exists());
    assert!(!moved.join("build.log").exists(), "ignored files stay home");
    let ignored_home = before.lines().filter(|l| !l.contains("build.log"));
    assert_eq!(
        status(&moved),
        ignored_home.collect::<Vec<_>>().join("\n"),
        "git status reads the same there"
    );
    // No private ref is left on either side.
    assert_eq!(git(&there, &["for-each-ref", "refs/hive"]), "");
    assert_eq!(git(&wt, &["for-each-ref", "refs/hive"]), "");
}

#[test]
fn moving_back_fast_forwards_and_a_diverged_branch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (here, wt, there) = two_machines(dir.path());
    let packed = pack(&wt, "hive/p", &dir.path().join("out.bundle")).unwrap();
    let moved = dir.path().join("there-wt");
    unpack(&there, &packed, &moved).unwrap();
    // Work goes on there, committed, then the pane comes back.
    git(&moved, &["add", "-A"]);
    git(&moved, &["commit", "-qm", "third, there"]);
    let back = pack(&moved, "hive/p", &dir.path().join("back.bundle")).unwrap();
    assert!(back.dirty.is_none());
    // Home again: the old worktree went once the move was done.
    git(
        &here,
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    let home = dir.path().join("home-wt");
    unpack(&here, &back, &home).unwrap();
    assert_eq!(git(&here, &["rev-parse", "hive/p"]), back.head);
    assert_eq!(
        std::fs::read_to_string(home.join("new/c.txt")).unwrap(),
        "untracked\n"
    );
    assert_eq!(status(&home), "");

    // A branch with commits of its own is not overwritten.
    git(&home, &["commit", "-q", "--allow-empty", "-m", "only here"]);
    let mine = git(&here, &["rev-parse", "hive/p"]);
    git(
        &here,
        &["worktree", "remove", "--force", home.to_str().unwrap()],
    );
    let err = unpack(&here, &back, &dir.path().join("again")).unwrap_err();
    assert!(err.to_string().contains("has commits"), "{err}");
    assert_eq!(git(&here, &["rev-parse", "hive/p"]), mine, "nothing lost");
    assert!(!dir.path().join("again").exists());
}

#[test]
fn a_bad_bundle_or_a_taken_path_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (_here, wt, there) = two_machines(dir.path());
    let mut packed = pack(&wt, "hive/p", &dir.path().join("p.bundle")).unwrap();
    let taken = dir.path().join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    assert!(matches!(
        unpack(&there, &packed, &taken),
        Err(WorktreeError::PathTaken { .. })
    ));
    // A truncated bundle (a copy cut short, a full disk).
    let bytes = std::fs::read(&packed.bundle).unwrap();
    let cut = dir.path().join("cut.bundle");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    packed.bundle = cut;
    assert!(unpack(&there, &packed, &dir.path().join("x")).is_err());
    assert!(!dir.path().join("x").exists());
    assert_eq!(git(&there, &["branch", "--list", "hive/p"]), "");
    // The wrong branch is refused before anything is written.
    assert!(pack(&wt, "main", &dir.path().join("m.bundle")).is_err());
}
