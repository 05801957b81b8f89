//! The console's side of per-agent worktrees (issue 19): which pane runs in
//! which worktree, the diff view's model (`/diff`, `Ctrl+B g`), its keys,
//! and the overlap warnings. Git itself runs in `worktree::service`, in the
//! server that runs the pane (issue 30: the repository is on that
//! machine); this file only queues requests (`App::outbox`) and applies the
//! typed events that come back.

use crossterm::event::{KeyCode, KeyEvent};

use super::inbox::InboxEvent;
use super::overlay::{Confirm, DiffView};
use super::state::{App, Overlay};
use super::transcript::EntryKind;
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::event::Origin;

/// The inbox kind of an overlapping-edits warning.
const OVERLAP: &str = "overlap";
use crate::protocol::git::{
    BringMode, DiffScope, Overlap, Worktree, WorktreeEvent, WorktreeRequest,
};
use crate::protocol::upsert::UpsertKind;

/// How long after a terminal pane's output its overlaps are checked.
const TERMINAL_CHECK_DELAY: std::time::Duration = std::time::Duration::from_secs(3);

/// Lines a page key scrolls the diff by.
const PAGE: u16 = 15;

impl App {
    /// Records each pane's worktree; a pane whose worktree could not be made
    /// shows why (the error's text) and does not start in the shared checkout.
    pub fn attach_worktrees<E: std::fmt::Display>(
        &mut self,
        prepared: &[(usize, Result<Worktree, E>)],
    ) {
        for (i, result) in prepared {
            let Some(p) = self.panes.get_mut(*i) else {
                continue;
            };
            match result {
                Ok(w) => {
                    p.agent.cwd = Some(w.cwd.clone());
                    p.worktree = Some(w.clone());
                }
                Err(e) => p.conversation.failed = Some(format!("worktree: {e}")),
            }
        }
    }

    pub(crate) fn has_worktrees(&self) -> bool {
        self.panes.iter().any(|p| p.worktree.is_some())
    }

    /// Opens the focused pane's diff view (overall).
    pub(crate) fn open_diff(&mut self) {
        let pane = self.focus;
        if self.panes.get(pane).is_none_or(|p| p.worktree.is_none()) {
            self.set_status("this pane has no worktree (set worktree = true on its agent)");
            return;
        }
        self.diff = Some(DiffView::new(pane, DiffScope::Overall));
        self.overlay = Overlay::Diff;
        self.request_diff();
    }

    fn request_diff(&mut self) {
        if let Some(v) = self.diff.as_mut() {
            v.loading = true;
            self.outbox.git(WorktreeRequest::Diff {
                pane: v.pane,
                scope: v.scope,
            });
        }
    }

    /// Terminal panes have no turns: their output schedules one overlap
    /// check a few seconds later (one per burst, none while idle).
    pub(super) fn worktree_activity(&mut self, pane: usize) {
        if self.overlap_check_at.is_none()
            && self.panes.get(pane).is_some_and(|p| p.worktree.is_some())
        {
            self.overlap_check_at = Some(self.now + TERMINAL_CHECK_DELAY);
        }
    }

    /// The scheduled overlap check is due.
    pub fn due_overlap_check(&mut self) {
        self.overlap_check_at = None;
        self.outbox.git(WorktreeRequest::CheckOverlaps);
    }

    pub fn on_worktree(&mut self, ev: WorktreeEvent) {
        match ev {
            WorktreeEvent::Diff {
                pane,
                scope,
                result,
            } => {
                let Some(v) = self
                    .diff
                    .as_mut()
                    .filter(|v| v.pane == pane && v.scope == scope)
                else {
                    return;
                };
                v.loading = false;
                match result {
                    Ok(files) => {
                        v.files = files;
                        v.error = None;
                        v.selected = v.selected.min(v.files.len().saturating_sub(1));
                        let hunks = v.selected_file().map_or(0, |f| f.hunks.len());
                        v.review.hunk = v.review.hunk.min(hunks.saturating_sub(1));
                        // A reverted hunk may leave the scroll past the end.
                        if let Some(f) = v.selected_file() {
                            let row = super::review::hunk_row(f, v.review.hunk, &v.review);
                            v.scroll = v.scroll.min(row);
                        }
                    }
                    Err(e) => v.error = Some(e),
                }
            }
            WorktreeEvent::Brought {
                pane,
                result,
                conflicted,
            } => self.on_brought(pane, result, conflicted),
            WorktreeEvent::Committed { pane, result } => {
                let text = match result {
                    // A workspace's commits come named (`api 1a2b3c…, web …`).
                    Ok(Some(sha)) if sha.contains(' ') => (true, format!("committed {sha}")),
                    Ok(Some(sha)) => (true, format!("committed {}", &sha[..sha.len().min(10)])),
                    Ok(None) => (true, "nothing to commit".to_owned()),
                    Err(e) => (false, e),
                };
                if let Some(v) = self.diff.as_mut().filter(|v| v.pane == pane) {
                    v.message = Some(text);
                    self.request_diff();
                }
            }
            WorktreeEvent::Overlaps(found) => self.set_overlaps(found),
            WorktreeEvent::Conflicts(found) => self.set_conflicts(found),
            WorktreeEvent::Changed(summary) => {
                self.worktree_changes = summary.into_iter().collect()
            }
            WorktreeEvent::Reset { pane, result } => self.take_reset(pane, result),
            WorktreeEvent::Rejected { pane, result } => {
                if let Some(v) = self.diff.as_mut().filter(|v| v.pane == pane) {
                    v.message = Some(match result {
                        Ok(t) => (true, t),
                        Err(e) => (false, e),
                    });
                    self.request_diff();
                }
            }
            WorktreeEvent::HandedOff { pane, result } => {
                self.on_handed_off(pane, result);
                if self.diff.as_ref().is_some_and(|v| v.pane == pane) {
                    self.request_diff();
                }
            }
        }
    }

