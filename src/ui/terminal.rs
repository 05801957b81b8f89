//! Terminal panes: draws a PTY child's screen from the plain copy the
//! runner sends (`runner::screen::ScreenUpdate`); the emulator itself stays
//! on the runner's side.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::theme::Theme;
use crate::app::pane::Pane;
use crate::app::pane::{CopyMode, selected};
use crate::keymap::{Action, Keymap};
use crate::protocol::pane::TurnState;
use crate::protocol::screen::{CellStyle, Colour, ScreenUpdate, attr};

// Key, paste and mouse encoding for the child is input, not drawing: it lives
// in the app (`app::pty_input`) and is re-exported here for callers of old.
/// Lines of history above the live screen (the most `render` scrolls back);
/// zero while the child uses the alternate screen.
pub use crate::app::copy_mode::scrollback_len;
pub use crate::app::pty_input::{
    KeyModes, encode_key, encode_key_with, encode_mouse, encode_paste, wants_mouse,
};

/// Draws `screen` into `area` (its rows, taken `screen.scroll` lines up
/// from the live screen). The cursor shows only when `focused` and looking
/// at the live screen.
pub fn render(screen: &ScreenUpdate, focused: bool, area: Rect, buf: &mut Buffer) {
    let area = area.intersection(buf.area);
    draw(screen, area, buf);
    if focused
        && screen.scroll == 0
        && let Some(pos) = cursor_in(screen, area)
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
}

/// Where the child's cursor is on screen, for `Frame::set_cursor_position`
/// (IME placement); `None` when hidden, scrolled back or outside `area`.
pub fn cursor_position(screen: &ScreenUpdate, scrollback: usize, area: Rect) -> Option<Position> {
    if scrollback > 0 {
        return None;
    }
    cursor_in(screen, area)
}

fn cursor_in(screen: &ScreenUpdate, area: Rect) -> Option<Position> {
    if screen.hide_cursor {
        return None;
    }
    let (row, col) = screen.cursor;
    (row < area.height && col < area.width).then(|| Position::new(area.x + col, area.y + row))
}

/// The emulator's size as (cols, rows).
pub fn size(screen: &ScreenUpdate) -> (u16, u16) {
    (screen.cols, screen.rows)
}

/// True while the child shows its alternate screen (full-screen TUIs).
pub fn alternate_screen(screen: &ScreenUpdate) -> bool {
    screen.alternate
}

/// Copy mode over a drawn terminal (`render` first, same `scrollback`):
/// the selection in `selection` style, the copy cursor inverted.
pub(crate) fn paint_copy(
    screen: &ScreenUpdate,
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
    } else if p.conversation.state == TurnState::Dead {
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

/// The mark of a pane shown smaller than its program draws (another
/// console, the latest, gave it its size): `cut COLSxROWS`, the program's
/// size. A bigger pane needs none: past the program's area its cells are
/// blank.
pub(crate) fn cut(screen: &ScreenUpdate, inner: Rect, t: &Theme) -> Option<Line<'static>> {
    if inner.width == 0 || inner.height == 0 {
        return None;
    }
    (screen.cols > inner.width || screen.rows > inner.height).then(|| {
        Line::from(Span::styled(
            format!(" cut {}x{} ", screen.cols, screen.rows),
            Style::new().fg(t.warning).add_modifier(Modifier::BOLD),
        ))
    })
}

fn draw(screen: &ScreenUpdate, area: Rect, buf: &mut Buffer) {
    for y in 0..area.height {
        let row = screen.lines.get(usize::from(y));
        let mut at = 0;
        for x in 0..area.width {
            let out = &mut buf[(area.x + x, area.y + y)];
            out.reset();
            let Some((row, cell)) = row.and_then(|r| Some((r, r.cells.get(usize::from(x))?)))
            else {
                continue;
            };
            let text = row.text.get(at..at + usize::from(cell.len)).unwrap_or("");
            at += usize::from(cell.len);
            out.set_style(cell_style(cell));
            if cell.attrs & attr::WIDE_CONT != 0 {
                // ratatui skips the cell after a wide symbol when drawing.
                continue;
            }
            let wide_cut = cell.attrs & attr::WIDE != 0 && x + 1 >= area.width;
            if !text.is_empty() && !wide_cut {
                out.set_symbol(text);
            }
        }
    }
}

fn cell_style(cell: &CellStyle) -> Style {
    let mut m = Modifier::empty();
    for (bit, modifier) in [
        (attr::BOLD, Modifier::BOLD),
        (attr::DIM, Modifier::DIM),
        (attr::ITALIC, Modifier::ITALIC),
        (attr::UNDERLINE, Modifier::UNDERLINED),
        (attr::INVERSE, Modifier::REVERSED),
    ] {
        if cell.attrs & bit != 0 {
            m |= modifier;
        }
    }
    Style::new()
        .fg(color(cell.fg))
        .bg(color(cell.bg))
        .add_modifier(m)
}

fn color(c: Colour) -> Color {
    match c {
        Colour::Default => Color::Reset,
        Colour::Idx(i) => Color::Indexed(i),
        Colour::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}
