//! The git side of the console: one tokio task that owns the panes'
//! worktrees, takes typed requests (turn started/ended, show a diff, bring
//! work home, hand a conflict to its agent) and answers with typed events
//! (diffs, overlaps, predicted conflicts, results). Requests run one at a time on
//! the blocking pool, so git never runs on the UI thread and two git
//! commands never race for one repository's locks. A pane's worktree may
//! be a workspace (issue 52): each request walks its members, answers name
//! files by repository (`FileDiff::repo`), and overlaps and predictions
//! compare the worktrees of one repository across panes.

use std::collections::HashMap;

use tokio::sync::mpsc;

use super::diff::{self, FileDiff};
use super::handoff::rebase_onto_main;
use super::merge::{BringMode, bring_home, commit_all};
use super::overlap::{Overlap, overlaps};
use super::predict::{Key, Prediction, Predictor};
use super::review;
use super::{Worktree, WorktreeError};
pub use crate::protocol::git::{DiffScope, FileChange, WorktreeEvent, WorktreeRequest};

impl DiffScope {
    pub fn label(self) -> &'static str {
        match self {
            DiffScope::Overall => "overall",
            DiffScope::LastTurn => "last turn",
        }
    }
}

impl WorktreeRequest {
    /// The request a runner's turn event makes of a worktree pane: a
    /// snapshot at the start, a diff at the end.
    pub fn of_turn(pane: usize, turn: &crate::upsert::TurnEvent) -> Self {
        match turn {
            crate::upsert::TurnEvent::TurnStarted { .. } => Self::TurnStarted { pane },
            _ => Self::TurnEnded { pane },
        }
    }

    /// The pane it is about (`None`: every pane), to re-number it.
    pub fn pane_mut(&mut self) -> Option<&mut usize> {
        match self {
            Self::TurnStarted { pane }
            | Self::TurnEnded { pane }
            | Self::Diff { pane, .. }
            | Self::Bring { pane, .. }
            | Self::Commit { pane, .. }
            | Self::Reject { pane, .. }
            | Self::Reset { pane }
            | Self::HandOff { pane, .. }
            | Self::Track { pane, .. }
            | Self::Untrack { pane } => Some(pane),
            Self::CheckOverlaps => None,
        }
    }

    /// Whether the service answers it with one event of its own.
    pub fn is_answered(&self) -> bool {
        !matches!(
            self,
            Self::TurnStarted { .. }
                | Self::TurnEnded { .. }
                | Self::CheckOverlaps
                | Self::Track { .. }
                | Self::Untrack { .. }
        )
    }
}

impl WorktreeEvent {
    /// The pane of an answer to one request (`None`: the service's state,
    /// sent unasked). Each request but `TurnStarted`, `TurnEnded` and
    /// `CheckOverlaps` is answered by exactly one such event, in order.
    pub fn pane_mut(&mut self) -> Option<&mut usize> {
        match self {
            Self::Diff { pane, .. }
            | Self::Brought { pane, .. }
            | Self::Rejected { pane, .. }
            | Self::Reset { pane, .. }
            | Self::HandedOff { pane, .. }
            | Self::Committed { pane, .. } => Some(pane),
            Self::Overlaps(_) | Self::Changed(_) | Self::Conflicts(_) => None,
        }
    }
}

/// Starts the service for the panes that have worktrees.
pub fn spawn_service(
    worktrees: Vec<(usize, Worktree)>,
    events: mpsc::UnboundedSender<WorktreeEvent>,
) -> mpsc::UnboundedSender<WorktreeRequest> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut service = Service {
        worktrees: worktrees.into_iter().collect(),
        turn_start: HashMap::new(),
        last_turn: HashMap::new(),
        last_turn_from: HashMap::new(),
        overlaps: Vec::new(),
        summary: Vec::new(),
        predictor: Predictor::new(),
        prediction: None,
        events,
    };
    tokio::spawn(async move {
        while let Some(req) = rx.recv().await {
            service = match tokio::task::spawn_blocking(move || {
                service.handle(req);
                service
            })
            .await
            {
                Ok(s) => s,
                Err(e) => {
                    tracing::error!("worktree service stopped: {e}");
                    return;
                }
            };
        }
    });
    tx
}