    /// A merge or cherry-pick finished (or was refused: `conflicted` names
    /// the files a conflict would be in, for the hand-off's offer).
    fn on_brought(
        &mut self,
        pane: usize,
        result: Result<crate::protocol::git::MergeOutcome, String>,
        conflicted: Vec<String>,
    ) {
        let name = self.panes.get(pane).map(|p| p.name().to_owned());
        let text = match &result {
            Ok(o) if o.commits == 0 => "nothing to bring home".to_owned(),
            Ok(o) => format!(
                "{} {} ({} commit{}) into the main checkout: {}",
                o.mode.verb(),
                o.branch,
                o.commits,
                if o.commits == 1 { "" } else { "s" },
                o.files.join(", ")
            ),
            Err(e) => e.clone(),
        };
        if let Some(p) = self.panes.get_mut(pane) {
            let level = if result.is_ok() {
                DiagnosticLevel::Info
            } else {
                DiagnosticLevel::Warn
            };
            p.conversation.transcript.notice(level, text.clone());
        }
        let outcome = if result.is_ok() {
            Ok(text.as_str())
        } else {
            Err(text.as_str())
        };
        self.take_brought(pane, outcome);
        if let Some(v) = self.diff.as_mut().filter(|v| v.pane == pane) {
            v.message = Some((result.is_ok(), text));
            v.conflict = (!conflicted.is_empty()).then_some(conflicted);
            self.request_diff();
        } else if let Some(n) = name {
            self.set_status(format!("{n}: {text}"));
        }
    }

    /// Replaces the overlap state; new overlaps are announced in both panes.
    fn set_overlaps(&mut self, found: Vec<Overlap>) {
        let mut posts = Vec::new();
        let fresh: Vec<Overlap> = found
            .iter()
            .filter(|o| !self.overlaps.contains(o))
            .cloned()
            .collect();
        for o in &fresh {
            for (me, other) in [(&o.a, &o.b), (&o.b, &o.a)] {
                let focused = self.focus;
                if let Some((i, p)) = self
                    .panes
                    .iter_mut()
                    .enumerate()
                    .find(|(_, p)| &p.agent.id == me)
                {
                    p.conversation.transcript.notice(
                        DiagnosticLevel::Warn,
                        format!(
                            "overlap: {other} also changed {} (bring one home first, or expect a conflict)",
                            o.describe_files()
                        ),
                    );
                    if i != focused {
                        p.attention.flagged = true;
                    }
                    posts.push((i, other.to_string(), o.describe_files()));
                }
            }
        }
        for (pane, other, files) in posts {
            self.inbox_event(InboxEvent::Post {
                pane,
                kind: OVERLAP.into(),
                text: format!("overlap: {other} also changed {files}"),
            });
        }
        // Overlaps that went away (merged, reverted) leave the inbox too.
        let still: Vec<&str> = found
            .iter()
            .flat_map(|o| [o.a.as_str(), o.b.as_str()])
            .collect();
        let gone: Vec<usize> = self
            .panes
            .iter()
            .enumerate()
            .filter(|(_, p)| !still.contains(&p.agent.id.as_str()))
            .map(|(i, _)| i)
            .collect();
        for pane in gone {
            self.inbox_event(InboxEvent::Resolve {
                pane,
                kind: OVERLAP.into(),
            });
        }
        self.overlaps = found;
    }

    /// A commit message the agent suggests: the first line of its last
    /// reply, as a summary of the work (`None`: it has not replied).
    pub(crate) fn suggested_message(&self, pane: usize) -> Option<String> {
        self.last_message(pane, Origin::Agent, super::take::commit_subject)
    }

