//! Markdown → logical lines (pulldown-cmark): headings, lists, emphasis,
//! inline code, links, tables, block quotes, rules, and fenced code
//! highlighted by syntect.
//!
//! Streaming text is rendered incrementally: the source is cut at block
//! boundaries (a blank line outside a code fence, followed by a line that
//! starts a new block), the finished part is rendered once and kept, and only
//! the open tail is rendered again on each update.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::highlight;
use super::markdown_table;
use super::theme::Theme;
use super::wrap::Logical;

/// Renders a complete markdown document.
pub fn render(src: &str, theme: &Theme, base: Style) -> Vec<Logical> {
    render_with(src, theme, base, &mut Vec::new())
}

/// `render`, highlighting the document's `n`th code block from `memos[n]`
/// (see `highlight::Memo`); keeps one memo per code block it rendered.
fn render_with(
    src: &str,
    theme: &Theme,
    base: Style,
    memos: &mut Vec<highlight::Memo>,
) -> Vec<Logical> {
    let mut r = Renderer::new(theme, base, memos);
    let parser = Parser::new_ext(
        src,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS,
    );
    for ev in parser {
        r.event(ev);
    }
    let blocks = r.code_blocks;
    let out = r.finish();
    memos.truncate(blocks);
    out
}

/// The largest cut point `>= from` where everything before can be rendered
/// on its own: just after a blank line, outside any code fence, with the next
/// line starting a new top-level block. `from` must itself be such a point.
pub(crate) fn stable_boundary(src: &str, from: usize) -> usize {
    boundaries(src, from).last().unwrap_or(from)
}

/// Every such cut point after `from`, in order: a long text is laid out a
/// piece at a time between them (`ui::lazy_md`).
pub fn boundaries(src: &str, from: usize) -> impl Iterator<Item = usize> + '_ {
    let mut in_fence = false;
    let mut pos = from;
    let mut prev_blank = false;
    std::iter::from_fn(move || {
        while pos < src.len() {
            let end = src[pos..].find('\n').map_or(src.len(), |i| pos + i);
            let line = &src[pos..end];
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            // A line that starts at column 0 after a blank line opens a new
            // top-level block (even while it is still being written).
            let starts_block = indent == 0 && !trimmed.is_empty();
            let cut = (prev_blank && !in_fence && starts_block).then_some(pos);
            if end == src.len() {
                pos = src.len();
                return cut;
            }
            if indent < 4 && (trimmed.starts_with("```") || trimmed.starts_with("~~~")) {
                in_fence = !in_fence;
            }
            prev_blank = line.trim().is_empty();
            pos = end + 1;
            if cut.is_some() {
                return cut;
            }
        }
        None
    })
}

struct ListState {
    next: Option<u64>,
}

struct Renderer<'t> {
    theme: &'t Theme,
    base: Style,
    out: Vec<Logical>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Prefixes of enclosing blocks: (first line, continuation).
    quote_depth: usize,
    lists: Vec<ListState>,
    /// Bullet of the current list item, used by its first line only.
    item_prefix: Option<Vec<Span<'static>>>,
    heading: Option<HeadingLevel>,
    code: Option<(String, String)>,
    link: Option<String>,
    table: Option<OpenTable>,
    need_blank: bool,
    memos: &'t mut Vec<highlight::Memo>,
    /// Code blocks rendered so far (the next one's memo).
    code_blocks: usize,
}

/// A table being parsed; laid out to the width later (`markdown_table`).
struct OpenTable {
    align: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    cur_row: Vec<Vec<Span<'static>>>,
    header_rows: usize,
}

