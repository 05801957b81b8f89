//! Terminal panes: draws a PTY child's emulated screen.
//!
//! Every function locks the shared emulator only briefly; the PTY reader
//! thread keeps feeding it in small slices meanwhile.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use tui_term::vt100;

use super::theme::Theme;
use crate::app::copy_mode::{CopyMode, selected};
use crate::app::pane::Pane;
use crate::keymap::{Action, Keymap};
use crate::provider::TerminalScreen;
use crate::runner::TurnState;

// Key, paste and mouse encoding for the child is input, not drawing: it lives
// in the app (`app::pty_input`) and is re-exported here for callers of old.
/// Lines of history above the live screen (the most `render` scrolls back);
/// zero while the child uses the alternate screen.
pub use crate::app::copy_mode::scrollback_len;
pub use crate::app::pty_input::{
    KeyModes, encode_key, encode_key_with, encode_mouse, encode_paste, wants_mouse,
};

fn lock(screen: &TerminalScreen) -> std::sync::MutexGuard<'_, vt100::Parser> {
    screen.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// Draws `screen` into `area`, `scrollback` lines up from the live screen
/// (clamped to the history there is). The cursor shows only when `focused`
/// and looking at the live screen.
pub fn render(
    screen: &TerminalScreen,
    scrollback: usize,
    focused: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    let area = area.intersection(buf.area);
    let mut parser = lock(screen);
    let saved = parser.screen().scrollback();
    parser.screen_mut().set_scrollback(scrollback);
    let shown = parser.screen().scrollback();
    draw(parser.screen(), area, buf);
    if focused
        && shown == 0
        && let Some(pos) = cursor_in(parser.screen(), area)
    {
        let cell = &mut buf[pos];
        // Block cursor: invert whatever is under it.
        let inverted = cell.modifier.contains(Modifier::REVERSED);
        let style = if inverted {
            Style::new().remove_modifier(Modifier::REVERSED)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        };
        cell.set_style(style);
    }
    parser.screen_mut().set_scrollback(saved);
}

/// Where the child's cursor is on screen, for `Frame::set_cursor_position`
/// (IME placement); `None` when hidden, scrolled back or outside `area`.
pub fn cursor_position(screen: &TerminalScreen, scrollback: usize, area: Rect) -> Option<Position> {
    if scrollback > 0 {
        return None;
    }
    cursor_in(lock(screen).screen(), area)
}

fn cursor_in(screen: &vt100::Screen, area: Rect) -> Option<Position> {
    if screen.hide_cursor() {
        return None;
    }
    let (row, col) = screen.cursor_position();
    (row < area.height && col < area.width).then(|| Position::new(area.x + col, area.y + row))
}

/// The emulator's size as (cols, rows).
pub fn size(screen: &TerminalScreen) -> (u16, u16) {
    let (rows, cols) = lock(screen).screen().size();
    (cols, rows)
}

/// True while the child shows its alternate screen (full-screen TUIs).
pub fn alternate_screen(screen: &TerminalScreen) -> bool {
    lock(screen).screen().alternate_screen()
}

/// Copy mode over a drawn terminal (`render` first, same `scrollback`):
/// the selection in `selection` style, the copy cursor inverted.
pub fn paint_copy(
    screen: &TerminalScreen,
    scrollback: usize,
    copy: &CopyMode,
    selection: Style,
    area: Rect,
    buf: &mut Buffer,
) {
    let area = area.intersection(buf.area);
    let top = scrollback_len(screen).saturating_sub(scrollback);
    if let Some(sel) = copy.selection(top) {
        for y in 0..area.height {
            for x in 0..area.width {
                if selected(sel, (top + usize::from(y), x)) {
                    buf[(area.x + x, area.y + y)].set_style(selection);
                }
            }
        }
    }
    let pos = Position::new(area.x + copy.col, area.y + copy.row);
    if area.contains(pos) {
        buf[pos].set_style(Style::new().add_modifier(Modifier::REVERSED));
    }
}

/// What a terminal pane's bottom border says: copy mode's keys, how far
/// it is scrolled back, or that the program stopped or restarted.
pub fn note(p: &Pane, km: &Keymap, t: &Theme) -> Option<Line<'static>> {
    let screen = p.terminal.screen.as_ref()?;
    let key = |s: String| Span::styled(s, Style::new().fg(t.accent).add_modifier(Modifier::BOLD));
    let dim = |s: &str| Span::styled(s.to_owned(), Style::new().fg(t.dim));
    let len = scrollback_len(screen);
    let back = p.terminal.scroll.min(len);
    let spans = if let Some(cm) = &p.terminal.copy {
        let (k, what) = if cm.anchor.is_some() {
            ("y", " copy · ")
        } else {
            ("v", " select · ")
        };
        vec![
            Span::styled(
                " COPY ",
                Style::new()
                    .fg(t.status_bg)
                    .bg(t.accent)
                    .add_modifier(Modifier::BOLD),
            ),
            dim(&format!(" {back}/{len} · ")),
            key(k.into()),
            dim(what),
            key("q".into()),
            dim(" quit "),
        ]
    } else if back > 0 {
        vec![
            dim(&format!(" ↑ {back}/{len} · ")),
            key(km.short(Action::PageForward)),
            dim(" forward "),
        ]
    } else if p.state == TurnState::Dead {
        let what = p.terminal.note.as_deref().unwrap_or("the program exited");
        vec![
            Span::styled(
                format!(" ✗ {what}"),
                Style::new().fg(t.error).add_modifier(Modifier::BOLD),
            ),
            dim(" · "),
            key(km.short(Action::Restart)),
            dim(" restarts "),
        ]
    } else {
        vec![dim(&format!(" {} ", p.terminal.note.as_deref()?))]
    };
    Some(Line::from(spans).right_aligned())
}

fn draw(screen: &vt100::Screen, area: Rect, buf: &mut Buffer) {
    for y in 0..area.height {
        for x in 0..area.width {
            let out = &mut buf[(area.x + x, area.y + y)];
            out.reset();
            let Some(cell) = screen.cell(y, x) else {
                continue;
            };
            out.set_style(cell_style(cell));
            if cell.is_wide_continuation() {
                // ratatui skips the cell after a wide symbol when drawing.
                continue;
            }
            let wide_cut = cell.is_wide() && x + 1 >= area.width;
            if cell.has_contents() && !wide_cut {
                out.set_symbol(cell.contents());
            }
        }
    }
}

fn cell_style(cell: &vt100::Cell) -> Style {
    let mut m = Modifier::empty();
    if cell.bold() {
        m |= Modifier::BOLD;
    }
    if cell.dim() {
        m |= Modifier::DIM;
    }
    if cell.italic() {
        m |= Modifier::ITALIC;
    }
    if cell.underline() {
        m |= Modifier::UNDERLINED;
    }
    if cell.inverse() {
        m |= Modifier::REVERSED;
    }
    Style::new()
        .fg(color(cell.fgcolor()))
        .bg(color(cell.bgcolor()))
        .add_modifier(m)
}

fn color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}
