//! A pane's frame (all four borders, titles on the top and bottom rows),
//! drawn cell for cell as ratatui's `Block` draws it, without its cost.
//!
//! `Block::render` first restyles every cell of its area (`set_style` with
//! the block's own style, which panes never set), then draws the sides: on a
//! 160×48 pane that is ~7,700 cells patched per frame for ~400 border
//! cells, about 3 % of a streaming pane's CPU. Here `Block` draws only the
//! top and bottom rows (corners, edges and titles) and the side columns are
//! set directly; `tests::draws_what_block_draws` holds the two equal.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Widget};

/// A bordered frame with titles on its top and bottom edges.
#[derive(Debug, Clone)]
pub(super) struct Frame<'a> {
    pub kind: BorderType,
    pub style: Style,
    /// Titles on the top edge, in order (each `Line` keeps its alignment).
    pub top: Vec<Line<'a>>,
    pub bottom: Vec<Line<'a>>,
}

impl<'a> Frame<'a> {
    /// The same frame as one ratatui `Block`, restricted to `borders` and
    /// the titles of the edges it keeps.
    fn block(&self, borders: Borders, top: bool, bottom: bool) -> Block<'a> {
        let mut b = Block::new()
            .borders(borders)
            .border_type(self.kind)
            .border_style(self.style);
        if top {
            for t in &self.top {
                b = b.title(t.clone());
            }
        }
        if bottom {
            for t in &self.bottom {
                b = b.title_bottom(t.clone());
            }
        }
        b
    }

    /// The area inside the borders.
    pub(super) fn inner(&self, area: Rect) -> Rect {
        self.block(Borders::ALL, true, true).inner(area)
    }

    pub(super) fn render(&self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.width < 2 || area.height < 2 {
            // Edges that overlap: `Block`'s own drawing order decides.
            self.block(Borders::ALL, true, true).render(area, buf);
            return;
        }
        let sides = Borders::LEFT | Borders::RIGHT;
        let top = Rect { height: 1, ..area };
        self.block(Borders::TOP | sides, true, false)
            .render(top, buf);
        let bottom = Rect {
            y: area.bottom() - 1,
            height: 1,
            ..area
        };
        self.block(Borders::BOTTOM | sides, false, true)
            .render(bottom, buf);
        let set = self.kind.to_border_set();
        let right = area.right() - 1;
        for y in area.top() + 1..area.bottom() - 1 {
            for (x, symbol) in [(area.x, set.vertical_left), (right, set.vertical_right)] {
                if let Some(cell) = buf.cell_mut((x, y)) {
                    cell.set_symbol(symbol).set_style(self.style);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};
    use ratatui::text::Span;

    /// A buffer already holding text in every cell, in several styles, so a
    /// cell either drawing leaves alone or restyles differently shows.
    fn filled(area: Rect) -> Buffer {
        let mut buf = Buffer::empty(area);
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                let cell = &mut buf[(x, y)];
                cell.set_symbol(if (x + y) % 3 == 0 { "é" } else { "x" });
                if (x * 7 + y) % 4 == 0 {
                    cell.set_style(Style::new().fg(Color::Red).bg(Color::Blue));
                }
                if (x + y * 5) % 5 == 0 {
                    cell.set_style(Style::new().add_modifier(Modifier::BOLD));
                }
            }
        }
        buf
    }

    fn frames() -> Vec<Frame<'static>> {
        let title = Line::from(vec![
            Span::styled(" 1 ", Style::new().fg(Color::Black).bg(Color::Cyan)),
            Span::raw(" "),
            Span::styled("claude", Style::new().add_modifier(Modifier::BOLD)),
        ]);
        let right = Line::from(vec![
            Span::raw(" "),
            Span::styled("sonnet ", Style::new().fg(Color::Gray)),
            Span::styled("⠋ working", Style::new().fg(Color::Yellow)),
        ])
        .right_aligned();
        let note = Line::from(Span::styled(" ⚠ b also changed README.md ", Color::Red));
        let style = Style::new().fg(Color::Rgb(90, 110, 200));
        let mut out = Vec::new();
        for kind in [BorderType::Rounded, BorderType::Thick, BorderType::Plain] {
            for bottom in [vec![], vec![note.clone()], vec![note.clone(), note.clone()]] {
                out.push(Frame {
                    kind,
                    style,
                    top: vec![title.clone(), right.clone()],
                    bottom,
                });
            }
        }
        out.push(Frame {
            kind: BorderType::Double,
            style: Style::new(),
            top: vec![],
            bottom: vec![],
        });
        out
    }

    #[test]
    fn draws_what_block_draws() {
        let whole = Rect::new(0, 0, 44, 9);
        for frame in frames() {
            for (w, h) in (0..=44).flat_map(|w| (0..=9).map(move |h| (w, h))) {
                for (x, y) in [(0, 0), (1, 2), (44 - w.min(44), 9 - h.min(9))] {
                    let area = Rect::new(x, y, w, h);
                    let mut want = filled(whole);
                    frame
                        .block(Borders::ALL, true, true)
                        .render(area, &mut want);
                    let mut got = filled(whole);
                    frame.render(area, &mut got);
                    assert_eq!(got, want, "{:?} in {area:?}", frame.kind);
                    assert_eq!(
                        frame.inner(area),
                        frame.block(Borders::ALL, true, true).inner(area)
                    );
                }
            }
        }
    }

    #[test]
    fn an_area_partly_outside_the_buffer_draws_what_block_draws() {
        let whole = Rect::new(0, 0, 20, 6);
        let frame = frames().remove(1);
        for area in [Rect::new(10, 3, 20, 6), Rect::new(0, 4, 20, 6)] {
            let mut want = filled(whole);
            frame
                .block(Borders::ALL, true, true)
                .render(area, &mut want);
            let mut got = filled(whole);
            frame.render(area, &mut got);
            assert_eq!(got, want, "{area:?}");
        }
    }
}
