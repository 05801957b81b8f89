//! Search on screen: the overlay (query, result count, one row per hit
//! with pane, time, kind and context), and in a pane the jump target
//! scrolled into view with the query highlighted.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::overlay::{fit, frame, name_width, row_style, window};
use super::transcript::{self, Cache, Ctx};
use crate::app::state::App;
use crate::app::transcript::Entry;
use crate::theme::Theme;

pub(crate) fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let s = &app.search;
    let w = area.width.saturating_sub(4).min(120);
    let h = area
        .height
        .saturating_sub(2)
        .min(s.hits.len() as u16 + 4)
        .max(6);
    let count = match (s.query.is_empty(), s.done) {
        (true, _) => "type to search every pane".to_owned(),
        (false, false) => format!("{} so far, searching…", s.hits.len()),
        (false, true) if s.hits.len() >= crate::search::MAX_HITS => {
            format!("first {} matches", s.hits.len())
        }
        (false, true) => format!(
            "{} match{}",
            s.hits.len(),
            if s.hits.len() == 1 { "" } else { "es" }
        ),
    };
    let hint = "type · ↑↓ select · Enter jump · Esc close";
    let inner = frame(t, area, (w, h), "search all panes", hint, buf);
    if inner.height < 2 {
        return;
    }
    let prompt = Line::from(vec![
        Span::styled("/ ", Style::new().fg(t.accent).add_modifier(Modifier::BOLD)),
        if s.selected {
            Span::styled(s.query.clone(), Style::new().fg(t.text).bg(t.selection_bg))
        } else {
            Span::styled(format!("{}▏", s.query), Style::new().fg(t.text))
        },
        Span::styled(format!("  {count}"), Style::new().fg(t.dim)),
    ]);
    buf.set_line(inner.x, inner.y, &prompt, inner.width);
    let name_w = name_width(&app.panes, 18);
    let rows = usize::from(inner.height - 1);
    for (row, i, hit) in window(&s.hits, s.sel, rows) {
        let selected = i == s.sel;
        let style = row_style(t, selected);
        let name = app.panes.get(hit.pane).map_or("?", |p| p.name());
        let time = hit.time.filter(|t| t.timestamp() > 0).map_or_else(
            || "        ".to_owned(),
            |t| t.format("%H:%M:%S").to_string(),
        );
        let head = format!(
            "{}{} {time} {} ",
            if selected { "▸ " } else { "  " },
            fit(name, name_w),
            fit(&hit.label, 10)
        );
        let rest = usize::from(inner.width).saturating_sub(head.width());
        let mut spans = vec![Span::styled(head, style)];
        spans.extend(marked(&fit(&hit.context, rest), &s.query, style, t));
        buf.set_line(inner.x, inner.y + 1 + row, &Line::from(spans), inner.width);
    }
}

/// `text` as spans with each (ASCII case-insensitive) `needle` marked.
fn marked(text: &str, needle: &str, base: Style, t: &Theme) -> Vec<Span<'static>> {
    let lower = text.to_ascii_lowercase();
    let n = needle.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    if !n.is_empty() {
        while let Some(pos) = lower[at..].find(&n) {
            let start = at + pos;
            out.push(Span::styled(text[at..start].to_owned(), base));
            out.push(Span::styled(
                text[start..start + n.len()].to_owned(),
                mark(t),
            ));
            at = start + n.len();
        }
    }
    out.push(Span::styled(text[at..].to_owned(), base));
    out
}

fn mark(t: &Theme) -> Style {
    Style::new()
        .fg(t.status_bg)
        .bg(t.attention)
        .add_modifier(Modifier::BOLD)
}

/// The scroll (rows up from the bottom) that puts entry `target` at the
/// top of a viewport of `area` (or as high as the transcript allows).
pub(crate) fn reveal_scroll(
    entries: &[Entry],
    caches: &mut [Cache],
    target: usize,
    extra_rows: usize,
    ctx: &Ctx<'_>,
    area: Rect,
) -> usize {
    // Its first rows exactly (a long answer is otherwise only estimated).
    let rows = usize::from(area.height) + 1;
    transcript::settle_down(entries, caches, target, rows, ctx, area.width);
    let mut below = extra_rows;
    for i in (target.min(entries.len())..entries.len()).rev() {
        if transcript::visible(&entries[i], ctx.full_view) {
            below += transcript::layout(&entries[i], &mut caches[i], area.width, ctx);
        }
    }
    // Each entry starts with a blank separator row: show the first text row.
    below
        .saturating_sub(1)
        .saturating_sub(usize::from(area.height))
}

/// Marks every occurrence of `needle` drawn in `area` (a whole screen row
/// at a time, so a match is found wherever the transcript put it).
pub(crate) fn highlight(needle: &str, area: Rect, t: &Theme, buf: &mut Buffer) {
    let n = needle.to_ascii_lowercase();
    if n.is_empty() {
        return;
    }
    for y in area.top()..area.bottom() {
        // The row's text, with the x of each byte's cell.
        let mut text = String::new();
        let mut xs = Vec::new();
        for x in area.left()..area.right() {
            let sym = buf[(x, y)].symbol();
            for _ in 0..sym.len() {
                xs.push(x);
            }
            text.push_str(sym);
        }
        let lower = text.to_ascii_lowercase();
        let mut at = 0;
        while let Some(pos) = lower[at..].find(&n) {
            let start = at + pos;
            let end = start + n.len();
            let (x0, x1) = (xs[start], xs[end - 1]);
            buf.set_style(Rect::new(x0, y, x1 - x0 + 1, 1), mark(t));
            at = end;
        }
    }
}
