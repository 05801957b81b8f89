//! Conflict hand-off (issue 31): when bringing an agent's work home would
//! conflict, rebase the agent's branch onto the main checkout's HEAD in the
//! agent's own worktree and leave the conflicts there, marked, for the
//! agent to resolve; the message that tells it so is built here (pure) and
//! lists every conflicted file with where its markers are. The main
//! checkout is never touched.

use std::path::Path;

use super::WorktreeError;
use super::git::Git;
use super::merge::commit_all;
pub use crate::protocol::git::{ConflictedFile, HandOff};

/// Commits what the agent left uncommitted, then rebases its branch onto
/// the main checkout's HEAD in its worktree. A rebase that stops on
/// conflicts is left in progress for the agent; any other failure is
/// aborted, so the branch is where it was.
pub fn rebase_onto_main(
    repo: &Path,
    worktree: &Path,
    branch: &str,
    message: &str,
) -> Result<HandOff, WorktreeError> {
    let wt = Git::at(worktree);
    for state in ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD"] {
        if wt.succeeds(&["rev-parse", "-q", "--verify", state]) {
            return Err(WorktreeError::Refused(format!(
                "the worktree of {branch} is already in the middle of a merge, cherry-pick or rebase ({state})"
            )));
        }
    }
    let main = Git::at(repo);
    let onto = main.line(&["rev-parse", "HEAD"])?;
    let target = match main.line(&["branch", "--show-current"])? {
        b if b.is_empty() => "HEAD".to_owned(),
        b => b,
    };
    commit_all(worktree, message)?;
    let mut args = vec![];
    if !wt.succeeds(&["config", "user.email"]) {
        args.extend(["-c", "user.name=hive", "-c", "user.email=hive@localhost"]);
    }
    args.extend(["rebase", "--no-autostash", onto.as_str()]);
    let mut handoff = HandOff {
        branch: branch.to_owned(),
        target,
        onto: onto.clone(),
        files: Vec::new(),
    };
    let Err(failed) = wt.run(&args) else {
        return Ok(handoff);
    };
    handoff.files = conflicted(worktree)?;
    if handoff.files.is_empty() {
        // Not a conflict (a hook, a lock): put the branch back.
        let _ = wt.output(&["rebase", "--abort"]);
        return Err(failed);
    }
    Ok(handoff)
}

/// The unmerged files of a stopped rebase, with their marker spans.
fn conflicted(worktree: &Path) -> Result<Vec<ConflictedFile>, WorktreeError> {
    let status = Git::at(worktree).run(&["status", "--porcelain=v1", "-z"])?;
    let mut out = Vec::new();
    for entry in status.split('\0') {
        let (Some(code), Some(path)) = (entry.get(..2), entry.get(3..)) else {
            continue;
        };
        if !matches!(code, "UU" | "AA" | "DD" | "AU" | "UA" | "DU" | "UD") {
            continue;
        }
        let text = std::fs::read(worktree.join(path)).unwrap_or_default();
        out.push(ConflictedFile {
            path: path.to_owned(),
            code: code.to_owned(),
            regions: marker_regions(&String::from_utf8_lossy(&text)),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// 1-based spans of conflict markers in `text`.
pub fn marker_regions(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open = None;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("<<<<<<< ") || line == "<<<<<<<" {
            open = Some(i + 1);
        } else if (line.starts_with(">>>>>>> ") || line == ">>>>>>>")
            && let Some(start) = open.take()
        {
            out.push((start, i + 1));
        }
    }
    out
}

impl ConflictedFile {
    /// `README.md: lines 3-9, 20-24` or what happened to a deleted file.
    pub fn describe(&self) -> String {
        let what = match self.code.as_str() {
            "DU" | "UD" => "deleted on one side, changed on the other".to_owned(),
            "DD" => "deleted on both sides".to_owned(),
            _ if self.regions.is_empty() => "conflicted (no text markers)".to_owned(),
            _ => {
                let spans: Vec<String> = self
                    .regions
                    .iter()
                    .map(|(a, b)| format!("{a}-{b}"))
                    .collect();
                format!("conflict markers at lines {}", spans.join(", "))
            }
        };
        format!("{}: {what}", self.path)
    }
}

impl HandOff {
    /// The message that starts the agent's next turn: every conflicted file
    /// and what to do. Empty files: nothing to hand off.
    pub fn message(&self) -> String {
        let short = &self.onto[..self.onto.len().min(10)];
        let mut s = format!(
            "Merging your branch `{}` into `{}` conflicts. hive rebased your branch onto `{}` ({short}) in your worktree; the rebase stopped with conflicts in {} file{}:\n",
            self.branch,
            self.target,
            self.target,
            self.files.len(),
            if self.files.len() == 1 { "" } else { "s" },
        );
        for f in &self.files {
            s.push_str(&format!("- {}\n", f.describe()));
        }
        s.push_str(
            "\nResolve each conflict keeping the intent of both sides (remove every <<<<<<< ======= >>>>>>> marker), \
             `git add` (or `git rm`) each file, then run `GIT_EDITOR=true git rebase --continue`; \
             repeat if the rebase stops again, until `git status` shows no rebase in progress. \
             Do not run `git rebase --abort`. Then say what you kept from each side.",
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_spans_are_found() {
        let text =
            "a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> 1234 (msg)\nb\n<<<<<<< HEAD\n>>>>>>> z\n";
        assert_eq!(marker_regions(text), [(2, 6), (8, 9)]);
        assert!(marker_regions("no markers\n>>>>>>> stray\n").is_empty());
    }

    #[test]
    fn the_message_lists_every_file() {
        let h = HandOff {
            branch: "hive/b".into(),
            target: "main".into(),
            onto: "0123456789abcdef".into(),
            files: vec![
                ConflictedFile {
                    path: "README.md".into(),
                    code: "UU".into(),
                    regions: vec![(3, 9), (20, 24)],
                },
                ConflictedFile {
                    path: "gone.rs".into(),
                    code: "UD".into(),
                    regions: Vec::new(),
                },
            ],
        };
        let m = h.message();
        assert!(m.starts_with(
            "Merging your branch `hive/b` into `main` conflicts. hive rebased your branch onto `main` (0123456789) in your worktree; the rebase stopped with conflicts in 2 files:\n"
        ), "{m}");
        assert!(m.contains("- README.md: conflict markers at lines 3-9, 20-24\n"));
        assert!(m.contains("- gone.rs: deleted on one side, changed on the other\n"));
        assert!(m.contains("git rebase --continue"));
    }
}
