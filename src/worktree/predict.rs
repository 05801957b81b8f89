//! Conflicts before they happen (issue 31): for every pair of worktrees of
//! one repository, and each against the main checkout's HEAD, whether a
//! merge would conflict and in which files. Each worktree is frozen as a
//! commit object of its snapshot (committed, staged, unstaged and untracked
//! work), never referenced by a branch, and `git merge-tree --write-tree`
//! merges two of them in the object store only: no checkout, index or ref
//! changes. Results are cached by the pair of commits, so after one pane's
//! turn only that pane's pairs are merged again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::git::Git;
use super::{Worktree, WorktreeError, diff};
pub use crate::protocol::git::{Blocked, Conflict, MergePlan, Prediction, merge_order};

/// Merges checked at once (git processes in parallel).
const MAX_WORKERS: usize = 4;

impl Conflict {
    pub fn involves(&self, agent: &str) -> bool {
        self.a == agent || self.b.as_deref() == Some(agent)
    }

    /// The other side seen from `agent`: an agent id, or "the main branch".
    pub fn other(&self, agent: &str) -> &str {
        match (&self.b, self.a == agent) {
            (None, _) => "the main branch",
            (Some(b), true) => b,
            (Some(_), false) => &self.a,
        }
    }
}

/// The result of merging two commits in the object store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergeCheck {
    /// The merged tree (also written when there are conflicts).
    pub tree: String,
    /// Conflicted paths; empty: the merge is clean.
    pub files: Vec<String>,
}

/// Merges `theirs` into `ours` (commit-ish) with `git merge-tree`: nothing
/// outside the object store changes.
pub(crate) fn merge_check(
    git: &Git,
    ours: &str,
    theirs: &str,
) -> Result<MergeCheck, WorktreeError> {
    let out = git.output(&[
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        ours,
        theirs,
    ])?;
    match out.status.code() {
        Some(0 | 1) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let mut lines = text.lines();
            let tree = lines.next().unwrap_or_default().trim().to_owned();
            // Then the conflicted files, up to a blank line.
            let mut files: Vec<String> = Vec::new();
            for l in lines.take_while(|l| !l.is_empty()) {
                if !files.iter().any(|f| f == l) {
                    files.push(l.to_owned());
                }
            }
            Ok(MergeCheck { tree, files })
        }
        _ => Err(WorktreeError::Git {
            command: format!("git merge-tree {ours} {theirs}"),
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        }),
    }
}

/// The worktree as it is now, as a commit on top of its HEAD (its HEAD
/// itself when nothing is uncommitted). Fixed dates make the same tree on
/// the same HEAD the same commit, so the pair cache holds across refreshes.
pub fn snapshot_commit(worktree: &Path) -> Result<String, WorktreeError> {
    let git = Git::at(worktree);
    let head = git.line(&["rev-parse", "HEAD"])?;
    let tree = diff::snapshot(worktree)?;
    if git.line(&["rev-parse", &format!("{head}^{{tree}}")])? == tree {
        return Ok(head);
    }
    let fixed = git
        .with_env("GIT_AUTHOR_DATE", "@0 +0000")
        .with_env("GIT_COMMITTER_DATE", "@0 +0000");
    fixed.line(&[
        "-c",
        "user.name=hive",
        "-c",
        "user.email=hive@localhost",
        "commit-tree",
        &tree,
        "-p",
        &head,
        "-m",
        "hive: snapshot for a merge prediction",
    ])
}

/// Keeps each worktree's snapshot commit and each merged pair's result
/// between refreshes.
#[derive(Debug, Default)]
pub struct Predictor {
    /// (pane, member) → that worktree's last snapshot commit.
    snaps: HashMap<Key, String>,
    /// (ours, theirs) commits → the merge's result.
    pairs: HashMap<(String, String), MergeCheck>,
}

/// One merge to check: the repository and the two commits.
type Job = (PathBuf, String, String);

/// A worktree of the service: its pane and its place among the pane's
/// repositories (0 for a pane of one).
pub type Key = (usize, usize);

