//! Shared frame for the overlays (help, inbox, search, overview…): a
//! cleared, centred, rounded box with a title and a key hint at the bottom,
//! the rounded box itself (menus and the approval card use it too), and the
//! small cell formats they all use.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};
use unicode_width::UnicodeWidthStr;

use crate::app::pane::Pane;
use crate::theme::Theme;

/// A `w`×`h` rect centred in `area` (no larger than it).
pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// The rounded box in `colour`.
pub(crate) fn rounded_box(colour: Color) -> Block<'static> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(Style::new().fg(colour))
}

/// The rounded box in `colour` with `title` on top in bold.
pub(crate) fn titled_box(colour: Color, title: String) -> Block<'static> {
    rounded_box(colour).title(Line::from(Span::styled(
        title,
        Style::new().fg(colour).add_modifier(Modifier::BOLD),
    )))
}

/// Clears a `w`×`h` box centred in `area`, draws its frame and returns
/// the inside.
pub(crate) fn frame(
    t: &Theme,
    area: Rect,
    (w, h): (u16, u16),
    title: &str,
    hint: &str,
    buf: &mut Buffer,
) -> Rect {
    let rect = centered(area, w, h);
    Clear.render(rect, buf);
    let block = titled_box(t.accent, format!(" {title} ")).title_bottom(
        Line::from(Span::styled(format!(" {hint} "), Style::new().fg(t.dim))).right_aligned(),
    );
    let inner = block.inner(rect);
    block.render(rect, buf);
    inner
}

/// `42s`, `3m`, `2h`, `5d`: how long ago, in one short cell.
pub(crate) fn age(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// `text` cut or padded to exactly `width` columns.
pub(crate) fn fit(text: &str, width: usize) -> String {
    let cut = super::wrap::truncate(text, width);
    let pad = width.saturating_sub(cut.width());
    format!("{cut}{}", " ".repeat(pad))
}

/// The width of the pane-name column: the widest name, at most `most`
/// (4 with no panes).
pub(crate) fn name_width(panes: &[Pane], most: usize) -> usize {
    panes
        .iter()
        .map(|p| p.name().width())
        .max()
        .unwrap_or(4)
        .min(most)
}

/// The row style: the selection stands out.
pub(crate) fn row_style(t: &Theme, selected: bool) -> Style {
    if selected {
        Style::new()
            .fg(t.text)
            .bg(t.selection_bg)
            .add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(t.text)
    }
}

/// The part of a list that fits `rows` lines with `sel` in view, as
/// (row on screen, index, item).
pub(crate) fn window<T>(
    items: &[T],
    sel: usize,
    rows: usize,
) -> impl Iterator<Item = (u16, usize, &T)> {
    let first = sel.saturating_sub(rows.saturating_sub(1));
    items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .enumerate()
        .map(|(row, (i, x))| (row as u16, i, x))
}
