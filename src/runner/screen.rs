//! A terminal pane's screen across the runner ↔ app boundary.
//!
//! The runner side owns the vt100 emulator (the PTY reader thread feeds it,
//! `TermOwner` reads it); the app never touches it. What the app draws is a
//! `ScreenUpdate`: plain data (styled rows, cursor, modes, how much history
//! there is) sent as `PaneEvent::Terminal` at most once per PTY frame, the
//! rows taken at the offset the app last asked for (`RunnerCommand::TermView`).
//! Copy mode's text is read here too (`RunnerCommand::CopyTerminal`), so the
//! history never has to cross.

use tui_term::vt100;

pub use crate::protocol::screen::{
    CellStyle, Colour, InputModes, MouseEncoding, MouseMode, ScreenRow, ScreenUpdate,
};
pub(crate) use crate::protocol::screen::{Point, attr};
use crate::provider::TerminalScreen;

fn lock(screen: &TerminalScreen) -> std::sync::MutexGuard<'_, vt100::Parser> {
    screen.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// The screen `scroll` lines up from the live one (clamped to the history
/// there is), leaving the emulator's own view where it was.
pub fn capture(screen: &TerminalScreen, scroll: usize) -> ScreenUpdate {
    let mut parser = lock(screen);
    let saved = parser.screen().scrollback();
    parser.screen_mut().set_scrollback(usize::MAX);
    let history = parser.screen().scrollback();
    parser.screen_mut().set_scrollback(scroll);
    let s = parser.screen();
    let (rows, cols) = s.size();
    let update = ScreenUpdate {
        rows,
        cols,
        cursor: s.cursor_position(),
        hide_cursor: s.hide_cursor(),
        alternate: s.alternate_screen(),
        modes: modes(s),
        history,
        scroll: s.scrollback(),
        hold: false,
        lines: (0..rows).map(|r| row(s, r, cols)).collect(),
    };
    parser.screen_mut().set_scrollback(saved);
    update
}

fn modes(s: &vt100::Screen) -> InputModes {
    InputModes {
        application_cursor: s.application_cursor(),
        bracketed_paste: s.bracketed_paste(),
        mouse: match s.mouse_protocol_mode() {
            vt100::MouseProtocolMode::None => MouseMode::None,
            vt100::MouseProtocolMode::Press => MouseMode::Press,
            vt100::MouseProtocolMode::PressRelease => MouseMode::PressRelease,
            vt100::MouseProtocolMode::ButtonMotion => MouseMode::ButtonMotion,
            vt100::MouseProtocolMode::AnyMotion => MouseMode::AnyMotion,
        },
        encoding: match s.mouse_protocol_encoding() {
            vt100::MouseProtocolEncoding::Default => MouseEncoding::Default,
            vt100::MouseProtocolEncoding::Utf8 => MouseEncoding::Utf8,
            vt100::MouseProtocolEncoding::Sgr => MouseEncoding::Sgr,
        },
    }
}

fn row(s: &vt100::Screen, r: u16, cols: u16) -> ScreenRow {
    let mut out = ScreenRow {
        text: String::with_capacity(usize::from(cols)),
        cells: Vec::with_capacity(usize::from(cols)),
        wrapped: s.row_wrapped(r),
    };
    for c in 0..cols {
        let Some(cell) = s.cell(r, c) else {
            break;
        };
        let mut len = 0;
        if cell.has_contents() {
            let text = cell.contents();
            // A cell holds one grapheme: far below 255 bytes.
            len = u8::try_from(text.len()).unwrap_or(0);
            if len > 0 {
                out.text.push_str(text);
            }
        }
        out.cells.push(CellStyle {
            len,
            fg: colour(cell.fgcolor()),
            bg: colour(cell.bgcolor()),
            attrs: attrs(cell),
        });
    }
    out
}

fn attrs(cell: &vt100::Cell) -> u8 {
    let bits = [
        (cell.bold(), attr::BOLD),
        (cell.dim(), attr::DIM),
        (cell.italic(), attr::ITALIC),
        (cell.underline(), attr::UNDERLINE),
        (cell.inverse(), attr::INVERSE),
        (cell.is_wide(), attr::WIDE),
        (cell.is_wide_continuation(), attr::WIDE_CONT),
    ];
    bits.iter().filter(|(on, _)| *on).fold(0, |a, (_, b)| a | b)
}

fn colour(c: vt100::Color) -> Colour {
    match c {
        vt100::Color::Default => Colour::Default,
        vt100::Color::Idx(i) => Colour::Idx(i),
        vt100::Color::Rgb(r, g, b) => Colour::Rgb(r, g, b),
    }
}

