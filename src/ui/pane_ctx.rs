//! What drawing one pane needs from the app besides the pane itself: a
//! leaf, so the pane's pieces (`digest`, `pane`) can share it without
//! importing each other.

use super::theme::Theme;
use crate::keymap::Keymap;

/// What the pane renderer needs from the app.
pub(crate) struct PaneCtx<'a> {
    pub index: usize,
    pub focused: bool,
    pub theme: &'a Theme,
    pub(crate) keymap: &'a Keymap,
    pub full_view: bool,
    pub spin: usize,
    pub now: std::time::Instant,
    /// Overlap warnings of this pane's worktree: (other agent, files).
    pub overlaps: Vec<(String, String)>,
    /// Predicted merge conflicts of this pane's worktree: (the other agent
    /// or "the main branch", files).
    pub conflicts: Vec<(String, String)>,
    /// Narrower than the screen (side by side): its rows cannot be scrolled
    /// on the terminal, so a streaming answer jump-scrolls.
    pub narrow: bool,
}
