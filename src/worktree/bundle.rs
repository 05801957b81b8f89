//! A worktree's work as one file that can cross to another machine (issue
//! 50, `/move @HOST`): a git bundle of the branch (its whole history, so
//! the bundle needs nothing on the other side) plus a private ref,
//! `refs/hive/move/<branch>`, holding the uncommitted state as a commit
//! on top of the branch (tracked edits, deletions and untracked files; not
//! what `.gitignore` ignores). Packing only reads the worktree: the dirty
//! state is written through a throwaway index, never the worktree's own.
//! Unpacking makes a new worktree on the other side at the branch and lays
//! the dirty state over it unstaged, so `git status` there reads as it did
//! here (staged and unstaged edits both come back as unstaged). A step
//! that fails takes back what unpacking made; the source is never touched,
//! so an interrupted move leaves the work where it was.

use std::path::{Path, PathBuf};

use super::WorktreeError;
use super::git::Git;

/// What a packed bundle holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Packed {
    /// The bundle file.
    pub bundle: PathBuf,
    pub branch: String,
    /// The branch's commit.
    pub head: String,
    /// The commit of the uncommitted state, when there was any.
    pub dirty: Option<String>,
}

/// The private ref a bundle carries the dirty state under.
fn dirty_ref(branch: &str) -> String {
    format!("refs/hive/move/{branch}")
}

/// Packs the worktree at `worktree` (on `branch`) into the bundle `out`.
pub fn pack(worktree: &Path, branch: &str, out: &Path) -> Result<Packed, WorktreeError> {
    let git = Git::at(worktree);
    let current = git.line(&["branch", "--show-current"])?;
    if current != branch {
        return Err(WorktreeError::Refused(format!(
            "the worktree at {} is on `{current}`, not `{branch}`",
            worktree.display()
        )));
    }
    for state in ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD"] {
        if git.succeeds(&["rev-parse", "-q", "--verify", state]) {
            return Err(WorktreeError::Refused(format!(
                "the worktree of {branch} is in the middle of a merge, cherry-pick or rebase ({state}): finish it first"
            )));
        }
    }
    let head = git.line(&["rev-parse", "HEAD"])?;
    let dirty = snapshot(worktree, &head)?;
    let private = dirty_ref(branch);
    let mut refs = vec![format!("refs/heads/{branch}")];
    if let Some(commit) = &dirty {
        git.run(&["update-ref", &private, commit])?;
        refs.push(private.clone());
    }
    let o = out.to_string_lossy().into_owned();
    let mut args = vec!["bundle", "create", "-q", o.as_str()];
    args.extend(refs.iter().map(String::as_str));
    let made = git.run(&args);
    // The ref was only for the bundle; the commit stays reachable from it.
    if dirty.is_some() {
        let _ = git.output(&["update-ref", "-d", &private]);
    }
    made?;
    use std::os::unix::fs::PermissionsExt;
    let private_mode = std::fs::Permissions::from_mode(0o600);
    std::fs::set_permissions(out, private_mode).map_err(|source| WorktreeError::Io {
        path: out.to_owned(),
        source,
    })?;
    Ok(Packed {
        bundle: out.to_owned(),
        branch: branch.to_owned(),
        head,
        dirty,
    })
}

/// The worktree's uncommitted state as a commit on `head`, through a
/// throwaway index (`None`: nothing uncommitted).
fn snapshot(worktree: &Path, head: &str) -> Result<Option<String>, WorktreeError> {
    // Beside the worktree's own index, in its git directory (never in
    // the worktree, never a shared temporary directory).
    let gitdir = Git::at(worktree).line(&["rev-parse", "--path-format=absolute", "--git-dir"])?;
    let index = Path::new(&gitdir).join(format!("hive-move-index-{}", std::process::id()));
    let made = commit_dirty(worktree, head, &index);
    let _ = std::fs::remove_file(&index);
    made
}

