//! Which files a pull request's branch conflicts in with its base. The
//! forge says only that it conflicts (`mergeable: CONFLICTING`); git says
//! where, without touching the worktree: `git fetch origin <base>`, then
//! `git merge-tree --write-tree --name-only` of `origin/<base>` and `HEAD`
//! in git's object store.

use std::path::Path;
use std::time::Duration;

use super::run::run;

/// The conflicting files (empty when git cannot tell), at most 200, each
/// name made one safe line.
pub fn files(worktree: &Path, base: &str, timeout: Duration) -> Vec<String> {
    let git = |args: &[&str]| run("git", args, worktree, timeout).ok();
    let _ = git(&["fetch", "--quiet", "origin", base]);
    let theirs = format!("origin/{base}");
    let args = [
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        &theirs,
        "HEAD",
    ];
    let Some(ran) = git(&args) else {
        return Vec::new();
    };
    // Exit 1 is "conflicts": the tree's id, then a file a line.
    if ran.code != 1 {
        return Vec::new();
    }
    ran.stdout
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .take(200)
        .map(super::text::line)
        .collect()
}