struct Service {
    /// Each pane's worktree (a workspace's root with its members).
    worktrees: HashMap<usize, Worktree>,
    /// Snapshot trees taken when each pane's turn started, per member.
    turn_start: HashMap<Key, String>,
    last_turn: HashMap<usize, Vec<FileDiff>>,
    /// The start snapshot of each member's last finished turn (the base a
    /// rejected file of that turn goes back to).
    last_turn_from: HashMap<Key, String>,
    overlaps: Vec<Overlap>,
    /// The last `Changed` sent.
    summary: Vec<(usize, Vec<FileChange>)>,
    predictor: Predictor,
    /// The last prediction sent (`None`: none yet).
    prediction: Option<Prediction>,
    events: mpsc::UnboundedSender<WorktreeEvent>,
}

/// The worktrees of one repository: its main checkout, the name a
/// workspace gives it (if any does), each agent's changes.
type Group = (std::path::PathBuf, String, Vec<(String, Vec<FileDiff>)>);

const NO_WORKTREE: &str = "this pane has no worktree";

/// `e` said of member `m`: as it is for a pane's only worktree, after the
/// repository's name in a workspace.
fn of(m: &Worktree, e: impl std::fmt::Display) -> String {
    if m.name.is_empty() {
        e.to_string()
    } else {
        format!("{}: {e}", m.name)
    }
}

/// The files of one member's diff, marked with its repository.
fn marked(m: &Worktree, mut files: Vec<FileDiff>) -> Vec<FileDiff> {
    for f in &mut files {
        f.repo.clone_from(&m.name);
    }
    files
}

/// A pane's overall diff: each repository's against its own main checkout.
fn overall(w: &Worktree) -> Result<Vec<FileDiff>, String> {
    let mut out = Vec::new();
    for m in w.members() {
        let files = diff::overall(&m.repo, &m.path).map_err(|e| of(m, e))?;
        out.extend(marked(m, files));
    }
    Ok(out)
}

impl Service {
    fn handle(&mut self, req: WorktreeRequest) {
        match req {
            WorktreeRequest::TurnStarted { pane } => self.turn_started(pane),
            WorktreeRequest::TurnEnded { pane } => self.turn_ended(pane),
            WorktreeRequest::Diff { pane, scope } => self.diff(pane, scope),
            WorktreeRequest::Commit { pane, message } => {
                let result = match self.worktrees.get(&pane) {
                    Some(w) => commit(w, &message),
                    None => Err(NO_WORKTREE.into()),
                };
                let _ = self.events.send(WorktreeEvent::Committed { pane, result });
            }
            WorktreeRequest::Bring {
                pane,
                mode,
                message,
                repos,
            } => self.bring(pane, mode, message, &repos),
            WorktreeRequest::HandOff { pane, message } => self.hand_off(pane, message),
            WorktreeRequest::Reset { pane } => {
                let result = match self.worktrees.get(&pane) {
                    Some(w) => w.members().iter().try_for_each(|m| {
                        review::reset_to_main(&m.repo, &m.path)
                            .map(|_| ())
                            .map_err(|e| format!("not reset: {}", of(m, e)))
                    }),
                    None => Err(NO_WORKTREE.into()),
                };
                let _ = self.events.send(WorktreeEvent::Reset { pane, result });
                self.check_overlaps();
                self.predict(Some(&[pane]));
            }
            WorktreeRequest::Reject {
                pane,
                scope,
                file,
                hunk,
            } => {
                let result = self.reject(pane, scope, &file, hunk);
                let _ = self.events.send(WorktreeEvent::Rejected { pane, result });
                self.check_overlaps();
                self.predict(Some(&[pane]));
            }
            WorktreeRequest::CheckOverlaps => {
                self.check_overlaps();
                self.predict(None);
            }
            WorktreeRequest::Track { pane, worktree } => {
                self.worktrees.insert(pane, *worktree);
                self.check_overlaps();
                self.predict(Some(&[pane]));
            }
            WorktreeRequest::Untrack { pane } => self.untrack(pane),
        }
    }

