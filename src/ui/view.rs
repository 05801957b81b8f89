//! The UI's own state, kept between frames: what each pane measured
//! (`Geometry`, handed to the app after the frame) and each transcript
//! entry's layout cache. Rendering reads `App` and writes only here.

pub(crate) use super::transcript::PaneView;
use crate::app::geometry::{Geometry, PaneGeometry};

/// View state for the whole screen, owned by the app loop and passed to
/// `ui::render` each frame.
#[derive(Debug, Default)]
pub struct ViewState {
    geometry: Geometry,
    panes: Vec<PaneView>,
}

impl ViewState {
    /// What the last frame measured.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Whether the last frame drew something provisionally (a long code
    /// block's highlighting still on its way): the loop draws again soon.
    pub fn pending(&self) -> bool {
        self.panes.iter().any(PaneView::pending)
    }

    /// Pane `i`'s layout caches (what is held, for tests and benches).
    pub fn pane(&self, i: usize) -> Option<&PaneView> {
        self.panes.get(i)
    }

    /// Sized for `n` panes; starts a frame (per-frame scroll cleared).
    pub(super) fn begin(&mut self, n: usize) {
        self.geometry.panes.resize_with(n, PaneGeometry::default);
        self.panes.resize_with(n, PaneView::default);
        for g in &mut self.geometry.panes {
            g.scroll = None;
        }
    }

    /// Pane `i`'s geometry and caches.
    pub(super) fn pane_mut(&mut self, i: usize) -> Option<(&mut PaneGeometry, &mut PaneView)> {
        Some((self.geometry.panes.get_mut(i)?, self.panes.get_mut(i)?))
    }

    pub(super) fn set_rects(&mut self, rects: &[ratatui::layout::Rect]) {
        for (g, r) in self.geometry.panes.iter_mut().zip(rects) {
            g.rect = *r;
        }
    }
}
