//! Temporary git repositories for the worktree tests: run `git` in a
//! directory (failing the test with git's message) and start a repository
//! with a committer identity.

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