    fn untrack(&mut self, pane: usize) {
        self.worktrees.remove(&pane);
        self.turn_start.retain(|k, _| k.0 != pane);
        self.last_turn.remove(&pane);
        self.last_turn_from.retain(|k, _| k.0 != pane);
        self.check_overlaps();
        self.predict(None);
    }

    fn turn_started(&mut self, pane: usize) {
        let Some(w) = self.worktrees.get(&pane) else {
            return;
        };
        for (k, m) in w.members().iter().enumerate() {
            match diff::snapshot(&m.path) {
                Ok(tree) => {
                    self.turn_start.insert((pane, k), tree);
                }
                Err(e) => tracing::warn!(agent = %m.agent_id, "turn snapshot: {}", of(m, e)),
            }
        }
    }

    fn turn_ended(&mut self, pane: usize) {
        let mut edited = true;
        if let Some(w) = self.worktrees.get(&pane) {
            let mut files = Vec::new();
            for (k, m) in w.members().iter().enumerate() {
                let Some(start) = self.turn_start.remove(&(pane, k)) else {
                    continue;
                };
                match diff::snapshot(&m.path).and_then(|end| diff::diff(&m.path, &start, &end)) {
                    Ok(found) => {
                        files.extend(marked(m, found));
                        self.last_turn_from.insert((pane, k), start);
                    }
                    Err(e) => tracing::warn!(agent = %m.agent_id, "turn diff: {}", of(m, e)),
                }
            }
            edited = !files.is_empty();
            self.last_turn.insert(pane, files);
        }
        self.check_overlaps();
        // A turn that edited nothing cannot change what would conflict.
        if edited {
            self.predict(Some(&[pane]));
        }
    }

    fn diff(&mut self, pane: usize, scope: DiffScope) {
        let result = match scope {
            DiffScope::Overall => self
                .worktrees
                .get(&pane)
                .ok_or_else(|| NO_WORKTREE.to_owned())
                .and_then(overall),
            DiffScope::LastTurn => Ok(self.last_turn.get(&pane).cloned().unwrap_or_default()),
        };
        let _ = self.events.send(WorktreeEvent::Diff {
            pane,
            scope,
            result,
        });
        if scope == DiffScope::Overall {
            self.check_overlaps();
            self.predict(Some(&[pane]));
        }
    }

    fn bring(&mut self, pane: usize, mode: BringMode, message: Option<String>, repos: &[String]) {
        let (result, conflicted) = match self.worktrees.get(&pane) {
            Some(w) => bring_members(w, mode, message, repos),
            None => (Err(NO_WORKTREE.into()), Vec::new()),
        };
        let _ = self.events.send(WorktreeEvent::Brought {
            pane,
            result,
            conflicted,
        });
        self.check_overlaps();
        // The main checkout moved: every pair with it is new.
        self.predict(Some(&[pane]));
    }

    fn hand_off(&mut self, pane: usize, message: Option<String>) {
        let result = match self.worktrees.get(&pane) {
            Some(w) => hand_off_members(w, message),
            None => Err(NO_WORKTREE.into()),
        };
        let _ = self.events.send(WorktreeEvent::HandedOff { pane, result });
        self.predict(Some(&[pane]));
    }

