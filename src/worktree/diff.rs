//! What an agent changed: snapshots of a worktree (a tree object written
//! from a temporary index, so committed, staged, unstaged and untracked work
//! all count and the agent's own index is never touched), git's unified diff
//! between two of them, and a parser for that text (no I/O).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::WorktreeError;
use super::git::Git;
pub(crate) use crate::protocol::git::{DiffLine, Hunk, LineKind};
pub use crate::protocol::git::{FileDiff, FileStatus};

impl FileStatus {
    pub fn letter(self) -> char {
        match self {
            FileStatus::Added => 'A',
            FileStatus::Deleted => 'D',
            FileStatus::Modified => 'M',
            FileStatus::Renamed => 'R',
        }
    }
}

impl FileDiff {
    pub(crate) fn added(&self) -> usize {
        self.count(LineKind::Added)
    }

    pub fn removed(&self) -> usize {
        self.count(LineKind::Removed)
    }

    /// How many hunks the file's diff has.
    pub fn hunks_len(&self) -> usize {
        self.hunks.len()
    }

    fn count(&self, kind: LineKind) -> usize {
        self.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.kind == kind)
            .count()
    }
}

/// Parses `git diff` output (no colour, `diff --git` headers).
pub(crate) fn parse_unified(text: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut in_hunk = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.push(FileDiff {
                path: header_path(rest),
                old_path: None,
                status: FileStatus::Modified,
                binary: false,
                hunks: Vec::new(),
                head: vec![line.to_owned()],
                repo: String::new(),
            });
            in_hunk = false;
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if let Some(h) = line.strip_prefix("@@ ").and_then(parse_hunk_header) {
            file.hunks.push(Hunk {
                header: line.to_owned(),
                lines: Vec::new(),
                ..h
            });
            in_hunk = true;
            continue;
        }
        if in_hunk && let Some(hunk) = file.hunks.last_mut() {
            let (kind, body) = match line.as_bytes().first() {
                Some(b'+') => (LineKind::Added, &line[1..]),
                Some(b'-') => (LineKind::Removed, &line[1..]),
                Some(b' ') => (LineKind::Context, &line[1..]),
                Some(b'\\') => (LineKind::Note, line),
                None => (LineKind::Context, ""),
                _ => {
                    in_hunk = false;
                    continue;
                }
            };
            hunk.lines.push(DiffLine {
                kind,
                text: body.to_owned(),
            });
            continue;
        }
        if file.hunks.is_empty() {
            file.head.push(line.to_owned());
        }
        if line.starts_with("new file mode") {
            file.status = FileStatus::Added;
        } else if line.starts_with("deleted file mode") {
            file.status = FileStatus::Deleted;
        } else if let Some(from) = line.strip_prefix("rename from ") {
            file.status = FileStatus::Renamed;
            file.old_path = Some(unquote(from));
        } else if let Some(to) = line.strip_prefix("rename to ") {
            file.path = unquote(to);
        } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
            file.binary = true;
        } else if let Some(p) = line.strip_prefix("+++ b/") {
            file.path = unquote(p);
        } else if let Some(p) = line.strip_prefix("--- a/")
            && file.status == FileStatus::Deleted
        {
            file.path = unquote(p);
        }
    }
    files
}

/// `a/x b/x` → `x` (the halves are equal unless the file was renamed,
/// which the `rename to` line settles).
fn header_path(rest: &str) -> String {
    let rest = rest.trim();
    let half = rest.len() / 2;
    if rest.is_char_boundary(half) {
        let (a, b) = (&rest[..half], rest[half..].trim_start());
        if let (Some(a), Some(b)) = (a.strip_prefix("a/"), b.strip_prefix("b/"))
            && a == b
        {
            return a.to_owned();
        }
    }
    match rest.rsplit_once(" b/") {
        Some((_, b)) => unquote(b),
        None => rest.to_owned(),
    }
}

/// git quotes names with unusual bytes: `"a\tb"`. Keep it readable.
fn unquote(s: &str) -> String {
    let s = s.trim_end_matches('\t');
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => s.to_owned(),
    }
}

