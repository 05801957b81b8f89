//! The order a frame's changed cells are written in.
//!
//! Written row by row, a frame changes colour wherever neighbouring cells
//! differ: each streamed row costs the border's colour, the text's, then
//! the border's again, and a highlighted code line one full RGB `SGR` (up to
//! 19 bytes) per token. Cells of one pen can instead be written in a pass of
//! their own, paying a cursor move per run (a few bytes) instead of colour
//! changes. Which pens deserve a pass depends on the frame, so the planner
//! prices candidate orders with the writer's own encodings (exact byte
//! counts) and keeps the cheapest. Every order writes the same cells, so
//! what the terminal shows does not depend on the choice.

use ratatui::buffer::{Buffer, Cell, CellDiffOption};
use ratatui::style::{Color, Modifier};

use super::cursor::{At, Bounds};
use super::{Pen, cursor, sgr_len};

/// Shortest run of blank cells erased with `ECH` (`ESC [ n X`, 4+ bytes,
/// the cursor stays) rather than printed: at the end of a row's changes,
/// and before more changes on the row (the cursor then has to move on).
const ERASE_LAST: u16 = 5;
const ERASE_BETWEEN: u16 = 9;

/// Widest gap of unchanged cells printed over rather than jumped (a
/// cursor move costs 3 to 8 bytes, a plain cell one).
const BRIDGE: u16 = 6;

/// Most pens tried for a pass of their own (the most used ones), so a
/// frame full of colours is planned in bounded time.
const MAX_PASSES: usize = 12;

/// Changed cells on one row written one after another with one pen (or
/// erased by one `ECH`).
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) x: u16,
    pub(super) y: u16,
    /// The column after the run: the frame's cells `x..end` are written
    /// (an `ECH` leaves the cursor at `x`).
    pub(super) end: u16,
    pub(super) pen: Pen,
    pub(super) kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Cells drawn with exactly `pen`.
    Text,
    /// Spaces: any foreground (and underline colour) shows them the same.
    Blank,
    /// Default blank cells erased with `ECH` (the cursor stays).
    Erase,
}

impl Run {
    /// The cursor's column once the run is written.
    pub(super) fn after(&self) -> u16 {
        if self.kind == Kind::Erase {
            self.x
        } else {
            self.end
        }
    }

    /// The pen the run is drawn with when the terminal's pen is `cur`.
    pub(super) fn pen_after(&self, cur: Option<Pen>) -> Pen {
        let keep = cur.unwrap_or(super::DEFAULT_PEN);
        match self.kind {
            Kind::Text => self.pen,
            Kind::Blank
                if cur.is_some()
                    && keep.bg == self.pen.bg
                    && keep.modifier == self.pen.modifier =>
            {
                Pen {
                    fg: keep.fg,
                    underline: keep.underline,
                    ..self.pen
                }
            }
            Kind::Blank => self.pen,
            // Erasing fills with the current background: make it the
            // default (the foreground does not show).
            Kind::Erase => super::plain_after(cur),
        }
    }
}

/// Whether a cell shows nothing of its foreground (a plain space).
fn blank(c: &Cell) -> bool {
    const SHOWS_FG: Modifier = Modifier::REVERSED
        .union(Modifier::UNDERLINED)
        .union(Modifier::CROSSED_OUT);
    c.symbol() == " " && !c.modifier.intersects(SHOWS_FG)
}

/// Whether `c` is what `ECH` leaves: a blank with the default background
/// and no attributes.
fn erased(c: &Cell) -> bool {
    c.symbol() == " "
        && c.bg == Color::Reset
        && c.modifier.is_empty()
        && c.diff_option == CellDiffOption::None
}

/// Groups `cells` of `frame` (sorted by row, then column, as
/// `Buffer::diff` gives them) into runs.
pub(super) fn runs(cells: &[(u16, u16, &Cell)], frame: &Buffer) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    let mut i = 0;
    while i < cells.len() {
        let (x, y, cell) = cells[i];
        if erased(cell)
            && let Some((n, next)) = erase_from(cells, i, frame)
        {
            runs.push(Run {
                x,
                y,
                end: x + n,
                pen: super::DEFAULT_PEN,
                kind: Kind::Erase,
            });
            i = next;
            continue;
        }
        let pen = Pen::of(cell);
        let is_blank = blank(cell);
        let end =
            x.saturating_add(unicode_width::UnicodeWidthStr::width(cell.symbol()).max(1) as u16);
        let joined = match runs.last_mut() {
            Some(r)
                if r.kind != Kind::Erase
                    && r.y == y
                    && r.end == x
                    && r.pen.bg == pen.bg
                    && r.pen.modifier == pen.modifier =>
            {
                let same = r.pen.fg == pen.fg && r.pen.underline == pen.underline;
                if r.kind == Kind::Blank && !is_blank {
                    // The spaces before take this cell's foreground.
                    r.pen = pen;
                    r.kind = Kind::Text;
                }
                if is_blank || same || r.pen == pen {
                    r.end = end;
                    true
                } else {
                    false
                }
            }
            _ => false,
        };
        if !joined {
            runs.push(Run {
                x,
                y,
                end,
                pen,
                kind: if is_blank { Kind::Blank } else { Kind::Text },
            });
        }
        i += 1;
    }
    runs
}

