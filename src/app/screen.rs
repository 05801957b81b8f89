//! The console's screen buffers and what goes to the terminal.
//!
//! ratatui's `Terminal` repaints every cell that changed, so a streaming
//! pane whose text moves up one row repaints the whole pane each frame. This
//! keeps the last drawn buffer itself and, for regions the caller marks as
//! scrollable (a full-width pane's transcript), notices when the new frame is
//! the old one moved up by `k` rows: it scrolls that region on the terminal
//! (DECSTBM margins + SU) and compares each row with the row of the old
//! frame that now sits under it. The diff still repaints whatever differs,
//! so a wrong guess costs bytes, never correctness. The margins stay set
//! until a scroll needs others (each frame would pay 10 bytes to set and
//! reset them); the writer's cursor moves respect them (`emit::Bounds`),
//! and the console's restore resets them.
//!
//! Every row of every frame is compared, so rows are compared as packed
//! words (`pack`, 16 bytes a cell instead of ratatui's 48) and only a row
//! that differs goes through ratatui's diff.

use std::io::{self, Write};

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::{Buffer, Cell, CellDiffOption};
use ratatui::layout::Rect;
use ratatui::style::Color;

/// A region whose full-width rows may scroll together; columns `x..x+width`
/// are what is compared (the pane's inside, without its border).
pub(crate) type ScrollRegion = Rect;

pub struct Screen<W: Write> {
    backend: CrosstermBackend<W>,
    prev: Buffer,
    cur: Buffer,
    /// `prev` and `cur` cell by cell as `pack` gives them: rows are told
    /// apart and hashed from these, a third of the cells' size.
    prev_packed: Vec<Packed>,
    cur_packed: Vec<Packed>,
    /// Row hashes of `prev` inside each region of the last frame, so each
    /// frame hashes only its own rows.
    hashes: Vec<(ScrollRegion, Vec<u64>)>,
    attrs: super::emit::Attrs,
    /// The scroll margins set on the terminal (first and last row), `None`
    /// when unknown (start, after a clear or resize).
    margins: Option<(u16, u16)>,
    scratch: RowPair,
}

impl<W: Write> Screen<W> {
    pub fn new(backend: CrosstermBackend<W>) -> Self {
        Self {
            backend,
            prev: Buffer::empty(Rect::default()),
            cur: Buffer::empty(Rect::default()),
            prev_packed: Vec::new(),
            cur_packed: Vec::new(),
            hashes: Vec::new(),
            attrs: super::emit::Attrs::default(),
            margins: None,
            scratch: RowPair::default(),
        }
    }

    pub(crate) fn backend_mut(&mut self) -> &mut CrosstermBackend<W> {
        &mut self.backend
    }

    /// The frame drawn last: what the terminal shows once it has read
    /// what `draw` wrote (tests compare the two).
    pub fn last_frame(&self) -> &Buffer {
        &self.prev
    }

    /// Forgets what the terminal shows: the next frame repaints everything.
    pub fn clear(&mut self) -> io::Result<()> {
        // Erasing fills with the current background: make it the default.
        self.backend.write_all(b"\x1b[0m")?;
        self.backend.clear()?;
        self.forget();
        Ok(())
    }

    /// Forgets what the terminal shows without writing anything (the
    /// caller cleared it): the next frame repaints everything.
    pub(crate) fn forget(&mut self) {
        self.prev.reset();
        pack_frame(&self.prev, &mut self.prev_packed);
        self.hashes.clear();
        self.attrs.forget();
        self.margins = None;
    }

