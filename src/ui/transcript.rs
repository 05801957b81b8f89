//! Lays out and draws a pane's transcript from the bottom up.
//!
//! Only entries that reach the viewport are laid out. Each entry has a
//! cache in the view state (`ui::view`), by entry index, holding its
//! wrapped lines for (revision, width, view) while it is on screen and its
//! height after. An agent message is laid out a markdown chunk at a time
//! (`ui::lazy_md`): a long answer only where the view is, a streaming one
//! re-rendering only its open tail, reusing the text buffer it shares with
//! the processor (`SharedText::same_buffer`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::cells::{self, CellCtx};
use super::lazy_md::{EAGER_BYTES, LinesOf, MdLayout, wrap_all};
use super::theme::Theme;
use super::wrap::Logical;
use crate::app::transcript::{Entry, EntryKind, Transcript};
use crate::protocol::event::Origin;
use crate::protocol::upsert::{UpsertKind, UpsertStatus};

/// What a layout depends on besides the entry itself.
pub struct Ctx<'a> {
    pub theme: &'a Theme,
    pub full_view: bool,
    pub expanded: bool,
    /// Spinner frame.
    pub spin: usize,
    pub expand_key: &'a str,
    /// Jump scrolling (0 or 1: off): while the last entry streams, its end
    /// is followed in steps of this many rows, the rows not yet reached
    /// left blank, so the view moves once per step instead of every row.
    pub jump: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    rev: u64,
    width: u16,
    expanded: bool,
    /// Spinner frame, only for entries that animate.
    spin: usize,
}

/// Wrapped lines of one entry: what was laid out and is still near the
/// view (see `trim`), with the heights of the rest.
#[derive(Debug, Default)]
pub struct Cache {
    key: Option<Key>,
    /// The entry's rows, or an agent message's rows above its markdown
    /// (the separator); empty once dropped.
    lines: Vec<Line<'static>>,
    /// How many rows `lines` has when laid out.
    head: usize,
    md: Option<Box<MdLayout>>,
}

