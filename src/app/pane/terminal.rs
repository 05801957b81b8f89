//! The terminal part of a pane: a PTY child's screen as the runner last
//! sent it, and how the pane shows it (scrolled back, copy mode, the
//! runner's last note, the size the child was told). The emulator itself is
//! the runner's (its one owner): the pane asks it for another view
//! (`RunnerCommand::TermView`) when the scroll changes. Conversation panes
//! leave this empty.

use crate::protocol::pane::RunnerCommand;
use crate::protocol::screen::ScreenUpdate;

#[derive(Default)]
pub struct Terminal {
    /// The child's screen as last sent; `None` for conversation panes.
    pub screen: Option<ScreenUpdate>,
    /// The view (scroll, hold) last asked of the runner.
    asked: (usize, bool),
    /// Rows scrolled back into the emulator's scrollback (0 = live).
    pub scroll: usize,
    /// The scrollback's length when `scroll` was last set, so new output
    /// does not move a scrolled-back view.
    pub seen: usize,
    /// Copy mode (prefix `[`), while it lasts.
    pub copy: Option<CopyMode>,
    /// The runner's last word (stopped, restarted), shown in the border
    /// until the next key goes to the child.
    pub note: Option<String>,
    /// The child's size as last sent with `Resize` (what the runner was
    /// told, so it stays with the model).
    pub size: Option<(u16, u16)>,
}

impl Terminal {
    /// A (new) provider started with `screen`: the old screen's view goes;
    /// the runner starts on the live screen, not holding.
    pub(crate) fn attach(&mut self, screen: Option<ScreenUpdate>) {
        self.asked = screen.as_ref().map_or((0, false), |s| (s.scroll, s.hold));
        self.seen = screen.as_ref().map_or(0, |s| s.history);
        self.screen = screen;
        self.size = None;
        self.scroll = 0;
        self.copy = None;
    }

    /// A new screen from the runner; it reports the view it now keeps.
    pub fn update(&mut self, screen: ScreenUpdate) {
        if self.screen.is_none() {
            return;
        }
        self.asked = (screen.scroll, screen.hold);
        self.screen = Some(screen);
        self.hold_scrollback();
    }

    /// New output arrived: a view scrolled back (or in copy mode) stays on
    /// the lines it shows, as in tmux, instead of drifting up with them
    /// (the runner holds its view by the same rule).
    pub(crate) fn hold_scrollback(&mut self) {
        let Some(screen) = &self.screen else {
            return;
        };
        if self.scroll == 0 && self.copy.is_none() {
            // On the live screen: the history a view that starts now counts
            // from (copy mode entered here must not jump up by all of it).
            self.seen = screen.history;
            return;
        }
        let len = screen.history;
        self.scroll += len.saturating_sub(self.seen);
        self.seen = len;
    }

    /// Scrolls the scrollback by `delta` rows; false for a pane without a
    /// screen.
    pub fn scroll_by(&mut self, delta: isize) -> bool {
        let Some(screen) = &self.screen else {
            return false;
        };
        let len = screen.history;
        self.scroll = self.scroll.saturating_add_signed(delta).min(len);
        self.seen = len;
        true
    }

    /// The view to ask the runner for, when it differs from the one asked.
    pub(crate) fn view_request(&mut self) -> Option<RunnerCommand> {
        let screen = self.screen.as_ref()?;
        let want = (
            self.scroll.min(screen.history),
            self.scroll > 0 || self.copy.is_some(),
        );
        if want == self.asked {
            return None;
        }
        self.asked = want;
        Some(RunnerCommand::TermView {
            scroll: want.0,
            seen: self.seen,
            hold: want.1,
        })
    }
}

/// Copy mode's cursor and selection in a terminal pane.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyMode {
    /// The cursor on the drawn screen: row from the top, column.
    pub row: u16,
    pub col: u16,
    /// Where the selection started (absolute line, column), once started.
    pub(crate) anchor: Option<(usize, u16)>,
}

/// A point in the terminal's history: (absolute line, column).
pub(crate) type Point = (usize, u16);

impl CopyMode {
    /// The cursor as an absolute point, given the absolute line of the
    /// view's top row.
    pub fn cursor(&self, top: usize) -> Point {
        (top + usize::from(self.row), self.col)
    }

    /// The selection as (start, end) in reading order, both inclusive.
    pub fn selection(&self, top: usize) -> Option<(Point, Point)> {
        let anchor = self.anchor?;
        let cursor = self.cursor(top);
        Some(if anchor <= cursor {
            (anchor, cursor)
        } else {
            (cursor, anchor)
        })
    }
}

/// Whether `point` lies inside the inclusive stream selection `sel`.
pub fn selected(sel: (Point, Point), point: Point) -> bool {
    let ((l0, c0), (l1, c1)) = sel;
    let (l, c) = point;
    (l > l0 || (l == l0 && c >= c0)) && (l < l1 || (l == l1 && c <= c1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(history: usize) -> ScreenUpdate {
        ScreenUpdate {
            rows: 24,
            cols: 80,
            history,
            ..ScreenUpdate::default()
        }
    }

    /// Copy mode entered on the live screen holds the view where it is:
    /// the runner is told the history it counts from, so it does not jump
    /// up by all of it (e2e `copy_mode_copies_a_selection_of_shell_output`).
    #[test]
    fn a_view_held_from_the_live_screen_counts_from_the_history_now() {
        let mut t = Terminal::default();
        t.attach(Some(screen(10)));
        t.update(screen(180));
        t.copy = Some(CopyMode::default());
        let Some(RunnerCommand::TermView { scroll, seen, hold }) = t.view_request() else {
            panic!("a held view is asked for");
        };
        assert_eq!((scroll, seen, hold), (0, 180, true));
        t.update(screen(185));
        assert_eq!(t.scroll, 5, "held on its lines as 5 more arrive");
    }
}