/// The text between two points (inclusive), lines joined by newlines
/// except where the terminal wrapped a long line; trailing blanks dropped.
pub(crate) fn text_between(screen: &TerminalScreen, from: Point, to: Point) -> String {
    let mut parser = lock(screen);
    let saved = parser.screen().scrollback();
    parser.screen_mut().set_scrollback(usize::MAX);
    let history = parser.screen().scrollback();
    let (_, cols) = parser.screen().size();
    let mut out = String::new();
    for line in from.0..=to.0 {
        // Scroll just far enough that `line` is on screen.
        let offset = history.saturating_sub(line);
        parser.screen_mut().set_scrollback(offset);
        let row = u16::try_from(line + offset - history).unwrap_or(u16::MAX);
        let screen = parser.screen();
        let start = if line == from.0 { from.1 } else { 0 };
        let end = if line == to.0 {
            to.1.saturating_add(1)
        } else {
            cols
        };
        let width = end.min(cols).saturating_sub(start);
        let text = screen
            .rows(start, width)
            .nth(usize::from(row))
            .unwrap_or_default();
        out.push_str(text.trim_end());
        if line != to.0 && !screen.row_wrapped(row) {
            out.push('\n');
        }
    }
    parser.screen_mut().set_scrollback(saved);
    out
}

/// The runner's side of a terminal pane's screen: the emulator and the view
/// the app asked for. Tests that drive an `App` without a runner use it to
/// answer the app's `TermView` and `CopyTerminal` commands.
#[derive(Debug)]
pub struct TermOwner {
    screen: TerminalScreen,
    /// Lines above the live screen the app looks at.
    view: usize,
    /// Keep `view` on its lines as history grows (scrolled back, copy mode).
    hold: bool,
    /// The history length `view` refers to.
    seen: usize,
}

impl TermOwner {
    pub fn new(screen: TerminalScreen) -> Self {
        Self {
            screen,
            view: 0,
            hold: false,
            seen: 0,
        }
    }

    /// The emulator (the PTY reader feeds it).
    pub fn screen(&self) -> &TerminalScreen {
        &self.screen
    }

    /// The screen after new output: a held view moves up with the lines it
    /// shows, as the app's `Pane::hold_scrollback` does.
    pub fn update(&mut self) -> ScreenUpdate {
        let mut u = capture(&self.screen, self.view);
        if self.hold {
            self.view += u.history.saturating_sub(self.seen);
            self.seen = u.history;
            if u.scroll != self.view.min(u.history) {
                u = capture(&self.screen, self.view);
            }
        }
        u.hold = self.hold;
        u
    }

    /// `RunnerCommand::TermView`: look `scroll` lines up from the live
    /// screen as it was when the history was `seen` lines long.
    pub fn set_view(&mut self, scroll: usize, seen: usize, hold: bool) -> ScreenUpdate {
        self.view = scroll;
        self.seen = seen;
        self.hold = hold;
        if !hold {
            self.seen = capture(&self.screen, 0).history;
        }
        self.update()
    }

    /// `RunnerCommand::CopyTerminal`.
    pub fn text(&self, from: Point, to: Point) -> String {
        text_between(&self.screen, from, to)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    fn screen(rows: u16, cols: u16, bytes: &[u8]) -> TerminalScreen {
        let mut p = vt100::Parser::new(rows, cols, 100);
        p.process(bytes);
        TerminalScreen(Arc::new(Mutex::new(p)))
    }

    #[test]
    fn text_spans_history_and_screen_and_joins_wrapped_lines() {
        let mut out = Vec::new();
        for i in 1..=6 {
            out.extend(format!("line {i}\r\n").bytes());
        }
        out.extend(b"abcdefghij");
        let s = screen(3, 8, &out);
        // 6 lines + "abcdefgh" "ij" wrapped: history holds 5 lines.
        assert_eq!(capture(&s, 0).history, 5);
        assert_eq!(text_between(&s, (1, 5), (3, 3)), "2\nline 3\nline");
        assert_eq!(text_between(&s, (6, 2), (7, 1)), "cdefghij");
        // The emulator's own view is left where it was.
        assert_eq!(lock(&s).screen().scrollback(), 0);
    }

    #[test]
    fn a_held_view_stays_on_its_lines() {
        let s = screen(3, 8, b"a\r\nb\r\nc\r\nd\r\n");
        let mut owner = TermOwner::new(s.clone());
        let u = owner.set_view(1, 2, true);
        assert_eq!((u.history, u.scroll, u.hold), (2, 1, true));
        lock(&s).process(b"e\r\nf\r\n");
        let u = owner.update();
        assert_eq!((u.history, u.scroll), (4, 3));
        assert_eq!(u.lines[0].text, "b");
    }
}
