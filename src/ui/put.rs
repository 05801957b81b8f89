//! Drawing a line of text into the buffer, as `Buffer::set_line` does, with
//! a shortcut for printable ASCII.
//!
//! A streaming pane redraws every visible row each frame, and ratatui splits
//! every span into grapheme clusters and measures each one. A span of
//! printable ASCII is one cell per byte, so it is copied straight into its
//! cells; anything else goes through ratatui.

use ratatui::buffer::Buffer;
use ratatui::style::Style;
use ratatui::text::Line;

/// `buf.set_line(x, y, line, max_width)`: the same cells, the same end.
pub fn line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) -> (u16, u16) {
    let mut remaining = max_width;
    let mut x = x;
    for span in line {
        if remaining == 0 {
            break;
        }
        let style = line.style.patch(span.style);
        let text = span.content.as_ref();
        let end = match ascii(buf, x, y, text, remaining, style) {
            Some(end) => end,
            None => buf.set_stringn(x, y, text, usize::from(remaining), style).0,
        };
        remaining = remaining.saturating_sub(end.saturating_sub(x));
        x = end;
    }
    (x, y)
}

/// Writes `text` from `(x, y)` when it is all printable ASCII and the
/// position is inside the buffer; returns the column after it.
fn ascii(buf: &mut Buffer, x: u16, y: u16, text: &str, max: u16, style: Style) -> Option<u16> {
    let area = buf.area;
    let inside = x >= area.left() && x < area.right() && y >= area.top() && y < area.bottom();
    if !inside || !text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return None;
    }
    let n = text.len().min(usize::from((area.right() - x).min(max)));
    let start = buf.index_of(x, y);
    let cells = buf.content.get_mut(start..start + n)?;
    for (i, cell) in cells.iter_mut().enumerate() {
        cell.set_symbol(&text[i..=i]).set_style(style);
    }
    // `n` fits: it is at most the columns left on the row.
    Some(x + n as u16)
}

/// `buf.set_string(x, y, symbol.repeat(n), style)` for a symbol one cell
/// wide (a rule): the same cells, without measuring each repeat.
pub fn repeat(buf: &mut Buffer, x: u16, y: u16, symbol: &str, n: u16, style: Style) {
    for x in x..x.saturating_add(n) {
        if let Some(cell) = buf.cell_mut((x, y)) {
            cell.set_symbol(symbol).set_style(style);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Modifier};
    use ratatui::text::Span;

    #[test]
    fn draws_what_set_line_draws() {
        let lines = [
            Line::from("plain ascii text that is longer than the buffer is wide, by a lot"),
            Line::from(vec![
                Span::styled("bold ", Style::new().add_modifier(Modifier::BOLD)),
                Span::styled("red", Style::new().fg(Color::Red)),
                Span::raw(" and "),
                Span::styled("wide 漢字 ✓ e\u{301}", Style::new().bg(Color::Blue)),
                Span::raw("\ttab\u{7}bell\r\n"),
                Span::raw("after"),
            ])
            .style(Style::new().fg(Color::Green)),
            Line::from(vec![
                Span::raw("漢字漢字漢字漢字漢字漢字漢字漢字漢字"),
                Span::raw("x"),
            ]),
            Line::from(vec![Span::raw(""), Span::raw("a"), Span::raw("")]),
            Line::from(vec![
                Span::styled(" ~}|{ ", Style::new().remove_modifier(Modifier::BOLD)),
                Span::raw("del\u{7f}"),
            ]),
        ];
        let area = Rect::new(0, 0, 30, 2);
        for l in &lines {
            for (x, width) in [(0, 30), (3, 30), (3, 7), (29, 30), (30, 30), (5, 0)] {
                for blank in [Buffer::empty(area), drawn_on(area)] {
                    let mut want = blank.clone();
                    let mut got = blank;
                    let a = want.set_line(x, 1, l, width);
                    let b = line(&mut got, x, 1, l, width);
                    assert_eq!(a, b, "{l:?} at {x} in {width}");
                    assert_eq!(want, got, "{l:?} at {x} in {width}");
                }
            }
        }
    }

    /// Cells already drawn on, in several styles, symbols and diff options:
    /// what a line keeps of them shows.
    fn drawn_on(area: Rect) -> Buffer {
        let mut buf = Buffer::empty(area);
        for (i, cell) in buf.content.iter_mut().enumerate() {
            cell.set_symbol(["é", "x", "漢"][i % 3]);
            if i % 2 == 0 {
                cell.set_style(Style::new().bg(Color::Blue).add_modifier(Modifier::BOLD));
            }
            if i % 5 == 0 {
                cell.set_style(Style::new().fg(Color::Red).add_modifier(Modifier::ITALIC));
                cell.set_diff_option(ratatui::buffer::CellDiffOption::Skip);
            }
        }
        buf
    }

    #[test]
    fn repeat_draws_what_set_string_draws() {
        let style = Style::new()
            .fg(Color::Rgb(1, 2, 3))
            .add_modifier(Modifier::BOLD);
        for (x, n) in [(0, 30), (3, 27), (3, 40), (29, 1), (29, 5), (5, 0)] {
            let area = Rect::new(0, 0, 30, 2);
            let mut want = Buffer::empty(area);
            let mut got = Buffer::empty(area);
            want.set_string(x, 1, "─".repeat(usize::from(n)), style);
            repeat(&mut got, x, 1, "─", n, style);
            assert_eq!(want, got, "{n} from {x}");
        }
    }
}
