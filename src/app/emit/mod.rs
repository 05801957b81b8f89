//! Writes a frame's changed cells to the terminal in few bytes.
//!
//! ratatui's backend moves the cursor with an absolute `CUP` for every gap,
//! sets both colours whenever either changes and resets all attributes at
//! the end of every frame. A streaming pane changes a few cells per frame,
//! so those fixed costs dominate what goes to the terminal. This writer
//! groups the changed cells into runs of one pen, lets the planner
//! (`plan.rs`) choose the order that costs least (a colour used on many
//! rows, like the pane's border, in one pass), moves the cursor by the
//! shortest sequence (`cursor.rs`), changes only the attributes that differ,
//! in one `SGR`, and erases runs of blanks with `ECH` where that is
//! shorter. The pen is kept between frames, so a frame that goes on in the
//! colour the last one ended with does not set it again.
//!
//! A cell that changes again and again far from the rest, in a pen of its
//! own (the status bar's spinner: a move and two RGB colours, about 40
//! bytes, a dozen times a second), is reached with `ESC 8` (DECRC, 2
//! bytes): the terminal saved its position and pen with `ESC 7` (DECSC)
//! the time before.

use std::io::{self, Write};

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

mod cursor;
mod plan;

pub(crate) use cursor::{Bounds, csi_n};

/// The attributes the terminal currently draws with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Pen {
    fg: Color,
    bg: Color,
    underline: Color,
    modifier: Modifier,
}

const DEFAULT_PEN: Pen = Pen {
    fg: Color::Reset,
    bg: Color::Reset,
    underline: Color::Reset,
    modifier: Modifier::empty(),
};

impl Pen {
    fn of(c: &Cell) -> Self {
        Self {
            fg: c.fg,
            bg: c.bg,
            underline: c.underline_color,
            modifier: c.modifier,
        }
    }
}

/// The terminal's attributes between frames: kept, so a frame that
/// continues in the colour the last one ended with does not set it again.
#[derive(Default)]
pub(super) struct Attrs {
    /// `None` when unknown (start, after a clear): the next change resets.
    pen: Option<Pen>,
    /// What `ESC 8` restores: saved by this writer with `ESC 7`.
    saved: Option<Mark>,
    /// Costly places runs began at lately, with their pens: one written
    /// again is worth saving.
    recent: Vec<(cursor::At, Pen)>,
    /// Where the last frame left the cursor (scrolling does not move it),
    /// so the next frame's first move may be a short relative one.
    at: Option<cursor::At>,
    /// Frames written so far: how old the saved place is.
    frame: u64,
}

/// A cursor position and pen saved on the terminal (`ESC 7`), and what
/// reaching them from nowhere would cost.
#[derive(Clone, Copy)]
struct Mark {
    at: cursor::At,
    pen: Pen,
    worth: usize,
    /// The frame it was last saved or restored in.
    used: u64,
}

/// Bytes a run's move and pen must cost from scratch before its place is
/// remembered, and how many such places are.
const SAVE_WORTH: usize = 20;
const RECENT: usize = 16;
/// Frames a saved place may go unused before a cheaper one repeating now
/// takes the slot: the status bar's spinner moves when the text before it
/// changes, and its old place must not keep the slot.
const SAVE_STALE: u64 = 8;

impl Attrs {
    /// Forgets the attributes (something else wrote to the terminal).
    pub(super) fn forget(&mut self) {
        self.pen = None;
        self.saved = None;
        self.recent.clear();
        self.at = None;
    }

    /// Forgets where the cursor is (something moved it: `DECSTBM`).
    pub(super) fn lose_cursor(&mut self) {
        self.at = None;
    }

