//! Cursor moves in the fewest bytes: an absolute `CUP`, or relative steps
//! (`CR`, line feeds, `CUU`/`CUD`, `CUF`, backspaces, `CUB`) and the
//! absolute column (`CHA`), whichever is shorter, or no move at all where
//! printing on from the last column wraps to the next row. The frame
//! planner prices its orders with [`cost`], and the writer uses [`write`],
//! so both agree byte for byte.
//!
//! The scroll margins stay set between frames (`screen.rs`), so a relative
//! move must not meet them: a line feed on the bottom margin scrolls the
//! region, and `CUD`/`CUU` stop at the margin they start inside of.

use std::io::{self, Write};

/// A cursor position: `(column, row)`. Column `width` means the last column
/// was just written (the terminal's "pending wrap"): terminals disagree on
/// where relative moves go from there, so only `CR`, `CUP` and printing on
/// (which wraps) leave it.
pub(super) type At = (u16, u16);

/// What the terminal's cursor moves within: its size and the scroll
/// margins set on it (first and last row, inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub(crate) width: u16,
    pub(crate) height: u16,
    pub(crate) top: u16,
    pub(crate) bottom: u16,
}

impl Bounds {
    /// A `width`×`height` screen with margins at its edges.
    pub(crate) fn full(width: u16, height: u16) -> Self {
        Self {
            width,
            height,
            top: 0,
            bottom: height.saturating_sub(1),
        }
    }

    /// Whether `LF`/`CUD`/`CUU` get from row `from` to row `to` without a
    /// margin stopping them (or a line feed scrolling the region).
    fn vertical_ok(&self, from: u16, to: u16) -> bool {
        if to > from {
            !(from <= self.bottom && to > self.bottom)
        } else {
            !(from >= self.top && to < self.top)
        }
    }

    /// Whether printing on from the last column of row `y` lands at the
    /// start of the next row (not scrolling the region or the screen).
    fn wraps_down(&self, y: u16) -> bool {
        y != self.bottom && y.saturating_add(1) < self.height
    }
}

#[derive(Clone, Copy)]
enum Route {
    Stay,
    Absolute,
    /// Vertical steps, then horizontal ones, from the cursor's column.
    Direct,
    /// `CR`, vertical steps, then `CUF` from column 0.
    Return,
    /// Nothing: the next character printed wraps to the next row.
    Wrap,
}

/// Bytes that move the cursor from `from` (`None`: unknown) to `to`;
/// `prints`: a character is printed there next (so a pending wrap may do
/// the move).
pub(super) fn cost(from: Option<At>, to: At, b: Bounds, prints: bool) -> usize {
    route(from, to, b, prints).1
}

/// Moves the cursor from `from` to `to` with the shortest sequence.
pub(super) fn write<W: Write>(
    out: &mut W,
    from: Option<At>,
    to: At,
    b: Bounds,
    prints: bool,
) -> io::Result<()> {
    let (x, y) = to;
    match (route(from, to, b, prints).0, from) {
        (Route::Stay | Route::Wrap, _) => Ok(()),
        (Route::Direct, Some((fx, fy))) => {
            vertical(out, fy, y)?;
            horizontal(out, fx, x)
        }
        (Route::Return, Some((_, fy))) => {
            out.write_all(b"\r")?;
            vertical(out, fy, y)?;
            horizontal(out, 0, x)
        }
        _ if x == 0 => write!(out, "\x1b[{}H", y + 1),
        _ => write!(out, "\x1b[{};{}H", y + 1, x + 1),
    }
}

fn route(from: Option<At>, to: At, b: Bounds, prints: bool) -> (Route, usize) {
    let (x, y) = to;
    let absolute = if x == 0 {
        3 + digits(y + 1)
    } else {
        4 + digits(y + 1) + digits(x + 1)
    };
    let Some((fx, fy)) = from else {
        return (Route::Absolute, absolute);
    };
    if (fx, fy) == to {
        return (Route::Stay, 0);
    }
    if prints && fx >= b.width && to == (0, fy + 1) && b.wraps_down(fy) {
        return (Route::Wrap, 0);
    }
    let mut best = (Route::Absolute, absolute);
    if !b.vertical_ok(fy, y) {
        return best;
    }
    let ret = 1 + vertical_len(fy, y) + horizontal_len(0, x);
    if ret < best.1 {
        best = (Route::Return, ret);
    }
    if fx < b.width {
        let direct = vertical_len(fy, y) + horizontal_len(fx, x);
        if direct < best.1 {
            best = (Route::Direct, direct);
        }
    }
    best
}

/// Up to this many single-byte steps (`LF`, `BS`) before `CSI n B/D`.
const STEPS: u16 = 3;

fn vertical_len(from: u16, to: u16) -> usize {
    match to.cmp(&from) {
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater if to - from <= STEPS => usize::from(to - from),
        std::cmp::Ordering::Greater => 3 + digits(to - from),
        std::cmp::Ordering::Less => csi_n_len(from - to),
    }
}

fn horizontal_len(from: u16, to: u16) -> usize {
    relative_len(from, to).min(column_len(from, to))
}

/// `CHA` to column `to`: shorter than a relative step where the column's
/// number is (`ESC [ 8 G` against `ESC [ 1 2 D`).
fn column_len(from: u16, to: u16) -> usize {
    if from == to { 0 } else { 3 + digits(to + 1) }
}