impl Predictor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Snapshots the worktrees of the panes in `changed` again (all of
    /// them when `None`, and any never seen), then merges every pair (of
    /// one repository) whose commits changed.
    pub fn refresh(
        &mut self,
        worktrees: &[(Key, &Worktree)],
        changed: Option<&[usize]>,
    ) -> Result<Prediction, WorktreeError> {
        let mut worktrees = worktrees.to_vec();
        worktrees.sort_by_key(|(i, _)| *i);
        for (i, w) in &worktrees {
            let again = changed.is_none_or(|c| c.contains(&i.0));
            if again || !self.snaps.contains_key(i) {
                self.snaps.insert(*i, snapshot_commit(&w.path)?);
            }
        }
        self.snaps
            .retain(|i, _| worktrees.iter().any(|(j, _)| j == i));
        let snapped: Vec<(&Worktree, String)> = worktrees
            .iter()
            .filter_map(|(i, w)| Some((*w, self.snaps.get(i)?.clone())))
            .collect();
        let heads = main_heads(&snapped)?;
        let mut used = HashMap::new();
        let mut out = Prediction::default();
        // Each with the main checkout's HEAD: conflicts, and who has work.
        let main_jobs: Vec<Job> = snapped
            .iter()
            .filter_map(|(w, mine)| {
                let (head, _) = heads.get(&w.repo)?;
                Some((w.repo.clone(), head.clone(), mine.clone()))
            })
            .collect();
        self.run(&main_jobs, &mut used)?;
        let mut pending: Vec<(&Worktree, &String)> = Vec::new();
        for (w, mine) in &snapped {
            let Some((head, main_tree)) = heads.get(&w.repo) else {
                continue;
            };
            let Some(check) = used.get(&(head.clone(), mine.clone())) else {
                continue;
            };
            if !check.files.is_empty() {
                out.conflicts.push(Conflict {
                    a: w.agent_id.clone(),
                    b: None,
                    files: check.files.iter().map(|f| w.label(f)).collect(),
                });
            }
            // Work to bring home: merging it changes the main tree.
            if &check.tree != main_tree {
                // A workspace's agent is pending once, whichever repos.
                if !out.pending.contains(&w.agent_id) {
                    out.pending.push(w.agent_id.clone());
                }
                pending.push((w, mine));
            }
        }
        self.agent_pairs(&pending, &mut used, &mut out)?;
        // Forget pairs no current snapshot uses.
        self.pairs = used;
        Ok(out)
    }

    /// Pairs of agents that both have work (one with nothing left to bring
    /// home conflicts, if at all, with the main branch).
    fn agent_pairs(
        &self,
        pending: &[(&Worktree, &String)],
        used: &mut HashMap<(String, String), MergeCheck>,
        out: &mut Prediction,
    ) -> Result<(), WorktreeError> {
        let mut pair_jobs: Vec<(usize, usize, Job)> = Vec::new();
        for (n, (w, mine)) in pending.iter().enumerate() {
            for (m, (other, theirs)) in pending.iter().enumerate().skip(n + 1) {
                if other.repo == w.repo && other.agent_id != w.agent_id {
                    let job = (w.repo.clone(), (*mine).clone(), (*theirs).clone());
                    pair_jobs.push((n, m, job));
                }
            }
        }
        let jobs: Vec<Job> = pair_jobs.iter().map(|(_, _, j)| j.clone()).collect();
        self.run(&jobs, used)?;
        for (n, m, (_, ours, theirs)) in pair_jobs {
            let files = used
                .get(&(ours, theirs))
                .map(|c| c.files.clone())
                .unwrap_or_default();
            if !files.is_empty() {
                let (a, b) = (pending[n].0, pending[m].0);
                // Named as the workspace among them names the repository.
                let named = if a.name.is_empty() { b } else { a };
                out.conflicts.push(Conflict {
                    a: a.agent_id.clone(),
                    b: Some(b.agent_id.clone()),
                    files: files.iter().map(|f| named.label(f)).collect(),
                });
            }
        }
        Ok(())
    }

    /// Puts the result of every job in `used`: from the cache, or merged
    /// now, several at a time (each merge is its own git process).
    fn run(
        &self,
        jobs: &[Job],
        used: &mut HashMap<(String, String), MergeCheck>,
    ) -> Result<(), WorktreeError> {
        let mut todo: Vec<&Job> = Vec::new();
        for job @ (_, ours, theirs) in jobs {
            let key = (ours.clone(), theirs.clone());
            if used.contains_key(&key) {
                continue;
            }
            match self.pairs.get(&key) {
                Some(hit) => {
                    used.insert(key, hit.clone());
                }
                None if !todo.iter().any(|t| t.1 == *ours && t.2 == *theirs) => todo.push(job),
                None => {}
            }
        }
        let workers = std::thread::available_parallelism()
            .map_or(2, usize::from)
            .clamp(1, MAX_WORKERS);
        let chunk = todo.len().div_ceil(workers).max(1);
        let results: Vec<Result<Vec<(&Job, MergeCheck)>, WorktreeError>> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = todo
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter()
                                .map(|job| {
                                    let (repo, ours, theirs) = job;
                                    Ok((*job, merge_check(&Git::at(repo), ours, theirs)?))
                                })
                                .collect()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(WorktreeError::Refused("a merge check panicked".into()))
                        })
                    })
                    .collect()
            });
        for part in results {
            for ((_, ours, theirs), check) in part? {
                used.insert((ours.clone(), theirs.clone()), check);
            }
        }
        Ok(())
    }
}