/// `snapshot` through the index file `index`.
fn commit_dirty(
    worktree: &Path,
    head: &str,
    index: &Path,
) -> Result<Option<String>, WorktreeError> {
    let git = Git::at(worktree).with_env("GIT_INDEX_FILE", index);
    git.run(&["read-tree", head])?;
    git.run(&["add", "-A", "--", "."])?;
    let tree = git.line(&["write-tree"])?;
    let base = git.line(&["rev-parse", &format!("{head}^{{tree}}")])?;
    if tree == base {
        return Ok(None);
    }
    let commit = git
        .with_env("GIT_AUTHOR_NAME", "hive")
        .with_env("GIT_AUTHOR_EMAIL", "hive@localhost")
        .with_env("GIT_COMMITTER_NAME", "hive")
        .with_env("GIT_COMMITTER_EMAIL", "hive@localhost")
        .line(&[
            "commit-tree",
            &tree,
            "-p",
            head,
            "-m",
            "hive move: uncommitted work",
        ])?;
    Ok(Some(commit))
}

/// Unpacks `packed` into the repository `repo` as a new worktree at
/// `path` on its branch. The branch may exist there (a pane moving back):
/// it moves forward to the bundle's commit when that is a fast-forward,
/// else the move is refused. `path` must not exist.
pub fn unpack(repo: &Path, packed: &Packed, path: &Path) -> Result<(), WorktreeError> {
    if path.exists() {
        return Err(WorktreeError::PathTaken {
            path: path.to_owned(),
        });
    }
    let main = Git::at(repo);
    let b = packed.bundle.to_string_lossy().into_owned();
    main.run(&["bundle", "verify", "-q", &b])?;
    let branch = &packed.branch;
    let incoming = format!("refs/hive/incoming/{branch}");
    let private = dirty_ref(branch);
    let mut specs = vec![format!("+refs/heads/{branch}:{incoming}")];
    if packed.dirty.is_some() {
        specs.push(format!("+{private}:{private}"));
    }
    let mut args = vec!["fetch", "-q", "--no-tags", b.as_str()];
    args.extend(specs.iter().map(String::as_str));
    main.run(&args)?;
    let result = place(&main, packed, &incoming, path);
    let _ = main.output(&["update-ref", "-d", &incoming]);
    let _ = main.output(&["update-ref", "-d", &private]);
    result
}

/// The branch at the bundle's commit, the worktree made, the dirty state
/// laid over it; what was made is taken back when a step fails.
fn place(main: &Git, packed: &Packed, incoming: &str, path: &Path) -> Result<(), WorktreeError> {
    let branch = &packed.branch;
    let got = main.line(&["rev-parse", incoming])?;
    if got != packed.head {
        return Err(WorktreeError::Refused(format!(
            "the bundle's {branch} is at {got}, not {}",
            packed.head
        )));
    }
    let local = format!("refs/heads/{branch}");
    let before = main.line(&["rev-parse", "-q", "--verify", &local]).ok();
    match &before {
        Some(old) if *old == got => {}
        Some(old) if main.succeeds(&["merge-base", "--is-ancestor", old, &got]) => {
            main.run(&["update-ref", &local, &got, old])?;
        }
        Some(_) => {
            return Err(WorktreeError::Refused(format!(
                "{branch} here has commits the moved pane's branch does not: bring them together first"
            )));
        }
        None => {
            main.run(&["update-ref", &local, &got, ""])?;
        }
    }
    let p = path.to_string_lossy().into_owned();
    let made = main
        .run(&["worktree", "add", "-q", &p, branch])
        .and_then(|_| match &packed.dirty {
            Some(dirty) => lay_over(path, &packed.head, dirty),
            None => Ok(()),
        });
    if let Err(e) = made {
        let _ = main.output(&["worktree", "remove", "--force", &p]);
        match &before {
            Some(old) => drop(main.output(&["update-ref", &local, old])),
            None => drop(main.output(&["update-ref", "-d", &local])),
        }
        return Err(e);
    }
    Ok(())
}

/// The dirty commit's files in the worktree, unstaged: its edits and new
/// files written, its deletions removed, the index left at `head`.
fn lay_over(path: &Path, head: &str, dirty: &str) -> Result<(), WorktreeError> {
    let wt = Git::at(path);
    let deleted = wt.run(&["diff", "--name-only", "-z", "--diff-filter=D", head, dirty])?;
    wt.run(&["checkout", dirty, "--", "."])?;
    for rel in deleted.split('\0').filter(|s| !s.is_empty()) {
        let file = path.join(rel);
        if file.starts_with(path) {
            let _ = std::fs::remove_file(file);
        }
    }
    wt.run(&["reset", "-q", head])?;
    Ok(())
}

#[cfg(test)]
#[path = "bundle_tests.rs"]
mod tests;
