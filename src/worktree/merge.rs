//! Bringing an agent's work home: commit what the agent left uncommitted on
//! its branch, then merge or cherry-pick that branch into the main checkout.
//! Conflicts are found first with `git merge-tree` (which touches no
//! checkout), before even the agent's uncommitted work is committed, and
//! reported with the files; a git step that still fails is aborted, so the
//! main checkout is never left half-merged.

use std::path::Path;

use super::WorktreeError;
use super::git::Git;
pub use crate::protocol::git::{BringMode, MergeOutcome};

impl BringMode {
    pub fn verb(self) -> &'static str {
        match self {
            BringMode::Merge => "merged",
            BringMode::CherryPick => "cherry-picked",
        }
    }
}

/// Commits everything in the worktree (untracked files too). `None`: clean.
pub fn commit_all(worktree: &Path, message: &str) -> Result<Option<String>, WorktreeError> {
    let git = Git::at(worktree);
    if git.run(&["status", "--porcelain"])?.trim().is_empty() {
        return Ok(None);
    }
    git.run(&["add", "-A", "--", "."])?;
    let mut args = identity(&git);
    args.extend(["commit", "--no-verify", "-q", "-m", message]);
    git.run(&args)?;
    Ok(Some(git.line(&["rev-parse", "HEAD"])?))
}

/// A fallback author when the repository has none configured.
fn identity(git: &Git) -> Vec<&'static str> {
    if git.succeeds(&["config", "user.email"]) {
        Vec::new()
    } else {
        vec!["-c", "user.name=hive", "-c", "user.email=hive@localhost"]
    }
}

/// Brings `branch` (checked out in `worktree`) into the main checkout at `repo`.
pub fn bring_home(
    repo: &Path,
    worktree: &Path,
    branch: &str,
    mode: BringMode,
    message: &str,
) -> Result<MergeOutcome, WorktreeError> {
    let main = Git::at(repo);
    for state in ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD"] {
        if main.succeeds(&["rev-parse", "-q", "--verify", state]) {
            return Err(WorktreeError::Refused(format!(
                "the main checkout is in the middle of a merge, cherry-pick or rebase ({state}); finish it first"
            )));
        }
    }
    // A merge that would conflict says so before anything is committed:
    // the worktree as it is now, frozen as a commit no branch points to.
    let now = super::predict::snapshot_commit(worktree)?;
    check_conflicts(&main, branch, &now)?;
    let committed_first = commit_all(worktree, message)?.is_some();
    let range = format!("HEAD..{branch}");
    let commits: Vec<String> = main
        .run(&["rev-list", "--reverse", "--no-merges", &range])?
        .lines()
        .map(str::to_owned)
        .collect();
    let mut outcome = MergeOutcome {
        mode,
        branch: branch.to_owned(),
        commits: commits.len(),
        committed_first,
        files: Vec::new(),
    };
    if commits.is_empty() {
        return Ok(outcome);
    }
    check_conflicts(&main, branch, branch)?;
    let before = main.line(&["rev-parse", "HEAD"])?;
    let mut args = identity(&main);
    let merge_msg = format!("hive: merge {branch}");
    match mode {
        BringMode::Merge => args.extend([
            "merge",
            "--no-ff",
            "--no-edit",
            "-q",
            "-m",
            &merge_msg,
            branch,
        ]),
        BringMode::CherryPick => {
            args.extend(["cherry-pick", "--allow-empty"]);
            args.extend(commits.iter().map(String::as_str));
        }
    }
    if let Err(e) = main.run(&args) {
        let abort = match mode {
            BringMode::Merge => "merge",
            BringMode::CherryPick => "cherry-pick",
        };
        let _ = main.output(&[abort, "--abort"]);
        // `--abort` restores HEAD; make sure nothing moved.
        if main.line(&["rev-parse", "HEAD"]).ok().as_deref() != Some(before.as_str()) {
            let _ = main.output(&["reset", "-q", "--keep", &before]);
        }
        return Err(e);
    }
    outcome.files = main
        .run(&["diff", "--name-only", &before, "HEAD"])?
        .lines()
        .map(str::to_owned)
        .collect();
    Ok(outcome)
}

/// Fails with the conflicting files if merging `theirs` (a branch or a
/// commit) into HEAD would conflict; names `branch` in the error.
pub(crate) fn check_conflicts(main: &Git, branch: &str, theirs: &str) -> Result<(), WorktreeError> {
    let check = super::predict::merge_check(main, "HEAD", theirs)?;
    if check.files.is_empty() {
        Ok(())
    } else {
        Err(WorktreeError::Conflict {
            branch: branch.to_owned(),
            files: check.files,
        })
    }
}
