//! Writes a frame's changed cells to the terminal in few bytes.
//!
//! ratatui's backend moves the cursor with an absolute `CUP` for every gap,
//! sets both colours whenever either changes and resets all attributes at
//! the end of every frame. A streaming pane changes a few cells per frame,
//! so those fixed costs dominate what goes to the terminal. This writer
//! moves the cursor relatively when that is shorter (`CR LF`, `CUF`),
//! changes only the attributes that differ, in one `SGR`, and erases runs of
//! blank cells with `ECH` instead of printing spaces. The terminal ends the
//! frame in its default attributes, as after ratatui's backend.

use std::io::{self, Write};

use ratatui::buffer::Cell;
use ratatui::style::{Color, Modifier};

/// Shortest run of blank cells erased with `ECH` (`ESC [ n X`, 4+ bytes)
/// rather than printed.
const ERASE_RUN: usize = 6;

/// The attributes the terminal currently draws with.
#[derive(Clone, Copy, PartialEq, Eq)]
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
}

impl Attrs {
    /// Forgets the attributes (something else wrote to the terminal).
    pub(super) fn forget(&mut self) {
        self.pen = None;
    }

    /// Makes erasing and scrolling fill with the default background, as
    /// the screen model assumes.
    pub(super) fn plain<W: Write>(&mut self, out: &mut W) -> io::Result<()> {
        let fg = self.pen.map_or(Color::Reset, |p| p.fg);
        self.set(out, Pen { fg, ..DEFAULT_PEN })
    }

    fn set<W: Write>(&mut self, out: &mut W, to: Pen) -> io::Result<()> {
        let mut sgr = Vec::new();
        let mut from = match self.pen {
            Some(p) => p,
            None => {
                sgr.push(b'0');
                DEFAULT_PEN
            }
        };
        set_pen(out, &mut from, to, &mut sgr)?;
        self.pen = Some(to);
        Ok(())
    }

    /// Writes `cells` (sorted by row, then column, as `Buffer::diff` gives
    /// them) for a screen `width` columns wide.
    pub(super) fn cells<W: Write>(
        &mut self,
        out: &mut W,
        width: u16,
        cells: &[(u16, u16, &Cell)],
    ) -> io::Result<()> {
        // Where the cursor is; `None` until the first absolute move.
        let mut at: Option<(u16, u16)> = None;
        let mut i = 0;
        while i < cells.len() {
            let (x, y, cell) = cells[i];
            move_to(out, at, (x, y))?;
            let blanks = blank_run(&cells[i..], width);
            if blanks >= ERASE_RUN {
                self.plain(out)?;
                write!(out, "\x1b[{blanks}X")?;
                // ECH does not move the cursor.
                at = Some((x, y));
                i += blanks;
                continue;
            }
            let mut want = Pen::of(cell);
            if let Some(pen) = self.pen
                && space_looks_same(cell, pen, want)
            {
                // A space shows no foreground: keep the pen's.
                want.fg = pen.fg;
                want.underline = pen.underline;
            }
            if self.pen != Some(want) {
                self.set(out, want)?;
            }
            let symbol = cell.symbol();
            out.write_all(symbol.as_bytes())?;
            let w = unicode_width::UnicodeWidthStr::width(symbol).max(1) as u16;
            at = Some((x.saturating_add(w), y));
            i += 1;
        }
        Ok(())
    }
}

/// Whether `cell`, a space, looks the same drawn with `pen`'s foreground.
fn space_looks_same(cell: &Cell, pen: Pen, want: Pen) -> bool {
    const SHOWS_FG: Modifier = Modifier::REVERSED
        .union(Modifier::UNDERLINED)
        .union(Modifier::CROSSED_OUT);
    cell.symbol() == " "
        && pen.bg == want.bg
        && pen.modifier == want.modifier
        && !want.modifier.intersects(SHOWS_FG)
}

/// How many cells from the start of `cells` are consecutive default blank
/// cells on one row (what `ECH` leaves behind).
fn blank_run(cells: &[(u16, u16, &Cell)], width: u16) -> usize {
    let Some(&(x0, y0, _)) = cells.first() else {
        return 0;
    };
    cells
        .iter()
        .enumerate()
        .take_while(|&(k, &(x, y, c))| {
            y == y0
                && usize::from(x) == usize::from(x0) + k
                && x < width
                && c.symbol() == " "
                && Pen::of(c) == DEFAULT_PEN
        })
        .count()
}