    fn reject(
        &self,
        pane: usize,
        scope: DiffScope,
        file: &FileDiff,
        hunk: Option<usize>,
    ) -> Result<String, String> {
        let w = self
            .worktrees
            .get(&pane)
            .ok_or_else(|| NO_WORKTREE.to_owned())?;
        let (k, m) = w
            .members()
            .iter()
            .enumerate()
            .find(|(_, m)| m.name == file.repo)
            .ok_or_else(|| format!("not reverted: no repository `{}` in this pane", file.repo))?;
        let shown = m.label(&file.path);
        let done = match hunk {
            Some(i) => review::reject_hunk(&m.path, file, i)
                .map(|()| format!("reverted hunk {} of {shown}", i + 1)),
            None => {
                let base = match scope {
                    DiffScope::Overall => diff::base(&m.repo, &m.path),
                    DiffScope::LastTurn => self
                        .last_turn_from
                        .get(&(pane, k))
                        .cloned()
                        .ok_or_else(|| WorktreeError::Refused("no finished turn".into())),
                };
                base.and_then(|b| review::reject_file(&m.path, &b, file))
                    .map(|()| format!("reverted {shown}"))
            }
        };
        done.map_err(|e| format!("not reverted: {e}"))
    }

    /// Every worktree the service compares: each pane's members.
    fn members(&self) -> Vec<(Key, &Worktree)> {
        members(&self.worktrees)
    }

    /// Refreshes the predicted conflicts (snapshotting `changed` panes
    /// again, all when `None`) and sends them when they changed.
    fn predict(&mut self, changed: Option<&[usize]>) {
        let members = members(&self.worktrees);
        match self.predictor.refresh(&members, changed) {
            Ok(found) => {
                if self.prediction.as_ref() != Some(&found) {
                    self.prediction = Some(found.clone());
                    let _ = self.events.send(WorktreeEvent::Conflicts(found));
                }
            }
            Err(e) => tracing::warn!("conflict prediction: {e}"),
        }
    }

    fn check_overlaps(&mut self) {
        let mut summary: Vec<(usize, Vec<FileChange>)> = Vec::new();
        // Overlaps are between worktrees of one repository.
        let mut by_repo: Vec<Group> = Vec::new();
        for ((pane, _), m) in self.members() {
            let files = match diff::overall(&m.repo, &m.path) {
                Ok(files) => files,
                Err(e) => {
                    tracing::warn!(agent = %m.agent_id, "overlap check: {}", of(m, e));
                    continue;
                }
            };
            let changes = files
                .iter()
                .map(|f| (m.label(&f.path), f.added(), f.removed()));
            match summary.last_mut() {
                Some((p, list)) if *p == pane => list.extend(changes),
                _ => summary.push((pane, changes.collect())),
            }
            match by_repo.iter_mut().find(|(r, _, _)| *r == m.repo) {
                Some((_, name, list)) => {
                    if name.is_empty() {
                        name.clone_from(&m.name);
                    }
                    list.push((m.agent_id.clone(), files));
                }
                None => by_repo.push((
                    m.repo.clone(),
                    m.name.clone(),
                    vec![(m.agent_id.clone(), files)],
                )),
            }
        }
        if summary != self.summary {
            self.summary = summary.clone();
            let _ = self.events.send(WorktreeEvent::Changed(summary));
        }
        let found: Vec<Overlap> = by_repo
            .iter()
            .flat_map(|(_, name, changes)| {
                overlaps(changes).into_iter().map(move |mut o| {
                    // Named as the workspace among them names the repository.
                    if !name.is_empty() {
                        for f in &mut o.files {
                            f.path = format!("{name}/{}", f.path);
                        }
                    }
                    o
                })
            })
            .collect();
        if found != self.overlaps {
            self.overlaps = found.clone();
            let _ = self.events.send(WorktreeEvent::Overlaps(found));
        }
    }
}

/// Every worktree of `panes`: each pane's members, in pane order.
fn members(panes: &HashMap<usize, Worktree>) -> Vec<(Key, &Worktree)> {
    let mut out: Vec<(Key, &Worktree)> = panes
        .iter()
        .flat_map(|(i, w)| w.members().iter().enumerate().map(|(k, m)| ((*i, k), m)))
        .collect();
    out.sort_by_key(|(k, _)| *k);
    out
}

