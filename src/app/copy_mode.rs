//! Keyboard scrollback and tmux-style copy mode for terminal (PTY) panes.
//!
//! A terminal pane takes every key for its child, so reading back its
//! history needs keys of hive's own: Shift+PgUp/PgDn page through the
//! emulator's scrollback, and the prefix then `[` enters copy mode, where
//! the keys move a cursor over the screen and its history, `v`/Space start a
//! selection and Enter/`y` copy it through the console's copy path (OSC 52
//! plus the desktop clipboard). Positions are kept as absolute lines
//! (0 = the oldest line of scrollback), so a selection stays on its text
//! while the view scrolls.
//!
//! The emulator is the runner's: the pane holds the last `ScreenUpdate` it
//! sent, asks it for another view (`RunnerCommand::TermView`) when the
//! scroll changes, and for the selected text (`RunnerCommand::CopyTerminal`,
//! answered with `PaneEvent::TerminalText`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::pane::CopyMode;
use super::state::App;
use crate::protocol::pane::RunnerCommand;
use crate::protocol::screen::ScreenUpdate;

/// Lines of history above the live screen (zero on the alternate screen).
pub fn scrollback_len(screen: &ScreenUpdate) -> usize {
    screen.history
}

/// The screen copy mode moves over: scrollback rows, the last screen row,
/// columns and a page's rows.
#[derive(Clone, Copy)]
struct View {
    len: usize,
    last_row: u16,
    cols: u16,
    page: usize,
}

impl CopyMode {
    /// A cursor or scroll key; false: not one.
    fn motion(&mut self, code: KeyCode, scroll: &mut usize, v: View) -> bool {
        match code {
            KeyCode::Up | KeyCode::Char('k') => {
                if self.row > 0 {
                    self.row -= 1;
                } else {
                    *scroll = (*scroll + 1).min(v.len);
                }
            }
            KeyCode::Down | KeyCode::Char('j') => {
                if self.row < v.last_row {
                    self.row += 1;
                } else {
                    *scroll = scroll.saturating_sub(1);
                }
            }
            KeyCode::Left | KeyCode::Char('h') => self.col = self.col.saturating_sub(1),
            KeyCode::Right | KeyCode::Char('l') => {
                self.col = (self.col + 1).min(v.cols.saturating_sub(1))
            }
            KeyCode::Home | KeyCode::Char('0') => self.col = 0,
            KeyCode::End | KeyCode::Char('$') => self.col = v.cols.saturating_sub(1),
            KeyCode::PageUp => *scroll = (*scroll + v.page).min(v.len),
            KeyCode::PageDown => *scroll = scroll.saturating_sub(v.page),
            KeyCode::Char('g') => {
                *scroll = v.len;
                self.row = 0;
            }
            KeyCode::Char('G') => {
                *scroll = 0;
                self.row = v.last_row;
            }
            _ => return false,
        }
        true
    }
}

impl App {
    /// Asks the runners of terminal panes whose scroll changed for that
    /// view of their screen.
    pub fn sync_term_views(&mut self) {
        for (i, p) in self.panes.iter_mut().enumerate() {
            if let Some(cmd) = p.terminal.view_request() {
                self.outbox.runner(i, cmd);
            }
        }
    }

    /// Shift+PgUp (`dir` 1) / Shift+PgDn (-1) in a terminal pane: a page of
    /// the emulator's scrollback, down to the live screen.
    pub(super) fn term_page(&mut self, dir: isize) {
        let Some(p) = self.focused_mut() else {
            return;
        };
        let Some(screen) = p.terminal.screen.as_ref() else {
            return;
        };
        let len = scrollback_len(screen);
        let rows = screen.rows;
        let page = usize::from(rows.saturating_sub(1).max(1));
        p.terminal.scroll = p
            .terminal
            .scroll
            .min(len)
            .saturating_add_signed(dir * page as isize)
            .min(len);
        p.terminal.seen = len;
    }

    /// Prefix `[`: copy mode in the focused terminal pane, the cursor where
    /// the child's cursor is.
    pub(super) fn enter_copy_mode(&mut self) {
        let key = self.keymap.short(crate::keymap::Action::Copy);
        let Some(p) = self.focused_mut() else {
            return;
        };
        let Some(screen) = p.terminal.screen.as_ref() else {
            return self.set_status(format!(
                "copy mode is for terminal panes; here {key} copies a message, code or tool output"
            ));
        };
        let (row, col) = screen.cursor;
        // `seen` is the history now: the terminal part keeps it current
        // while the view is live, so the held view starts here.
        let (row, col) = if p.terminal.scroll > 0 {
            (0, 0)
        } else {
            (row, col)
        };
        p.terminal.copy = Some(CopyMode {
            row,
            col,
            anchor: None,
        });
    }

    /// A key in copy mode. False: not a copy-mode key (the caller lets
    /// hive's global keys act and sends nothing to the child).
    pub(super) fn copy_mode_key(&mut self, ev: &KeyEvent) -> bool {
        let Some(p) = self.focused_mut() else {
            return false;
        };
        let (Some(screen), Some(mut cm)) = (p.terminal.screen.as_ref(), p.terminal.copy) else {
            return false;
        };
        let len = scrollback_len(screen);
        let (rows, cols) = (screen.rows, screen.cols);
        let last_row = rows.saturating_sub(1);
        let page = usize::from(last_row.max(1));
        let mut scroll = p.terminal.scroll.min(len);
        let plain = !ev
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if !plain {
            return false;
        }
        let mut copy_now = false;
        match ev.code {
            KeyCode::Char('v') | KeyCode::Char(' ') => {
                let top = len - scroll;
                cm.anchor = match cm.anchor {
                    Some(_) => None,
                    None => Some(cm.cursor(top)),
                };
            }
            KeyCode::Enter | KeyCode::Char('y') => copy_now = true,
            KeyCode::Char('q') | KeyCode::Esc => {
                p.terminal.copy = None;
                p.terminal.scroll = 0;
                return true;
            }
            code => {
                let view = View {
                    len,
                    last_row,
                    cols,
                    page,
                };
                if !cm.motion(code, &mut scroll, view) {
                    return false;
                }
            }
        }
        let top = len - scroll;
        // Nothing selected: Enter/y copy the cursor's line, like `yy`.
        let (from, to) = cm.selection(top).unwrap_or_else(|| {
            (
                (top + usize::from(cm.row), 0),
                (top + usize::from(cm.row), cols),
            )
        });
        p.terminal.scroll = scroll;
        p.terminal.seen = len;
        p.terminal.copy = Some(cm);
        if copy_now {
            p.terminal.copy = None;
            p.terminal.scroll = 0;
            // The runner reads the text (`PaneEvent::TerminalText` copies it).
            let focus = self.focus;
            self.outbox
                .runner(focus, RunnerCommand::CopyTerminal { from, to });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::pane::selected;

    #[test]
    fn selection_is_ordered_and_inclusive() {
        let cm = CopyMode {
            row: 0,
            col: 2,
            anchor: Some((12, 4)),
        };
        let sel = cm.selection(10).unwrap();
        assert_eq!(sel, ((10, 2), (12, 4)));
        assert!(selected(sel, (11, 0)));
        assert!(selected(sel, (12, 4)));
        assert!(!selected(sel, (12, 5)));
        assert!(!selected(sel, (10, 1)));
    }
}