impl Cache {
    /// The entry's rows (estimated where a long answer is not laid out).
    pub fn len(&self) -> usize {
        self.head + self.md.as_ref().map_or(0, |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether any of the entry's rows are held (an agent message always
    /// keeps its separator and open tail; see `chunks_laid_out`).
    pub(crate) fn holds_rows(&self) -> bool {
        !self.lines.is_empty() || self.md.as_ref().is_some_and(|m| m.laid_out_chunks() > 0)
    }

    /// Markdown pieces laid out, of all (for tests of the lazy layout).
    pub fn chunks_laid_out(&self) -> (usize, usize) {
        self.md
            .as_ref()
            .map_or((0, 0), |m| (m.laid_out_chunks(), m.chunk_count()))
    }

    /// Rows held for drawing (for tests of the lazy layout).
    pub fn rows_held(&self) -> usize {
        self.lines.len() + self.md.as_ref().map_or(0, |m| m.rows_held())
    }

    /// Whether part of it is drawn provisionally (a long code block's
    /// highlighting not reached yet): another frame will draw more.
    pub fn pending(&self) -> bool {
        self.md.as_ref().is_some_and(|m| m.pending())
    }

    /// Drops the rows kept for drawing; the height stays known.
    fn drop_rows(&mut self) {
        if self.md.is_none() {
            self.lines = Vec::new();
        } else if let Some(md) = &mut self.md {
            md.trim(0, 0, 0);
        }
    }

    /// Lays the entry out again if its rows were dropped.
    fn restore_rows(&mut self, e: &Entry, ctx: &Ctx<'_>) {
        if self.lines.len() != self.head {
            let width = self.key.map_or(0, |k| k.width);
            self.key = None;
            layout(e, self, width, ctx);
        }
    }

    /// Lays out what rows `s..s + h` (counted up from the bottom, the
    /// entry's last row at `below`) need; returns `s` as `MdLayout::settle`.
    fn settle(&mut self, e: &Entry, below: usize, s: usize, h: usize, ctx: &Ctx<'_>) -> usize {
        self.restore_rows(e, ctx);
        match &mut self.md {
            Some(md) => md.settle(below, s, h, ctx.theme),
            None => s,
        }
    }

    /// Lays out the entry's first `n` rows.
    fn settle_top(&mut self, e: &Entry, n: usize, ctx: &Ctx<'_>) {
        self.restore_rows(e, ctx);
        if let Some(md) = &mut self.md {
            md.settle_top(0, n.saturating_sub(self.head), ctx.theme);
        }
    }

    /// Calls `f` with each row whose place counted up from the bottom (the
    /// entry's last row at `below`) is in `lo..hi`.
    fn rows(&self, below: usize, lo: usize, hi: usize, f: &mut dyn FnMut(usize, &Line<'static>)) {
        let n = self.len();
        for (k, line) in self.lines.iter().enumerate() {
            let at = below + n - 1 - k;
            if at >= lo && at < hi {
                f(at, line);
            }
        }
        if let Some(md) = &self.md {
            md.rows(below, lo, hi, f);
        }
    }
}

/// Whether the entry shows at all in the current view.
pub fn visible(e: &Entry, full_view: bool) -> bool {
    match &e.kind {
        EntryKind::Item(u) => full_view || matches!(u.kind, UpsertKind::Message { .. }),
        _ => true,
    }
}

fn animates(e: &Entry) -> bool {
    match &e.kind {
        EntryKind::Item(u) => !u.is_closed() && !matches!(u.kind, UpsertKind::Message { .. }),
        _ => false,
    }
}

/// A tool call's lines: a call of hive's operations as the delegation it
/// is (with how long it waited), any other as its cell.
fn tool_call(
    u: &crate::protocol::upsert::Upsert,
    took: Option<std::time::Duration>,
    cell: &CellCtx<'_>,
) -> Vec<Logical> {
    super::delegation::lines(u, took, cell).unwrap_or_else(|| cells::tool_call(u, cell))
}

/// Lays out `e` for `width` (cached), returning its row count. Every entry
/// starts with a blank separator row.
pub fn layout(e: &Entry, cache: &mut Cache, width: u16, ctx: &Ctx<'_>) -> usize {
    let key = Key {
        rev: e.rev,
        width,
        expanded: ctx.expanded,
        spin: if animates(e) { ctx.spin } else { 0 },
    };
    if cache.key == Some(key) {
        return cache.len();
    }
    let t = ctx.theme;
    let cell = CellCtx {
        theme: t,
        expanded: ctx.expanded,
        spin: ctx.spin,
        expand_key: ctx.expand_key,
    };
    let mut logical: Vec<Logical> = vec![Logical::default()];
    let mut md_text = None;
    // A long plain text is laid out a range of lines at a time.
    let mut lines_of: Option<(_, LinesOf)> = None;
    match &e.kind {
        EntryKind::Item(u) => match &u.kind {
            UpsertKind::Message { content, origin } => match origin {
                Origin::User if content.len() > EAGER_BYTES => {
                    lines_of = Some((content.clone(), cells::user_lines));
                }
                Origin::User => content.with_str(|s| logical.extend(cells::user_message(s, t))),
                Origin::System => content.with_str(|s| logical.extend(cells::system_message(s, t))),
                Origin::Agent => md_text = Some((content.clone(), u.status == UpsertStatus::Error)),
            },
            UpsertKind::Thinking { content, .. }
                if ctx.expanded && u.is_closed() && content.len() > EAGER_BYTES =>
            {
                content.with_str(|s| logical.push(cells::thinking_head(u, s, &cell)));
                lines_of = Some((content.clone(), cells::thought_lines));
            }
            UpsertKind::Thinking { content, .. } => {
                content.with_str(|s| logical.extend(cells::thinking(u, s, &cell)))
            }
            // A call of hive's operations reads as the delegation it is.
            UpsertKind::ToolCall { .. } => logical.extend(tool_call(u, e.took, &cell)),
        },
        EntryKind::Footer {
            model,
            duration,
            usage,
            cancelled,
        } => logical.extend(cells::footer(
            model,
            *duration,
            usage.as_ref(),
            *cancelled,
            t,
        )),
        EntryKind::TurnError { code, message } => {
            logical.extend(cells::turn_error(code, message, t))
        }
        EntryKind::Notice { level, text } => logical.extend(cells::notice(*level, text, t)),
    }
    let lines = wrap_all(&logical, width);
    cache.md = match (&e.kind, md_text) {
        (EntryKind::Item(u), Some((text, failed))) => Some(MdLayout::update(
            cache.md.take(),
            text,
            u.is_closed(),
            failed,
            u.error_message.as_deref(),
            width,
            t,
        )),
        _ => lines_of.map(|(text, render)| MdLayout::lines(text, render, width)),
    };
    cache.head = lines.len();
    cache.lines = lines;
    cache.key = Some(key);
    cache.len()
}

/// Draws the transcript into `area`, `scroll` rows up from the bottom,
/// with `extra` rows (status lines) after the last entry. Returns the
/// clamped scroll and the largest scroll possible (`usize::MAX` when the
/// top was not reached, since only what is needed is laid out).
///
/// Rows are placed counted up from the bottom (the last extra line is 0),
/// so what is below the view fixes where it is. Only the entries and
/// markdown pieces the view reaches are laid out; the rest keep their
/// heights (estimated for long answers not laid out yet) and drop their
/// rows once the view has left them.
pub fn draw(
    entries: &[Entry],
    view: &mut PaneView,
    scroll: usize,
    extra: &[Line<'static>],
    ctx: &Ctx<'_>,
    area: Rect,
    buf: &mut Buffer,
) -> (usize, usize) {
    let h = usize::from(area.height);
    if h == 0 || area.width == 0 {
        return (0, usize::MAX);
    }
    let (caches, resident) = view.parts();
    let slack = jump_slack(entries, caches, area.width, ctx);
    let tail = extra.len() + slack;
    let mut pass = Pass::run(entries, caches, scroll, h, tail, ctx, area.width);
    if pass.reached_top && pass.s > 0 && pass.s >= max_scroll(pass.total, h, extra.len()) {
        // At the top: lay out its first rows, then count from the bottom.
        let top = (0..entries.len()).find(|&i| visible(&entries[i], ctx.full_view));
        if let Some(top) = top {
            settle_down(entries, caches, top, h + 1, ctx, area.width);
        }
        let total = tail
            + entries
                .iter()
                .zip(caches.iter_mut())
                .filter(|(e, _)| visible(e, ctx.full_view))
                .map(|(e, c)| layout(e, c, area.width, ctx))
                .sum::<usize>();
        let max = max_scroll(total, h, extra.len());
        pass = Pass::run(entries, caches, max, h, tail, ctx, area.width);
    }
    let max_scroll = if pass.reached_top {
        max_scroll(pass.total, h, extra.len())
    } else {
        usize::MAX
    };
    let s = pass.s.min(max_scroll);
    // The top entry's separator row is not needed at the very top.
    let rows_total = if pass.reached_top {
        pass.total - usize::from(pass.total > extra.len())
    } else {
        usize::MAX
    };
    let top = rows_total.min(s + h);
    let mut put = |at: usize, line: &Line<'static>| {
        if at >= s && at < top {
            let y = area.y + (top - 1 - at) as u16;
            if line.style.bg.is_some() {
                buf.set_style(Rect::new(area.x, y, area.width, 1), line.style);
            }
            super::put::line(buf, area.x, y, line, area.width);
        }
    };
    for &(i, below) in &pass.shown {
        caches[i].rows(below, s, top, &mut put);
    }
    for (k, line) in extra.iter().enumerate() {
        put(extra.len() - 1 - k, line);
    }
    trim(caches, resident, &pass, s, h);
    let pending = pass.shown.iter().any(|&(i, _)| caches[i].pending());
    view.set_pending(pending);
    (s, max_scroll)
}

/// One walk up from the bottom to the top of the view: lays out what the
/// view reaches and notes where each entry it shows sits.
struct Pass {
    /// The scroll, moved as `MdLayout::settle` says.
    s: usize,
    /// Rows from the bottom to the top of the highest entry walked.
    total: usize,
    reached_top: bool,
    /// Entries reaching the view: (index, rows below them).
    shown: Vec<(usize, usize)>,
}

impl Pass {
    fn run(
        entries: &[Entry],
        caches: &mut [Cache],
        mut s: usize,
        h: usize,
        tail: usize,
        ctx: &Ctx<'_>,
        width: u16,
    ) -> Self {
        let mut below = tail;
        let mut shown = Vec::new();
        let mut i = entries.len();
        while i > 0 && below < s.saturating_add(h) {
            i -= 1;
            if !visible(&entries[i], ctx.full_view) {
                continue;
            }
            let cache = &mut caches[i];
            let mut n = layout(&entries[i], cache, width, ctx);
            if below + n > s {
                s = cache.settle(&entries[i], below, s, h, ctx);
                n = cache.len();
                shown.push((i, below));
            } else {
                // Below the view: only its height was needed.
                cache.drop_rows();
            }
            below += n;
        }
        Self {
            s,
            total: below,
            reached_top: i == 0,
            shown,
        }
    }
}

/// The largest scroll for `total` rows (the top entry's separator row is
/// not shown when something is above the `extra` lines).
fn max_scroll(total: usize, h: usize, extra: usize) -> usize {
    let skip = usize::from(total > extra);
    (total - skip).saturating_sub(h)
}

/// Lays out `n` rows from the top of entry `from` down (the view's top
/// rows at the top of the transcript or at a search hit).
pub(crate) fn settle_down(
    entries: &[Entry],
    caches: &mut [Cache],
    from: usize,
    n: usize,
    ctx: &Ctx<'_>,
    width: u16,
) {
    let mut top = 0;
    for (e, cache) in entries.iter().zip(caches.iter_mut()).skip(from) {
        if top >= n {
            break;
        }
        if visible(e, ctx.full_view) {
            layout(e, cache, width, ctx);
            cache.settle_top(e, n - top, ctx);
            top += cache.len();
        }
    }
}

/// Keeps rows only for the entries shown, and of a long answer only the
/// pieces within a screen of the view.
fn trim(caches: &mut [Cache], resident: &mut Vec<usize>, pass: &Pass, s: usize, h: usize) {
    let mut kept = Vec::with_capacity(pass.shown.len());
    for &(i, below) in &pass.shown {
        if let Some(md) = &mut caches[i].md {
            md.trim(below, s.saturating_sub(h), s + 2 * h);
        }
        kept.push(i);
    }
    for &i in resident.iter() {
        if !kept.contains(&i)
            && let Some(c) = caches.get_mut(i)
        {
            c.drop_rows();
        }
    }
    *resident = kept;
}

/// Blank rows after a streaming last entry so that its row count plus
/// them is a multiple of `ctx.jump` (see `Ctx::jump`).
fn jump_slack(entries: &[Entry], caches: &mut [Cache], width: u16, ctx: &Ctx<'_>) -> usize {
    if ctx.jump <= 1 {
        return 0;
    }
    let (Some(e), Some(cache)) = (entries.last(), caches.last_mut()) else {
        return 0;
    };
    let streaming = matches!(&e.kind, EntryKind::Item(u) if !u.is_closed());
    if !streaming || !visible(e, ctx.full_view) {
        return 0;
    }
    let rows = layout(e, cache, width, ctx);
    (ctx.jump - rows % ctx.jump) % ctx.jump
}

/// The "↓ N more" marker drawn over the last row while scrolled up.
pub(crate) fn scroll_marker(scroll: usize, t: &Theme) -> Line<'static> {
    Line::from(vec![Span::styled(
        format!(" ↓ {scroll} lines below · End to follow "),
        Style::new().fg(t.accent).add_modifier(Modifier::REVERSED),
    )])
}

/// One pane's layout caches, by entry index (each keyed by the entry's rev).
#[derive(Debug, Default)]
pub struct PaneView {
    /// The transcript epoch the caches were built for.
    epoch: u64,
    entries: Vec<Cache>,
    /// Entries whose caches hold rows (the last frame's view).
    resident: Vec<usize>,
    /// The last frame drew something provisionally (`Cache::pending`).
    pending: bool,
}

impl PaneView {
    /// The last frame drew something provisionally.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// The caches for `t`'s entries: dropped when `t` was invalidated,
    /// one per entry.
    pub(crate) fn caches(&mut self, t: &Transcript) -> &mut [Cache] {
        if self.epoch != t.epoch {
            self.entries.clear();
            self.resident.clear();
            self.epoch = t.epoch;
        }
        self.entries.resize_with(t.entries.len(), Cache::default);
        &mut self.entries
    }

    /// The caches (sized by `caches`) and the entries holding rows.
    pub(super) fn parts(&mut self) -> (&mut [Cache], &mut Vec<usize>) {
        (&mut self.entries, &mut self.resident)
    }

    pub(super) fn set_pending(&mut self, pending: bool) {
        self.pending = pending;
    }

    /// Entries whose caches hold rows: what the last frame showed (a long
    /// item far from the view keeps only its height).
    pub fn held(&self) -> impl Iterator<Item = (usize, &Cache)> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, c)| c.holds_rows())
    }
}
