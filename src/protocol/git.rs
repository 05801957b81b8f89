//! The git service's vocabulary (issue 31): a pane's worktree, a parsed
//! diff, what bringing work home did, overlaps and predicted conflicts, and
//! the requests a console makes of its server's git service with their
//! answers. The service (src/worktree/) runs git and fills them in.

use std::path::PathBuf;

/// One agent's worktree, as created or found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Worktree {
    pub agent_id: String,
    /// The main checkout's top level.
    pub repo: PathBuf,
    /// The worktree's top level.
    pub path: PathBuf,
    /// Where the agent runs (the worktree, or the same subdirectory in it).
    pub cwd: PathBuf,
    pub branch: String,
    /// False: an existing worktree was reused (a restart).
    pub created: bool,
    /// What `worktree_setup` printed when it ran for this start (its last
    /// lines, neutralized), for the pane to show (issue 31 point 6).
    #[serde(skip)]
    pub setup_output: Option<String>,
    /// Its directory's name in a workspace (issue 52: `api`, or `app-2`
    /// when two repositories share a name); empty for a pane's only
    /// worktree.
    #[serde(default)]
    pub name: String,
    /// A workspace's repositories, each a worktree of its own on the
    /// pane's branch under `path` (the workspace root, also `cwd`). Empty:
    /// one repository, this worktree itself.
    #[serde(default)]
    pub repos: Vec<Worktree>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FileStatus {
    Added,
    Deleted,
    Modified,
    Renamed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum LineKind {
    Context,
    Added,
    Removed,
    /// `\ No newline at end of file`.
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct DiffLine {
    pub kind: LineKind,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Hunk {
    /// The `@@ -a,b +c,d @@ context` line.
    pub header: String,
    pub(crate) old_start: u32,
    pub(crate) old_len: u32,
    pub(crate) new_start: u32,
    pub(crate) new_len: u32,
    pub lines: Vec<DiffLine>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileDiff {
    pub path: String,
    /// Renames: where the file was.
    pub(crate) old_path: Option<String>,
    pub status: FileStatus,
    pub binary: bool,
    pub(crate) hunks: Vec<Hunk>,
    /// git's header lines (`diff --git` to `+++`), to rebuild a patch of
    /// one hunk.
    pub(crate) head: Vec<String>,
    /// The workspace repository it is in (its `Worktree::name`; empty: the
    /// pane's only one). `path` stays relative to that repository.
    #[serde(default)]
    pub repo: String,
}

impl FileDiff {
    /// Its path as the pane's agent sees it: `api/src/lib.rs` in a
    /// workspace, `src/lib.rs` otherwise (what the view lists, and what a
    /// review comment names).
    pub fn shown(&self) -> String {
        if self.repo.is_empty() {
            self.path.clone()
        } else {
            format!("{}/{}", self.repo, self.path)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BringMode {
    /// A merge commit of the agent's branch.
    Merge,
    /// The agent's commits replayed on the main checkout's branch.
    CherryPick,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MergeOutcome {
    pub mode: BringMode,
    pub branch: String,
    /// Commits brought over (0: nothing to bring).
    pub commits: usize,
    /// The agent's uncommitted work was committed first.
    pub committed_first: bool,
    /// Files the main checkout received.
    pub files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OverlapFile {
    pub path: String,
    /// Some hunk of one agent touches lines a hunk of the other touches
    /// (in the base's numbering).
    pub same_hunk: bool,
}

/// Two agents whose changes meet.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Overlap {
    pub a: String,
    pub b: String,
    pub files: Vec<OverlapFile>,
}

/// A merge that would conflict: agent `a` with agent `b`, or with the main
/// checkout's HEAD when `b` is `None`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Conflict {
    pub a: String,
    pub b: Option<String>,
    pub files: Vec<String>,
}

/// What the predictor found: the conflicts, and which agents have work the
/// main checkout does not have yet (in pane order).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Prediction {
    pub conflicts: Vec<Conflict>,
    pub pending: Vec<String>,
}

/// One conflicted file as the rebase left it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConflictedFile {
    pub path: String,
    /// `git status` code: `UU` both changed, `AA` both added, `DU`/`UD`
    /// deleted on one side, …
    pub code: String,
    /// 1-based line spans from `<<<<<<<` to `>>>>>>>`.
    pub regions: Vec<(usize, usize)>,
}

/// What the hand-off did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HandOff {
    pub branch: String,
    /// The main checkout's branch (or `HEAD` when detached).
    pub target: String,
    /// The commit rebased onto.
    pub onto: String,
    /// Empty: the rebase went through; merging now is clean.
    pub files: Vec<ConflictedFile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DiffScope {
    /// Everything since the branch left the main checkout.
    Overall,
    /// What the last finished turn changed.
    LastTurn,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum WorktreeRequest {
    TurnStarted {
        pane: usize,
    },
    TurnEnded {
        pane: usize,
    },
    Diff {
        pane: usize,
        scope: DiffScope,
    },
    /// Merge or cherry-pick; `message` names the commit of uncommitted work.
    Bring {
        pane: usize,
        mode: BringMode,
        message: Option<String>,
        /// A workspace's repositories to bring home (their names); empty:
        /// every one.
        #[serde(default)]
        repos: Vec<String>,
    },
    /// Commit everything in the worktree on its branch.
    Commit {
        pane: usize,
        message: String,
    },
    /// Recompute overlap warnings and predicted conflicts (the focus
    /// moved, a terminal pane worked).
    CheckOverlaps,
    /// Review: revert `file` (one hunk of it, or all of it) in the pane's
    /// worktree, as the diff of `scope` showed it.
    Reject {
        pane: usize,
        scope: DiffScope,
        file: Box<FileDiff>,
        hunk: Option<usize>,
    },
    /// Discard the pane's work: its branch back to the main checkout's
    /// HEAD, untracked files removed.
    Reset {
        pane: usize,
    },
    /// A merge conflicted: rebase the pane's branch onto the main
    /// checkout's HEAD in its worktree, leaving the conflicts to the agent.
    HandOff {
        pane: usize,
        message: Option<String>,
    },
    /// A pane made at runtime has this worktree (the server's to say: a
    /// client can neither send nor receive it).
    #[serde(skip)]
    Track {
        pane: usize,
        worktree: Box<Worktree>,
    },
    /// The pane was closed: its worktree (which stays on disk) is no
    /// longer compared with the others.
    #[serde(skip)]
    Untrack {
        pane: usize,
    },
}

/// One file a worktree changed: (path, lines added, lines removed).
pub type FileChange = (String, usize, usize);

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum WorktreeEvent {
    Diff {
        pane: usize,
        scope: DiffScope,
        result: Result<Vec<FileDiff>, String>,
    },
    /// Every current overlap between two agents (empty: none). Sent when the
    /// set changes; it is the state an attention inbox can show.
    Overlaps(Vec<Overlap>),
    Brought {
        pane: usize,
        result: Result<MergeOutcome, String>,
        /// The files a refused merge would conflict in (empty otherwise).
        conflicted: Vec<String>,
    },
    /// What each worktree changed overall: (pane, [(path, added,
    /// removed)]), for the compare view. Sent when it changes.
    Changed(Vec<(usize, Vec<FileChange>)>),
    /// Every merge that would conflict now (pairs of worktrees, each with
    /// the main checkout), and who has work to bring home. Sent when it
    /// changes.
    Conflicts(Prediction),
    /// A rejected file or hunk was reverted (what, for the view) or not.
    Rejected {
        pane: usize,
        result: Result<String, String>,
    },
    /// A worktree was reset to the main checkout (or not).
    Reset {
        pane: usize,
        result: Result<(), String>,
    },
    /// The hand-off's rebase: stopped on the files listed (for the agent),
    /// or went through.
    HandedOff {
        pane: usize,
        result: Result<HandOff, String>,
    },
    /// The new commit, or `None` when there was nothing to commit.
    Committed {
        pane: usize,
        result: Result<Option<String>, String>,
    },
}

/// A merge order that avoids the predicted conflicts: the agents that can
/// go home cleanly one after the other (fewest conflicts first), then those
/// that conflict with one of them or with the main branch, with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergePlan {
    pub clean: Vec<String>,
    /// The agents that would conflict, in the order they come.
    pub after: Vec<Blocked>,
}

/// An agent whose merge would conflict with `with` (an agent merged
/// before it; `None`: the main branch) in `files`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    pub agent: String,
    pub with: Option<String>,
    pub files: Vec<String>,
}

impl MergePlan {
    /// `merge order: a, c; then b (conflicts with a in x.rs)`; `None` when
    /// there is nothing to order (fewer than two agents with work).
    pub fn describe(&self) -> Option<String> {
        self.describe_named(str::to_owned)
    }

    /// [`describe`](Self::describe) with each agent id as `name` gives it
    /// (a pane's display name).
    pub fn describe_named(&self, name: impl Fn(&str) -> String) -> Option<String> {
        if self.clean.len() + self.after.len() < 2 && self.after.is_empty() {
            return None;
        }
        let clean: Vec<String> = self.clean.iter().map(|a| name(a)).collect();
        let mut s = format!("merge order: {}", clean.join(", "));
        if self.clean.is_empty() {
            s = "merge order: none is clean".to_owned();
        }
        for (i, b) in self.after.iter().enumerate() {
            s.push_str(if i == 0 { "; then " } else { ", " });
            let with = b
                .with
                .as_deref()
                .map_or_else(|| "the main branch".to_owned(), &name);
            s.push_str(&format!(
                "{} (conflicts with {with} in {})",
                name(&b.agent),
                b.files.join(", ")
            ));
        }
        Some(s)
    }
}

/// Orders the agents with pending work (see [`MergePlan`]). Pure.
pub fn merge_order(p: &Prediction) -> MergePlan {
    let mut plan = MergePlan::default();
    let with_main = |a: &str| p.conflicts.iter().find(|c| c.b.is_none() && c.a == a);
    let between = |a: &str, b: &str| {
        p.conflicts
            .iter()
            .find(|c| c.b.is_some() && c.involves(a) && c.involves(b))
    };
    let mut left: Vec<&String> = Vec::new();
    for a in &p.pending {
        match with_main(a) {
            Some(c) => plan.after.push(Blocked {
                agent: a.clone(),
                with: None,
                files: c.files.clone(),
            }),
            None => left.push(a),
        }
    }
    while !left.is_empty() {
        // The agent that blocks the fewest others goes next.
        let degree = |a: &str| left.iter().filter(|b| between(a, b).is_some()).count();
        let Some(pick) = (0..left.len()).min_by_key(|&i| degree(left[i])) else {
            break;
        };
        let next = left.remove(pick);
        plan.clean.push(next.clone());
        left.retain(|b| match between(next, b) {
            Some(c) => {
                plan.after.push(Blocked {
                    agent: (*b).clone(),
                    with: Some(next.clone()),
                    files: c.files.clone(),
                });
                false
            }
            None => true,
        });
    }
    plan
}