/// `-a,b +c,d @@ …` (lengths default to 1).
fn parse_hunk_header(rest: &str) -> Option<Hunk> {
    let mut parts = rest.split(' ');
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((s, l)) => Some((s.parse().ok()?, l.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old)?;
    let (new_start, new_len) = range(new)?;
    Some(Hunk {
        header: String::new(),
        old_start,
        old_len,
        new_start,
        new_len,
        lines: Vec::new(),
    })
}

/// A tree object of the worktree as it is now, untracked files included.
pub fn snapshot(worktree: &Path) -> Result<String, WorktreeError> {
    static N: AtomicU64 = AtomicU64::new(0);
    let git = Git::at(worktree);
    let git_dir = git.line(&["rev-parse", "--path-format=absolute", "--git-dir"])?;
    let index = Path::new(&git_dir).join(format!(
        "hive-snapshot-{}-{}.index",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    // Starting from the real index keeps its stat cache: only changed files
    // are hashed again.
    let real = Path::new(&git_dir).join("index");
    if real.is_file() {
        let _ = std::fs::copy(&real, &index);
        // git trusts an entry's stat data only when the file is older than
        // the index ("racy git"); the copy must keep the original's mtime or
        // a same-size edit made in the index's second would go unseen.
        if let Ok(modified) = std::fs::metadata(&real).and_then(|m| m.modified()) {
            let _ = std::fs::File::options()
                .write(true)
                .open(&index)
                .and_then(|f| f.set_modified(modified));
        }
    }
    let tmp = git.with_env("GIT_INDEX_FILE", &index);
    let result = (|| {
        if !real.is_file() {
            tmp.run(&["read-tree", "HEAD"])?;
        }
        tmp.run(&["add", "-A", "--", "."])?;
        tmp.line(&["write-tree"])
    })();
    let _ = std::fs::remove_file(&index);
    result
}

/// The commit an agent's branch started from: where it forks from the main
/// checkout's HEAD (so work already merged home drops out of the diff).
pub fn base(repo: &Path, worktree: &Path) -> Result<String, WorktreeError> {
    let main_head = Git::at(repo).line(&["rev-parse", "HEAD"])?;
    Git::at(worktree).line(&["merge-base", &main_head, "HEAD"])
}

/// The parsed diff between two tree-ish objects of the worktree's repository.
pub fn diff(worktree: &Path, from: &str, to: &str) -> Result<Vec<FileDiff>, WorktreeError> {
    let text = Git::at(worktree).run(&[
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "-M",
        from,
        to,
    ])?;
    Ok(parse_unified(&text))
}

/// Everything the agent changed since its branch left the main checkout.
pub fn overall(repo: &Path, worktree: &Path) -> Result<Vec<FileDiff>, WorktreeError> {
    let base = base(repo, worktree)?;
    let now = snapshot(worktree)?;
    diff(worktree, &base, &now)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,4 @@ fn main
 a
-b
+B
+c
 d
\\ No newline at end of file
diff --git a/new file.txt b/new file.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new file.txt
@@ -0,0 +1 @@
+hello
diff --git a/gone.md b/gone.md
deleted file mode 100644
index 4444444..0000000
--- a/gone.md
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
diff --git a/old.rs b/new.rs
similarity index 100%
rename from old.rs
rename to new.rs
diff --git a/img.png b/img.png
new file mode 100644
index 0000000..5555555
Binary files /dev/null and b/img.png differ
";

    #[test]
    fn parses_files_hunks_and_kinds() {
        let files = parse_unified(SAMPLE);
        let names: Vec<_> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            names,
            ["src/lib.rs", "new file.txt", "gone.md", "new.rs", "img.png"]
        );
        let lib = &files[0];
        assert_eq!(lib.status, FileStatus::Modified);
        assert_eq!((lib.added(), lib.removed()), (2, 1));
        let h = &lib.hunks[0];
        assert_eq!(
            (h.old_start, h.old_len, h.new_start, h.new_len),
            (1, 3, 1, 4)
        );
        assert_eq!(h.lines.last().map(|l| l.kind), Some(LineKind::Note));
        assert_eq!(files[1].status, FileStatus::Added);
        assert_eq!(files[1].hunks[0].old_len, 0);
        assert_eq!(files[2].status, FileStatus::Deleted);
        assert_eq!(files[2].removed(), 2);
        assert_eq!(files[3].status, FileStatus::Renamed);
        assert_eq!(files[3].old_path.as_deref(), Some("old.rs"));
        assert!(files[4].binary);
        assert!(files[4].hunks.is_empty());
    }

    #[test]
    fn empty_and_garbage_input_give_nothing() {
        assert!(parse_unified("").is_empty());
        assert!(parse_unified("@@ -1 +1 @@\n+x\n").is_empty());
    }
}
