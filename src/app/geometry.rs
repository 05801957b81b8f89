//! What the last frame measured, as the app sees it.
//!
//! The UI owns its view state (`ui::view::ViewState`); after each frame the
//! app loop copies this small snapshot out of it so input (mouse
//! hit-testing, page size, scroll bounds) and resize detection can read
//! geometry without the renderer writing into `App`.

use ratatui::layout::Rect;

/// One pane's geometry at the last frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneGeometry {
    /// Where the pane (with its border) was drawn; empty when hidden.
    pub rect: Rect,
    /// Where the pane's content was drawn.
    pub(crate) inner: Rect,
    /// Where the transcript was drawn (empty when it was not).
    pub transcript: Rect,
    /// Rows of the transcript viewport (page size).
    pub view_rows: u16,
    /// The most `Pane::scroll` can be (`usize::MAX` until the top is known).
    pub max_scroll: usize,
    /// The transcript's scroll as clamped by this frame, when it was drawn.
    pub scroll: Option<usize>,
}

impl Default for PaneGeometry {
    fn default() -> Self {
        Self {
            rect: Rect::default(),
            inner: Rect::default(),
            transcript: Rect::default(),
            view_rows: 10,
            max_scroll: usize::MAX,
            scroll: None,
        }
    }
}

/// Every pane's geometry, by pane index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Geometry {
    pub panes: Vec<PaneGeometry>,
}

impl Geometry {
    /// Pane `i`'s geometry (defaults before the first frame).
    pub fn pane(&self, i: usize) -> PaneGeometry {
        self.panes.get(i).copied().unwrap_or_default()
    }

    /// Pane rectangles by index (hidden panes are empty).
    pub(crate) fn rects(&self) -> impl Iterator<Item = Rect> + '_ {
        self.panes.iter().map(|g| g.rect)
    }
}
