//! Lazy layout of an agent's markdown answer, which can be megabytes long.
//!
//! The text is cut into chunks at markdown block boundaries
//! (`markdown::boundaries`): each renders on its own, so only the chunks that
//! reach the viewport are rendered, highlighted and wrapped. A chunk not laid
//! out has an estimated height (its source lines plus its long lines'
//! wraps); laying it out makes the height exact. Rows of chunks far from the
//! view are dropped again (`trim`), so what is held stays about one screen.
//!
//! A streaming answer keeps the incremental path (`markdown::Incremental`):
//! each finished piece becomes a chunk laid out at once, and only the open
//! tail is rendered again on each update. A long stretch finished since the
//! last update (a pane drawn rarely, an agent faster than the frame rate) is
//! cut into chunks like a restored text instead, so the rows a streaming
//! answer holds stay near the view however fast it grows.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::cells;
use super::lazy_code::{self, CodeRange};
use super::markdown::{self, Incremental};
use super::theme::Theme;
use super::wrap::{Logical, wrap};
use crate::protocol::text::SharedText;

/// A restored text is cut at the first boundary at least this far from the
/// previous cut: pieces big enough that an index of them stays small.
const CHUNK_BYTES: usize = 4096;

/// Texts up to this long are laid out whole at once (exact heights, as
/// before this module existed); longer ones only where they are drawn.
pub(super) const EAGER_BYTES: usize = 32 * 1024;

/// A stretch of newly finished text at least this long is indexed lazily
/// rather than rendered whole by the incremental renderer.
const LAZY_FRESH_BYTES: usize = 2 * CHUNK_BYTES;

/// One piece of the text between two block boundaries.
#[derive(Debug)]
struct Chunk {
    start: usize,
    end: usize,
    /// Source lines without the trailing blank ones (for the estimate).
    lines: u32,
    height: u32,
    /// `height` comes from a layout at the current width.
    exact: bool,
    /// Renders to something (known once laid out; guessed before).
    filled: bool,
    /// Empty when not laid out (or dropped since).
    rows: Vec<Line<'static>>,
    /// A range of a long code block's lines (`ui::lazy_code`).
    code: Option<Box<CodeRange>>,
}

impl Chunk {
    fn new(src: &str, start: usize, end: usize) -> Self {
        let piece = &src[start..end];
        let newlines = piece.bytes().filter(|b| *b == b'\n').count();
        let trailing = piece.bytes().rev().take_while(|b| *b == b'\n').count();
        Self {
            start,
            end,
            lines: (newlines + 1).saturating_sub(trailing.max(1)).max(1) as u32,
            height: 0,
            exact: false,
            filled: piece.contains(|c: char| !c.is_whitespace()),
            rows: Vec::new(),
            code: None,
        }
    }

    /// Whether laying it out starts with a blank row when something is
    /// drawn above it (not a code block's ranges after its first).
    fn leads(&self) -> bool {
        self.code.as_ref().is_none_or(|r| r.head)
    }

    fn laid_out(&self) -> bool {
        self.exact && self.rows.len() == self.height as usize
    }
}

/// The layout of one agent message: chunks, then the open tail (and the
/// error line), which is always laid out.
#[derive(Debug, Default)]
pub(super) struct MdLayout {
    text: SharedText,
    inc: Incremental,
    width: u16,
    failed: bool,
    chunks: Vec<Chunk>,
    /// The first chunk that renders to something: it carries the gutter.
    first_filled: Option<usize>,
    /// Sum of the chunks' heights.
    height: usize,
    tail_rows: Vec<Line<'static>>,
    /// Chunks holding rows.
    resident: Vec<usize>,
    /// Indexed to the text's end (a complete message), not to a boundary:
    /// a text that grows after that is indexed again.
    sealed: bool,
    /// Not markdown: a long user message or thought, cut at line ends and
    /// laid out by this (`first`: the text's first line is in the piece).
    lines: Option<LinesOf>,
}

