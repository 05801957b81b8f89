//! The pop-up list over a pane's transcript, just above its composer: the
//! completion menu (`/` commands, `@` files) and command pickers (`/model`,
//! `/effort`, `/resume`, `/copy`). Reads `app::menu::Menu`, writes only the
//! buffer.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};
use unicode_width::UnicodeWidthStr;

use super::overlay::{rounded_box, titled_box};
use super::wrap::truncate;
use crate::app::menu::Menu;
use crate::theme::Theme;

/// Rows of entries shown at most; the list scrolls to keep the selection in.
const ROWS: usize = 8;

/// Draws `menu` bottom-aligned in `area` (the rows above the composer).
/// Where a label and its detail do not fit side by side (a narrow pane's
/// `/resume`: prompt, then turns, model and which session is current), each
/// entry takes two rows, the detail under its label, so neither is lost
/// (issue 34 item 13).
pub(crate) fn draw(menu: &Menu, t: &Theme, area: Rect, buf: &mut Buffer) {
    let items = menu.visible();
    if area.width < 8 {
        return;
    }
    // Labels in one column, details aligned after them.
    let label_w = items.iter().map(|i| i.label.width()).max().unwrap_or(0);
    let detail_w = items.iter().map(|i| i.detail.width()).max().unwrap_or(0);
    let widest = label_w + if detail_w > 0 { detail_w + 2 } else { 0 };
    let title = title(menu);
    let room = usize::from(area.width).saturating_sub(4);
    // A narrow label column leaves the detail most of the row, cut at its
    // end as a preview is; a wide one (a dated prompt) would hide it all.
    let stacked = detail_w > 0 && widest > room && label_w > room / 3;
    let per = if stacked { 2 } else { 1 };
    let needed = if stacked {
        label_w.max(detail_w + 2)
    } else {
        widest
    };
    let shown = items.len().clamp(1, ROWS);
    let height = ((shown * per) as u16 + 2).min(area.height);
    if height < per as u16 + 2 {
        return;
    }
    let width = (needed.max(title.width()) + 4).clamp(20, usize::from(area.width)) as u16;
    let rect = Rect::new(area.x, area.bottom() - height, width, height);
    Clear.render(rect, buf);
    let rows = usize::from(height - 2) / per;
    let block = frame_block(menu, t, title, items.len(), shown.min(rows));
    let inner = block.inner(rect);
    block.render(rect, buf);
    if items.is_empty() {
        buf.set_string(inner.x, inner.y, empty_text(menu), Style::new().fg(t.dim));
        return;
    }
    let first = match menu.sel {
        Some(s) if s >= rows => s + 1 - rows,
        _ => 0,
    };
    let w = usize::from(inner.width);
    for (row, (i, item)) in items.iter().enumerate().skip(first).take(rows).enumerate() {
        let selected = menu.sel == Some(i);
        let (label_style, detail_style) = if selected {
            (
                Style::new()
                    .fg(t.text)
                    .bg(t.selection_bg)
                    .add_modifier(Modifier::BOLD),
                Style::new().fg(t.dim).bg(t.selection_bg),
            )
        } else {
            (Style::new().fg(t.text), Style::new().fg(t.dim))
        };
        let y = inner.y + (row * per) as u16;
        if selected {
            buf.set_style(Rect::new(inner.x, y, inner.width, per as u16), label_style);
        }
        let label = truncate(&item.label, w);
        if stacked {
            buf.set_string(inner.x, y, &label, label_style);
            let detail = truncate(&item.detail, w.saturating_sub(2));
            buf.set_string(inner.x + 2, y + 1, &detail, detail_style);
            continue;
        }
        let pad = label_w.saturating_sub(label.width());
        let rest = w.saturating_sub(label.width() + pad + 2);
        let mut spans = vec![
            Span::styled(label, label_style),
            Span::styled(" ".repeat(pad), label_style),
        ];
        if !item.detail.is_empty() && rest > 0 {
            spans.push(Span::styled("  ", detail_style));
            spans.push(Span::styled(truncate(&item.detail, rest), detail_style));
        }
        buf.set_line(inner.x, y, &Line::from(spans), inner.width);
    }
}

/// The rounded box: the title on top, and where the selection is when the
/// `count` entries do not all fit in the `shown` rows.
fn frame_block(
    menu: &Menu,
    t: &Theme,
    title: String,
    count: usize,
    shown: usize,
) -> Block<'static> {
    let mut block = if title.is_empty() {
        rounded_box(t.accent)
    } else {
        titled_box(t.accent, title)
    };
    if count > shown {
        // Where the selection is in a list longer than the box.
        let at = menu.sel.map_or(String::new(), |s| format!("{}/", s + 1));
        block = block.title_bottom(
            Line::from(Span::styled(
                format!(" {at}{} ", count),
                Style::new().fg(t.dim),
            ))
            .right_aligned(),
        );
    }
    block
}

/// What an empty menu says instead of entries.
fn empty_text(menu: &Menu) -> &str {
    if !menu.note.is_empty() {
        menu.note.as_str()
    } else if menu.filter.is_empty() {
        "nothing to pick"
    } else {
        "no match"
    }
}

/// Pickers say what they pick and show the filter typed so far.
fn title(menu: &Menu) -> String {
    if !menu.is_picker() {
        return String::new();
    }
    if menu.filter.is_empty() {
        format!(" {} · type to filter · Enter picks · Esc ", menu.title)
    } else {
        format!(" {} · {}▏ ", menu.title, menu.filter)
    }
}
