//! The console's screen buffers and what goes to the terminal.
//!
//! ratatui's `Terminal` repaints every cell that changed, so a streaming
//! pane whose text moves up one row repaints the whole pane each frame. This
//! keeps the last drawn buffer itself and, for regions the caller marks as
//! scrollable (a full-width pane's transcript), notices when the new frame is
//! the old one moved up by `k` rows: it scrolls that region on the terminal
//! (DECSTBM margins + SU), shifts its copy of the old frame to match, and
//! only then diffs. The diff still repaints whatever differs, so a wrong
//! guess costs bytes, never correctness. The margins stay set until a
//! scroll needs others (each frame would pay 10 bytes to set and reset
//! them); the writer's cursor moves respect them (`emit::Bounds`), and
//! the console's restore resets them.

use std::hash::Hasher;
use std::io::{self, Write};

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::Color;

/// A region whose full-width rows may scroll together; columns `x..x+width`
/// are what is compared (the pane's inside, without its border).
pub type ScrollRegion = Rect;

pub struct Screen<W: Write> {
    backend: CrosstermBackend<W>,
    prev: Buffer,
    cur: Buffer,
    /// Row hashes of `prev` inside each region of the last frame, so each
    /// frame hashes only its own rows.
    hashes: Vec<(ScrollRegion, Vec<u64>)>,
    attrs: super::emit::Attrs,
    /// The scroll margins set on the terminal (first and last row), `None`
    /// when unknown (start, after a clear or resize).
    margins: Option<(u16, u16)>,
}

impl<W: Write> Screen<W> {
    pub fn new(backend: CrosstermBackend<W>) -> Self {
        Self {
            backend,
            prev: Buffer::empty(Rect::default()),
            cur: Buffer::empty(Rect::default()),
            hashes: Vec::new(),
            attrs: super::emit::Attrs::default(),
            margins: None,
        }
    }

    pub fn backend_mut(&mut self) -> &mut CrosstermBackend<W> {
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
    pub fn forget(&mut self) {
        self.prev.reset();
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
        let mut hashes = Vec::with_capacity(regions.len());
        for r in regions {
            if r.y < area.y || r.bottom() > area.bottom() || r.height < 4 {
                continue;
            }
            let new = row_hashes(&self.cur, r);
            let old = match self.hashes.iter().position(|(o, _)| *o == r) {
                Some(i) => self.hashes.swap_remove(i).1,
                None => row_hashes(&self.prev, r),
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
                shift_up(&mut self.prev, r, k);
            }
            hashes.push((r, new));
        }
        self.hashes = hashes;
        let diff = self.prev.diff(&self.cur);
        let mut bounds = super::emit::Bounds::full(area.width, area.height);
        if let Some((top, bottom)) = self.margins {
            (bounds.top, bounds.bottom) = (top, bottom);
        }
        self.attrs
            .cells(&mut self.backend, &self.cur, &diff, bounds)?;
        std::mem::swap(&mut self.prev, &mut self.cur);
        Ok(())
    }
}

/// A cheap hash (FxHash's mixing) of what a row shows: rows are compared,
/// never trusted blindly, since the diff repaints any mismatch.
#[derive(Default)]
struct RowHasher(u64);

impl Hasher for RowHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

fn row_hashes(buf: &Buffer, r: Rect) -> Vec<u64> {
    let a = buf.area;
    let inside = r.x >= a.x && r.right() <= a.right() && r.y >= a.y && r.bottom() <= a.bottom();
    (r.y..r.bottom())
        .map(|y| {
            let mut h = RowHasher::default();
            if inside {
                let start = usize::from(y - a.y) * usize::from(a.width) + usize::from(r.x - a.x);
                let row = buf.content.get(start..start + usize::from(r.width));
                for c in row.unwrap_or_default() {
                    hash_cell(&mut h, c);
                }
            }
            h.finish()
        })
        .collect()
}

/// A cell's symbol, colours and modifiers folded into two words: every
/// row of every frame is hashed, so this is kept to two multiplies.
fn hash_cell(h: &mut RowHasher, c: &Cell) {
    let s = c.symbol().as_bytes();
    let mut word = 0u64;
    for (i, b) in s.iter().take(8).enumerate() {
        word |= u64::from(*b) << (8 * i);
    }
    h.write_u64(word);
    if s.len() > 8 {
        h.write(&s[8..]);
    }
    // Colours take 25 bits each; the modifier's 9 flags go on top.
    let style = u64::from(colour_word(c.fg))
        | u64::from(colour_word(c.bg)) << 25
        | u64::from(c.modifier.bits()) << 50;
    h.write_u64(style ^ (s.len() as u64).rotate_right(4));
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

/// What the terminal holds after scrolling the full-width rows of `r` up
/// by `k`: rows move up, blank rows (default colours) come in at the bottom.
fn shift_up(buf: &mut Buffer, r: Rect, k: u16) {
    let width = buf.area.width as usize;
    let start = buf.index_of(buf.area.x, r.y);
    let end = start + r.height as usize * width;
    let rows = &mut buf.content[start..end];
    let by = (k as usize * width).min(rows.len());
    // Swapping forward in order (not `rotate_left`, several times slower
    // on cells this size): the rows that scroll off end up at the bottom,
    // where the blanks overwrite them.
    for i in 0..rows.len() - by {
        rows.swap(i, i + by);
    }
    let blank = rows.len() - by;
    rows[blank..].fill(Cell::default());
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let hashes = |b: &Buffer| row_hashes(b, region);
        assert_eq!(scrolled_by(&hashes(&prev), &hashes(&cur)), Some(2));
        let mut shifted = prev;
        shift_up(&mut shifted, region, 2);
        // Only the two new rows differ after the shift.
        let rows: std::collections::BTreeSet<u16> =
            shifted.diff(&cur).iter().map(|(_, y, _)| *y).collect();
        assert_eq!(rows, [4, 5].into_iter().collect());
    }

    #[test]
    fn rows_that_look_different_hash_differently() {
        use ratatui::style::{Modifier, Style};
        let row = |text: &str, style: Style| {
            let mut b = Buffer::empty(Rect::new(0, 0, 12, 1));
            b.set_string(0, 0, text, style);
            row_hashes(&b, b.area)[0]
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
        let hashes = |b: &Buffer| row_hashes(b, prev.area);
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
