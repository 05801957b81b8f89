//! Terminal panes: draws a PTY child's emulated screen (issue #8 builds it out).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::provider::TerminalScreen;

/// Draws `screen` into `area`, `scrollback` lines up from the live screen.
pub fn render(
    screen: &TerminalScreen,
    scrollback: usize,
    focused: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    let _ = (screen, scrollback, focused, area, buf);
}

/// The bytes a terminal would send for `key` to the child behind `screen`
/// (application cursor mode and the like come from the screen's state).
/// `None`: the key has no terminal encoding.
pub fn encode_key(key: &crossterm::event::KeyEvent, screen: &TerminalScreen) -> Option<Vec<u8>> {
    let _ = (key, screen);
    None
}

/// Pasted text as the child expects it (bracketed when it asked for that).
pub fn encode_paste(text: &str, screen: &TerminalScreen) -> Vec<u8> {
    let _ = screen;
    text.as_bytes().to_vec()
}

/// True when the child asked for mouse reporting (the wheel then goes to it).
pub fn wants_mouse(screen: &TerminalScreen) -> bool {
    let _ = screen;
    false
}