    /// Draws one frame of `area` (the terminal's size) with `render`, then
    /// writes what changed. `regions` gives the rows that may have scrolled.
    pub fn draw(
        &mut self,
        area: Rect,
        render: impl FnOnce(Rect, &mut Buffer) -> Vec<ScrollRegion>,
    ) -> io::Result<()> {
        if self.cur.area != area {
            self.cur.resize(area);
            self.prev.resize(area);
            self.clear()?;
        }
        self.cur.reset();
        if self.margins.is_none() {
            // `DECSTBM` with no rows: the whole screen (the cursor goes home).
            self.backend.write_all(b"\x1b[r")?;
            self.margins = Some((area.y, area.bottom().saturating_sub(1)));
            self.attrs.lose_cursor();
        }
        let regions = render(area, &mut self.cur);
        pack_frame(&self.cur, &mut self.cur_packed);
        let width = area.width;
        // The row of `prev` each row of the frame now sits on: itself, the
        // row it scrolled up from, or `None` for a blank row scrolled in.
        let mut from: Vec<Option<u16>> = (0..area.height).map(Some).collect();
        let mut hashes = Vec::with_capacity(regions.len());
        for r in regions {
            if r.y < area.y || r.bottom() > area.bottom() || r.height < 4 {
                continue;
            }
            let (x, y) = (r.x - area.x, r.y - area.y);
            let inner = Rect { x, y, ..r };
            let new = row_hashes(&self.cur_packed, width, inner);
            let old = match self.hashes.iter().position(|(o, _)| *o == r) {
                Some(i) => self.hashes.swap_remove(i).1,
                None => row_hashes(&self.prev_packed, width, inner),
            };
            if let Some(k) = scrolled_by(&old, &new) {
                self.attrs.plain(&mut self.backend)?;
                let margins = (r.y, r.bottom() - 1);
                if self.margins != Some(margins) {
                    write!(self.backend, "\x1b[{};{}r", r.y + 1, r.bottom())?;
                    self.margins = Some(margins);
                    self.attrs.lose_cursor();
                }
                super::emit::csi_n(&mut self.backend, k, b'S')?;
                scroll_up(&mut from, inner.y, inner.bottom(), k);
            }
            hashes.push((r, new));
        }
        self.hashes = hashes;
        let frames = Frames {
            prev: &self.prev,
            cur: &self.cur,
            prev_packed: &self.prev_packed,
            cur_packed: &self.cur_packed,
        };
        let diff = frames.changed_cells(&from, &mut self.scratch);
        let mut bounds = super::emit::Bounds::full(area.width, area.height);
        if let Some((top, bottom)) = self.margins {
            (bounds.top, bounds.bottom) = (top, bottom);
        }
        self.attrs
            .cells(&mut self.backend, &self.cur, &diff, bounds)?;
        std::mem::swap(&mut self.prev, &mut self.cur);
        std::mem::swap(&mut self.prev_packed, &mut self.cur_packed);
        Ok(())
    }
}

/// A cheap hash (FxHash's mixing) of what a row shows, to find a scroll:
/// a wrong guess costs bytes, never what is shown (rows are compared).
#[derive(Default)]
struct RowHasher(u64);

