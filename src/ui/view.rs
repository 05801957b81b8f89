//! The UI's own state, kept between frames: what each pane measured
//! (`Geometry`, handed to the app after the frame) and each transcript
//! entry's layout cache. Rendering reads `App` and writes only here.

use super::transcript::Cache;
use crate::app::geometry::{Geometry, PaneGeometry};
use crate::app::transcript::Transcript;

/// View state for the whole screen, owned by the app loop and passed to
/// `ui::render` each frame.
#[derive(Debug, Default)]
pub struct ViewState {
    geometry: Geometry,
    panes: Vec<PaneView>,
}

/// One pane's layout caches, by entry index (each keyed by the entry's rev).
#[derive(Debug, Default)]
pub struct PaneView {
    /// The transcript epoch the caches were built for.
    epoch: u64,
    entries: Vec<Cache>,
    /// Entries whose caches hold rows (the last frame's view).
    resident: Vec<usize>,
    /// The last frame drew something provisionally (`Cache::pending`).
    pending: bool,
}

impl PaneView {
    /// The caches for `t`'s entries: dropped when `t` was invalidated,
    /// one per entry.
    pub fn caches(&mut self, t: &Transcript) -> &mut [Cache] {
        if self.epoch != t.epoch {
            self.entries.clear();
            self.resident.clear();
            self.epoch = t.epoch;
        }
        self.entries.resize_with(t.entries.len(), Cache::default);
        &mut self.entries
    }

    /// The caches (sized by `caches`) and the entries holding rows.
    pub(super) fn parts(&mut self) -> (&mut [Cache], &mut Vec<usize>) {
        (&mut self.entries, &mut self.resident)
    }

    pub(super) fn set_pending(&mut self, pending: bool) {
        self.pending = pending;
    }

    /// Entries whose caches hold rows: what the last frame showed (a long
    /// item far from the view keeps only its height).
    pub fn held(&self) -> impl Iterator<Item = (usize, &Cache)> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, c)| c.holds_rows())
    }
}

impl ViewState {
    /// What the last frame measured.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Whether the last frame drew something provisionally (a long code
    /// block's highlighting still on its way): the loop draws again soon.
    pub fn pending(&self) -> bool {
        self.panes.iter().any(|p| p.pending)
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
