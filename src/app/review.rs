//! Review in the diff view (issue 31): step through the hunks of a file,
//! accept (keep, marked reviewed) or reject (reverted in the worktree,
//! after a `y`) a hunk or a whole file, comment on a hunk, and send the
//! comments to the agent as one message that starts its next turn. The
//! git side is `worktree::review`; this file holds the keys and the view's
//! review state, `ui::diff` draws it.

use crossterm::event::{KeyCode, KeyEvent};

use super::comment::{ReviewComment, review_message};
use super::overlay::{Confirm, DiffView, Review};
use super::state::App;
use crate::protocol::event::Origin;
use crate::protocol::git::FileDiff;
use crate::protocol::pane::SubmitMode;

/// Longest comment kept (a comment is a note, not a document).
const MAX_COMMENT: usize = 2_000;

/// The row of hunk `index` in the file's drawn diff (`ui::diff::file_lines`:
/// a header row, a "binary file" row, then each hunk's header, its lines
/// and its comments).
pub(crate) fn hunk_row(f: &FileDiff, index: usize, review: &Review) -> u16 {
    let before: usize = f
        .hunks
        .iter()
        .enumerate()
        .take(index)
        .map(|(i, h)| 1 + h.lines.len() + review.comments_at(&f.shown(), i).count())
        .sum();
    (1 + usize::from(f.binary) + before).min(usize::from(u16::MAX)) as u16
}

impl App {
    /// The prompt of the pane's last turn (the diff view's heading for
    /// "last turn").
    pub(crate) fn last_prompt(&self, pane: usize) -> Option<String> {
        self.last_message(pane, Origin::User, |s| Some(s.to_owned()))
    }

    /// Review keys of the diff view; true when the key was one of them.
    pub(super) fn review_key(&mut self, ev: KeyEvent) -> bool {
        let Some(v) = self.diff.as_mut() else {
            return false;
        };
        if v.review.composing.is_some() {
            compose_key(v, ev);
            return true;
        }
        let Some(f) = v.selected_file().cloned() else {
            return false;
        };
        let n = f.hunks.len();
        let r = &mut v.review;
        match ev.code {
            KeyCode::Char('J' | 'K') if n > 0 => {
                let down = ev.code == KeyCode::Char('J');
                r.line = step_line(&f, r.hunk.min(n - 1), r.line, down);
            }
            KeyCode::Char(']' | 'n') => {
                r.line = None;
                r.hunk = (r.hunk + 1).min(n.saturating_sub(1));
                v.scroll = hunk_row(&f, v.review.hunk, &v.review);
            }
            KeyCode::Char('[' | 'p') => {
                r.line = None;
                r.hunk = r.hunk.saturating_sub(1);
                v.scroll = hunk_row(&f, v.review.hunk, &v.review);
            }
            KeyCode::Char('a') if n > 0 => {
                r.accepted.insert((f.shown(), r.hunk.min(n - 1)));
                r.line = None;
                r.hunk = (r.hunk + 1).min(n - 1);
                v.scroll = hunk_row(&f, v.review.hunk, &v.review);
            }
            KeyCode::Char('A') => {
                r.accepted.extend((0..n).map(|i| (f.shown(), i)));
                if v.selected + 1 < v.files.len() {
                    v.select_file(v.selected + 1);
                }
            }
            KeyCode::Char('x') if n > 0 => {
                v.confirm = Some(Confirm::Reject(Some(r.hunk.min(n - 1))));
            }
            KeyCode::Char('X') => v.confirm = Some(Confirm::Reject(None)),
            KeyCode::Char('C') if n > 0 => r.composing = Some(String::new()),
            KeyCode::Char('S') => self.send_review(),
            _ => return false,
        }
        true
    }

    /// Sends the review's comments to the agent as one message (queued
    /// behind a running turn, so it starts the next one).
    fn send_review(&mut self) {
        let Some(v) = self.diff.as_mut() else {
            return;
        };
        if v.review.comments.is_empty() {
            v.message = Some((false, "no comments yet: C comments on the hunk".into()));
            return;
        }
        let pane = v.pane;
        let comments = std::mem::take(&mut v.review.comments);
        let n = comments.len();
        let name = self.panes.get(pane).map_or("the agent", |p| p.name());
        let text = format!(
            "sent {n} comment{} to {name}",
            if n == 1 { "" } else { "s" }
        );
        if let Some(v) = self.diff.as_mut() {
            v.message = Some((true, text));
        }
        self.submit_text(pane, review_message(&comments), SubmitMode::Auto);
    }
}

/// The next (`down`) or previous commentable line of hunk `hunk` from
/// `from` (none yet: its first changed line); it stays inside the hunk.
fn step_line(f: &FileDiff, hunk: usize, from: Option<usize>, down: bool) -> Option<usize> {
    use crate::protocol::git::LineKind;
    let lines = &f.hunks.get(hunk)?.lines;
    let ok = |i: usize| lines.get(i).is_some_and(|l| l.kind != LineKind::Note);
    let Some(at) = from else {
        let first_change = lines
            .iter()
            .position(|l| matches!(l.kind, LineKind::Added | LineKind::Removed));
        return first_change.or_else(|| (0..lines.len()).find(|&i| ok(i)));
    };
    let next = if down {
        (at + 1..lines.len()).find(|&i| ok(i))
    } else {
        (0..at).rev().find(|&i| ok(i))
    };
    Some(next.unwrap_or(at))
}

/// Typing a comment: Enter keeps it (on the selected line or hunk), Esc
/// drops it.
fn compose_key(v: &mut DiffView, ev: KeyEvent) {
    let Some(text) = v.review.composing.as_mut() else {
        return;
    };
    match ev.code {
        KeyCode::Esc => v.review.composing = None,
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Enter => {
            let text = v.review.composing.take().unwrap_or_default();
            let (hunk, line) = (v.review.hunk, v.review.line);
            if !text.trim().is_empty()
                && let Some(c) = v
                    .selected_file()
                    .and_then(|f| ReviewComment::at(f, hunk, line, text.trim().to_owned()))
            {
                v.review.comments.push(c);
            }
        }
        KeyCode::Char(c) if !c.is_control() && text.len() < MAX_COMMENT => text.push(c),
        _ => {}
    }
}