/// Renders a piece of a long plain text's lines (`cells::user_lines`).
pub(super) type LinesOf = fn(&str, bool, &Theme) -> Vec<Logical>;

impl MdLayout {
    /// Brings the layout up to `text` at `width`: a text that extends the
    /// last one keeps its chunks and renders only what is new.
    pub(super) fn update(
        md: Option<Box<Self>>,
        text: SharedText,
        closed: bool,
        failed: bool,
        error: Option<&str>,
        width: u16,
        t: &Theme,
    ) -> Box<Self> {
        let mut md = md.unwrap_or_default();
        let extends = text.same_buffer(&md.text)
            && text.len() >= md.text.len()
            && !(md.sealed && text.len() > md.text.len());
        if !extends {
            *md = Self::default();
        }
        md.failed = failed;
        md.text = text.clone();
        text.with_str(|src| {
            if md.width != width {
                md.width = width;
                md.reestimate(src);
            }
            if md.chunks.is_empty() && md.inc.stable_len == 0 {
                md.index(src, closed);
            } else if md.lines.is_none() && src.len() - md.inc.stable_len >= LAZY_FRESH_BYTES {
                // Only then can the finished stretch be that long: the usual
                // small update leaves finding the boundary to `inc.update`
                // alone, not a second scan of the same tail.
                let from = md.inc.stable_len;
                let to = markdown::stable_boundary(src, from);
                if to - from >= LAZY_FRESH_BYTES {
                    md.index_more(src, from, to);
                }
            }
            let before = md.inc.stable_len;
            md.inc.update(src, true, t, base(t));
            let fresh = md.inc.take_stable();
            if md.inc.stable_len > before {
                md.push_laid_out(src, before, fresh, t);
            }
            md.tail(error, t);
            if src.len() <= EAGER_BYTES {
                // Exact heights (rows dropped since are laid out when drawn).
                let mut all = usize::MAX;
                for i in 0..md.chunks.len() {
                    if !md.chunks[i].exact {
                        md.lay_out(i, src, t, &mut all);
                    }
                }
            }
        });
        md
    }

    /// The layout of a long plain text (a user message, a thought): cut
    /// at line ends into pieces, each rendered by `render` when the view
    /// reaches it, as `update` does for markdown.
    pub(super) fn lines(text: SharedText, render: LinesOf, width: u16) -> Box<Self> {
        let mut md = Box::new(Self {
            width,
            lines: Some(render),
            sealed: true,
            ..Self::default()
        });
        text.with_str(|src| {
            let mut start = 0;
            while src.len() - start > CHUNK_BYTES {
                let Some(nl) = src[start + CHUNK_BYTES..].find('\n') else {
                    break;
                };
                // The newline between two pieces belongs to neither.
                let cut = start + CHUNK_BYTES + nl;
                md.chunks.push(Chunk::new(src, start, cut));
                start = cut + 1;
            }
            md.chunks.push(Chunk::new(src, start, src.len()));
            for c in &mut md.chunks {
                c.filled = true;
                c.lines = 1 + src[c.start..c.end].bytes().filter(|b| *b == b'\n').count() as u32;
            }
            md.first_filled = Some(0);
            md.reestimate(src);
        });
        md.text = text;
        md
    }

    /// Rows in all (estimated where not laid out).
    pub(super) fn len(&self) -> usize {
        self.height + self.tail_rows.len()
    }

    /// Cuts `src` into chunks up to its last boundary (to its end when
    /// the message is complete); the incremental renderer takes over from
    /// there. A long code block becomes ranges of its lines.
    fn index(&mut self, src: &str, closed: bool) {
        let cuts = markdown::boundaries(src, 0).chain(closed.then_some(src.len()));
        let prev = self.cut(src, 0, cuts);
        self.first_filled = self.chunks.iter().position(|c| c.filled);
        self.sealed = closed;
        self.inc = Incremental::resume(prev, self.first_filled.is_some());
        self.reestimate(src);
    }