impl<'t> Renderer<'t> {
    fn new(theme: &'t Theme, base: Style, memos: &'t mut Vec<highlight::Memo>) -> Self {
        Self {
            theme,
            base,
            out: Vec::new(),
            spans: Vec::new(),
            styles: vec![base],
            quote_depth: 0,
            lists: Vec::new(),
            item_prefix: None,
            heading: None,
            code: None,
            link: None,
            table: None,
            need_blank: false,
            memos,
            code_blocks: 0,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.base)
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn text(&mut self, t: &str) {
        if let Some(table) = &mut self.table {
            let style = *self.styles.last().unwrap_or(&self.base);
            table.cur_cell().push(Span::styled(t.to_owned(), style));
            return;
        }
        let style = self.style();
        self.spans.push(Span::styled(t.to_owned(), style));
    }

    /// The continuation prefix for the current nesting.
    fn cont_prefix(&self) -> Vec<Span<'static>> {
        let mut p = Vec::new();
        for _ in 0..self.quote_depth {
            p.push(Span::styled("▎ ", Style::new().fg(self.theme.quote)));
        }
        let indent: usize = self.lists.iter().map(|_| 2).sum::<usize>()
            + self
                .lists
                .last()
                .and_then(|l| l.next)
                .map_or(0, |n| n.to_string().len());
        if indent > 0 {
            p.push(Span::raw(" ".repeat(indent)));
        }
        p
    }