/// The main checkout's HEAD and its tree, per repository.
fn main_heads(
    snapped: &[(&Worktree, String)],
) -> Result<HashMap<PathBuf, (String, String)>, WorktreeError> {
    let mut heads = HashMap::new();
    for (w, _) in snapped {
        if !heads.contains_key(&w.repo) {
            let git = Git::at(&w.repo);
            let head = git.line(&["rev-parse", "HEAD"])?;
            let tree = git.line(&["rev-parse", "HEAD^{tree}"])?;
            heads.insert(w.repo.clone(), (head, tree));
        }
    }
    Ok(heads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(a: &str, b: Option<&str>, file: &str) -> Conflict {
        Conflict {
            a: a.into(),
            b: b.map(Into::into),
            files: vec![file.into()],
        }
    }

    #[test]
    fn the_order_merges_the_least_conflicting_first() {
        let p = Prediction {
            conflicts: vec![
                conflict("a", Some("b"), "x.rs"),
                conflict("b", Some("c"), "y.rs"),
                conflict("d", None, "z.rs"),
            ],
            pending: ["a", "b", "c", "d", "e"].map(String::from).to_vec(),
        };
        let plan = merge_order(&p);
        // e conflicts with nobody, a and c with b only, b with both.
        assert_eq!(plan.clean, ["e", "a", "c"]);
        let after: Vec<_> = plan
            .after
            .iter()
            .map(|b| (b.agent.as_str(), b.with.as_deref()))
            .collect();
        assert_eq!(after, [("d", None), ("b", Some("a"))]);
        assert_eq!(
            plan.describe().as_deref(),
            Some(
                "merge order: e, a, c; then d (conflicts with the main branch in z.rs), b (conflicts with a in x.rs)"
            )
        );
    }

    #[test]
    fn one_agent_without_conflicts_needs_no_order() {
        let p = Prediction {
            conflicts: Vec::new(),
            pending: vec!["a".into()],
        };
        assert_eq!(merge_order(&p).describe(), None);
        assert_eq!(merge_order(&Prediction::default()).describe(), None);
    }

    #[test]
    fn the_other_side_reads_from_either_end() {
        let c = conflict("a", Some("b"), "x");
        assert_eq!((c.other("a"), c.other("b")), ("b", "a"));
        assert_eq!(conflict("a", None, "x").other("a"), "the main branch");
    }
}