    /// Cuts the finished stretch `from..to` of a streaming text into chunks
    /// with estimated heights (nothing rendered); the incremental renderer
    /// goes on from `to`.
    fn index_more(&mut self, src: &str, from: usize, to: usize) {
        let first = self.chunks.len();
        let end = self.cut(
            src,
            from,
            markdown::boundaries(src, from).take_while(|&c| c <= to),
        );
        if self.first_filled.is_none() {
            self.first_filled = (first..self.chunks.len()).find(|&i| self.chunks[i].filled);
        }
        for i in first..self.chunks.len() {
            let h = self.estimate(src, i);
            self.chunks[i].height = h;
            self.height += h as usize;
        }
        self.inc = Incremental::resume(end, self.first_filled.is_some());
    }

    /// Appends the chunks of `src` from `from` to the last of `cuts` (block
    /// boundaries), a long code block as ranges of its lines; returns where
    /// the last chunk ends.
    fn cut(&mut self, src: &str, from: usize, cuts: impl Iterator<Item = usize>) -> usize {
        let mut start = from;
        let mut prev = from;
        for cut in cuts {
            if cut <= prev {
                continue;
            }
            let seg = (prev, cut);
            prev = cut;
            if let Some((info, body, close)) = (cut - seg.0 > lazy_code::SPLIT_BYTES)
                .then(|| lazy_code::fence(&src[seg.0..cut]))
                .flatten()
            {
                if seg.0 > start {
                    self.chunks.push(Chunk::new(src, start, seg.0));
                }
                let body = seg.0 + body.start..seg.0 + body.end;
                for (span, range) in lazy_code::ranges(src, info, seg.0, body, seg.0 + close) {
                    let mut c = Chunk::new(src, span.start, span.end);
                    c.filled = true;
                    c.code = Some(Box::new(range));
                    self.chunks.push(c);
                }
                start = seg.0 + close;
                continue;
            }
            if cut - start >= CHUNK_BYTES {
                self.chunks.push(Chunk::new(src, start, cut));
                start = cut;
            }
        }
        if prev > start {
            self.chunks.push(Chunk::new(src, start, prev));
        }
        prev
    }

    /// Chunk `i`'s estimated height at the current width.
    fn estimate(&self, src: &str, i: usize) -> u32 {
        let avail = usize::from(self.width.saturating_sub(2)).max(1);
        let c = &self.chunks[i];
        let lead = c.filled
            && c.leads()
            && self.lines.is_none()
            && self.first_filled.is_some_and(|f| f < i);
        u32::from(lead)
            + match &c.code {
                Some(r) => r.estimate(src, self.width),
                None => c.lines + ((c.end - c.start) / avail) as u32,
            }
    }

    /// Every chunk back to its estimate at the current width.
    fn reestimate(&mut self, src: &str) {
        self.height = 0;
        for i in 0..self.chunks.len() {
            let h = self.estimate(src, i);
            let c = &mut self.chunks[i];
            c.height = h;
            c.exact = false;
            c.rows = Vec::new();
            self.height += h as usize;
        }
        self.resident.clear();
    }

    /// A piece the incremental renderer finished: laid out now.
    fn push_laid_out(&mut self, src: &str, start: usize, mut fresh: Vec<Logical>, t: &Theme) {
        let i = self.chunks.len();
        let mut c = Chunk::new(src, start, self.inc.stable_len);
        c.filled = !fresh.is_empty();
        if c.filled && self.first_filled.is_none() {
            self.first_filled = Some(i);
        }
        indent(&mut fresh, t, self.failed, self.first_filled == Some(i));
        c.rows = wrap_all(&fresh, self.width);
        c.height = c.rows.len() as u32;
        c.exact = true;
        self.height += c.rows.len();
        self.chunks.push(c);
        self.resident.push(i);
    }

