//! Review in the diff view (issue 31): rejecting a file or one hunk of what
//! an agent changed reverts exactly that part in the agent's worktree, and
//! the review's comments become one message to the agent. A hunk is
//! reverted by applying its own patch in reverse (`git apply -R`, the
//! worktree only); a file is put back as it was in the diff's base
//! (`git checkout <base> -- path`, or removed when the agent added it).
//! The message is built here without I/O.

use std::path::Path;

use super::WorktreeError;
use super::diff::{FileDiff, FileStatus, Hunk, LineKind};
use super::git::Git;

/// The patch of one hunk of `file` (its header, then the hunk).
pub(crate) fn hunk_patch(file: &FileDiff, hunk: &Hunk) -> String {
    let mut out = String::new();
    for l in &file.head {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(&hunk.header);
    out.push('\n');
    for l in &hunk.lines {
        let sign = match l.kind {
            LineKind::Added => "+",
            LineKind::Removed => "-",
            LineKind::Context => " ",
            LineKind::Note => "",
        };
        out.push_str(sign);
        out.push_str(&l.text);
        out.push('\n');
    }
    out
}

/// Reverts hunk `index` of `file` in the worktree (the file as the diff
/// showed it; if it changed since, git refuses and nothing is written).
pub fn reject_hunk(worktree: &Path, file: &FileDiff, index: usize) -> Result<(), WorktreeError> {
    let hunk = file.hunks.get(index).ok_or_else(|| {
        WorktreeError::Refused(format!("{} has no hunk {}", file.path, index + 1))
    })?;
    let patch = hunk_patch(file, hunk);
    Git::at(worktree)
        .run_with_input(&["apply", "-R", "--whitespace=nowarn", "-"], patch.as_bytes())
        .map_err(|e| match e {
            WorktreeError::Git { message, .. } => WorktreeError::Refused(format!(
                "cannot revert that hunk of {} (changed since the diff was read? r reloads): {message}",
                file.path
            )),
            other => other,
        })?;
    Ok(())
}

/// Puts `file` back as it was in `base` (a commit or tree of the
/// worktree's repository): restored, or removed when it was added.
pub fn reject_file(worktree: &Path, base: &str, file: &FileDiff) -> Result<(), WorktreeError> {
    let git = Git::at(worktree);
    // The path was read from a diff (or sent by a socket client): it is
    // resolved at the moment of deletion, never through a symlink.
    let remove = |path: &str| -> Result<(), WorktreeError> {
        git.run(&["rm", "-q", "--cached", "--ignore-unmatch", "--", path])?;
        super::nofollow::remove_file(worktree, path).map(drop)
    };
    match file.status {
        FileStatus::Added => remove(&file.path),
        FileStatus::Modified | FileStatus::Deleted => {
            git.run(&["checkout", base, "--", &file.path])?;
            Ok(())
        }
        FileStatus::Renamed => {
            let old = file.old_path.as_deref().unwrap_or(&file.path);
            git.run(&["checkout", base, "--", old])?;
            remove(&file.path)
        }
    }
}

/// Discards everything in the worktree: its branch is reset to the main
/// checkout's HEAD and untracked files are removed (ignored ones, such as
/// installed dependencies, stay). For the answers not taken after a
/// fan-out; the user confirmed it.
pub fn reset_to_main(repo: &Path, worktree: &Path) -> Result<String, WorktreeError> {
    let head = Git::at(repo).line(&["rev-parse", "HEAD"])?;
    let git = Git::at(worktree);
    // A hand-off's rebase or a merge in progress goes first.
    for op in ["rebase", "merge", "cherry-pick"] {
        let _ = git.output(&[op, "--abort"]);
    }
    git.run(&["reset", "-q", "--hard", &head])?;
    git.run(&["clean", "-q", "-fd"])?;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worktree::diff::parse_unified;

    const DIFF: &str = "diff --git a/f.txt b/f.txt\nindex 1..2 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -9,2 +9,3 @@ fn x\n i\n j\n+k\n\\ No newline at end of file\n";

    #[test]
    fn a_hunks_patch_is_its_header_and_its_lines() {
        let files = parse_unified(DIFF);
        let f = &files[0];
        assert_eq!(
            hunk_patch(f, &f.hunks[1]),
            "diff --git a/f.txt b/f.txt\nindex 1..2 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -9,2 +9,3 @@ fn x\n i\n j\n+k\n\\ No newline at end of file\n"
        );
    }
}
