//! The status bar: focused agent, provider, model, state, queue, tokens and
//! cost, then key hints (or a transient message, or the prefix's menu).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::cells;
use super::pane::state_label;
use crate::app::state::App;
use crate::keymap::Action;

pub(crate) fn draw(app: &App, spin: usize, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let base = Style::new().fg(t.status_fg).bg(t.status_bg);
    buf.set_style(area, base);
    let left = Line::from(left_spans(app, spin, base));
    let right = right_line(app, base);
    super::put::line(buf, area.x, area.y, &left, area.width);
    let lw = left.width() as u16;
    let rw = right.width() as u16;
    if lw + rw < area.width {
        super::put::line(buf, area.right() - rw, area.y, &right, rw);
    } else if lw < area.width {
        let room = area.width - lw;
        let text: String = right.spans.iter().map(|s| s.content.as_ref()).collect();
        let cut = super::wrap::truncate(text.trim(), usize::from(room).saturating_sub(1));
        let style = right.spans.first().map_or(base, |s| s.style);
        buf.set_string(area.x + lw + 1, area.y, &cut, style);
        let _ = cut.width();
    }
}

/// The focused agent, its provider, model, state, queue and usage, then
/// how many other panes need the user.
fn left_spans(app: &App, spin: usize, base: Style) -> Vec<Span<'static>> {
    let t = &app.theme;
    let mut left: Vec<Span<'static>> = Vec::new();
    if let Some(p) = app.focused() {
        left.push(Span::styled(
            format!(" {} ", p.name()),
            Style::new()
                .fg(t.status_bg)
                .bg(t.accent)
                .add_modifier(Modifier::BOLD),
        ));
        let mut parts = vec![p.agent.provider.clone()];
        if let Some(m) = &p.conversation.model {
            parts.push(m.clone());
        }
        parts.push(state_label(p, spin).0);
        if !p.pending.queue.is_empty() {
            parts.push(format!("{} queued", p.pending.queue.len()));
        }
        if p.conversation.usage.input_tokens + p.conversation.usage.output_tokens > 0
            || p.conversation.usage.cost_usd.is_some()
        {
            parts.push(cells::usage_text(&p.conversation.usage));
        }
        left.push(Span::styled(format!(" {} ", parts.join(" · ")), base));
    }
    let waiting = app.inbox.len();
    if waiting > 0 {
        left.push(Span::styled(
            format!(
                " ● {waiting} waiting · {} ",
                app.keymap.short(Action::Inbox)
            ),
            Style::new()
                .fg(t.attention)
                .bg(t.status_bg)
                .add_modifier(Modifier::BOLD),
        ));
    }
    left
}

/// The prefix menu, a transient message, or the key hints.
fn right_line(app: &App, base: Style) -> Line<'static> {
    let t = &app.theme;
    let km = &app.keymap;
    if app.prefix_armed {
        Line::from(Span::styled(
            " prefix: 1-9 pane · ←→↑↓ move · z zoom · i inbox · ? help · d detach · q quit · other keys go to a terminal pane ",
            Style::new().fg(t.status_bg).bg(t.warning),
        ))
    } else if let Some((msg, _)) = &app.status {
        Line::from(Span::styled(
            format!(" {msg} "),
            Style::new()
                .fg(t.accent)
                .bg(t.status_bg)
                .add_modifier(Modifier::BOLD),
        ))
    } else {
        let zoom = if app.zoom { "unzoom" } else { "zoom" };
        let hints = [
            (km.short(Action::Help), "help"),
            (
                pair(km.hint(Action::FocusPrev), km.hint(Action::FocusNext)),
                "panes",
            ),
            (km.short(Action::Zoom), zoom),
            (
                km.short(Action::ToggleView),
                if app.full_view { "simple" } else { "full" },
            ),
            (km.short(Action::Quit), "quit"),
        ];
        let mut spans = Vec::with_capacity(2 * hints.len());
        for (k, what) in hints {
            spans.push(Span::styled(k, base.add_modifier(Modifier::BOLD)));
            spans.push(Span::styled(format!(" {what}  "), base.fg(t.dim)));
        }
        Line::from(spans)
    }
}

/// `Alt+←` and `Alt+→` as `Alt+←→`.
fn pair(a: &str, b: &str) -> String {
    match (a.rsplit_once('+'), b.rsplit_once('+')) {
        (Some((ma, ka)), Some((mb, kb))) if ma == mb => format!("{ma}+{ka}{kb}"),
        _ => format!("{a}/{b}"),
    }
}