    fn first_prefix(&mut self) -> Vec<Span<'static>> {
        match self.item_prefix.take() {
            Some(bullet) => {
                let mut p = Vec::new();
                for _ in 0..self.quote_depth {
                    p.push(Span::styled("▎ ", Style::new().fg(self.theme.quote)));
                }
                p.extend(bullet);
                p
            }
            None => self.cont_prefix(),
        }
    }

    fn blank_if_needed(&mut self) {
        if self.need_blank && !self.out.is_empty() {
            let prefix = if self.quote_depth > 0 {
                self.cont_prefix()
            } else {
                Vec::new()
            };
            self.out
                .push(Logical::new(Vec::new()).with_prefix(prefix, Vec::new()));
        }
        self.need_blank = false;
    }

    /// Ends the current line of inline content.
    fn flush_line(&mut self) {
        if self.spans.is_empty() && self.item_prefix.is_none() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        let first = self.first_prefix();
        let cont = self.cont_prefix();
        self.out.push(Logical::new(spans).with_prefix(first, cont));
    }

    fn event(&mut self, ev: Event<'_>) {
        match ev {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if let Some((_, code)) = &mut self.code {
                    code.push_str(&t);
                } else {
                    self.text(&t);
                }
            }
            Event::Code(t) => {
                let style = self.style().fg(self.theme.code).bg(self.theme.code_bg);
                if let Some(table) = &mut self.table {
                    table.cur_cell().push(Span::styled(t.to_string(), style));
                } else {
                    self.spans.push(Span::styled(t.to_string(), style));
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush_line(),
            Event::Rule => {
                self.flush_line();
                self.blank_if_needed();
                let rule = "─".repeat(24);
                let prefix = self.cont_prefix();
                self.out.push(
                    Logical::raw(rule, Style::new().fg(self.theme.border))
                        .with_prefix(prefix.clone(), prefix)
                        .hard(),
                );
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let (mark, color) = if done {
                    ("☑ ", self.theme.success)
                } else {
                    ("☐ ", self.theme.dim)
                };
                self.spans.push(Span::styled(mark, Style::new().fg(color)));
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                let style = Style::new().fg(self.theme.dim);
                for (i, line) in t.lines().enumerate() {
                    if i > 0 {
                        self.flush_line();
                    }
                    self.spans.push(Span::styled(line.to_owned(), style));
                }
            }
            Event::FootnoteReference(t) => self.text(&format!("[^{t}]")),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph if self.item_prefix.is_none() => self.blank_if_needed(),
            Tag::Heading { level, .. } => {
                self.blank_if_needed();
                self.heading = Some(level);
                let t = self.theme;
                self.push_style(|s| match level {
                    HeadingLevel::H1 => s
                        .fg(t.heading)
                        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                    HeadingLevel::H2 => s.fg(t.heading).add_modifier(Modifier::BOLD),
                    _ => s.add_modifier(Modifier::BOLD),
                });
            }
            Tag::BlockQuote(_) => {
                self.flush_line();
                self.blank_if_needed();
                self.quote_depth += 1;
                let q = self.theme.quote;
                self.push_style(|s| s.fg(q).add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush_line();
                self.blank_if_needed();
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => l.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush_line();
                if self.lists.is_empty() {
                    self.blank_if_needed();
                }
                self.lists.push(ListState { next: start });
            }
            Tag::Item => self.start_item(),
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                let c = self.theme.link;
                self.push_style(|s| s.fg(c).add_modifier(Modifier::UNDERLINED));
            }
            Tag::Image { dest_url, .. } => {
                self.text("[image: ");
                self.link = Some(dest_url.to_string());
            }
            Tag::Table(align) => {
                self.flush_line();
                self.blank_if_needed();
                self.table = Some(OpenTable {
                    align,
                    rows: Vec::new(),
                    cur_row: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {}
            Tag::TableCell => {
                if let Some(t) = &mut self.table {
                    t.cur_row.push(Vec::new());
                }
            }
            _ => {}
        }
    }

    /// A list item: its bullet (or number) and indent prefix the first line.
    fn start_item(&mut self) {
        self.flush_line();
        let depth = self.lists.len().saturating_sub(1);
        let theme = self.theme;
        let bullet = match self.lists.last_mut() {
            Some(ListState { next: Some(n) }) => {
                let b = format!("{n}. ");
                *n += 1;
                b
            }
            _ => match depth % 3 {
                0 => "• ".into(),
                1 => "◦ ".into(),
                _ => "▪ ".into(),
            },
        };
        let indent = " ".repeat(depth * 2);
        self.item_prefix = Some(vec![
            Span::raw(indent),
            Span::styled(bullet, Style::new().fg(theme.accent)),
        ]);
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_line();
                self.need_blank = self.lists.is_empty() || self.quote_depth > 0;
            }
            TagEnd::Heading(_) => {
                self.flush_line();
                self.pop_style();
                self.heading = None;
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_line();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.pop_style();
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(&lang, &code);
                }
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush_line();
                self.lists.pop();
                self.need_blank = self.lists.is_empty();
            }
            TagEnd::Item => {
                self.flush_line();
                self.item_prefix = None;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some(url) = self.link.take() {
                    let shown: String = self
                        .spans
                        .iter()
                        .rev()
                        .take(1)
                        .map(|s| s.content.to_string())
                        .collect();
                    if !url.is_empty() && shown != url && !url.starts_with('#') {
                        let dim = Style::new().fg(self.theme.dim);
                        self.spans.push(Span::styled(format!(" ({url})"), dim));
                    }
                }
            }
            TagEnd::Image => {
                self.link = None;
                self.text("]");
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.cur_row);
                    t.rows.push(row);
                    t.header_rows = t.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.cur_row);
                    t.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.render_table(t);
                }
                self.need_blank = true;
            }
            _ => {}
        }
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        let theme = self.theme;
        let outer = self.cont_prefix();
        self.out.push(code_head(lang, outer.clone(), theme));
        let code = code.strip_suffix('\n').unwrap_or(code);
        if self.memos.len() <= self.code_blocks {
            self.memos
                .resize_with(self.code_blocks + 1, Default::default);
        }
        let memo = &mut self.memos[self.code_blocks];
        self.code_blocks += 1;
        let lines = highlight::highlight_with(code, lang, &theme.syntax_theme, memo);
        code_body(&mut self.out, code, lines, &outer, theme);
        self.out.push(code_foot(outer, theme));
    }

    fn render_table(&mut self, t: OpenTable) {
        let prefix = self.cont_prefix();
        let table = markdown_table::Table {
            align: t.align,
            rows: t.rows,
            header_rows: t.header_rows,
            border: Style::new().fg(self.theme.border),
        };
        self.out
            .push(Logical::table(table).with_prefix(prefix.clone(), prefix));
    }

    fn finish(mut self) -> Vec<Logical> {
        if let Some((lang, code)) = self.code.take() {
            self.code_block(&lang, &code);
        }
        if let Some(t) = self.table.take() {
            self.render_table(t);
        }
        self.flush_line();
        self.out
    }
}

