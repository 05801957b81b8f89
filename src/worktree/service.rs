//! The git side of the console: one tokio task that owns the panes'
//! worktrees, takes typed requests (turn started/ended, show a diff, bring
//! work home, hand a conflict to its agent) and answers with typed events
//! (diffs, overlaps, predicted conflicts, results). Requests run one at a time on
//! the blocking pool, so git never runs on the UI thread and two git
//! commands never race for one repository's locks.

use std::collections::HashMap;

use tokio::sync::mpsc;

use super::diff::{self, FileDiff};
use super::handoff::rebase_onto_main;
use super::merge::{BringMode, bring_home, commit_all};
use super::overlap::{Overlap, overlaps};
use super::predict::{Prediction, Predictor};
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
    worktrees: HashMap<usize, Worktree>,
    /// Snapshot trees taken when each pane's turn started.
    turn_start: HashMap<usize, String>,
    last_turn: HashMap<usize, Vec<FileDiff>>,
    /// The start snapshot of each pane's last finished turn (the base a
    /// rejected file of that turn goes back to).
    last_turn_from: HashMap<usize, String>,
    overlaps: Vec<Overlap>,
    /// The last `Changed` sent.
    summary: Vec<(usize, Vec<FileChange>)>,
    predictor: Predictor,
    /// The last prediction sent (`None`: none yet).
    prediction: Option<Prediction>,
    events: mpsc::UnboundedSender<WorktreeEvent>,
}

impl Service {
    fn handle(&mut self, req: WorktreeRequest) {
        match req {
            WorktreeRequest::TurnStarted { pane } => self.turn_started(pane),
            WorktreeRequest::TurnEnded { pane } => self.turn_ended(pane),
            WorktreeRequest::Diff { pane, scope } => self.diff(pane, scope),
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
            } => self.bring(pane, mode, message),
            WorktreeRequest::HandOff { pane, message } => self.hand_off(pane, message),
            WorktreeRequest::Reset { pane } => {
                let result = match self.worktrees.get(&pane) {
                    Some(w) => review::reset_to_main(&w.repo, &w.path)
                        .map(|_| ())
                        .map_err(|e| format!("not reset: {e}")),
                    None => Err("this pane has no worktree".into()),
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
            WorktreeRequest::Untrack { pane } => {
                self.worktrees.remove(&pane);
                self.turn_start.remove(&pane);
                self.last_turn.remove(&pane);
                self.last_turn_from.remove(&pane);
                self.check_overlaps();
                self.predict(None);
            }
        }
    }

    fn turn_started(&mut self, pane: usize) {
        if let Some(w) = self.worktrees.get(&pane) {
            match diff::snapshot(&w.path) {
                Ok(tree) => {
                    self.turn_start.insert(pane, tree);
                }
                Err(e) => tracing::warn!(agent = %w.agent_id, "turn snapshot: {e}"),
            }
        }
    }

    fn turn_ended(&mut self, pane: usize) {
        let mut edited = true;
        if let (Some(w), Some(start)) = (self.worktrees.get(&pane), self.turn_start.remove(&pane)) {
            match diff::snapshot(&w.path).and_then(|end| diff::diff(&w.path, &start, &end)) {
                Ok(files) => {
                    edited = !files.is_empty();
                    self.last_turn.insert(pane, files);
                    self.last_turn_from.insert(pane, start);
                }
                Err(e) => tracing::warn!(agent = %w.agent_id, "turn diff: {e}"),
            }
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
                .ok_or_else(|| "this pane has no worktree".to_owned())
                .and_then(|w| diff::overall(&w.repo, &w.path).map_err(|e| e.to_string())),
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

    fn bring(&mut self, pane: usize, mode: BringMode, message: Option<String>) {
        let mut conflicted = Vec::new();
        let result = match self.worktrees.get(&pane) {
            Some(w) => bring_home(
                &w.repo,
                &w.path,
                &w.branch,
                mode,
                &message.unwrap_or_else(|| format!("hive: work of {}", w.agent_id)),
            )
            .map_err(|e| match e {
                WorktreeError::Conflict { ref files, .. } => {
                    conflicted = files.clone();
                    e.to_string()
                }
                other => format!("not brought home: {other}"),
            }),
            None => Err("this pane has no worktree".into()),
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
            Some(w) => rebase_onto_main(
                &w.repo,
                &w.path,
                &w.branch,
                &message.unwrap_or_else(|| format!("hive: work of {}", w.agent_id)),
            )
            .map_err(|e| format!("not handed off: {e}")),
            None => Err("this pane has no worktree".into()),
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
            .ok_or_else(|| "this pane has no worktree".to_owned())?;
        let done = match hunk {
            Some(i) => review::reject_hunk(&w.path, file, i)
                .map(|()| format!("reverted hunk {} of {}", i + 1, file.path)),
            None => {
                let base = match scope {
                    DiffScope::Overall => diff::base(&w.repo, &w.path),
                    DiffScope::LastTurn => self
                        .last_turn_from
                        .get(&pane)
                        .cloned()
                        .ok_or_else(|| WorktreeError::Refused("no finished turn".into())),
                };
                base.and_then(|b| review::reject_file(&w.path, &b, file))
                    .map(|()| format!("reverted {}", file.path))
            }
        };
        done.map_err(|e| format!("not reverted: {e}"))
    }

    /// Refreshes the predicted conflicts (snapshotting `changed` panes
    /// again, all when `None`) and sends them when they changed.
    fn predict(&mut self, changed: Option<&[usize]>) {
        let panes: Vec<(usize, &Worktree)> = self.worktrees.iter().map(|(i, w)| (*i, w)).collect();
        match self.predictor.refresh(&panes, changed) {
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
        let mut panes: Vec<_> = self.worktrees.iter().collect();
        panes.sort_by_key(|(i, _)| **i);
        let mut summary = Vec::new();
        let changes: Vec<(String, Vec<FileDiff>)> = panes
            .into_iter()
            .filter_map(|(i, w)| match diff::overall(&w.repo, &w.path) {
                Ok(files) => {
                    let files_summary = files
                        .iter()
                        .map(|f| (f.path.clone(), f.added(), f.removed()))
                        .collect();
                    summary.push((*i, files_summary));
                    Some((w.agent_id.clone(), files))
                }
                Err(e) => {
                    tracing::warn!(agent = %w.agent_id, "overlap check: {e}");
                    None
                }
            })
            .collect();
        if summary != self.summary {
            self.summary = summary.clone();
            let _ = self.events.send(WorktreeEvent::Changed(summary));
        }
        let found = overlaps(&changes);
        if found != self.overlaps {
            self.overlaps = found.clone();
            let _ = self.events.send(WorktreeEvent::Overlaps(found));
        }
    }
}