    /// Renders, highlights and wraps chunk `i` (its height becomes exact).
    /// A long code block's range parses at most `budget` bytes above it
    /// (`lazy_code::reach`).
    fn lay_out(&mut self, i: usize, src: &str, t: &Theme, budget: &mut usize) {
        let first = self.first_filled;
        let (width, failed) = (self.width, self.failed);
        if self.chunks.get(i).is_none_or(Chunk::laid_out) {
            return;
        }
        let c = &self.chunks[i];
        let mut lines = if let Some(render) = self.lines {
            render(&src[c.start..c.end], i == 0, t)
        } else if c.code.is_some() {
            let mut ranges: Vec<_> = self
                .chunks
                .iter_mut()
                .map(|c| c.code.as_deref_mut())
                .collect();
            lazy_code::render(&mut ranges, i, src, t, budget)
        } else {
            markdown::render(&src[c.start..c.end], t, base(t))
        };
        let c = &mut self.chunks[i];
        if self.lines.is_none() {
            c.filled = !lines.is_empty();
            if c.filled && c.leads() && first.is_some_and(|f| f < i) {
                lines.insert(0, Logical::default());
            }
            indent(&mut lines, t, failed, first == Some(i));
        }
        c.rows = wrap_all(&lines, width);
        self.height = self.height - c.height as usize + c.rows.len();
        c.height = c.rows.len() as u32;
        c.exact = true;
        self.resident.push(i);
    }

    /// The open tail's rows and the error line under it.
    fn tail(&mut self, error: Option<&str>, t: &Theme) {
        // Taken, not copied: the renderer makes a new tail on each update.
        let mut tail = std::mem::take(&mut self.inc.tail);
        indent(&mut tail, t, self.failed, self.first_filled.is_none());
        if let Some(msg) = error {
            // One row per line: a newline inside a row would vanish and glue
            // "exited with status 1" to the stderr line after it.
            for (i, line) in msg.lines().enumerate() {
                let mark = if i == 0 { "✗ " } else { "  " };
                tail.push(
                    Logical::raw(format!("{mark}{line}"), Style::new().fg(t.error))
                        .with_prefix(vec![Span::raw("  ")], vec![Span::raw("  ")]),
                );
            }
        }
        self.tail_rows = wrap_all(&tail, self.width);
    }

    /// Lays out the chunks that rows `s..s + h` reach, counted up from the
    /// bottom with this text's last row at `base`. Returns `s`, moved by the
    /// change of the chunk holding row `s` when its height was estimated,
    /// so that the rows drawn above it stay where they were.
    pub(super) fn settle(&mut self, base: usize, mut s: usize, h: usize, t: &Theme) -> usize {
        let text = self.text.clone();
        text.with_str(|src| {
            let mut budget = lazy_code::SKIP_BUDGET;
            self.highlight_plain(src, t, &mut budget);
            let mut b = base + self.tail_rows.len();
            let mut i = self.chunks.len();
            while i > 0 && b < s.saturating_add(h) {
                i -= 1;
                let old = self.chunks[i].height as usize;
                if b + old > s && !self.chunks[i].laid_out() {
                    let estimated = !self.chunks[i].exact;
                    self.lay_out(i, src, t, &mut budget);
                    let new = self.chunks[i].height as usize;
                    if estimated && b <= s && s < b + old {
                        // Keep the bottom row's place counted from the chunk's top.
                        let from_top = (b + old - 1 - s).min(new.saturating_sub(1));
                        s = b + new.saturating_sub(1 + from_top);
                    }
                }
                b += self.chunks[i].height as usize;
            }
        });
        s
    }

    /// Lays out the chunks holding rows `from..from + n` counted from this
    /// text's first row (the heights above settle as they are laid out).
    pub(super) fn settle_top(&mut self, from: usize, n: usize, t: &Theme) {
        let text = self.text.clone();
        text.with_str(|src| {
            let mut top = 0;
            let mut budget = lazy_code::SKIP_BUDGET;
            for i in 0..self.chunks.len() {
                if top >= from + n {
                    break;
                }
                if top + self.chunks[i].height as usize > from {
                    self.lay_out(i, src, t, &mut budget);
                }
                top += self.chunks[i].height as usize;
            }
        });
    }

