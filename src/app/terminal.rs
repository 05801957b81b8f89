//! A terminal pane's screen as the app holds it: a plain copy of what the
//! runner (the emulator's one owner) last sent, and the view asked of it.

use crate::runner::screen::ScreenUpdate;

/// A terminal pane's screen as the app holds it: the runner's last update
/// and the view last asked of the runner (scroll, hold).
#[derive(Debug, Clone, Default)]
pub struct Terminal {
    pub screen: ScreenUpdate,
    asked: (usize, bool),
}

impl Terminal {
    /// The screen a (new) provider attached with; the runner starts on the
    /// live screen, not holding.
    pub fn new(screen: ScreenUpdate) -> Self {
        Self {
            asked: (screen.scroll, screen.hold),
            screen,
        }
    }

    /// A new screen from the runner; it reports the view it now keeps.
    pub fn update(&mut self, screen: ScreenUpdate) {
        self.asked = (screen.scroll, screen.hold);
        self.screen = screen;
    }

    /// Notes `want` (scroll, hold) as asked; false when it already was.
    pub(super) fn ask(&mut self, want: (usize, bool)) -> bool {
        let new = want != self.asked;
        self.asked = want;
        new
    }
}