/// Commits each member's work: the new commit (`repo sha, …` in a
/// workspace), or `None` when there was nothing to commit anywhere.
fn commit(w: &Worktree, message: &str) -> Result<Option<String>, String> {
    let mut made = Vec::new();
    for m in w.members() {
        if let Some(sha) = commit_all(&m.path, message).map_err(|e| of(m, e))? {
            made.push(if w.is_workspace() {
                format!("{} {}", m.name, &sha[..sha.len().min(10)])
            } else {
                sha
            });
        }
    }
    Ok((!made.is_empty()).then(|| made.join(", ")))
}

/// The members `repos` names (every one when empty), or which name is
/// not one of them.
fn chosen<'a>(w: &'a Worktree, repos: &[String]) -> Result<Vec<&'a Worktree>, String> {
    if let Some(bad) = repos.iter().find(|r| w.member(r).is_none()) {
        let names: Vec<&str> = w.members().iter().map(|m| m.name.as_str()).collect();
        return Err(format!(
            "no repository `{bad}` in this pane (it has: {})",
            names.join(", ")
        ));
    }
    Ok(w.members()
        .iter()
        .filter(|m| repos.is_empty() || repos.contains(&m.name))
        .collect())
}

/// Brings home each chosen member in turn, stopping at the first that
/// would conflict or fails: one outcome for all (files named by
/// repository), or what was done before the one that stopped, and why.
fn bring_members(
    w: &Worktree,
    mode: BringMode,
    message: Option<String>,
    repos: &[String],
) -> (
    Result<crate::protocol::git::MergeOutcome, String>,
    Vec<String>,
) {
    let members = match chosen(w, repos) {
        Ok(m) => m,
        Err(e) => return (Err(format!("not brought home: {e}")), Vec::new()),
    };
    let message = message.unwrap_or_else(|| format!("hive: work of {}", w.agent_id));
    let mut all = crate::protocol::git::MergeOutcome {
        mode,
        branch: w.branch.clone(),
        commits: 0,
        committed_first: false,
        files: Vec::new(),
    };
    let mut done: Vec<String> = Vec::new();
    for m in members {
        match bring_home(&m.repo, &m.path, &m.branch, mode, &message) {
            Ok(o) => {
                all.commits += o.commits;
                all.committed_first |= o.committed_first;
                all.files.extend(o.files.iter().map(|f| m.label(f)));
                if !m.name.is_empty() {
                    done.push(format!("{} ({} commit(s))", m.name, o.commits));
                }
            }
            Err(e) => {
                let before = if done.is_empty() {
                    String::new()
                } else {
                    format!("{} {}; ", mode.verb(), done.join(", "))
                };
                return match e {
                    WorktreeError::Conflict { ref files, .. } => {
                        let files = files.iter().map(|f| m.label(f)).collect();
                        (Err(format!("{before}{}", of(m, &e))), files)
                    }
                    other => (
                        Err(format!("{before}not brought home: {}", of(m, other))),
                        Vec::new(),
                    ),
                };
            }
        }
    }
    (Ok(all), Vec::new())
}

/// Rebases each member onto its main checkout's HEAD: the conflicted
/// files of all (named by repository) for the agent; the first member's
/// target and base.
fn hand_off_members(
    w: &Worktree,
    message: Option<String>,
) -> Result<crate::protocol::git::HandOff, String> {
    let message = message.unwrap_or_else(|| format!("hive: work of {}", w.agent_id));
    let mut all: Option<crate::protocol::git::HandOff> = None;
    for m in w.members() {
        let mut h = rebase_onto_main(&m.repo, &m.path, &m.branch, &message)
            .map_err(|e| format!("not handed off: {}", of(m, e)))?;
        for f in &mut h.files {
            f.path = m.label(&f.path);
        }
        match all.as_mut() {
            Some(a) => a.files.extend(h.files),
            None => all = Some(h),
        }
    }
    all.ok_or_else(|| NO_WORKTREE.to_owned())
}