/// Whether the changed blank `cells[i]` starts an erase worth an `ECH`:
/// the blanks go on in the frame (changed or not) up to the last changed
/// one; gives how many cells it erases and the first change after them.
fn erase_from(cells: &[(u16, u16, &Cell)], i: usize, frame: &Buffer) -> Option<(u16, usize)> {
    let (x, y, _) = cells[i];
    let width = frame.area.width;
    let mut stop = x;
    while stop < width && frame.cell((stop, y)).is_some_and(erased) {
        stop += 1;
    }
    let mut next = i;
    while next < cells.len() && cells[next].1 == y && cells[next].0 < stop {
        next += 1;
    }
    let n = cells[next - 1].0 + 1 - x;
    let more = next < cells.len() && cells[next].1 == y;
    (n >= if more { ERASE_BETWEEN } else { ERASE_LAST }).then_some((n, next))
}

/// The order to write `runs` in, starting with the terminal's pen `pen`:
/// row by row, except that the runs of some pens are written in passes of
/// their own, where that is cheaper.
pub(super) fn order(
    runs: &[Run],
    gaps: &[Option<Gap>],
    term: Term,
    pen: Option<Pen>,
) -> Vec<usize> {
    let plan = Planner::new(runs, gaps, term, pen);
    let best = plan.choose();
    let mut out = Vec::with_capacity(runs.len());
    plan.for_each(&best, |i| out.push(i));
    out
}

/// Pens with a pass of their own, in the order their passes come; the
/// row-by-row pass of everything else comes after the first `before`.
#[derive(Clone, Default)]
struct Arrangement {
    passes: Vec<usize>,
    before: usize,
}

struct Planner<'a> {
    runs: &'a [Run],
    gaps: &'a [Option<Gap>],
    term: Term,
    start: Option<Pen>,
    /// Distinct pens of text runs, most used first, and their runs.
    pens: Vec<(Pen, Vec<usize>)>,
    /// For each run, its index in `pens` (text runs only).
    pen_of: Vec<Option<usize>>,
}

impl<'a> Planner<'a> {
    fn new(runs: &'a [Run], gaps: &'a [Option<Gap>], term: Term, start: Option<Pen>) -> Self {
        let mut pens: Vec<(Pen, Vec<usize>)> = Vec::new();
        for (i, r) in runs.iter().enumerate() {
            if r.kind != Kind::Text {
                continue;
            }
            match pens.iter_mut().find(|(p, _)| *p == r.pen) {
                Some((_, v)) => v.push(i),
                None => pens.push((r.pen, vec![i])),
            }
        }
        pens.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
        pens.truncate(MAX_PASSES);
        let mut pen_of = vec![None; runs.len()];
        for (k, (_, v)) in pens.iter().enumerate() {
            for &i in v {
                pen_of[i] = Some(k);
            }
        }
        Self {
            runs,
            gaps,
            term,
            start,
            pens,
            pen_of,
        }
    }

    /// Greedily gives a pass to each pen that makes the frame shorter.
    fn choose(&self) -> Arrangement {
        let mut best = Arrangement::default();
        if self.pens.len() < 2 {
            return best;
        }
        let mut best_cost = self.cost(&best);
        for k in 0..self.pens.len() {
            let mut passes = best.passes.clone();
            passes.push(k);
            // The pass of the terminal's current pen first, if it has one.
            passes.sort_by_key(|&p| Some(self.pens[p].0) != self.start);
            let leads = usize::from(Some(self.pens[passes[0]].0) == self.start);
            let a = Arrangement {
                passes,
                before: leads,
            };
            let c = self.cost(&a);
            if c < best_cost {
                best_cost = c;
                best = a;
            }
        }
        best
    }

    fn for_each(&self, a: &Arrangement, mut f: impl FnMut(usize)) {
        let mut passed = [false; MAX_PASSES];
        for &k in &a.passes {
            passed[k] = true;
        }
        let in_pass = |i: usize| self.pen_of[i].is_some_and(|k| passed[k]);
        for &k in &a.passes[..a.before] {
            self.pens[k].1.iter().for_each(|&i| f(i));
        }
        (0..self.runs.len())
            .filter(|&i| !in_pass(i))
            .for_each(&mut f);
        for &k in &a.passes[a.before..] {
            self.pens[k].1.iter().for_each(|&i| f(i));
        }
    }

