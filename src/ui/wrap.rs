//! Word wrapping of styled lines to a width, with a first-line prefix and a
//! continuation prefix (list bullets, quote bars, code gutters).

use std::sync::Arc;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
// Widths are a grapheme's, as ratatui's buffer counts them: a ZWJ emoji
// (👩‍💻) or one with VS16 (❤️) is one cell of two columns, not the sum of its
// chars (4, 1), and is never cut in half (issue 34 item 9).
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// A line that lays itself out to the width when wrapped (a markdown
/// table): wrapping asks it for rows instead of knowing what it is, so
/// the table's own layout can wrap its cells without a cycle.
pub trait Block: std::fmt::Debug + Send + Sync + 'static {
    /// The rows for `width` columns (prefixes not included).
    fn layout(&self, width: usize) -> Vec<Vec<Span<'static>>>;
    fn as_any(&self) -> &dyn std::any::Any;
    /// Equal to `other` (of the same kind, with the same content).
    fn same(&self, other: &dyn Block) -> bool;
}

impl PartialEq for dyn Block {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}

/// One unwrapped line: what markdown and the widgets produce before wrapping.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Logical {
    pub(crate) spans: Vec<Span<'static>>,
    /// Drawn before the first wrapped row.
    pub prefix: Vec<Span<'static>>,
    /// Drawn before every later row (usually spaces or a bar as wide as `prefix`).
    pub cont: Vec<Span<'static>>,
    /// Break anywhere and keep spaces (code); otherwise break at words.
    pub(crate) hard: bool,
    /// Style for the whole row (e.g. a background for user messages).
    pub(crate) line_style: Style,
    /// A markdown table, laid out to the width when wrapped (`spans` unused).
    pub table: Option<Arc<dyn Block>>,
}

impl Logical {
    pub fn new(spans: Vec<Span<'static>>) -> Self {
        Self {
            spans,
            ..Self::default()
        }
    }

    pub fn raw(text: impl Into<String>, style: Style) -> Self {
        Self::new(vec![Span::styled(text.into(), style)])
    }

    pub(crate) fn with_prefix(
        mut self,
        prefix: Vec<Span<'static>>,
        cont: Vec<Span<'static>>,
    ) -> Self {
        self.prefix = prefix;
        self.cont = cont;
        self
    }

    pub(crate) fn hard(mut self) -> Self {
        self.hard = true;
        self
    }

    /// A whole table as one line: it takes as many rows as its layout needs.
    pub fn table(table: impl Block) -> Self {
        Self {
            table: Some(Arc::new(table)),
            ..Self::default()
        }
    }

    pub(crate) fn styled_line(mut self, style: Style) -> Self {
        self.line_style = style;
        self
    }
}

fn width_of(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// Appends `text` in `style`, merging with the last span when styles match.
fn push(out: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(text);
        return;
    }
    out.push(Span::styled(text.to_owned(), style));
}

struct Rows {
    rows: Vec<Line<'static>>,
    cur: Vec<Span<'static>>,
    used: usize,
    avail: usize,
    cont: Vec<Span<'static>>,
    line_style: Style,
    width: usize,
}

impl Rows {
    fn newline(&mut self) {
        // Trailing spaces at a soft break are invisible noise.
        if let Some(last) = self.cur.last_mut() {
            let trimmed = last.content.trim_end().len();
            last.content.to_mut().truncate(trimmed);
        }
        let spans = std::mem::replace(&mut self.cur, self.cont.clone());
        self.rows.push(Line::from(spans).style(self.line_style));
        self.used = 0;
        self.avail = self.width.saturating_sub(width_of(&self.cont)).max(1);
    }

    /// Places `piece` breaking it by characters where needed.
    fn place_chars(&mut self, piece: &str, style: Style) {
        let mut start = 0;
        let mut w = 0;
        for (i, g) in piece.grapheme_indices(true) {
            let cw = g.width();
            if self.used + w + cw > self.avail && (self.used + w) > 0 {
                push(&mut self.cur, &piece[start..i], style);
                self.newline();
                start = i;
                w = 0;
            }
            w += cw;
        }
        push(&mut self.cur, &piece[start..], style);
        self.used += w;
    }
}

