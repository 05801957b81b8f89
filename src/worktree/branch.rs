//! A worktree branched from another checkout's work (issue 50, `/handoff
//! … branched`): a new branch at the source's HEAD, in a new worktree of
//! the same repository, with the source's uncommitted changes (tracked
//! edits and untracked files, links copied as links) laid over it. The
//! source is only read. A step that fails takes the new worktree and
//! branch away again, so a failed hand-off leaves nothing behind.

use std::path::Path;

use super::git::Git;
use super::manage::{canonical, copy_uncommitted, create_root, exclude_root, find_repo, root_dir};
use super::{Worktree, WorktreeError};

/// How many `-2`, `-3`… names are tried before giving up.
const NAMES: usize = 50;

/// A new worktree named after `id` (the first free `id`, `id-2`, …) on
/// branch `hive/<name>` from the checkout at `source` (a hive worktree or
/// the main checkout), with its uncommitted work. The agent's directory
/// is the same subdirectory `source` is of its checkout.
pub fn branch_from(
    source: &Path,
    id: &str,
    root: Option<&Path>,
) -> Result<Worktree, WorktreeError> {
    let source = canonical(source)?;
    let repo = canonical(&find_repo(&source)?)?;
    let src = Git::at(&source);
    let top = canonical(Path::new(&src.line(&["rev-parse", "--show-toplevel"])?))?;
    let head = src.line(&["rev-parse", "HEAD"])?;
    let sub = source
        .strip_prefix(&top)
        .map(Path::to_owned)
        .unwrap_or_default();
    let root = root_dir(&repo, root);
    let main = Git::at(&repo);
    let (name, path, branch) = (1..=NAMES)
        .map(|n| match n {
            1 => id.to_owned(),
            n => format!("{id}-{n}"),
        })
        .map(|name| (root.join(&name), format!("hive/{name}"), name))
        .find(|(path, branch, _)| {
            !path.exists()
                && !main.succeeds(&[
                    "show-ref",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{branch}"),
                ])
        })
        .map(|(path, branch, name)| (name, path, branch))
        .ok_or_else(|| WorktreeError::Refused(format!("no free worktree name for `{id}`")))?;
    main.run(&["check-ref-format", "--branch", &branch])
        .map_err(|_| WorktreeError::Refused(format!("`{branch}` is not a valid branch name")))?;
    create_root(&root)?;
    exclude_root(&repo, &root)?;
    let p = path.to_string_lossy();
    main.run(&["worktree", "add", "-b", &branch, &p, &head])?;
    // Untracked files under the worktrees' root are other worktrees when
    // the source is the main checkout; a hive worktree's are its own.
    let skip = if top == repo {
        root
    } else {
        top.join(super::DEFAULT_ROOT)
    };
    if let Err(e) = copy_uncommitted(&top, &path, &skip) {
        // Nothing half made stays: the worktree and its branch go.
        let _ = main.output(&["worktree", "remove", "--force", &p]);
        let _ = main.output(&["branch", "-D", &branch]);
        return Err(e);
    }
    Ok(Worktree {
        agent_id: name,
        repo,
        cwd: path.join(sub),
        path,
        branch,
        created: true,
        setup_output: None,
        name: String::new(),
        repos: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
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
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// The source's commits, its edits, its new files and a link (kept a
    /// link) are all in the branched worktree; the source is untouched.
    #[test]
    fn the_branch_carries_commits_edits_and_untracked_files() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        git(repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("a.txt"), "one\n").unwrap();
        git(repo, &["add", "."]);
        git(repo, &["commit", "-qm", "first"]);
        git(repo, &["checkout", "-qb", "work"]);
        std::fs::write(repo.join("b.txt"), "committed\n").unwrap();
        git(repo, &["add", "."]);
        git(repo, &["commit", "-qm", "second"]);
        std::fs::write(repo.join("a.txt"), "one\nedited\n").unwrap();
        std::fs::write(repo.join("new.txt"), "untracked\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", repo.join("link")).unwrap();
        let before = git(repo, &["status", "--porcelain"]);

        let w = branch_from(repo, "next", None).unwrap();
        assert_eq!(w.branch, "hive/next");
        assert_eq!(
            std::fs::read_to_string(w.path.join("b.txt")).unwrap(),
            "committed\n"
        );
        assert_eq!(
            std::fs::read_to_string(w.path.join("a.txt")).unwrap(),
            "one\nedited\n"
        );
        assert_eq!(
            std::fs::read_to_string(w.path.join("new.txt")).unwrap(),
            "untracked\n"
        );
        assert!(w.path.join("link").symlink_metadata().unwrap().is_symlink());
        assert_eq!(
            git(&w.path, &["rev-parse", "HEAD"]),
            git(repo, &["rev-parse", "HEAD"])
        );
        assert_eq!(
            git(repo, &["status", "--porcelain"]),
            before,
            "the source is only read"
        );

        // A second one takes the next name.
        let again = branch_from(repo, "next", None).unwrap();
        assert_eq!(again.branch, "hive/next-2");
        assert_ne!(again.path, w.path);
    }
}
