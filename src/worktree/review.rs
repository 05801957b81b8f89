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

/// A review comment on a hunk (or one of its lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewComment {
    pub path: String,
    /// The line in the new file (the old one for a removal).
    pub line: u32,
    /// The hunk as git shows it, for context.
    pub hunk: String,
    /// Which hunk of the file it is (where the view draws the comment).
    pub index: usize,
    /// The line of the hunk it is on (an index into its lines), for a
    /// comment on one line; `None`: on the hunk.
    pub diff_line: Option<usize>,
    pub text: String,
}

impl ReviewComment {
    /// A comment on hunk `index` of `file`, at its first changed line.
    pub(crate) fn on_hunk(file: &FileDiff, index: usize, text: String) -> Option<Self> {
        let h = file.hunks.get(index)?;
        let mut line = h.new_start;
        for l in &h.lines {
            match l.kind {
                LineKind::Context => line += 1,
                LineKind::Added | LineKind::Removed => break,
                LineKind::Note => {}
            }
        }
        let mut hunk = h.header.clone();
        for l in &h.lines {
            hunk.push('\n');
            hunk.push_str(match l.kind {
                LineKind::Added => "+",
                LineKind::Removed => "-",
                LineKind::Context => " ",
                LineKind::Note => "",
            });
            hunk.push_str(&l.text);
        }
        Some(Self {
            path: file.path.clone(),
            line,
            hunk,
            index,
            diff_line: None,
            text,
        })
    }

    /// A comment on line `line` of hunk `index` when one is selected, else
    /// on the hunk.
    pub fn at(file: &FileDiff, index: usize, line: Option<usize>, text: String) -> Option<Self> {
        match line {
            Some(at) => Self::on_line(file, index, at, text),
            None => Self::on_hunk(file, index, text),
        }
    }

    /// A comment on line `at` (an index into the hunk's lines) of hunk
    /// `index`: named by that line's number (the new file's; the old one's
    /// for a removed line), the hunk kept for context.
    pub(crate) fn on_line(file: &FileDiff, index: usize, at: usize, text: String) -> Option<Self> {
        let h = file.hunks.get(index)?;
        let target = h.lines.get(at)?;
        if target.kind == LineKind::Note {
            return None;
        }
        let (mut old, mut new) = (h.old_start, h.new_start);
        for l in &h.lines[..at] {
            match l.kind {
                LineKind::Added => new += 1,
                LineKind::Removed => old += 1,
                LineKind::Context => {
                    old += 1;
                    new += 1;
                }
                LineKind::Note => {}
            }
        }
        let mut c = Self::on_hunk(file, index, text)?;
        c.line = if target.kind == LineKind::Removed {
            old
        } else {
            new
        };
        c.diff_line = Some(at);
        Some(c)
    }
}

/// The comments as one message that starts the agent's next turn.
pub fn review_message(comments: &[ReviewComment]) -> String {
    let mut s = format!(
        "Review of your changes: {} comment{}. Address each one in your worktree.\n",
        comments.len(),
        if comments.len() == 1 { "" } else { "s" }
    );
    for c in comments {
        s.push_str(&format!(
            "\n{}:{}\n```diff\n{}\n```\n{}\n",
            c.path, c.line, c.hunk, c.text
        ));
    }
    s
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

    #[test]
    fn comments_name_file_and_line_with_the_hunk() {
        let files = parse_unified(DIFF);
        let c = ReviewComment::on_hunk(&files[0], 0, "why upper case?".into()).unwrap();
        assert_eq!((c.path.as_str(), c.line), ("f.txt", 2));
        let late = ReviewComment::on_hunk(&files[0], 1, "k needs a test".into()).unwrap();
        assert_eq!(late.line, 11);
        let m = review_message(&[c, late]);
        assert!(m.starts_with("Review of your changes: 2 comments."), "{m}");
        assert!(
            m.contains(
                "\nf.txt:2\n```diff\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n```\nwhy upper case?\n"
            ),
            "{m}"
        );
        assert!(m.contains("\nf.txt:11\n"), "{m}");
        assert!(ReviewComment::on_hunk(&files[0], 5, "x".into()).is_none());
    }

    #[test]
    fn a_line_comment_names_that_line() {
        let files = parse_unified(DIFF);
        let f = &files[0];
        // Hunk 1: " i" (9), " j" (10), "+k" (11).
        let c = ReviewComment::on_line(f, 1, 2, "k needs a test".into()).unwrap();
        assert_eq!((c.line, c.diff_line), (11, Some(2)));
        let ctx = ReviewComment::on_line(f, 1, 1, "why j?".into()).unwrap();
        assert_eq!(ctx.line, 10);
        // Hunk 0: " a" (1), "-b" (old 2), "+B" (new 2).
        let removed = ReviewComment::on_line(f, 0, 1, "keep b".into()).unwrap();
        assert_eq!(removed.line, 2);
        // The "no newline" note is no line to comment on.
        assert!(ReviewComment::on_line(f, 1, 3, "x".into()).is_none());
        assert!(ReviewComment::on_line(f, 1, 9, "x".into()).is_none());
    }
}
