//! Markdown tables laid out to the width they are drawn at.
//!
//! A table is kept whole (cells as styled spans) until wrapping, because only
//! then is the width known: at its natural width when that fits; otherwise
//! the widest columns shrink and cell text wraps inside its cell; and when
//! even narrow columns cannot fit, each row becomes a stacked
//! "header: value" list. Widths are display widths (CJK and emoji take two
//! columns), so borders line up whatever the script.

use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::wrap::{Block, Logical, wrap};

/// One cell's inline content.
pub(crate) type Cell = Vec<Span<'static>>;

/// A parsed table, laid out by `layout` for a given width.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub(crate) align: Vec<Alignment>,
    pub rows: Vec<Vec<Cell>>,
    /// The first `header_rows` rows are the header (drawn bold).
    pub(crate) header_rows: usize,
    pub border: Style,
}

/// A shrunk column keeps at least this many columns (or its natural width
/// if smaller); below that the table is stacked instead.
const MIN_COL: usize = 4;
/// A shrunk column also keeps room for its longest word, up to this width:
/// a grid of words cut into syllables reads worse than the stacked form.
const WORD_CAP: usize = 10;

fn cell_width(c: &Cell) -> usize {
    c.iter().map(|s| s.content.width()).sum()
}

fn longest_word(c: &Cell) -> usize {
    let text: String = c.iter().map(|s| s.content.as_ref()).collect();
    text.split_whitespace().map(str::width).max().unwrap_or(0)
}

/// Column widths that fit `budget` (content only), shrinking the widest
/// column one step at a time but none below its `floor`; `None` when they
/// cannot.
fn fit(natural: &[usize], floor: &[usize], budget: usize) -> Option<Vec<usize>> {
    let mut w = natural.to_vec();
    let mut total: usize = w.iter().sum();
    while total > budget {
        let (i, _) = w
            .iter()
            .zip(floor)
            .enumerate()
            .filter(|(_, (v, f))| v > f)
            .max_by_key(|&(i, (v, _))| (*v, std::cmp::Reverse(i)))?;
        w[i] -= 1;
        total -= 1;
    }
    Some(w)
}

impl Block for Table {
    fn layout(&self, width: usize) -> Vec<Vec<Span<'static>>> {
        Table::layout(self, width)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn same(&self, other: &dyn Block) -> bool {
        other.as_any().downcast_ref::<Table>() == Some(self)
    }
}

impl Table {
    fn cols(&self) -> usize {
        self.rows.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Each column's (natural width, narrowest it may shrink to).
    fn widths(&self) -> (Vec<usize>, Vec<usize>) {
        let mut natural = vec![0usize; self.cols()];
        let mut word = vec![0usize; self.cols()];
        for row in &self.rows {
            for (i, c) in row.iter().enumerate() {
                natural[i] = natural[i].max(cell_width(c));
                word[i] = word[i].max(longest_word(c));
            }
        }
        let floor = natural
            .iter()
            .zip(&word)
            .map(|(n, w)| (*n).min(MIN_COL.max((*w).min(WORD_CAP))))
            .collect();
        (natural, floor)
    }

    /// The table's rows for `width` columns (prefixes not included).
    pub(crate) fn layout(&self, width: usize) -> Vec<Vec<Span<'static>>> {
        let cols = self.cols();
        if cols == 0 {
            return Vec::new();
        }
        // `│ a │ b │`: one bar plus a space either side of every cell.
        let overhead = 1 + 3 * cols;
        let budget = width.saturating_sub(overhead);
        let (natural, floor) = self.widths();
        match fit(&natural, &floor, budget) {
            Some(widths) if width > overhead => self.grid(&widths),
            _ => self.stacked(width),
        }
    }

    fn style_cell(&self, row: usize, cell: &Cell) -> Cell {
        let mut cell = cell.clone();
        if row < self.header_rows {
            for s in &mut cell {
                s.style = s.style.add_modifier(Modifier::BOLD);
            }
        }
        cell
    }

