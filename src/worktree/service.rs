//! The git side of the console: one tokio task that owns the panes'
//! worktrees, takes typed requests (turn started/ended, show a diff, bring
//! work home) and answers with typed events. Requests run one at a time on
//! the blocking pool, so git never runs on the UI thread and two git
//! commands never race for one repository's locks.

use std::collections::HashMap;

use tokio::sync::mpsc;

use super::diff::{self, FileDiff};
use super::merge::{BringMode, MergeOutcome, bring_home, commit_all};
use super::overlap::{Overlap, overlaps};
use super::{Worktree, WorktreeError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffScope {
    /// Everything since the branch left the main checkout.
    Overall,
    /// What the last finished turn changed.
    LastTurn,
}

impl DiffScope {
    pub fn label(self) -> &'static str {
        match self {
            DiffScope::Overall => "overall",
            DiffScope::LastTurn => "last turn",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
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
    },
    /// Commit everything in the worktree on its branch.
    Commit {
        pane: usize,
        message: String,
    },
    /// Recompute overlap warnings (the focus moved, a terminal pane worked).
    CheckOverlaps,
}

#[derive(Debug, Clone, PartialEq)]
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
    },
    /// The new commit, or `None` when there was nothing to commit.
    Committed {
        pane: usize,
        result: Result<Option<String>, String>,
    },
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
        overlaps: Vec::new(),
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
    worktrees: HashMap<usize, Worktree>,
    /// Snapshot trees taken when each pane's turn started.
    turn_start: HashMap<usize, String>,
    last_turn: HashMap<usize, Vec<FileDiff>>,
    overlaps: Vec<Overlap>,
    events: mpsc::UnboundedSender<WorktreeEvent>,
}

impl Service {
    fn handle(&mut self, req: WorktreeRequest) {
        match req {
            WorktreeRequest::TurnStarted { pane } => {
                if let Some(w) = self.worktrees.get(&pane) {
                    match diff::snapshot(&w.path) {
                        Ok(tree) => {
                            self.turn_start.insert(pane, tree);
                        }
                        Err(e) => tracing::warn!(agent = %w.agent_id, "turn snapshot: {e}"),
                    }
                }
            }
            WorktreeRequest::TurnEnded { pane } => {
                if let (Some(w), Some(start)) =
                    (self.worktrees.get(&pane), self.turn_start.remove(&pane))
                {
                    match diff::snapshot(&w.path).and_then(|end| diff::diff(&w.path, &start, &end))
                    {
                        Ok(files) => {
                            self.last_turn.insert(pane, files);
                        }
                        Err(e) => tracing::warn!(agent = %w.agent_id, "turn diff: {e}"),
                    }
                }
                self.check_overlaps();
            }
            WorktreeRequest::Diff { pane, scope } => {
                let result = match scope {
                    DiffScope::Overall => self
                        .worktrees
                        .get(&pane)
                        .ok_or_else(|| "this pane has no worktree".to_owned())
                        .and_then(|w| diff::overall(&w.repo, &w.path).map_err(|e| e.to_string())),
                    DiffScope::LastTurn => {
                        Ok(self.last_turn.get(&pane).cloned().unwrap_or_default())
                    }
                };
                let _ = self.events.send(WorktreeEvent::Diff {
                    pane,
                    scope,
                    result,
                });
                if scope == DiffScope::Overall {
                    self.check_overlaps();
                }
            }
            WorktreeRequest::Commit { pane, message } => {
                let result = match self.worktrees.get(&pane) {
                    Some(w) => commit_all(&w.path, &message).map_err(|e| e.to_string()),
                    None => Err("this pane has no worktree".into()),
                };
                let _ = self.events.send(WorktreeEvent::Committed { pane, result });
            }
            WorktreeRequest::Bring {
                pane,
                mode,
                message,
            } => {
                let result = match self.worktrees.get(&pane) {
                    Some(w) => bring_home(
                        &w.repo,
                        &w.path,
                        &w.branch,
                        mode,
                        &message.unwrap_or_else(|| format!("hive: work of {}", w.agent_id)),
                    )
                    .map_err(|e| match e {
                        WorktreeError::Conflict { .. } => e.to_string(),
                        other => format!("not brought home: {other}"),
                    }),
                    None => Err("this pane has no worktree".into()),
                };
                let _ = self.events.send(WorktreeEvent::Brought { pane, result });
                self.check_overlaps();
            }
            WorktreeRequest::CheckOverlaps => self.check_overlaps(),
        }
    }

    fn check_overlaps(&mut self) {
        let mut panes: Vec<_> = self.worktrees.iter().collect();
        panes.sort_by_key(|(i, _)| **i);
        let changes: Vec<(String, Vec<FileDiff>)> = panes
            .into_iter()
            .filter_map(|(_, w)| match diff::overall(&w.repo, &w.path) {
                Ok(files) => Some((w.agent_id.clone(), files)),
                Err(e) => {
                    tracing::warn!(agent = %w.agent_id, "overlap check: {e}");
                    None
                }
            })
            .collect();
        let found = overlaps(&changes);
        if found != self.overlaps {
            self.overlaps = found.clone();
            let _ = self.events.send(WorktreeEvent::Overlaps(found));
        }
    }
}
