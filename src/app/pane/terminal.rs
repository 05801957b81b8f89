//! The terminal part of a pane: a PTY child's screen and how the pane
//! shows it (scrolled back, copy mode, the runner's last note, the size
//! the child was told). A thin grouping: the screen itself is the
//! provider's (`TerminalScreen`); conversation panes leave this empty.

use crate::provider::TerminalScreen;

#[derive(Default)]
pub struct Terminal {
    /// The child's screen; `None` for conversation panes.
    pub screen: Option<TerminalScreen>,
    /// Rows scrolled back into the emulator's scrollback (0 = live).
    pub scroll: usize,
    /// The scrollback's length when `scroll` was last set, so new output
    /// does not move a scrolled-back view.
    pub seen: usize,
    /// Copy mode (prefix `[`), while it lasts.
    pub copy: Option<crate::app::copy_mode::CopyMode>,
    /// The runner's last word (stopped, restarted), shown in the border
    /// until the next key goes to the child.
    pub note: Option<String>,
    /// The child's size as last sent with `Resize` (what the runner was
    /// told, so it stays with the model).
    pub size: Option<(u16, u16)>,
}

impl Terminal {
    /// A (new) provider started with `screen`: the old screen's view goes.
    pub fn attach(&mut self, screen: Option<TerminalScreen>) {
        self.screen = screen;
        self.size = None;
        self.scroll = 0;
        self.copy = None;
    }

    /// New output arrived: a view scrolled back (or in copy mode) stays on
    /// the lines it shows, as in tmux, instead of drifting up with them.
    pub fn hold_scrollback(&mut self) {
        let Some(screen) = &self.screen else {
            return;
        };
        if self.scroll == 0 && self.copy.is_none() {
            return;
        }
        let len = crate::app::copy_mode::scrollback_len(screen);
        self.scroll += len.saturating_sub(self.seen);
        self.seen = len;
    }

    /// Scrolls the scrollback by `delta` rows; false for a pane without a
    /// screen.
    pub fn scroll_by(&mut self, delta: isize) -> bool {
        let Some(screen) = &self.screen else {
            return false;
        };
        let len = crate::app::copy_mode::scrollback_len(screen);
        self.scroll = self.scroll.saturating_add_signed(delta).min(len);
        self.seen = len;
        true
    }
}
