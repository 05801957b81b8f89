//! Lays out and draws a pane's transcript from the bottom up.
//!
//! Only entries that reach the viewport are laid out. Each entry has a
//! cache in the view state (`ui::view`), by entry index, holding its
//! wrapped lines for (revision, width, view); a streaming agent message keeps
//! its finished markdown blocks and re-renders only the open tail, reusing
//! the text buffer it shares with the processor (`SharedText::same_buffer`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::cells::{self, CellCtx};
use super::markdown::Incremental;
use super::theme::Theme;
use super::wrap::{Logical, wrap};
use crate::app::transcript::{Entry, EntryKind};
use crate::event::Origin;
use crate::text::SharedText;
use crate::upsert::{Upsert, UpsertKind, UpsertStatus};

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

/// Wrapped lines of one entry.
#[derive(Debug, Default)]
pub struct Cache {
    key: Option<Key>,
    lines: Vec<Line<'static>>,
    md: Option<Box<MdCache>>,
}

#[derive(Debug)]
struct MdCache {
    text: SharedText,
    inc: Incremental,
    width: u16,
    /// Wrapped rows of the finished lines (taken from `inc`).
    stable_rows: Vec<Line<'static>>,
    tail_rows: Vec<Line<'static>>,
}

impl Cache {
    pub fn len(&self) -> usize {
        self.lines.len()
            + self
                .md
                .as_ref()
                .map_or(0, |m| m.stable_rows.len() + m.tail_rows.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` of the entry.
    pub fn row(&self, i: usize) -> Option<&Line<'static>> {
        if i < self.lines.len() {
            return self.lines.get(i);
        }
        let m = self.md.as_ref()?;
        let i = i - self.lines.len();
        if i < m.stable_rows.len() {
            m.stable_rows.get(i)
        } else {
            m.tail_rows.get(i - m.stable_rows.len())
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

fn wrap_all(lines: &[Logical], width: u16, out: &mut Vec<Line<'static>>) {
    for l in lines {
        out.extend(wrap(l, width));
    }
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
    match &e.kind {
        EntryKind::Item(u) => match &u.kind {
            UpsertKind::Message { content, origin } => match origin {
                Origin::User => content.with_str(|s| logical.extend(cells::user_message(s, t))),
                Origin::System => content.with_str(|s| logical.extend(cells::system_message(s, t))),
                Origin::Agent => md_text = Some((content.clone(), u.status == UpsertStatus::Error)),
            },
            UpsertKind::Thinking { content, .. } => {
                content.with_str(|s| logical.extend(cells::thinking(u, s, &cell)))
            }
            UpsertKind::ToolCall { .. } => logical.extend(cells::tool_call(u, &cell)),
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
    let mut lines = Vec::new();
    wrap_all(&logical, width, &mut lines);
    if let (EntryKind::Item(u), Some((text, failed))) = (&e.kind, md_text) {
        let md = cache.md.take();
        cache.md = Some(layout_markdown(md, u, text, failed, width, t));
    } else {
        cache.md = None;
    }
    cache.lines = lines;
    cache.key = Some(key);
    cache.len()
}

/// Lays out a streaming agent message: keeps the wrapped rows of finished
/// markdown blocks and redoes only the open tail (and the error line).
fn layout_markdown(
    md: Option<Box<MdCache>>,
    u: &Upsert,
    text: SharedText,
    failed: bool,
    width: u16,
    t: &Theme,
) -> Box<MdCache> {
    let mut md = md.unwrap_or_else(|| {
        Box::new(MdCache {
            text: SharedText::default(),
            inc: Incremental::default(),
            width,
            stable_rows: Vec::new(),
            tail_rows: Vec::new(),
        })
    });
    let mut extends = text.same_buffer(&md.text) && text.len() >= md.text.len();
    if md.width != width {
        // The finished lines are kept only wrapped: parse again.
        extends = false;
        md.width = width;
    }
    let before = md.inc.stable_len;
    text.with_str(|s| md.inc.update(s, extends, t, Style::new().fg(t.agent)));
    if !extends || md.inc.stable_len < before {
        md.stable_rows.clear();
    }
    let first_ever = md.stable_rows.is_empty();
    let mut fresh = md.inc.take_stable();
    if first_ever {
        let one = fresh.len().min(1);
        cells::agent_gutter(&mut fresh[..one], t, failed);
    }
    for l in fresh.iter_mut().skip(usize::from(first_ever)) {
        l.prefix.insert(0, Span::raw("  "));
        l.cont.insert(0, Span::raw("  "));
    }
    wrap_all(&fresh, width, &mut md.stable_rows);
    let mut tail = md.inc.tail.clone();
    if md.stable_rows.is_empty() {
        cells::agent_gutter(&mut tail, t, failed);
    } else {
        for l in &mut tail {
            l.prefix.insert(0, Span::raw("  "));
            l.cont.insert(0, Span::raw("  "));
        }
    }
    if let Some(msg) = &u.error_message {
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
    md.tail_rows.clear();
    wrap_all(&tail, width, &mut md.tail_rows);
    md.text = text;
    md
}

/// Draws the transcript into `area`, `scroll` rows up from the bottom,
/// with `extra` rows (status lines) after the last entry. Returns the
/// clamped scroll and the largest scroll possible (`usize::MAX` when the
/// top was not reached, since only what is needed is laid out).
pub fn draw(
    entries: &[Entry],
    caches: &mut [Cache],
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
    let want = scroll.saturating_add(h);
    let mut total = extra.len();
    let mut first = entries.len();
    while first > 0 && total < want {
        first -= 1;
        if visible(&entries[first], ctx.full_view) {
            total += layout(&entries[first], &mut caches[first], area.width, ctx);
        }
    }
    let slack = jump_slack(entries, caches, area.width, ctx);
    total += slack;
    let reached_top = first == 0;
    // The top entry's separator row is not needed at the very top.
    let mut skip = usize::from(reached_top && total > extra.len());
    let total_rows = total - skip;
    let max_scroll = if reached_top {
        total_rows.saturating_sub(h)
    } else {
        usize::MAX
    };
    let scroll = scroll.min(max_scroll);
    let end = total_rows.saturating_sub(scroll);
    let start = end.saturating_sub(h);
    let mut rows = Rows {
        area,
        start,
        end,
        row: 0,
        y: area.y,
    };
    for (e, cache) in entries[first..].iter().zip(&caches[first..]) {
        if rows.full() {
            break;
        }
        if !visible(e, ctx.full_view) {
            continue;
        }
        let k0 = std::mem::take(&mut skip);
        let n = cache.len().max(k0);
        if rows.row + (n - k0) <= start {
            rows.row += n - k0;
            continue;
        }
        for k in k0..n {
            if rows.full() {
                break;
            }
            match cache.row(k).filter(|_| rows.row >= start) {
                Some(line) => rows.put(line, buf),
                None => rows.row += 1,
            }
        }
    }
    for _ in 0..slack {
        if rows.full() {
            break;
        }
        rows.blank();
    }
    for line in extra {
        if rows.full() {
            break;
        }
        rows.put(line, buf);
    }
    (scroll, max_scroll)
}

/// The window `start..end` of the concatenated rows (entries, slack,
/// extra lines), painted from the top of `area`.
struct Rows {
    area: Rect,
    start: usize,
    end: usize,
    /// Index into the concatenated rows.
    row: usize,
    y: u16,
}

impl Rows {
    fn full(&self) -> bool {
        self.row >= self.end
    }

    /// The next row: painted when inside the window.
    fn put(&mut self, line: &Line<'static>, buf: &mut Buffer) {
        if self.row >= self.start {
            let area = self.area;
            if line.style.bg.is_some() {
                buf.set_style(Rect::new(area.x, self.y, area.width, 1), line.style);
            }
            super::put::line(buf, area.x, self.y, line, area.width);
            self.y += 1;
        }
        self.row += 1;
    }

    /// The next row, left blank.
    fn blank(&mut self) {
        if self.row >= self.start {
            self.y += 1;
        }
        self.row += 1;
    }
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
pub fn scroll_marker(scroll: usize, t: &Theme) -> Line<'static> {
    Line::from(vec![Span::styled(
        format!(" ↓ {scroll} lines below · End to follow "),
        Style::new().fg(t.accent).add_modifier(Modifier::REVERSED),
    )])
}