impl RowHasher {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// The hash of each row of `r` (in cells of the frame, which is `width`
/// wide) of a packed frame.
fn row_hashes(packed: &[Packed], width: u16, r: Rect) -> Vec<u64> {
    let w = usize::from(width);
    (r.y..r.bottom())
        .map(|y| {
            let mut h = RowHasher::default();
            let start = usize::from(y) * w + usize::from(r.x);
            for [symbol, look] in packed
                .get(start..start + usize::from(r.width))
                .unwrap_or_default()
            {
                h.add(*symbol);
                h.add(*look);
            }
            h.0
        })
        .collect()
}

/// A cell as two words: its symbol's bytes (when at most eight), and its colours,
/// modifiers and symbol length. Cells whose words are equal are equal,
/// unless either word has `UNUSUAL` set: a longer symbol, an underline
/// colour, a skipped or forced cell. Those rows are compared cell by cell.
type Packed = [u64; 2];

const UNUSUAL: u64 = 1 << 63;

#[inline]
fn pack(c: &Cell) -> Packed {
    let s = c.symbol().as_bytes();
    let symbol = match s {
        // Nearly every cell: kept apart so the common case stays short.
        [b] => u64::from(*b),
        _ if s.len() <= 8 => {
            let mut word = [0u8; 8];
            word[..s.len()].copy_from_slice(s);
            u64::from_le_bytes(word)
        }
        _ => {
            // Compared cell by cell anyway; all of it counts for the hash.
            let mut h = RowHasher::default();
            s.iter().for_each(|b| h.add(u64::from(*b)));
            h.0
        }
    };
    let modifier = u64::from(c.modifier.bits());
    #[allow(deprecated)] // `skip` still counts in `Cell`'s equality
    let usual = s.len() <= 8
        && modifier < 1 << 9
        && c.underline_color == Color::Reset
        && !c.skip
        && c.diff_option == CellDiffOption::None;
    // Colours take 25 bits each, the modifier's 9 flags and the length
    // (0 to 8) go above them.
    let look = u64::from(colour_word(c.fg))
        | u64::from(colour_word(c.bg)) << 25
        | (modifier & 0x1ff) << 50
        | (s.len().min(15) as u64) << 59
        | if usual { 0 } else { UNUSUAL };
    [symbol, look]
}

fn pack_frame(buf: &Buffer, out: &mut Vec<Packed>) {
    out.clear();
    out.extend(buf.content.iter().map(pack));
}

/// A colour as one number, different for different colours.
fn colour_word(c: Color) -> u32 {
    match c {
        Color::Reset => 0,
        Color::Black => 1,
        Color::Red => 2,
        Color::Green => 3,
        Color::Yellow => 4,
        Color::Blue => 5,
        Color::Magenta => 6,
        Color::Cyan => 7,
        Color::Gray => 8,
        Color::DarkGray => 9,
        Color::LightRed => 10,
        Color::LightGreen => 11,
        Color::LightYellow => 12,
        Color::LightBlue => 13,
        Color::LightMagenta => 14,
        Color::LightCyan => 15,
        Color::White => 16,
        Color::Indexed(i) => 0x100 | u32::from(i),
        Color::Rgb(r, g, b) => 0x100_0000 | u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b),
    }
}

/// The `k` rows by which the rows hashed `new` are the rows hashed `old`
/// moved up, when scrolling saves more rows than it breaks (rows that
/// already match in place).
fn scrolled_by(old: &[u64], new: &[u64]) -> Option<u16> {
    let h = old.len().min(new.len());
    let in_place = (0..h).filter(|&i| old[i] == new[i]).count();
    let (mut best, mut best_k) = (in_place + 2, None);
    for k in 1..h {
        let moved = (0..h - k).filter(|&i| new[i] == old[i + k]).count();
        if moved > best {
            best = moved;
            best_k = Some(k as u16);
        }
    }
    best_k
}

/// Rows `top..bottom` scrolled up by `k`: each shows what the row `k`
/// below it showed, and blank rows (default colours) come in at the bottom.
/// `from` maps each row of the frame to the row of the last frame it sits
/// on, so nothing of the last frame is moved.
fn scroll_up(from: &mut [Option<u16>], top: u16, bottom: u16, k: u16) {
    let (top, bottom, k) = (usize::from(top), usize::from(bottom), usize::from(k));
    for i in top..bottom {
        from[i] = if i + k < bottom { from[i + k] } else { None };
    }
}

/// Two one-row buffers a changed row is diffed in.
#[derive(Default)]
struct RowPair {
    old: Buffer,
    new: Buffer,
}

/// The last frame and this one, as cells and packed.
struct Frames<'a> {
    prev: &'a Buffer,
    cur: &'a Buffer,
    prev_packed: &'a [Packed],
    cur_packed: &'a [Packed],
}

