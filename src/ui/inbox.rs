//! The attention inbox overlay: one row per waiting entry, oldest first,
//! with pane, age and reason; the selected approval can be answered here.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::overlay::{age, fit, frame, row_style, window};
use crate::app::inbox::Reason;
use crate::app::state::App;

pub(crate) fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let inbox = &app.inbox;
    let is_perm = matches!(
        inbox.selected().map(|e| &e.reason),
        Some(Reason::Permission { .. })
    );
    let hint = if inbox.deny.is_some() {
        "type a reason · Enter deny · Esc back"
    } else if is_perm {
        "↑↓ select · y allow · a always · n deny · Enter go to pane · Esc close"
    } else {
        "↑↓ select · Enter go to pane · d dismiss · Esc close"
    };
    let rows = inbox.len() as u16 + u16::from(inbox.deny.is_some());
    let w = area.width.saturating_sub(4).min(110);
    let title = format!("inbox · {} waiting", inbox.len());
    let inner = frame(t, area, (w, rows + 2), &title, hint, buf);
    let name_w = app
        .panes
        .iter()
        .map(|p| unicode_width::UnicodeWidthStr::width(p.name()))
        .max()
        .unwrap_or(4)
        .min(22);
    let width = usize::from(inner.width);
    let visible = usize::from(inner.height.saturating_sub(u16::from(inbox.deny.is_some())));
    for (row, i, e) in window(&inbox.entries, inbox.sel, visible) {
        let selected = i == inbox.sel;
        let style = row_style(t, selected);
        let name = app.panes.get(e.pane).map_or("?", |p| p.name());
        let color = match e.reason {
            Reason::Permission { .. } => t.attention,
            Reason::TurnFailed(_) | Reason::Exited | Reason::Stalled => t.error,
            Reason::Posted { .. } => t.warning,
            _ => t.dim,
        };
        let head = format!(
            "{}{} {:>4}  ",
            if selected { "▸ " } else { "  " },
            fit(name, name_w),
            age(app.now.saturating_duration_since(e.at)),
        );
        let rest = width.saturating_sub(unicode_width::UnicodeWidthStr::width(head.as_str()));
        let line = Line::from(vec![
            Span::styled(head, style),
            Span::styled(fit(&e.reason.describe(), rest), style.fg(color)),
        ]);
        buf.set_line(inner.x, inner.y + row, &line, inner.width);
    }
    if let Some(reason) = &inbox.deny {
        let line = Line::from(vec![
            Span::styled("  deny reason: ", Style::new().fg(t.warning)),
            Span::styled(format!("{reason}▏"), Style::new().fg(t.text)),
        ]);
        buf.set_line(
            inner.x,
            inner.bottom().saturating_sub(1),
            &line,
            inner.width,
        );
    }
}