    /// Makes erasing and scrolling fill with the default background, as
    /// the screen model assumes.
    pub(super) fn plain<W: Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.set(out, plain_after(self.pen))
    }

    fn set<W: Write>(&mut self, out: &mut W, to: Pen) -> io::Result<()> {
        if self.pen != Some(to) {
            let mut sgr = Vec::with_capacity(32);
            sgr_params(self.pen, to, &mut sgr);
            if !sgr.is_empty() {
                out.write_all(b"\x1b[")?;
                out.write_all(&sgr)?;
                out.write_all(b"m")?;
            }
            self.pen = Some(to);
        }
        Ok(())
    }

    /// Writes `cells` of `frame` (sorted by row, then column, as
    /// `Buffer::diff` gives them) in the order the planner finds shortest,
    /// the cursor moving within `bounds`.
    pub(super) fn cells<W: Write>(
        &mut self,
        out: &mut W,
        frame: &Buffer,
        cells: &[(u16, u16, &Cell)],
        bounds: Bounds,
    ) -> io::Result<()> {
        self.frame += 1;
        let runs = plan::runs(cells, frame);
        let gaps = plan::gaps(&runs, frame);
        // Where the cursor is, if known. Not a pending wrap: whether
        // scrolling or `SGR` keeps it differs between terminals.
        let mut at = self.at.filter(|&(x, _)| x < bounds.width);
        let mut term = plan::Term {
            at,
            bounds,
            saved: self.saved.map(|m| (m.at, m.pen)),
        };
        for i in plan::order(&runs, &gaps, term, self.pen) {
            let r = &runs[i];
            let (_, how) = plan::reach(gaps[i].as_ref(), at, r, self.pen, term);
            match (how, at, self.saved) {
                (plan::How::Print, Some((ax, ay)), _) => print(out, frame, ay, ax, r.x)?,
                (plan::How::Restore, _, Some(m)) => {
                    out.write_all(b"\x1b8")?;
                    self.pen = Some(m.pen);
                    self.saved = Some(Mark {
                        used: self.frame,
                        ..m
                    });
                }
                _ => cursor::write(out, at, (r.x, r.y), bounds, r.kind != plan::Kind::Erase)?,
            }
            self.set(out, r.pen_after(self.pen))?;
            if how != plan::How::Restore && r.kind != plan::Kind::Erase {
                self.remember(out, (r.x, r.y), bounds)?;
                term.saved = self.saved.map(|m| (m.at, m.pen));
            }
            if r.kind == plan::Kind::Erase {
                write!(out, "\x1b[{}X", r.end - r.x)?;
            } else {
                print(out, frame, r.y, r.x, r.end)?;
            }
            at = Some((r.after(), r.y));
        }
        self.at = at;
        Ok(())
    }
}

impl Attrs {
    /// Notes a run about to be printed at `at` in the current pen; saves
    /// the place on the terminal (`ESC 7`) when it was costly to reach and
    /// is written again, unless a costlier one is saved.
    fn remember<W: Write>(&mut self, out: &mut W, at: cursor::At, b: Bounds) -> io::Result<()> {
        let Some(pen) = self.pen else {
            return Ok(());
        };
        let worth = cursor::cost(None, at, b, true) + sgr_len(Some(DEFAULT_PEN), pen);
        if worth < SAVE_WORTH {
            return Ok(());
        }
        if !self.recent.contains(&(at, pen)) {
            if self.recent.len() == RECENT {
                self.recent.remove(0);
            }
            self.recent.push((at, pen));
            return Ok(());
        }
        let better = match self.saved {
            Some(m) if m.at == at => m.pen != pen,
            Some(m) => worth > m.worth || self.frame - m.used > SAVE_STALE,
            None => true,
        };
        if better {
            out.write_all(b"\x1b7")?;
            self.saved = Some(Mark {
                at,
                pen,
                worth,
                used: self.frame,
            });
        }
        Ok(())
    }
}

/// The cheapest pen from `pen` that erases and scrolls in the default
/// background: `pen`'s foreground kept, or everything reset.
fn plain_after(pen: Option<Pen>) -> Pen {
    let keep = Pen {
        fg: pen.map_or(Color::Reset, |p| p.fg),
        underline: pen.map_or(Color::Reset, |p| p.underline),
        ..DEFAULT_PEN
    };
    if sgr_len(pen, keep) <= sgr_len(pen, DEFAULT_PEN) {
        keep
    } else {
        DEFAULT_PEN
    }
}

/// Prints the frame's cells `x..end` of row `y` (a wide cell covers the
/// next ones).
fn print<W: Write>(out: &mut W, frame: &Buffer, y: u16, x: u16, end: u16) -> io::Result<()> {
    let mut gx = x;
    while gx < end {
        let Some(c) = frame.cell((gx, y)) else {
            break;
        };
        out.write_all(c.symbol().as_bytes())?;
        gx += unicode_width::UnicodeWidthStr::width(c.symbol()).max(1) as u16;
    }
    Ok(())
}

/// Where SGR parameters go: bytes, or only their count (the planner
/// prices orders without writing them).
trait Params {
    fn put(&mut self, p: &[u8]);
    fn num(&mut self, n: u8);
    fn is_empty(&self) -> bool;
    /// Starts a parameter (a `;` after the first).
    fn next(&mut self) {
        if !self.is_empty() {
            self.put(b";");
        }
    }
}