impl<'a> Frames<'a> {
    /// The cells of `cur` to write over what the terminal shows, row `i`
    /// of which is row `from[i]` of `prev` (or blank). A row that is the
    /// same is passed over whole, told by its packed words; ratatui's own
    /// diff runs on each other row, so its rules for wide, skipped and
    /// forced cells still decide. (Diffing the whole frame compared every
    /// cell through its width lookup, and moving the last frame's rows to
    /// match a scroll cost as much again.)
    fn changed_cells(&self, from: &[Option<u16>], pair: &mut RowPair) -> Vec<(u16, u16, &'a Cell)> {
        let a = self.cur.area;
        let w = usize::from(a.width);
        let one_row = Rect::new(a.x, 0, a.width, 1);
        if pair.new.area != one_row {
            *pair = RowPair {
                old: Buffer::empty(one_row),
                new: Buffer::empty(one_row),
            };
        }
        let mut out = Vec::new();
        for (i, src) in (0..a.height).zip(from) {
            let start = usize::from(i) * w;
            let Some(new) = self.cur.content.get(start..start + w) else {
                break;
            };
            let under = match src.map(|s| usize::from(s) * w) {
                Some(s) => match self.prev.content.get(s..s + w) {
                    Some(row) => Under::Row(row, self.prev_packed.get(s..s + w)),
                    // `prev` and `cur` always cover the same area.
                    None => break,
                },
                None => Under::Blank,
            };
            if self.same_row(start, new, &under) {
                continue;
            }
            match under {
                Under::Row(old, _) => pair.old.content.clone_from_slice(old),
                Under::Blank => pair.old.content.fill(Cell::default()),
            }
            pair.new.content.clone_from_slice(new);
            for (x, _, _) in pair.old.diff(&pair.new) {
                let cell = &self.cur.content[start + usize::from(x - a.x)];
                out.push((x, a.y + i, cell));
            }
        }
        out
    }

    /// Whether ratatui's diff writes nothing for row `new` (at `start` in
    /// `cur`) over what is `under` it.
    fn same_row(&self, start: usize, new: &[Cell], under: &Under<'_>) -> bool {
        let packed = self.cur_packed.get(start..start + new.len());
        let unusual = |p: &[Packed]| p.iter().any(|[_, look]| look & UNUSUAL != 0);
        let cells = |old: &[Cell]| old.iter().zip(new).all(|(p, c)| same_cell(p, c));
        match (under, packed) {
            (Under::Row(old, Some(old_packed)), Some(packed)) => {
                *old_packed == packed && (!unusual(packed) || cells(old))
            }
            (Under::Row(old, _), _) => cells(old),
            (Under::Blank, Some(packed)) => {
                let blank = pack(&Cell::default());
                packed.iter().all(|p| *p == blank)
            }
            (Under::Blank, None) => new.iter().all(|c| same_cell(&Cell::default(), c)),
        }
    }
}

/// What the terminal shows under a row of the new frame: a row of the
/// last one (with its packed words), or a blank row a scroll brought in.
enum Under<'p> {
    Row(&'p [Cell], Option<&'p [Packed]>),
    Blank,
}

