//! Rendering: a function of app state, read-only.
//!
//! `render` tiles the panes (or shows the zoomed one), then the status bar,
//! then any overlay. What it measures and caches (pane rects, scroll bounds,
//! layout caches) goes into the UI-owned `ViewState`, never into `App`.

mod border;
pub mod cells;
pub(crate) mod checks;
pub(crate) mod chips;
pub(crate) mod compare;
mod conflicts;
mod delegation;
pub mod diff;
pub(crate) mod digest;
pub(crate) mod held;
pub(crate) mod help;
pub mod highlight;
pub(crate) mod inbox;
pub(crate) mod layout;
mod lazy_code;
mod lazy_md;
pub mod markdown;
pub(crate) mod markdown_table;
pub(crate) mod menu;
pub(crate) mod overlay;
pub(crate) mod overview;
pub(crate) mod pane;
pub(crate) mod pane_ctx;
pub(crate) mod pane_title;
mod permission_card;
pub mod put;
pub(crate) mod search;
pub(crate) mod status;
mod tabs;
pub mod terminal;
/// Themes are chosen by the config and held by the app; drawing reads them.
pub use crate::theme;
pub mod transcript;
pub(crate) mod view;
pub mod wrap;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::app::state::{App, Overlay};
pub use view::ViewState;

/// How often the spinners turn: 10 Hz, as the agents' own TUIs do. Every
/// turn rewrites each spinner on screen (a few dozen bytes), whatever the
/// frame rate of the text.
pub(crate) const SPIN_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Spinner frame for `app.now`.
pub(crate) fn spin_frame(app: &App) -> usize {
    (app.now.saturating_duration_since(app.started).as_millis() / SPIN_EVERY.as_millis()) as usize
}

pub fn draw(frame: &mut Frame<'_>, app: &App, view: &mut ViewState) {
    let area = frame.area();
    render(app, view, area, frame.buffer_mut());
}

/// Draws the whole screen into `buf`, which must be blank (reset): cells
/// nothing draws on are left as they are (tests and benches call this
/// directly).
pub fn render(app: &App, view: &mut ViewState, area: Rect, buf: &mut Buffer) {
    view.begin(app.panes.len());
    if area.width < 8 || area.height < 3 {
        buf.set_string(area.x, area.y, "hive: too small", Style::new());
        view.set_rects(&vec![Rect::default(); app.panes.len()]);
        return;
    }
    let spin = spin_frame(app);
    let mut main = Rect::new(area.x, area.y, area.width, area.height - 1);
    let status_area = Rect::new(area.x, area.bottom() - 1, area.width, 1);
    // More than one window: a tab bar on top, and the focused pane's
    // window below it.
    if app.windows().len() > 1 && main.height > 3 {
        tabs::draw(app, Rect::new(main.x, main.y, main.width, 1), buf);
        main.y += 1;
        main.height -= 1;
    }
    let mut rects = vec![Rect::default(); app.panes.len()];
    // The window shown (the focused pane's, zoomed or not).
    let shown = app.panes_in(app.window());
    if app.zoom {
        if let Some(slot) = rects.get_mut(app.focus) {
            *slot = main;
        }
    } else {
        for (i, r) in shown.iter().zip(layout::grid(shown.len(), main)) {
            rects[*i] = r;
        }
    }
    for (i, rect) in rects.iter().enumerate() {
        let (Some(p), Some((geo, pv))) = (app.panes.get(i), view.pane_mut(i)) else {
            continue;
        };
        if rect.width == 0 || rect.height == 0 {
            geo.inner = Rect::default();
            continue;
        }
        // Alt+N and prefix N count inside the window.
        let index = shown.iter().position(|&j| j == i).unwrap_or(i);
        let ctx = pane::PaneCtx {
            overlaps: app.overlaps_of(i),
            conflicts: app.conflicts_of(i),
            index,
            focused: i == app.focus,
            theme: &app.theme,
            keymap: &app.keymap,
            full_view: app.full_view,
            spin,
            now: app.now,
            narrow: rect.width < main.width,
        };
        pane::draw(p, geo, pv, &ctx, *rect, buf);
    }
    if app.panes.is_empty() {
        buf.set_string(
            main.x + 1,
            main.y + main.height / 2,
            "No agents configured: add [[agent]] tables to the config (see config/hive.example.toml).",
            Style::new().fg(app.theme.dim),
        );
    }
    view.set_rects(&rects);
    status::draw(app, spin, status_area, buf);
    match app.overlay {
        Overlay::None => {}
        Overlay::Help => help::draw_help(app, main, buf),
        Overlay::Leave => help::draw_leave(app, main, buf),
        Overlay::Inbox => inbox::draw(app, main, buf),
        Overlay::Search => search::draw(app, main, buf),
        Overlay::Overview => overview::draw(app, spin, main, buf),
        Overlay::Diff => diff::draw(app, main, buf),
        Overlay::FanOut => compare::draw_chooser(app, main, buf),
        Overlay::Compare => compare::draw_compare(app, main, buf),
        Overlay::Close => help::draw_close(app, main, buf),
        Overlay::Checks => checks::draw(app, main, buf),
    }
}