    /// The newest message from `origin` in the pane's transcript that `read`
    /// makes something of.
    pub(crate) fn last_message<T>(
        &self,
        pane: usize,
        origin: Origin,
        read: impl Fn(&str) -> Option<T>,
    ) -> Option<T> {
        let p = self.panes.get(pane)?;
        p.conversation
            .transcript
            .entries
            .iter()
            .rev()
            .find_map(|e| {
                let EntryKind::Item(u) = &e.kind else {
                    return None;
                };
                let UpsertKind::Message { content, origin: o } = &u.kind else {
                    return None;
                };
                if *o != origin {
                    return None;
                }
                content.with_str(&read)
            })
    }

    /// The overlap warnings that concern one pane: (other agent, files).
    pub fn overlaps_of(&self, pane: usize) -> Vec<(String, String)> {
        let Some(p) = self.panes.get(pane) else {
            return Vec::new();
        };
        self.overlaps
            .iter()
            .filter(|o| o.involves(&p.agent.id))
            .map(|o| (o.other(&p.agent.id).to_owned(), o.describe_files()))
            .collect()
    }

    /// The answer to the view's question: `y` (or Enter) does it, any
    /// other key cancels.
    fn confirmed(&mut self, ev: KeyEvent, confirm: Confirm) {
        let Some(v) = self.diff.as_mut() else {
            return;
        };
        if matches!(
            ev.code,
            KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter
        ) {
            v.message = Some((true, "working…".to_owned()));
            let pane = v.pane;
            let message = self.suggested_message(pane);
            let request = match confirm {
                Confirm::Bring(mode, repo) => WorktreeRequest::Bring {
                    pane,
                    mode,
                    message,
                    repos: repo.into_iter().collect(),
                },
                Confirm::Commit(message) => WorktreeRequest::Commit { pane, message },
                Confirm::Reject(hunk) => {
                    let Some(file) = self.diff.as_ref().and_then(|v| v.selected_file()) else {
                        return;
                    };
                    WorktreeRequest::Reject {
                        pane,
                        scope: self.diff.as_ref().map_or(DiffScope::Overall, |v| v.scope),
                        file: Box::new(file.clone()),
                        hunk,
                    }
                }
            };
            self.outbox.git(request);
        }
    }

    /// Keys while the diff view is open.
    pub(super) fn diff_key(&mut self, ev: KeyEvent) {
        let Some(v) = self.diff.as_mut() else {
            self.overlay = Overlay::None;
            return;
        };
        if let Some(confirm) = v.confirm.take() {
            self.confirmed(ev, confirm);
            return;
        }
        if self.conflict_key(ev) || self.review_key(ev) {
            return;
        }
        let Some(v) = self.diff.as_mut() else {
            return;
        };
        let n = v.files.len();
        match ev.code {
            KeyCode::Esc | KeyCode::Char('q') => {
                self.overlay = Overlay::None;
                self.diff = None;
            }
            KeyCode::Up | KeyCode::Char('k') => v.select_file(v.selected.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => {
                v.select_file((v.selected + 1).min(n.saturating_sub(1)));
            }
            KeyCode::PageDown | KeyCode::Char(' ') => v.scroll = v.scroll.saturating_add(PAGE),
            KeyCode::PageUp => v.scroll = v.scroll.saturating_sub(PAGE),
            KeyCode::Home => v.scroll = 0,
            KeyCode::Tab | KeyCode::Char('t') => {
                v.scope = match v.scope {
                    DiffScope::Overall => DiffScope::LastTurn,
                    DiffScope::LastTurn => DiffScope::Overall,
                };
                v.files.clear();
                v.select_file(0);
                self.request_diff();
            }
            KeyCode::Char('r') => self.request_diff(),
            KeyCode::Char('m') => v.confirm = Some(Confirm::Bring(BringMode::Merge, None)),
            KeyCode::Char('c') => v.confirm = Some(Confirm::Bring(BringMode::CherryPick, None)),
            // A workspace: the selected file's repository alone (issue 52).
            KeyCode::Char('M') => match v.selected_file().map(|f| f.repo.clone()) {
                Some(repo) if !repo.is_empty() => {
                    v.confirm = Some(Confirm::Bring(BringMode::Merge, Some(repo)));
                }
                _ => v.confirm = Some(Confirm::Bring(BringMode::Merge, None)),
            },
            KeyCode::Char('s') => {
                let pane = v.pane;
                let message = self.suggested_message(pane).unwrap_or_else(|| {
                    let id = self
                        .panes
                        .get(pane)
                        .map_or("agent", |p| p.agent.id.as_str());
                    format!("hive: work of {id}")
                });
                if let Some(v) = self.diff.as_mut() {
                    v.confirm = Some(Confirm::Commit(message));
                }
            }
            _ => {}
        }
    }
}