/// A fenced code block's first row (`╭ lang`) after the enclosing blocks'
/// prefix `outer`. A long block is also laid out a range of lines at a time
/// (`ui::lazy_code`) from these three pieces.
pub(super) fn code_head(lang: &str, mut outer: Vec<Span<'static>>, theme: &Theme) -> Logical {
    let label = if lang.is_empty() { "code" } else { lang };
    outer.push(Span::styled(
        format!("╭ {label}"),
        Style::new().fg(theme.border),
    ));
    Logical::new(Vec::new()).with_prefix(outer, Vec::new())
}

/// The rows of `code`'s lines: as `highlighted` (one span list for each of
/// the first lines), the rest plain (all of them when the language is
/// unknown).
pub(super) fn code_body(
    out: &mut Vec<Logical>,
    code: &str,
    highlighted: Option<Vec<Vec<Span<'static>>>>,
    outer: &[Span<'static>],
    theme: &Theme,
) {
    let mut prefix = outer.to_vec();
    prefix.push(Span::styled("│ ", Style::new().fg(theme.border)));
    let style = Style::new().fg(theme.code);
    let mut highlighted = highlighted.unwrap_or_default().into_iter();
    for line in code.lines() {
        let spans = highlighted
            .next()
            .unwrap_or_else(|| vec![Span::styled(line.replace('\t', "    "), style)]);
        out.push(
            Logical::new(spans)
                .with_prefix(prefix.clone(), prefix.clone())
                .hard(),
        );
    }
}

/// A fenced code block's last row (`╰`).
pub(super) fn code_foot(mut outer: Vec<Span<'static>>, theme: &Theme) -> Logical {
    outer.push(Span::styled("╰", Style::new().fg(theme.border)));
    Logical::new(Vec::new()).with_prefix(outer, Vec::new())
}

impl OpenTable {
    fn cur_cell(&mut self) -> &mut Vec<Span<'static>> {
        if self.cur_row.is_empty() {
            self.cur_row.push(Vec::new());
        }
        let last = self.cur_row.len() - 1;
        &mut self.cur_row[last]
    }
}

/// Incremental rendering state of one streaming markdown item.
#[derive(Debug, Default)]
pub struct Incremental {
    pub(crate) stable_len: usize,
    pub stable: Vec<Logical>,
    pub tail: Vec<Logical>,
    /// Finished lines were rendered (some may have been taken since).
    had_stable: bool,
    /// Highlighting of the open tail's code blocks, resumed on each update.
    memos: Vec<highlight::Memo>,
}

impl Incremental {
    /// Picks up after `stable_len` bytes whose lines the caller laid out
    /// itself (`had_stable`: they rendered to something).
    pub fn resume(stable_len: usize, had_stable: bool) -> Self {
        Self {
            stable_len,
            had_stable,
            ..Self::default()
        }
    }

    /// Brings the rendering up to `src`, which extends what was seen before
    /// (`extends`) or replaces it.
    pub fn update(&mut self, src: &str, extends: bool, theme: &Theme, base: Style) {
        if !extends || src.len() < self.stable_len {
            *self = Self::default();
        }
        let cut = stable_boundary(src, self.stable_len);
        if cut > self.stable_len {
            let chunk = render_with(&src[self.stable_len..cut], theme, base, &mut self.memos);
            if self.had_stable && !chunk.is_empty() {
                self.stable.push(Logical::default());
            }
            self.had_stable |= !chunk.is_empty();
            self.stable.extend(chunk);
            self.stable_len = cut;
        }
        self.tail = render_with(&src[self.stable_len..], theme, base, &mut self.memos);
        if self.had_stable && !self.tail.is_empty() {
            self.tail.insert(0, Logical::default());
        }
    }

