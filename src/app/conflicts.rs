//! The console's side of predicted conflicts and the conflict hand-off
//! (issue 31). The git service predicts which merges would conflict
//! (`WorktreeEvent::Conflicts`); this file keeps that state, announces new
//! conflicts in the panes concerned and reads a merge order from it. When a
//! merge from the diff view is refused for a conflict, the view offers `h`
//! (rebase the agent's branch onto the main checkout and give the agent the
//! conflict as its next prompt) or `a` (abort: nothing was applied).

use crossterm::event::{KeyCode, KeyEvent};

use super::state::App;
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::git::HandOff;
use crate::protocol::git::{MergePlan, merge_order};
use crate::protocol::git::{Prediction, WorktreeRequest};
use crate::protocol::pane::SubmitMode;

impl App {
    /// Replaces the predicted conflicts; a new one is announced in the
    /// panes it concerns.
    pub(super) fn set_conflicts(&mut self, found: Prediction) {
        let fresh: Vec<_> = found
            .conflicts
            .iter()
            .filter(|c| !self.conflicts.conflicts.contains(c))
            .cloned()
            .collect();
        for c in &fresh {
            let sides = [Some(c.a.as_str()), c.b.as_deref()];
            for me in sides.into_iter().flatten() {
                if let Some(p) = self.panes.iter_mut().find(|p| p.agent.id == me) {
                    p.conversation.transcript.notice(
                        DiagnosticLevel::Warn,
                        format!(
                            "conflict ahead: merging with {} would conflict in {}",
                            c.other(me),
                            c.files.join(", ")
                        ),
                    );
                }
            }
        }
        self.conflicts = found;
    }

    /// The predicted conflicts of one pane: (the other side, files).
    pub fn conflicts_of(&self, pane: usize) -> Vec<(String, String)> {
        let Some(p) = self.panes.get(pane) else {
            return Vec::new();
        };
        self.conflicts
            .conflicts
            .iter()
            .filter(|c| c.involves(&p.agent.id))
            .map(|c| (c.other(&p.agent.id).to_owned(), c.files.join(", ")))
            .collect()
    }

    /// The merge order that avoids the predicted conflicts.
    pub fn merge_plan(&self) -> MergePlan {
        merge_order(&self.conflicts)
    }

    /// Keys of the diff view after a merge was refused for a conflict:
    /// true when the key was one of the offer's.
    pub(super) fn conflict_key(&mut self, ev: KeyEvent) -> bool {
        let Some(v) = self.diff.as_mut().filter(|v| v.conflict.is_some()) else {
            return false;
        };
        let pane = v.pane;
        match ev.code {
            KeyCode::Char('a') => {
                v.conflict = None;
                v.message = Some((true, "merge aborted: nothing was applied".into()));
                true
            }
            KeyCode::Char('h') => {
                let Some(p) = self.panes.get(pane) else {
                    return true;
                };
                if p.is_busy() || p.is_terminal() || p.conversation.failed.is_some() {
                    let why = if p.is_terminal() {
                        "a terminal pane takes no prompt: resolve the conflict by hand"
                    } else {
                        "the agent is busy: hand off after its turn ends"
                    };
                    v.message = Some((false, why.into()));
                    return true;
                }
                v.conflict = None;
                v.message = Some((true, "rebasing onto the main checkout…".into()));
                let message = self.suggested_message(pane);
                self.outbox.git(WorktreeRequest::HandOff { pane, message });
                true
            }
            _ => false,
        }
    }

    /// The hand-off's rebase finished: conflicts go to the agent as its
    /// next prompt; a clean rebase can be merged now.
    pub(super) fn on_handed_off(&mut self, pane: usize, result: Result<HandOff, String>) {
        let name = self
            .panes
            .get(pane)
            .map_or_else(String::new, |p| p.name().to_owned());
        let (ok, text) = match result {
            Ok(h) if h.files.is_empty() => (
                true,
                format!(
                    "rebased {} onto {} without conflicts: m merges it now",
                    h.branch, h.target
                ),
            ),
            Ok(h) => {
                let files: Vec<&str> = h.files.iter().map(|f| f.path.as_str()).collect();
                let text = format!(
                    "rebased {} onto {}: {name} got the conflict in {} to resolve",
                    h.branch,
                    h.target,
                    files.join(", ")
                );
                self.submit_text(pane, h.message(), SubmitMode::Auto);
                (true, text)
            }
            Err(e) => (false, e),
        };
        if let Some(p) = self.panes.get_mut(pane) {
            let level = if ok {
                DiagnosticLevel::Info
            } else {
                DiagnosticLevel::Warn
            };
            p.conversation.transcript.notice(level, text.clone());
        }
        match self.diff.as_mut().filter(|v| v.pane == pane) {
            Some(v) => v.message = Some((ok, text)),
            None => self.set_status(format!("{name}: {text}")),
        }
    }
}