fn relative_len(from: u16, to: u16) -> usize {
    match to.cmp(&from) {
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => csi_n_len(to - from),
        std::cmp::Ordering::Less if from - to <= STEPS => usize::from(from - to),
        std::cmp::Ordering::Less => 3 + digits(from - to),
    }
}

/// `CSI n X`, with `n` left out when it is 1.
fn csi_n_len(n: u16) -> usize {
    if n == 1 { 3 } else { 3 + digits(n) }
}

fn vertical<W: Write>(out: &mut W, from: u16, to: u16) -> io::Result<()> {
    match to.cmp(&from) {
        std::cmp::Ordering::Equal => Ok(()),
        // A line feed never scrolls here: `route` keeps moves off the
        // bottom margin, and the cursor is above the target row.
        std::cmp::Ordering::Greater if to - from <= STEPS => {
            out.write_all(&b"\n\n\n"[..usize::from(to - from)])
        }
        std::cmp::Ordering::Greater => write!(out, "\x1b[{}B", to - from),
        std::cmp::Ordering::Less => csi_n(out, from - to, b'A'),
    }
}

fn horizontal<W: Write>(out: &mut W, from: u16, to: u16) -> io::Result<()> {
    if column_len(from, to) < relative_len(from, to) {
        return write!(out, "\x1b[{}G", to + 1);
    }
    match to.cmp(&from) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Greater => csi_n(out, to - from, b'C'),
        std::cmp::Ordering::Less if from - to <= STEPS => {
            out.write_all(&b"\x08\x08\x08"[..usize::from(from - to)])
        }
        std::cmp::Ordering::Less => write!(out, "\x1b[{}D", from - to),
    }
}

pub(crate) fn csi_n<W: Write>(out: &mut W, n: u16, fin: u8) -> io::Result<()> {
    if n == 1 {
        out.write_all(&[0x1b, b'[', fin])
    } else {
        write!(out, "\x1b[{n}{}", char::from(fin))
    }
}

fn digits(n: u16) -> usize {
    match n {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        1000..=9999 => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved_in(b: Bounds, from: Option<At>, to: At) -> String {
        let mut out = Vec::new();
        write(&mut out, from, to, b, true).unwrap();
        assert_eq!(out.len(), cost(from, to, b, true), "{out:?}");
        String::from_utf8(out).unwrap()
    }

    fn moved(from: Option<At>, to: At) -> String {
        moved_in(Bounds::full(80, 50), from, to)
    }

    #[test]
    fn each_move_takes_its_shortest_form() {
        assert_eq!(moved(None, (4, 9)), "\x1b[10;5H");
        assert_eq!(moved(None, (0, 9)), "\x1b[10H");
        assert_eq!(moved(Some((4, 9)), (4, 9)), "");
        assert_eq!(moved(Some((10, 3)), (0, 4)), "\r\n");
        assert_eq!(moved(Some((10, 3)), (30, 3)), "\x1b[20C");
        assert_eq!(moved(Some((10, 3)), (9, 4)), "\n\x08");
        assert_eq!(moved(Some((50, 3)), (2, 3)), "\x1b[3G");
        assert_eq!(moved(Some((50, 3)), (20, 3)), "\x1b[30D");
        assert_eq!(moved(Some((50, 3)), (8, 3)), "\x1b[9G");
        assert_eq!(moved(Some((40, 3)), (7, 4)), "\n\x1b[8G");
        assert_eq!(moved(Some((5, 30)), (5, 2)), "\x1b[28A");
    }

    #[test]
    fn after_the_last_column_only_cr_cup_and_the_wrap_move() {
        // Written at column 79 of 80: the cursor waits to wrap.
        assert_eq!(moved(Some((80, 3)), (79, 4)), "\x1b[5;80H");
        assert_eq!(moved(Some((80, 39)), (10, 40)), "\r\n\x1b[10C");
        // Printing on wraps to the next row by itself...
        assert_eq!(moved(Some((80, 3)), (0, 4)), "");
        // ...but not for an erase, which would erase the last column.
        let mut out = Vec::new();
        write(&mut out, Some((80, 3)), (0, 4), Bounds::full(80, 50), false).unwrap();
        assert_eq!(out, b"\r\n");
    }

    #[test]
    fn moves_never_meet_the_scroll_margins() {
        let b = Bounds {
            top: 5,
            bottom: 20,
            ..Bounds::full(80, 50)
        };
        // Inside the region: relative moves as usual.
        assert_eq!(moved_in(b, Some((10, 6)), (0, 8)), "\r\n\n");
        // A line feed on the bottom margin would scroll, `CUD` would stop.
        assert_eq!(moved_in(b, Some((10, 20)), (0, 21)), "\x1b[22H");
        assert_eq!(moved_in(b, Some((10, 19)), (10, 23)), "\x1b[24;11H");
        // `CUU` from inside stops at the top margin.
        assert_eq!(moved_in(b, Some((10, 6)), (10, 4)), "\x1b[5;11H");
        // Outside the region, or moving away from it, is free.
        assert_eq!(moved_in(b, Some((10, 21)), (10, 24)), "\n\n\n");
        assert_eq!(moved_in(b, Some((10, 4)), (10, 2)), "\x1b[2A");
        // A wrap on the bottom margin would scroll the region.
        assert_eq!(moved_in(b, Some((80, 20)), (0, 21)), "\x1b[22H");
        assert_eq!(moved_in(b, Some((80, 19)), (0, 20)), "");
    }
}
