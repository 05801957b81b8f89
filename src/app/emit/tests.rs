//! The frame writer's tests: exact bytes where the shortest form is the
//! point, and a replay on a tiny terminal model where the planner chooses
//! the order, so fewer bytes are only accepted where they show the same.

use super::*;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

fn emitted(prev: &Buffer, cur: &Buffer) -> String {
    let mut out = Vec::new();
    let mut attrs = Attrs {
        pen: Some(DEFAULT_PEN),
        ..Attrs::default()
    };
    let bounds = Bounds::full(cur.area.width, cur.area.height);
    attrs.cells(&mut out, cur, &prev.diff(cur), bounds).unwrap();
    attrs.set(&mut out, DEFAULT_PEN).unwrap();
    String::from_utf8(out).unwrap()
}

/// Replays `bytes` onto `screen` with a tiny terminal model that knows
/// exactly the sequences this writer emits.
fn replay(screen: &mut Buffer, bytes: &str) {
    let (mut x, mut y) = (0u16, 0u16);
    let mut style = Style::new().fg(Color::Reset).bg(Color::Reset);
    let mut saved = (x, y, style);
    let mut chars = bytes.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => x = 0,
            '\n' => y += 1,
            '\x08' => x -= 1,
            '\x1b' if chars.peek() == Some(&'7') => {
                chars.next();
                saved = (x, y, style);
            }
            '\x1b' if chars.peek() == Some(&'8') => {
                chars.next();
                (x, y, style) = saved;
            }
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
                    'D' => x -= n(1),
                    'G' => x = n(1) - 1,
                    'A' => y -= n(1),
                    'B' => y += n(1),
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
                // Printing on from the last column wraps.
                if x == screen.area.width {
                    (x, y) = (0, y + 1);
                }
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

/// Replaying `bytes` onto `from` shows `to`.
fn assert_replays_to(mut from: Buffer, bytes: &str, to: &Buffer) {
    replay(&mut from, bytes);
    assert_eq!(looks(&from), looks(to), "{bytes:?}");
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

/// What each cell shows (a space's foreground shows nothing).
fn looks(b: &Buffer) -> Vec<(String, Option<Color>, Color, Modifier)> {
    b.content
        .iter()
        .map(|c| {
            let fg = (c.symbol() != " " && c.fg != Color::Reset).then_some(c.fg);
            (c.symbol().to_owned(), fg, c.bg, c.modifier)
        })
        .collect()
}

/// A pane 20 wide with blue borders, its inside rows `lines` in
/// `text`'s style (empty strings are blank rows).
fn pane(lines: &[&str], text: Style) -> Buffer {
    let border = Style::new().fg(Color::Rgb(137, 180, 250));
    let mut b = Buffer::empty(Rect::new(0, 0, 20, lines.len() as u16));
    for (y, l) in lines.iter().enumerate() {
        let y = y as u16;
        b.set_string(0, y, "┃", border);
        b.set_string(19, y, "┃", border);
        b.set_string(2, y, l, text);
    }
    b
}

#[test]
fn new_rows_get_their_borders_in_one_pass_of_the_border_colour() {
    let text = Style::new().fg(Color::Rgb(192, 197, 206));
    let prev = pane(&["one", "", "", ""], text);
    let cur = pane(&["one", "two", "three", "four"], text);
    // Rows 1..3 came in blank (as after a scroll): no borders yet.
    let mut blank = prev;
    for y in 1..4 {
        for x in 0..20 {
            blank[(x, y)].reset();
        }
    }
    let bytes = emitted(&blank, &cur);
    let blue = "38;2;137;180;250";
    assert_eq!(bytes.matches(blue).count(), 1, "{bytes:?}");
    assert_eq!(bytes.matches("38;2;192;197;206").count(), 1, "{bytes:?}");
    assert_replays_to(blank, &bytes, &cur);
}

#[test]
fn a_gap_is_printed_over_only_in_a_pen_that_draws_it() {
    let text = Style::new().fg(Color::Rgb(192, 197, 206));
    let bar = Style::new().fg(Color::Rgb(69, 71, 90));
    let row = |l: &str| {
        let mut b = pane(&[l], text);
        b.set_string(3, 0, "|", bar);
        b
    };
    let (prev, cur) = (row("a|c e"), row("A|C E"));
    let bytes = emitted(&prev, &cur);
    // `|` is jumped over (another colour), the blank printed over.
    assert!(bytes.contains("A\x1b[CC E"), "{bytes:?}");
    assert_replays_to(prev, &bytes, &cur);
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
    assert_replays_to(prev, &bytes, &cur);
    // The shrunk row is erased, not overprinted with spaces.
    assert!(bytes.contains("X"), "{bytes:?}");
}

/// Frames of a streaming row and a status bar whose spinner, in a pen
/// of its own, moves right after `moved_at` frames. Returns each
/// frame's bytes, after checking that replaying them all shows the last.
fn spinner_frames(frames: usize, moved_at: usize) -> Vec<String> {
    let status = Style::new()
        .fg(Color::Rgb(186, 194, 222))
        .bg(Color::Rgb(24, 24, 37));
    let glyphs = ['⠋', '⠙', '⠹', '⠸'];
    let frame = |i: usize| {
        let text = "streaming text here"
            .chars()
            .take(i % 19 + 1)
            .collect::<String>();
        let bar = match i < moved_at {
            true => format!("model name · {}", glyphs[i % 4]),
            false => format!("model name · long {}", glyphs[i % 4]),
        };
        screen(&[
            (&text, Style::new()),
            ("", Style::new()),
            ("", Style::new()),
            (&bar, status),
        ])
    };
    let first = frame(0);
    let mut attrs = Attrs {
        pen: Some(DEFAULT_PEN),
        ..Attrs::default()
    };
    let bounds = Bounds::full(first.area.width, first.area.height);
    let (mut prev, mut all, mut each) = (first.clone(), String::new(), Vec::new());
    for i in 1..frames {
        let cur = frame(i);
        let mut out = Vec::new();
        attrs
            .cells(&mut out, &cur, &prev.diff(&cur), bounds)
            .unwrap();
        let bytes = String::from_utf8(out).unwrap();
        all.push_str(&bytes);
        each.push(bytes);
        prev = cur;
    }
    let mut out = Vec::new();
    attrs.set(&mut out, DEFAULT_PEN).unwrap();
    all.push_str(std::str::from_utf8(&out).unwrap());
    assert_replays_to(first, &all, &prev);
    each
}

#[test]
fn a_pen_changes_by_its_shorter_sequence() {
    let pen = |fg, bg| Pen {
        fg,
        bg,
        ..DEFAULT_PEN
    };
    let (blue, dark) = (Color::Rgb(137, 180, 250), Color::Rgb(24, 24, 37));
    let set = |from: Pen, to: Pen| {
        let mut out = Vec::new();
        let mut attrs = Attrs {
            pen: Some(from),
            ..Attrs::default()
        };
        attrs.set(&mut out, to).unwrap();
        String::from_utf8(out).unwrap()
    };
    assert_eq!(set(pen(blue, dark), DEFAULT_PEN), "\x1b[0m");
    assert_eq!(set(pen(blue, dark), pen(Color::Reset, dark)), "\x1b[39m");
    assert_eq!(set(pen(blue, Color::Reset), DEFAULT_PEN), "\x1b[0m");
    let bold = Pen {
        modifier: Modifier::BOLD,
        ..pen(blue, Color::Reset)
    };
    assert_eq!(
        set(bold, pen(blue, Color::Reset)),
        "\x1b[0;38;2;137;180;250m"
    );
}

const STATUS_PEN: &str = "48;2;24;24;37m";

#[test]
fn a_spinner_in_its_own_pen_is_reached_with_a_restore() {
    let frames = spinner_frames(12, 100);
    assert!(frames[0].contains(STATUS_PEN), "{frames:?}");
    // Saved the second time, then reached with `ESC 8` (or a
    // backspace from just after it): its pen is never set again.
    assert!(frames[1].contains("\x1b7"), "{frames:?}");
    assert!(
        frames[2..].iter().all(|f| !f.contains(STATUS_PEN)),
        "{frames:?}"
    );
}

#[test]
fn a_saved_place_left_unused_gives_way_to_the_spinner_s_new_place() {
    // The spinner's old and new places cost the same to reach.
    let frames = spinner_frames(40, 6);
    let last = &frames[frames.len() - 10..];
    assert!(last.iter().all(|f| !f.contains(STATUS_PEN)), "{frames:?}");
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