/// Wraps one logical line to `width` columns.
pub fn wrap(line: &Logical, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width).max(1);
    let prefix_w = width_of(&line.prefix);
    if let Some(table) = &line.table {
        let avail = width.saturating_sub(prefix_w).max(1);
        return table
            .layout(avail)
            .into_iter()
            .enumerate()
            .map(|(i, row)| {
                let mut spans = if i == 0 { &line.prefix } else { &line.cont }.clone();
                spans.extend(row);
                Line::from(spans).style(line.line_style)
            })
            .collect();
    }
    let mut rows = Rows {
        rows: Vec::new(),
        cur: line.prefix.clone(),
        used: 0,
        avail: width.saturating_sub(prefix_w).max(1),
        cont: line.cont.clone(),
        line_style: line.line_style,
        width,
    };
    for span in &line.spans {
        let style = span.style;
        let text = span.content.as_ref();
        if line.hard {
            rows.place_chars(text, style);
            continue;
        }
        for piece in split_words(text) {
            let pw = piece.width();
            let is_space = piece.starts_with(char::is_whitespace);
            if rows.used + pw <= rows.avail {
                push(&mut rows.cur, piece, style);
                rows.used += pw;
            } else if is_space {
                rows.newline();
            } else if pw <= rows.avail {
                rows.newline();
                push(&mut rows.cur, piece, style);
                rows.used += pw;
            } else {
                rows.place_chars(piece, style);
            }
        }
    }
    let last = std::mem::take(&mut rows.cur);
    rows.rows.push(Line::from(last).style(line.line_style));
    rows.rows
}

/// Splits into alternating runs of whitespace and non-whitespace.
fn split_words(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let space = rest.starts_with(char::is_whitespace);
        let end = rest
            .char_indices()
            .find(|(_, c)| c.is_whitespace() != space)
            .map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

/// Cuts a plain string to `width` columns, adding `…` when it was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut w = 0;
    for g in text.graphemes(true) {
        let cw = g.width();
        if w + cw + 1 > width {
            break;
        }
        out.push_str(g);
        w += cw;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_at_words_and_keeps_prefixes() {
        let l = Logical::raw("the quick brown fox jumps", Style::new())
            .with_prefix(vec![Span::raw("- ")], vec![Span::raw("  ")]);
        assert_eq!(
            text(&wrap(&l, 12)),
            ["- the quick", "  brown fox", "  jumps"]
        );
    }

    #[test]
    fn breaks_long_words_and_hard_lines() {
        let l = Logical::raw("abcdefghij", Style::new());
        assert_eq!(text(&wrap(&l, 4)), ["abcd", "efgh", "ij"]);
        let code = Logical::raw("a  b  c", Style::new()).hard();
        assert_eq!(text(&wrap(&code, 3)), ["a", "b", "c"]);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let l = Logical::raw("日本語テキスト", Style::new());
        let rows = wrap(&l, 6);
        assert!(rows.iter().all(|r| r.width() <= 6), "{:?}", text(&rows));
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn emoji_sequences_are_one_cell_each() {
        // ❤️ is two columns (VS16), 👩‍💻 two (ZWJ): as the buffer draws them.
        let code = Logical::raw("❤️❤️❤️❤️❤️👩‍💻👩‍💻", Style::new()).hard();
        let rows = wrap(&code, 6);
        assert_eq!(text(&rows), ["❤️❤️❤️", "❤️❤️👩‍💻", "👩‍💻"]);
        assert!(rows.iter().all(|r| r.width() <= 6), "{:?}", text(&rows));
        assert_eq!(truncate("👩‍💻👩‍💻👩‍💻", 5), "👩‍💻👩‍💻…");
    }

    #[test]
    fn tiny_widths_do_not_loop() {
        let l = Logical::raw("hello world", Style::new())
            .with_prefix(vec![Span::raw("> ")], vec![Span::raw("> ")]);
        assert!(wrap(&l, 1).len() > 3);
        assert_eq!(truncate("hello", 3), "he…");
    }
}