impl Params for Vec<u8> {
    fn put(&mut self, p: &[u8]) {
        self.extend_from_slice(p);
    }
    fn num(&mut self, n: u8) {
        let _ = write!(self, "{n}");
    }
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

#[derive(Default)]
struct Count(usize);

impl Params for Count {
    fn put(&mut self, p: &[u8]) {
        self.0 += p.len();
    }
    fn num(&mut self, n: u8) {
        self.0 += match n {
            0..=9 => 1,
            10..=99 => 2,
            _ => 3,
        };
    }
    fn is_empty(&self) -> bool {
        self.0 == 0
    }
}

/// Bytes of the SGR sequence that changes the pen `from` to `to`.
fn sgr_len(from: Option<Pen>, to: Pen) -> usize {
    if from == Some(to) {
        return 0;
    }
    let mut n = Count::default();
    sgr_params(from, to, &mut n);
    if n.0 == 0 { 0 } else { n.0 + 3 }
}

/// The SGR parameters that change the terminal's attributes from `from`
/// (`None`: unknown) to `to`.
fn sgr_params<P: Params>(from: Option<Pen>, to: Pen, sgr: &mut P) {
    let Some(from) = from else {
        sgr.put(b"0");
        return changes(DEFAULT_PEN, to, sgr);
    };
    // Starting from the defaults is needed when some attribute goes away,
    // and may be shorter when a colour does (`0` against `39;49`).
    let resets = |a: Color, b: Color| a != Color::Reset && b == Color::Reset;
    let keep_shorter = || {
        let (mut keep, mut reset) = (Count::default(), Count(1));
        changes(from, to, &mut keep);
        changes(DEFAULT_PEN, to, &mut reset);
        keep.0 <= reset.0
    };
    let colour_goes =
        resets(from.fg, to.fg) || resets(from.bg, to.bg) || resets(from.underline, to.underline);
    if (from.modifier - to.modifier).is_empty() && (!colour_goes || keep_shorter()) {
        return changes(from, to, sgr);
    }
    sgr.put(b"0");
    changes(DEFAULT_PEN, to, sgr);
}

/// The parameters from `from` to `to`, where `to` keeps every attribute
/// `from` has.
fn changes<P: Params>(from: Pen, to: Pen, sgr: &mut P) {
    for (bit, code) in MODIFIER_CODES {
        if to.modifier.contains(bit) && !from.modifier.contains(bit) {
            sgr.next();
            sgr.put(code.as_bytes());
        }
    }
    if to.fg != from.fg {
        colour(sgr, to.fg, Layer::Fg);
    }
    if to.bg != from.bg {
        colour(sgr, to.bg, Layer::Bg);
    }
    if to.underline != from.underline {
        colour(sgr, to.underline, Layer::Underline);
    }
}

const MODIFIER_CODES: [(Modifier, &str); 9] = [
    (Modifier::BOLD, "1"),
    (Modifier::DIM, "2"),
    (Modifier::ITALIC, "3"),
    (Modifier::UNDERLINED, "4"),
    (Modifier::SLOW_BLINK, "5"),
    (Modifier::RAPID_BLINK, "6"),
    (Modifier::REVERSED, "7"),
    (Modifier::HIDDEN, "8"),
    (Modifier::CROSSED_OUT, "9"),
];

#[derive(Clone, Copy)]
enum Layer {
    Fg,
    Bg,
    Underline,
}

/// The SGR parameters for `c`, as crossterm writes them (named colours as
/// palette indices).
fn colour<P: Params>(sgr: &mut P, c: Color, layer: Layer) {
    let (set, reset): (&[u8], &[u8]) = match layer {
        Layer::Fg => (b"38", b"39"),
        Layer::Bg => (b"48", b"49"),
        Layer::Underline => (b"58", b"59"),
    };
    sgr.next();
    let index = match c {
        Color::Reset => return sgr.put(reset),
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
        Color::Indexed(i) => i,
        Color::Rgb(r, g, b) => {
            sgr.put(set);
            sgr.put(b";2;");
            sgr.num(r);
            sgr.put(b";");
            sgr.num(g);
            sgr.put(b";");
            return sgr.num(b);
        }
    };
    sgr.put(set);
    sgr.put(b";5;");
    sgr.num(index);
}

#[cfg(test)]
mod tests;