    /// Calls `f` with each laid-out row whose place counted up from the
    /// bottom (this text's last row at `base`) is in `lo..hi`.
    pub(super) fn rows(
        &self,
        base: usize,
        lo: usize,
        hi: usize,
        f: &mut dyn FnMut(usize, &Line<'static>),
    ) {
        let mut b = base;
        for (k, line) in self.tail_rows.iter().rev().enumerate() {
            let at = b + k;
            if at >= lo && at < hi {
                f(at, line);
            }
        }
        b += self.tail_rows.len();
        for c in self.chunks.iter().rev() {
            if b >= hi {
                break;
            }
            let n = c.height as usize;
            if b + n > lo {
                for (k, line) in c.rows.iter().rev().enumerate() {
                    let at = b + k;
                    if at >= lo && at < hi {
                        f(at, line);
                    }
                }
            }
            b += n;
        }
    }

    /// Drops the rows of chunks wholly outside `lo..hi` (counted up from
    /// the bottom, this text's last row at `base`); heights stay.
    pub(super) fn trim(&mut self, base: usize, lo: usize, hi: usize) {
        let Some(&min) = self.resident.iter().min() else {
            return;
        };
        let mut b = base + self.tail_rows.len();
        for c in self.chunks[min..].iter_mut().rev() {
            let n = c.height as usize;
            if !c.rows.is_empty() && (b >= hi || b + n <= lo) {
                c.rows = Vec::new();
            }
            b += n;
        }
        let chunks = &self.chunks;
        self.resident.retain(|&i| !chunks[i].rows.is_empty());
    }

    /// Code ranges near the view that were drawn plain: the parser moves
    /// on towards them (within `budget`), and those it reaches drop their
    /// rows to be laid out again, highlighted (same text, same height).
    fn highlight_plain(&mut self, src: &str, t: &Theme, budget: &mut usize) {
        let plain: Vec<usize> = self
            .resident
            .iter()
            .copied()
            .filter(|&i| self.is_plain(i))
            .collect();
        for i in plain {
            let mut ranges: Vec<_> = self
                .chunks
                .iter_mut()
                .map(|c| c.code.as_deref_mut())
                .collect();
            if lazy_code::reach(&mut ranges, i, src, t, budget) {
                self.chunks[i].rows = Vec::new();
                self.resident.retain(|&r| r != i);
            }
        }
    }

    fn is_plain(&self, i: usize) -> bool {
        self.chunks[i].code.as_ref().is_some_and(|r| r.plain) && !self.chunks[i].rows.is_empty()
    }

    /// Whether code near the view is drawn plain for now: another frame
    /// will highlight more of it.
    pub(super) fn pending(&self) -> bool {
        self.resident.iter().any(|&i| self.is_plain(i))
    }

    /// Chunks holding rows (for tests and the memory figures).
    pub(super) fn laid_out_chunks(&self) -> usize {
        self.chunks.iter().filter(|c| !c.rows.is_empty()).count()
    }

    pub(super) fn rows_held(&self) -> usize {
        self.tail_rows.len() + self.chunks.iter().map(|c| c.rows.len()).sum::<usize>()
    }

    pub(super) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }
}

fn base(t: &Theme) -> Style {
    Style::new().fg(t.agent)
}

/// The answer's gutter: the first line of the first piece gets the dot,
/// every other line two spaces.
fn indent(lines: &mut [Logical], t: &Theme, failed: bool, first: bool) {
    if first {
        let one = lines.len().min(1);
        cells::agent_gutter(&mut lines[..one], t, failed);
    }
    for l in lines.iter_mut().skip(usize::from(first)) {
        l.prefix.insert(0, Span::raw("  "));
        l.cont.insert(0, Span::raw("  "));
    }
}

pub(super) fn wrap_all(lines: &[Logical], width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for l in lines {
        out.extend(wrap(l, width));
    }
    out
}