    fn rule(&self, widths: &[usize], l: &str, m: &str, r: &str) -> Vec<Span<'static>> {
        let mut s = String::from(l);
        for (i, w) in widths.iter().enumerate() {
            s.push_str(&"─".repeat(w + 2));
            s.push_str(if i + 1 == widths.len() { r } else { m });
        }
        vec![Span::styled(s, self.border)]
    }

    /// Boxed grid: every cell wrapped to its column, rows as tall as their
    /// tallest cell.
    fn grid(&self, widths: &[usize]) -> Vec<Vec<Span<'static>>> {
        let bar = || Span::styled("│", self.border);
        let mut out = vec![self.rule(widths, "┌", "┬", "┐")];
        for (ri, row) in self.rows.iter().enumerate() {
            let cells: Vec<Vec<Line<'static>>> = widths
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let cell = row.get(i).map(|c| self.style_cell(ri, c));
                    let cell = Logical::new(cell.unwrap_or_default());
                    wrap(&cell, u16::try_from(*w).unwrap_or(u16::MAX))
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for line in 0..height {
                let mut spans = vec![bar()];
                for (i, w) in widths.iter().enumerate() {
                    let part = cells[i].get(line);
                    let used = part.map_or(0, Line::width);
                    let pad = w.saturating_sub(used);
                    let (left, right) = match self.align.get(i) {
                        Some(Alignment::Right) => (pad, 0),
                        Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                        _ => (0, pad),
                    };
                    spans.push(Span::raw(" ".repeat(left + 1)));
                    if let Some(part) = part {
                        spans.extend(part.spans.iter().cloned());
                    }
                    spans.push(Span::raw(" ".repeat(right + 1)));
                    spans.push(bar());
                }
                out.push(spans);
            }
            if ri + 1 == self.header_rows && ri + 1 < self.rows.len() {
                out.push(self.rule(widths, "├", "┼", "┤"));
            }
        }
        out.push(self.rule(widths, "└", "┴", "┘"));
        out
    }

    /// Too narrow for a grid: each body row as `header: value` lines,
    /// records separated by a short rule.
    fn stacked(&self, width: usize) -> Vec<Vec<Span<'static>>> {
        let w = u16::try_from(width.max(1)).unwrap_or(u16::MAX);
        let header = self.rows.get(..self.header_rows.min(1)).unwrap_or(&[]);
        let keys: Vec<String> = header
            .first()
            .map(|h| {
                h.iter()
                    .map(|c| c.iter().map(|s| s.content.as_ref()).collect())
                    .collect()
            })
            .unwrap_or_default();
        let body = &self.rows[self.header_rows.min(self.rows.len())..];
        let rule = vec![Span::styled("─".repeat(width.clamp(1, 12)), self.border)];
        let mut out = Vec::new();
        if body.is_empty() {
            for cell in header.iter().flatten() {
                let line = Logical::new(self.style_cell(0, cell));
                out.extend(wrap(&line, w).into_iter().map(|l| l.spans));
            }
            return out;
        }
        for (ri, row) in body.iter().enumerate() {
            if ri > 0 {
                out.push(rule.clone());
            }
            for (i, cell) in row.iter().enumerate() {
                let key = keys.get(i).map(String::as_str).unwrap_or("");
                let mut spans = Vec::new();
                if !key.is_empty() {
                    spans.push(Span::styled(
                        format!("{key}: "),
                        Style::new().add_modifier(Modifier::BOLD),
                    ));
                }
                spans.extend(cell.iter().cloned());
                let line = Logical::new(spans).with_prefix(Vec::new(), vec![Span::raw("  ")]);
                out.extend(wrap(&line, w).into_iter().map(|l| l.spans));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[&[&str]]) -> Table {
        Table {
            align: vec![Alignment::None; rows[0].len()],
            rows: rows
                .iter()
                .map(|r| r.iter().map(|c| vec![Span::raw(c.to_string())]).collect())
                .collect(),
            header_rows: 1,
            border: Style::new(),
        }
    }

    fn text(rows: &[Vec<Span<'static>>]) -> Vec<String> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn shrinks_the_widest_column_first() {
        assert_eq!(fit(&[3, 20, 5], &[3, 4, 4], 20), Some(vec![3, 12, 5]));
        assert_eq!(fit(&[10, 10], &[4, 4], 8), Some(vec![4, 4]));
        assert_eq!(fit(&[10, 10], &[4, 4], 7), None);
        assert_eq!(fit(&[10, 10], &[8, 4], 12), Some(vec![8, 4]));
    }

    #[test]
    fn every_row_fits_and_borders_line_up() {
        let t = table(&[
            &["name", "what it does"],
            &["日本語", "a fairly long description that must wrap 🚀"],
        ]);
        for width in [20, 30, 50, 80] {
            let rows = text(&t.layout(width));
            let grid = rows[0].starts_with('┌');
            assert_eq!(grid, width >= 30, "{width}: {rows:#?}");
            let w0 = rows[0].width();
            for r in &rows {
                assert!(r.width() <= width, "{width}: {r:?}");
                if grid {
                    assert_eq!(r.width(), w0, "{width}: {rows:#?}");
                }
            }
        }
    }

    #[test]
    fn too_narrow_stacks_key_value() {
        let t = table(&[
            &["a", "b", "c", "d"],
            &["1", "2", "3", "4"],
            &["5", "6", "7", "8"],
        ]);
        let rows = text(&t.layout(12));
        assert_eq!(
            rows,
            [
                "a: 1",
                "b: 2",
                "c: 3",
                "d: 4",
                "────────────",
                "a: 5",
                "b: 6",
                "c: 7",
                "d: 8"
            ]
        );
    }
}
