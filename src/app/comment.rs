//! A review comment on a hunk of an agent's diff (or one of its lines),
//! and the comments as the one message that starts the agent's next turn
//! (issue 31). The console makes them; only the message goes to the agent.

use crate::protocol::git::{FileDiff, LineKind};

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
            path: file.shown(),
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
    use crate::protocol::git::{DiffLine, FileDiff, FileStatus, Hunk, LineKind};

    /// The diff the console gets from the server for `f.txt`: two hunks, the
    /// second ending in git's "no newline" note.
    fn f_txt() -> FileDiff {
        let line = |kind, text: &str| DiffLine {
            kind,
            text: text.into(),
        };
        use LineKind::{Added, Context, Note, Removed};
        FileDiff {
            path: "f.txt".into(),
            old_path: None,
            status: FileStatus::Modified,
            binary: false,
            hunks: vec![
                Hunk {
                    header: "@@ -1,3 +1,3 @@".into(),
                    old_start: 1,
                    old_len: 3,
                    new_start: 1,
                    new_len: 3,
                    lines: vec![
                        line(Context, "a"),
                        line(Removed, "b"),
                        line(Added, "B"),
                        line(Context, "c"),
                    ],
                },
                Hunk {
                    header: "@@ -9,2 +9,3 @@ fn x".into(),
                    old_start: 9,
                    old_len: 2,
                    new_start: 9,
                    new_len: 3,
                    lines: vec![
                        line(Context, "i"),
                        line(Context, "j"),
                        line(Added, "k"),
                        line(Note, "\\ No newline at end of file"),
                    ],
                },
            ],
            head: vec![
                "diff --git a/f.txt b/f.txt".into(),
                "index 1..2 100644".into(),
                "--- a/f.txt".into(),
                "+++ b/f.txt".into(),
            ],
            repo: String::new(),
        }
    }

    #[test]
    fn comments_name_file_and_line_with_the_hunk() {
        let files = [f_txt()];
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
        let f = &f_txt();
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
