//! A terminal pane's screen as it crosses to a console: plain data (styled
//! rows, cursor, modes, how much history there is) sent as
//! `PaneEvent::Terminal` at most once per PTY frame. The runner takes it
//! from its vt100 emulator (src/runner/screen.rs); a console only draws it.

use serde::{Deserialize, Serialize};

/// A point in the terminal's history: (absolute line, column), 0 = the
/// oldest line of scrollback.
pub(crate) type Point = (usize, u16);

/// A cell colour as vt100 reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Colour {
    #[default]
    Default,
    Idx(u8),
    Rgb(u8, u8, u8),
}

/// Bits of `CellStyle::attrs`.
pub(crate) mod attr {
    pub(crate) const BOLD: u8 = 1;
    pub(crate) const DIM: u8 = 2;
    pub(crate) const ITALIC: u8 = 4;
    pub(crate) const UNDERLINE: u8 = 8;
    pub(crate) const INVERSE: u8 = 16;
    /// The first half of a double-width character.
    pub(crate) const WIDE: u8 = 32;
    /// The cell after a double-width character.
    pub(crate) const WIDE_CONT: u8 = 64;
}

/// One cell: how many bytes of its row's `text` it holds (0: empty), and
/// its look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellStyle {
    pub len: u8,
    pub fg: Colour,
    pub bg: Colour,
    pub(crate) attrs: u8,
}

/// One drawn row: the cells' contents run together (one allocation a row)
/// and each cell's style; `wrapped` when the line continues on the next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenRow {
    pub text: String,
    pub cells: Vec<CellStyle>,
    pub wrapped: bool,
}

/// Which mouse events the child asked to receive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MouseMode {
    #[default]
    None,
    Press,
    PressRelease,
    ButtonMotion,
    AnyMotion,
}

/// How the child wants mouse reports encoded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MouseEncoding {
    #[default]
    Default,
    Utf8,
    Sgr,
}

/// The modes of the child's terminal that change what input sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputModes {
    pub application_cursor: bool,
    pub(crate) bracketed_paste: bool,
    pub mouse: MouseMode,
    pub encoding: MouseEncoding,
}

/// A terminal pane's screen as the app draws it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenUpdate {
    pub rows: u16,
    pub cols: u16,
    /// The child's cursor on the live screen (row, col).
    pub cursor: (u16, u16),
    pub(crate) hide_cursor: bool,
    /// The child shows its alternate screen (full-screen TUIs).
    pub alternate: bool,
    pub modes: InputModes,
    /// Lines of history above the live screen (zero on the alternate screen).
    pub history: usize,
    /// How far above the live screen `lines` start (at most `history`).
    pub scroll: usize,
    /// The runner keeps the view on its lines as output arrives
    /// (`RunnerCommand::TermView`'s `hold`).
    pub hold: bool,
    pub lines: Vec<ScreenRow>,
}