    /// Bytes of cursor moves and pen changes `a` writes.
    fn cost(&self, a: &Arrangement) -> usize {
        let mut pen = self.start;
        let mut at = self.term.at;
        let mut total = 0;
        self.for_each(a, |i| {
            let r = &self.runs[i];
            let (bytes, how) = reach(self.gaps[i].as_ref(), at, r, pen, self.term);
            total += bytes;
            if let (How::Restore, Some((_, saved))) = (how, self.term.saved) {
                pen = Some(saved);
            }
            pen = Some(r.pen_after(pen));
            at = Some((r.after(), r.y));
        });
        // The next frame most often starts by scrolling, in the plain pen.
        total + sgr_len(pen, super::plain_after(pen))
    }
}

/// The unchanged cells between a run and the run before it on its row,
/// when there are few: printing them may be shorter than moving over them.
#[derive(Clone, Copy)]
pub(super) struct Gap {
    /// Where the cursor is after the run before.
    from: u16,
    /// Bytes of the cells' symbols.
    bytes: usize,
    /// What a pen needs to print them as they are: this background and
    /// these attributes, and this foreground and underline colour if any
    /// of them is not a blank.
    bg: Color,
    modifier: Modifier,
    ink: Option<(Color, Color)>,
}

impl Gap {
    fn fits(&self, pen: Pen) -> bool {
        pen.bg == self.bg
            && pen.modifier == self.modifier
            && self.ink.is_none_or(|ink| ink == (pen.fg, pen.underline))
    }
}

/// For each run, the gap before it (see [`Gap`]).
pub(super) fn gaps(runs: &[Run], frame: &Buffer) -> Vec<Option<Gap>> {
    let mut out = Vec::with_capacity(runs.len());
    for (i, r) in runs.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &runs[p]);
        out.push(prev.and_then(|p| gap(frame, p, r)));
    }
    out
}

fn gap(frame: &Buffer, prev: &Run, r: &Run) -> Option<Gap> {
    let from = prev.after();
    if prev.y != r.y || from >= r.x || r.x - from > BRIDGE {
        return None;
    }
    let first = frame.cell((from, r.y))?;
    let mut g = Gap {
        from,
        bytes: 0,
        bg: first.bg,
        modifier: first.modifier,
        ink: None,
    };
    for x in from..r.x {
        let c = frame.cell((x, r.y))?;
        let narrow = c.diff_option == CellDiffOption::None
            && unicode_width::UnicodeWidthStr::width(c.symbol()) == 1;
        if !narrow || c.bg != g.bg || c.modifier != g.modifier {
            return None;
        }
        if !blank(c) {
            let ink = (c.fg, c.underline_color);
            if g.ink.is_some_and(|i| i != ink) {
                return None;
            }
            g.ink = Some(ink);
        }
        g.bytes += c.symbol().len();
    }
    Some(g)
}

/// What the terminal offers the writer besides its pen: where the cursor
/// may move, and what `ESC 8` (DECRC) restores, if anything was saved.
#[derive(Clone, Copy)]
pub(super) struct Term {
    /// Where the cursor is when the frame begins, if known.
    pub(super) at: Option<At>,
    pub(super) bounds: Bounds,
    pub(super) saved: Option<(At, Pen)>,
}

/// How the cursor gets to a run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum How {
    /// A cursor move (`cursor::write`).
    Move,
    /// Printing the gap's cells as they are.
    Print,
    /// `ESC 8`: the saved position, and the saved pen.
    Restore,
}

/// How the cursor gets from `at` with the pen `pen` to run `r` (whose gap
/// is `gap`) and takes its pen: the bytes (moves and `SGR`), and how.
pub(super) fn reach(
    gap: Option<&Gap>,
    at: Option<At>,
    r: &Run,
    pen: Option<Pen>,
    term: Term,
) -> (usize, How) {
    let to = (r.x, r.y);
    let sgr = sgr_len(pen, r.pen_after(pen));
    let moving = cursor::cost(at, to, term.bounds, r.kind != Kind::Erase);
    let mut best = (moving + sgr, How::Move);
    if let (Some(g), Some(p)) = (gap, pen)
        && at == Some((g.from, to.1))
        && g.bytes < moving
        && g.fits(p)
    {
        best = (g.bytes + sgr, How::Print);
    }
    if let Some((saved_at, saved_pen)) = term.saved
        && saved_at == to
    {
        let restoring = 2 + sgr_len(Some(saved_pen), r.pen_after(Some(saved_pen)));
        if restoring < best.0 {
            best = (restoring, How::Restore);
        }
    }
    best
}
