//! The overview overlay: one row per pane with state, model, current tool
//! or last line, queue, tokens and cost, and time in state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::cells;
use super::overlay::{age, fit, frame, name_width, row_style, window};
use super::pane::state_label;
use crate::app::overview::activity;
use crate::app::pane::Pane;
use crate::app::state::App;

pub(crate) fn draw(app: &App, spin: usize, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let n = app.panes.len();
    let w = area.width.saturating_sub(2).min(150);
    let h = (n as u16 + 3).min(area.height);
    let title = format!("overview · {n} panes");
    let inner = frame(
        t,
        area,
        (w, h),
        &title,
        "↑↓ select · Enter focus · Esc close",
        buf,
    );
    if inner.height == 0 {
        return;
    }
    let name_w = name_width(&app.panes, 20).max(4);
    draw_head(app, name_w, inner, buf);
    let rows = usize::from(inner.height - 1);
    let sel = app.overview.sel;
    for (row, i, p) in window(&app.panes, sel, rows) {
        let style = row_style(t, i == sel);
        let (state, alarm) = state_label(p, spin);
        let usage = usage_cell(p);
        let since = app
            .overview
            .state_since
            .get(&i)
            .map_or_else(String::new, |at| {
                age(app.now.saturating_duration_since(*at))
            });
        let queue = if p.pending.queue.is_empty() {
            String::new()
        } else {
            p.pending.queue.len().to_string()
        };
        let cells_text = format!(
            "{}{:>2} {} ",
            if i == sel { "▸ " } else { "  " },
            i + 1,
            fit(p.name(), name_w)
        );
        let state_style = if alarm { style.fg(t.attention) } else { style };
        let rest = format!(
            " {} {:>5} {:>13} {:>6}  ",
            fit(p.conversation.model.as_deref().unwrap_or("-"), 16),
            queue,
            usage,
            since
        );
        let used = cells_text.width() + 16 + rest.width();
        let doing = fit(&activity(p), usize::from(inner.width).saturating_sub(used));
        let line = Line::from(vec![
            Span::styled(cells_text, style),
            Span::styled(fit(&state, 16), state_style),
            Span::styled(rest, style),
            Span::styled(doing, style.fg(t.dim)),
        ]);
        buf.set_line(inner.x, inner.y + 1 + row, &line, inner.width);
    }
}

/// The column headings.
fn draw_head(app: &App, name_w: usize, inner: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let head = format!(
        "  {:>2} {} {} {} {:>5} {:>13} {:>6}  {}",
        "#",
        fit("pane", name_w),
        fit("state", 16),
        fit("model", 16),
        "queue",
        "tokens / cost",
        "for",
        "doing"
    );
    buf.set_line(
        inner.x,
        inner.y,
        &Line::from(Span::styled(
            head,
            Style::new().fg(t.heading).add_modifier(Modifier::BOLD),
        )),
        inner.width,
    );
}

/// "in/out cost", or nothing before the pane used any tokens.
fn usage_cell(p: &Pane) -> String {
    if p.conversation.usage.input_tokens + p.conversation.usage.output_tokens == 0 {
        return String::new();
    }
    let mut s = format!(
        "{}/{}",
        cells::tokens(p.conversation.usage.input_tokens),
        cells::tokens(p.conversation.usage.output_tokens)
    );
    if let Some(c) = p.conversation.usage.cost_usd {
        s.push(' ');
        s.push_str(&cells::cost(c));
    }
    s
}