    /// Hands over the finished lines rendered since the last call: a
    /// caller that keeps them (wrapped) need not hold them twice.
    pub(crate) fn take_stable(&mut self) -> Vec<Logical> {
        std::mem::take(&mut self.stable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line as text, unwrapped (tables at their natural width).
    fn plain(lines: &[Logical]) -> Vec<String> {
        lines
            .iter()
            .flat_map(|l| super::super::wrap::wrap(l, u16::MAX))
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn a_code_block_s_long_line_and_those_after_it_are_plain() {
        let t = Theme::default();
        let long = "y".repeat(highlight::LONG_LINE + 1);
        let md = format!("```rust\nlet a = 1;\n{long}\nlet b = 2;\n```\n");
        let out = render(&md, &t, Style::new());
        let text = plain(&out);
        assert_eq!(text.len(), 5, "head, three lines, foot");
        assert_eq!(text[3], "│ let b = 2;");
        let plain_code = Style::new().fg(t.code);
        let colours = |l: &Logical| -> Vec<Style> { l.spans.iter().map(|s| s.style).collect() };
        assert!(
            colours(&out[1]).iter().any(|s| *s != plain_code),
            "highlighted"
        );
        assert_eq!(colours(&out[2]), [plain_code]);
        assert_eq!(colours(&out[3]), [plain_code]);
    }

    #[test]
    fn renders_blocks() {
        let t = Theme::default();
        let md = "# Title\n\nSome *em* and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n\n```rust\nfn x() {}\n```\n\n| a | b |\n|---|--:|\n| 1 | 22 |\n";
        let out = plain(&render(md, &t, Style::new()));
        assert_eq!(
            out,
            [
                "Title",
                "",
                "Some em and code.",
                "",
                "• one",
                "• two",
                "",
                "1. first",
                "2. second",
                "",
                "▎ quoted",
                "",
                "╭ rust",
                "│ fn x() {}",
                "╰",
                "",
                "┌───┬────┐",
                "│ a │  b │",
                "├───┼────┤",
                "│ 1 │ 22 │",
                "└───┴────┘",
            ]
        );
    }

    #[test]
    fn links_show_their_target() {
        let out = plain(&render(
            "see [docs](https://x.y)",
            &Theme::default(),
            Style::new(),
        ));
        assert_eq!(out, ["see docs (https://x.y)"]);
    }

    #[test]
    fn boundaries_skip_fences_and_continuations() {
        let src = "para one\n\n```\ncode\n\nmore\n```\n\npara two\n\n  indented\n\nlast";
        let cut = stable_boundary(src, 0);
        assert_eq!(&src[cut..], "last");
        let open = "a\n\n```\nx\n\ny\n";
        assert_eq!(&open[stable_boundary(open, 0)..], "```\nx\n\ny\n");
        let rests: Vec<&str> = boundaries(src, 0).map(|b| &src[b..b + 4]).collect();
        assert_eq!(rests, ["```\n", "para", "last"]);
    }

    #[test]
    fn incremental_matches_full_render() {
        let t = Theme::default();
        let src =
            "# H\n\nfirst paragraph\n\n- a\n- b\n\n```rust\nlet x = 1;\n```\n\nend of *text*\n";
        let mut inc = Incremental::default();
        for n in (1..=src.len()).filter(|n| src.is_char_boundary(*n)) {
            inc.update(&src[..n], true, &t, Style::new());
        }
        let mut all = inc.stable.clone();
        all.extend(inc.tail.clone());
        assert_eq!(plain(&all), plain(&render(src, &t, Style::new())));
        assert!(inc.stable_len > 0);
    }
}
