//! The tab bar shown when the panes are in more than one window (issue
//! 32): each window's number, the names of its first panes, and what it
//! holds that wants the user (an approval `!`, news `●`, a running turn
//! `…`), so a window out of view still draws the eye as a pane does.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use unicode_width::UnicodeWidthStr;

use super::wrap::truncate;

use crate::app::state::App;

/// The longest name list a tab shows before it is cut.
const NAMES_WIDTH: usize = 24;

pub(crate) fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let shown = app.window();
    let windows = app.windows();
    // Each tab gets an equal share; the names give way, never the number
    // or the marker.
    let share = usize::from(area.width) / windows.len().max(1);
    let mut x = area.x;
    for w in windows {
        let (names, marker) = tab_parts(app, w);
        let fixed = format!(" {w} ").width() + marker.width() + 2;
        let names = truncate(&names, share.saturating_sub(fixed).min(NAMES_WIDTH));
        let text = if names.is_empty() {
            format!(" {w}{marker} ")
        } else {
            format!(" {w} {names}{marker} ")
        };
        let style = if w == shown {
            Style::new()
                .fg(t.accent)
                .add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else if !marker.is_empty() && marker != " …" {
            Style::new().fg(t.warning)
        } else {
            Style::new().fg(t.dim)
        };
        let room = usize::from(area.right().saturating_sub(x));
        let text = truncate(&text, room);
        buf.set_string(x, area.y, &text, style);
        x = x.saturating_add(text.width() as u16 + 1);
    }
}

/// The names of window `w`'s panes, and its marker.
fn tab_parts(app: &App, w: usize) -> (String, &'static str) {
    let panes = app.panes_in(w);
    let names: Vec<String> = panes
        .iter()
        .map(|&i| crate::sanitize::neutralize(app.panes[i].name()).into_owned())
        .collect();
    let here = |f: &dyn Fn(&crate::app::pane::Pane) -> bool| {
        panes.iter().any(|&i| i != app.focus && f(&app.panes[i]))
    };
    // A running turn's streamed text is not news until the turn ends, or
    // every running window would read `●` and `…` would never show.
    let marker = if here(&|p| !p.pending.permissions.is_empty()) {
        " !"
    } else if here(&|p| p.attention.flagged || (p.attention.unread.count > 0 && !p.is_busy())) {
        " ●"
    } else if here(&|p| p.is_busy()) {
        " …"
    } else {
        ""
    };
    (names.join(", "), marker)
}
