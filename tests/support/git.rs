//! Temporary git repositories for the worktree tests: run `git` in a
//! directory (failing the test with git's message) and start a repository
//! with a committer identity, or one with a bare `origin` beside it (the
//! forge tests' remote).

use std::path::Path;
use std::process::Command;

/// Runs git in `dir` and returns its stdout; a failure fails the test.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `git init` on branch `main` with a local identity, so commits work on
/// machines without a global one.
pub fn init_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Test"]);
    git(dir, &["config", "user.email", "test@example.com"]);
}

/// A repository at `repo` with `file` holding `text` committed on `main`,
/// pushed to a new bare repository at `remote` (its `origin`, tracked).
pub fn repo_with_remote(repo: &Path, remote: &Path, file: &str, text: &str) {
    std::fs::create_dir_all(repo).unwrap();
    init_repo(repo);
    std::fs::write(repo.join(file), text).unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "initial"]);
    let bare = remote.to_str().unwrap();
    let parent = remote.parent().unwrap();
    git(parent, &["init", "-q", "--bare", "-b", "main", bare]);
    git(repo, &["remote", "add", "origin", bare]);
    git(repo, &["push", "-q", "-u", "origin", "main"]);
}
