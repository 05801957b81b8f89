//! The tab bar shown when the panes are in more than one window (issue
//! 32): each window's number, the names of its first panes, and what it
//! holds that wants the user (an approval `!`, news `●`, a running turn
//! `…`), so a window out of view still draws the eye as a pane does.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use unicode_width::UnicodeWidthStr;

use crate::app::state::App;

/// The longest name list a tab shows before it is cut.
const NAMES_WIDTH: usize = 24;

pub(crate) fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let shown = app.window();
    let mut x = area.x;
    for w in app.windows() {
        let label = tab_label(app, w);
        let style = if w == shown {
            Style::new()
                .fg(t.accent)
                .add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else if label.ends_with('!') || label.ends_with('●') {
            Style::new().fg(t.warning)
        } else {
            Style::new().fg(t.dim)
        };
        let text = format!(" {label} ");
        let room = usize::from(area.right().saturating_sub(x));
        if room < 4 {
            break;
        }
        let text = super::wrap::truncate(&text, room);
        buf.set_string(x, area.y, &text, style);
        x = x.saturating_add(text.width() as u16 + 1);
    }
}

/// `2 reviewer, tests …` with its marker.
fn tab_label(app: &App, w: usize) -> String {
    let panes = app.panes_in(w);
    let names: Vec<String> = panes
        .iter()
        .map(|&i| crate::sanitize::neutralize(app.panes[i].name()).into_owned())
        .collect();
    let names = super::wrap::truncate(&names.join(", "), NAMES_WIDTH);
    let here = |f: &dyn Fn(&crate::app::pane::Pane) -> bool| {
        panes.iter().any(|&i| i != app.focus && f(&app.panes[i]))
    };
    let marker = if here(&|p| !p.pending.permissions.is_empty()) {
        " !"
    } else if here(&|p| p.attention.flagged || p.attention.unread.count > 0) {
        " ●"
    } else if here(&|p| p.is_busy()) {
        " …"
    } else {
        ""
    };
    format!("{w} {names}{marker}")
}