/// Moves the cursor from `from` to `to` with the shortest sequence.
fn move_to<W: Write>(out: &mut W, from: Option<(u16, u16)>, to: (u16, u16)) -> io::Result<()> {
    let (x, y) = to;
    match from {
        Some(f) if f == to => Ok(()),
        Some((fx, fy)) if fy == y && x > fx => write!(out, "\x1b[{}C", x - fx),
        Some((_, fy)) if y == fy + 1 && x == 0 => out.write_all(b"\r\n"),
        _ if x == 0 => write!(out, "\x1b[{}H", y + 1),
        _ => write!(out, "\x1b[{};{}H", y + 1, x + 1),
    }
}

/// Changes the terminal's attributes from `pen` to `to` in one SGR.
/// (`sgr` may hold parameters already.)
fn set_pen<W: Write>(out: &mut W, pen: &mut Pen, to: Pen, sgr: &mut Vec<u8>) -> io::Result<()> {
    if *pen == to && sgr.is_empty() {
        return Ok(());
    }
    let mut from = *pen;
    if !(from.modifier - to.modifier).is_empty() {
        // Some attribute goes away: start from the defaults.
        param(sgr, b"0");
        from = DEFAULT_PEN;
    }
    for (bit, code) in MODIFIER_CODES {
        if to.modifier.contains(bit) && !from.modifier.contains(bit) {
            param(sgr, code.as_bytes());
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
    *pen = to;
    if sgr.is_empty() {
        return Ok(());
    }
    out.write_all(b"\x1b[")?;
    out.write_all(sgr)?;
    out.write_all(b"m")
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

fn param(sgr: &mut Vec<u8>, p: &[u8]) {
    if !sgr.is_empty() {
        sgr.push(b';');
    }
    sgr.extend_from_slice(p);
}

/// The SGR parameters for `c`, as crossterm writes them (named colours as
/// palette indices).
fn colour(sgr: &mut Vec<u8>, c: Color, layer: Layer) {
    let (set, reset) = match layer {
        Layer::Fg => ("38", "39"),
        Layer::Bg => ("48", "49"),
        Layer::Underline => ("58", "59"),
    };
    let indexed = |i: u8| format!("{set};5;{i}");
    let p = match c {
        Color::Reset => reset.to_owned(),
        Color::Black => indexed(0),
        Color::Red => indexed(1),
        Color::Green => indexed(2),
        Color::Yellow => indexed(3),
        Color::Blue => indexed(4),
        Color::Magenta => indexed(5),
        Color::Cyan => indexed(6),
        Color::Gray => indexed(7),
        Color::DarkGray => indexed(8),
        Color::LightRed => indexed(9),
        Color::LightGreen => indexed(10),
        Color::LightYellow => indexed(11),
        Color::LightBlue => indexed(12),
        Color::LightMagenta => indexed(13),
        Color::LightCyan => indexed(14),
        Color::White => indexed(15),
        Color::Indexed(i) => indexed(i),
        Color::Rgb(r, g, b) => format!("{set};2;{r};{g};{b}"),
    };
    param(sgr, p.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    fn emitted(prev: &Buffer, cur: &Buffer) -> String {
        let mut out = Vec::new();
        let mut attrs = Attrs {
            pen: Some(DEFAULT_PEN),
        };
        attrs
            .cells(&mut out, cur.area.width, &prev.diff(cur))
            .unwrap();
        attrs.set(&mut out, DEFAULT_PEN).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Replays `bytes` onto `screen` with a tiny terminal model that knows
    /// exactly the sequences this writer emits.
    fn replay(screen: &mut Buffer, bytes: &str) {
        let (mut x, mut y) = (0u16, 0u16);
        let mut style = Style::new().fg(Color::Reset).bg(Color::Reset);
        let mut chars = bytes.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\r' => x = 0,
                '\n' => y += 1,
                '\x1b' => {
                    assert_eq!(chars.next(), Some('['));
                    let mut p = String::new();
                    let fin = loop {
                        let c = chars.next().unwrap();
                        if c.is_ascii_alphabetic() {
                            break c;
                        }
                        p.push(c);
                    };
                    let n = |d: u16| p.parse::<u16>().unwrap_or(d);
                    match fin {
                        'C' => x += n(1),
                        'H' => {
                            let mut it = p.split(';').map(|v| v.parse::<u16>().unwrap());
                            y = it.next().unwrap_or(1) - 1;
                            x = it.next().unwrap_or(1) - 1;
                        }
                        'X' => {
                            for k in 0..n(1) {
                                screen[(x + k, y)].reset();
                                screen[(x + k, y)].set_style(style);
                            }
                        }
                        'm' => style = sgr_style(style, &p),
                        other => panic!("unexpected {other}"),
                    }
                }
                c => {
                    let cell = &mut screen[(x, y)];
                    cell.reset();
                    cell.set_char(c).set_style(style);
                    x += 1;
                }
            }
        }
        assert_eq!(
            style,
            Style::new().fg(Color::Reset).bg(Color::Reset),
            "{bytes:?}"
        );
    }

    fn sgr_style(mut s: Style, p: &str) -> Style {
        let mut v = p.split(';').map(|t| t.parse::<u8>().unwrap());
        while let Some(code) = v.next() {
            match code {
                0 => s = Style::new().fg(Color::Reset).bg(Color::Reset),
                1 => s = s.add_modifier(Modifier::BOLD),
                3 => s = s.add_modifier(Modifier::ITALIC),
                39 => s = s.fg(Color::Reset),
                49 => s = s.bg(Color::Reset),
                38 | 48 => {
                    let c = match v.next() {
                        Some(5) => Color::Indexed(v.next().unwrap()),
                        _ => Color::Rgb(v.next().unwrap(), v.next().unwrap(), v.next().unwrap()),
                    };
                    s = if code == 48 { s.bg(c) } else { s.fg(c) };
                }
                other => panic!("sgr {other}"),
            }
        }
        s
    }

    fn screen(lines: &[(&str, Style)]) -> Buffer {
        let mut b = Buffer::empty(Rect::new(0, 0, 20, lines.len() as u16));
        for (y, (l, s)) in lines.iter().enumerate() {
            b.set_string(0, y as u16, l, *s);
        }
        b
    }

    #[test]
    fn replaying_the_bytes_reproduces_the_new_frame() {
        let red = Style::new().fg(Color::Rgb(200, 10, 10));
        let bold = Style::new()
            .add_modifier(Modifier::BOLD)
            .fg(Color::Indexed(4));
        let prev = screen(&[
            ("hello world", Style::new()),
            ("a long line of text", red),
            ("x", Style::new()),
        ]);
        let cur = screen(&[
            ("hello there world", Style::new()),
            ("a", red),
            ("x  bold", bold),
        ]);
        let bytes = emitted(&prev, &cur);
        let mut replayed = prev;
        replay(&mut replayed, &bytes);
        // Styles compare after normalising "no colour" to Reset.
        let norm = |b: &Buffer| {
            b.content
                .iter()
                .map(|c| {
                    let fg = if c.fg == Color::Reset {
                        None
                    } else {
                        Some(c.fg)
                    };
                    (c.symbol().to_owned(), fg, c.modifier)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(norm(&replayed), norm(&cur), "{bytes:?}");
        // The shrunk row is erased, not overprinted with spaces.
        assert!(bytes.contains("X"), "{bytes:?}");
    }

    #[test]
    fn appending_to_a_row_costs_a_move_and_the_text() {
        let prev = screen(&[("first", Style::new()), ("abc", Style::new())]);
        let cur = screen(&[("first", Style::new()), ("abcdef", Style::new())]);
        assert_eq!(emitted(&prev, &cur), "\x1b[2;4Hdef");
    }

    #[test]
    fn a_new_row_after_the_last_written_moves_with_cr_lf() {
        let prev = screen(&[("", Style::new()), ("", Style::new())]);
        let cur = screen(&[("one", Style::new()), ("two", Style::new())]);
        assert_eq!(emitted(&prev, &cur), "\x1b[1Hone\r\ntwo");
    }
}