/// Whether ratatui's diff writes nothing for `c` over `p`.
fn same_cell(p: &Cell, c: &Cell) -> bool {
    c.diff_option != CellDiffOption::AlwaysUpdate && p == c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed(b: &Buffer) -> Vec<Packed> {
        let mut out = Vec::new();
        pack_frame(b, &mut out);
        out
    }

    /// Row hashes of `r` (in the buffer's coordinates).
    fn hashes_of(b: &Buffer, r: Rect) -> Vec<u64> {
        let inner = Rect {
            x: r.x - b.area.x,
            y: r.y - b.area.y,
            ..r
        };
        row_hashes(&packed(b), b.area.width, inner)
    }

    fn changed_cells(prev: &Buffer, cur: &Buffer, from: &[Option<u16>]) -> Vec<(u16, u16, Cell)> {
        let (prev_packed, cur_packed) = (packed(prev), packed(cur));
        let frames = Frames {
            prev,
            cur,
            prev_packed: &prev_packed,
            cur_packed: &cur_packed,
        };
        frames
            .changed_cells(from, &mut RowPair::default())
            .into_iter()
            .map(|(x, y, c)| (x, y, c.clone()))
            .collect()
    }

    fn buf_with(lines: &[&str]) -> Buffer {
        let mut b = Buffer::empty(Rect::new(0, 0, 10, lines.len() as u16));
        for (y, l) in lines.iter().enumerate() {
            b.set_string(0, y as u16, l, ratatui::style::Style::new());
        }
        b
    }

    #[test]
    fn a_region_moved_up_is_found_and_shifting_reproduces_it() {
        let prev = buf_with(&["top", "a", "b", "c", "d", "e", "bottom"]);
        let cur = buf_with(&["top", "c", "d", "e", "f", "g", "bottom"]);
        let region = Rect::new(0, 1, 10, 5);
        let hashes = |b: &Buffer| hashes_of(b, region);
        assert_eq!(scrolled_by(&hashes(&prev), &hashes(&cur)), Some(2));
        let mut from: Vec<Option<u16>> = (0..7).map(Some).collect();
        scroll_up(&mut from, 1, 6, 2);
        assert_eq!(
            from,
            [Some(0), Some(3), Some(4), Some(5), None, None, Some(6)]
        );
        // Only the two new rows differ after the scroll.
        let changed = changed_cells(&prev, &cur, &from);
        let rows: std::collections::BTreeSet<u16> = changed.iter().map(|(_, y, _)| *y).collect();
        assert_eq!(rows, [4, 5].into_iter().collect());
    }

    /// Frames of random rows: plain and wide symbols, emoji with a
    /// variation selector, colours, modifiers, skipped and forced cells.
    fn random_frame(seed: &mut u64, area: Rect) -> Buffer {
        use ratatui::style::{Modifier, Style};
        let mut next = |n: u64| {
            *seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (*seed >> 33) % n
        };
        let words = ["a", "bc", "日本", "❤️", "x y", "👩‍👩‍👧", "é", " ", "—"];
        let mut b = Buffer::empty(area);
        for y in area.top()..area.bottom() {
            let mut x = area.x + next(3) as u16;
            while x < area.right() {
                let style = match next(4) {
                    0 => Style::new(),
                    1 => Style::new().bg(Color::Indexed(next(3) as u8)),
                    2 => Style::new().fg(Color::Red).add_modifier(Modifier::REVERSED),
                    _ => Style::new().add_modifier(Modifier::UNDERLINED),
                };
                let word = words[next(words.len() as u64) as usize];
                x = b
                    .set_stringn(x, y, word, usize::from(area.right() - x), style)
                    .0;
                match next(12) {
                    0 if x < area.right() => {
                        b[(x, y)].set_diff_option(CellDiffOption::Skip);
                    }
                    1 if x < area.right() => {
                        b[(x, y)].set_diff_option(CellDiffOption::AlwaysUpdate);
                    }
                    _ => {}
                }
                x += next(2) as u16;
            }
        }
        b
    }

    #[test]
    fn row_by_row_diffing_writes_what_ratatuis_diff_writes() {
        use ratatui::style::Modifier;
        let mut seed = 7;
        let area = Rect::new(2, 1, 13, 6);
        let identity: Vec<Option<u16>> = (0..area.height).map(Some).collect();
        for case in 0..400 {
            let prev = random_frame(&mut seed, area);
            let mut cur = prev.clone();
            // Most rows the same, a few redrawn: as frames are.
            let other = random_frame(&mut seed, area);
            for y in area.top()..area.bottom() {
                if (seed >> 40) % 3 == 0 || y == area.top() + (case % area.height) {
                    for x in area.left()..area.right() {
                        cur[(x, y)] = other[(x, y)].clone();
                    }
                } else if (seed >> 40) % 3 == 1 {
                    // The same text, one cell's look changed.
                    let x = area.x + (seed >> 20) as u16 % area.width;
                    let cell = &mut cur[(x, y)];
                    match seed % 4 {
                        0 => cell.fg = Color::Rgb(1, 2, 3),
                        1 => cell.bg = Color::Indexed(9),
                        2 => cell.underline_color = Color::Blue,
                        _ => cell.modifier.toggle(Modifier::CROSSED_OUT),
                    };
                }
                seed = seed.rotate_left(7);
            }
            let ours = changed_cells(&prev, &cur, &identity);
            let theirs: Vec<(u16, u16, Cell)> = prev
                .diff(&cur)
                .into_iter()
                .map(|(x, y, c)| (x, y, c.clone()))
                .collect();
            assert_eq!(ours, theirs, "case {case}");
        }
    }

    #[test]
    fn rows_that_look_different_hash_differently() {
        use ratatui::style::{Modifier, Style};
        let row = |text: &str, style: Style| {
            let mut b = Buffer::empty(Rect::new(0, 0, 12, 1));
            b.set_string(0, 0, text, style);
            hashes_of(&b, b.area)[0]
        };
        let plain = row("abc", Style::new());
        assert_eq!(plain, row("abc", Style::new()));
        let looks = [
            row("abd", Style::new()),
            row("abc", Style::new().fg(Color::Rgb(1, 2, 3))),
            row("abc", Style::new().fg(Color::Rgb(1, 2, 4))),
            row("abc", Style::new().bg(Color::Indexed(3))),
            row("abc", Style::new().fg(Color::Red)),
            row("abc", Style::new().add_modifier(Modifier::BOLD)),
            row("👩‍👩‍👧 x", Style::new()),
            row("👩‍👩‍👦 x", Style::new()),
        ];
        let distinct: std::collections::BTreeSet<u64> = looks.iter().copied().collect();
        assert_eq!(distinct.len(), looks.len());
        assert!(!distinct.contains(&plain));
    }

    #[test]
    fn an_unchanged_or_rewritten_region_does_not_scroll() {
        let prev = buf_with(&["a", "b", "c", "d", "e"]);
        let hashes = |b: &Buffer| hashes_of(b, prev.area);
        assert_eq!(scrolled_by(&hashes(&prev), &hashes(&prev)), None);
        let other = buf_with(&["v", "w", "x", "y", "z"]);
        assert_eq!(scrolled_by(&hashes(&prev), &hashes(&other)), None);
    }

    #[test]
    fn the_screen_writes_a_scroll_and_only_the_new_rows() {
        #[derive(Clone, Default)]
        struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let written = Shared::default();
        let mut screen = Screen::new(CrosstermBackend::new(written.clone()));
        let area = Rect::new(0, 0, 10, 8);
        // A fixed top and bottom row, and six that scroll between them.
        let rows = |first: usize| {
            move |a: Rect, b: &mut Buffer| {
                let plain = ratatui::style::Style::new();
                b.set_string(0, 0, "top", plain);
                for y in 1..a.height - 1 {
                    b.set_string(0, y, format!("line {}", first + y as usize), plain);
                }
                b.set_string(0, a.height - 1, "bottom", plain);
                vec![Rect::new(0, 1, 10, 6)]
            }
        };
        let mut frame = |first: usize| {
            screen.draw(area, rows(first)).unwrap();
            String::from_utf8(std::mem::take(&mut *written.0.borrow_mut())).unwrap()
        };
        assert!(frame(0).contains("\x1b[r"));
        let out = frame(1);
        assert!(out.starts_with("\x1b[2;7r\x1b[S"), "{out:?}");
        assert!(out.contains("line 7"), "{out:?}");
        assert!(!out.contains("line 4"), "{out:?}");
        // The margins stay set: the next scroll is only `SU`.
        let out = frame(3);
        assert!(out.starts_with("\x1b[2S"), "{out:?}");
        assert!(out.contains("line 9") && !out.contains("line 6"), "{out:?}");
    }
}
