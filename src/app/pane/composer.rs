//! The composer part of a pane: the text being written, the inputs sent
//! before it (Up/Down walk them), the completion menu and picker that
//! follow it, the `@` file finder, and what the text is for when it is not
//! a new message (a queued message being edited, a reason for a denial).
//! It knows nothing of the agent; the slash commands it completes are
//! passed in.

use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::app::commands;
use crate::app::menu::{Menu, MenuItem, MenuKind};
use crate::files::FileFinder;

/// Where the `@word` being completed sits: row, first and end char column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mention {
    pub(crate) row: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

pub struct Composer {
    /// The text being written (the widget the UI draws).
    pub(crate) area: TextArea<'static>,
    history: Vec<String>,
    history_pos: Option<usize>,
    draft: String,
    /// The completion menu following the text (`/`, `@`).
    pub menu: Option<Menu>,
    /// The text the menu was closed for (Esc).
    menu_dismissed: Option<String>,
    /// A picker opened by a command; it takes the keys while open.
    pub picker: Option<Menu>,
    /// The `@` file finder over the agent's directory (from the first `@`).
    pub(crate) files: Option<FileFinder>,
    /// The `@word` the file menu completes.
    pub(crate) mention: Option<Mention>,
    /// The text edits queued message `n` (whose text was this).
    pub(crate) editing_queued: Option<(usize, String)>,
    /// The text is a reason for denying the first approval card.
    pub(crate) deny_reason: bool,
}

impl Default for Composer {
    fn default() -> Self {
        Self {
            area: new_area(Vec::new()),
            history: Vec::new(),
            history_pos: None,
            draft: String::new(),
            menu: None,
            menu_dismissed: None,
            picker: None,
            files: None,
            mention: None,
            editing_queued: None,
            deny_reason: false,
        }
    }
}

fn new_area(lines: Vec<String>) -> TextArea<'static> {
    let mut ta = if lines.is_empty() {
        TextArea::default()
    } else {
        TextArea::new(lines)
    };
    ta.set_wrap_mode(WrapMode::WordOrGlyph);
    ta.set_max_histories(100);
    ta
}

impl Composer {
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(|l| l.is_empty())
    }

    pub fn set(&mut self, text: &str) {
        let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let mut ta = new_area(lines);
        ta.move_cursor(CursorMove::Bottom);
        ta.move_cursor(CursorMove::End);
        self.area = ta;
    }

    /// Takes the text, leaving it empty, and remembers it.
    pub(crate) fn take(&mut self) -> String {
        let text = self.text();
        self.set("");
        self.menu = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        self.history_pos = None;
        text
    }

    pub(crate) fn cursor_row(&self) -> usize {
        self.area.cursor().0
    }

    pub(crate) fn last_row(&self) -> usize {
        self.area.lines().len().saturating_sub(1)
    }

    /// Up at the top: the previous input. False when there is none.
    pub(crate) fn history_prev(&mut self) -> bool {
        let pos = match self.history_pos {
            None if self.history.is_empty() => return false,
            None => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(p) => p - 1,
        };
        self.history_pos = Some(pos);
        let text = self.history[pos].clone();
        self.set(&text);
        true
    }

    /// Down at the bottom: the next input, then the draft.
    pub(crate) fn history_next(&mut self) -> bool {
        let Some(pos) = self.history_pos else {
            return false;
        };
        if pos + 1 < self.history.len() {
            self.history_pos = Some(pos + 1);
            let text = self.history[pos + 1].clone();
            self.set(&text);
        } else {
            self.history_pos = None;
            let draft = std::mem::take(&mut self.draft);
            self.set(&draft);
        }
        true
    }

    pub(crate) fn forget_history_walk(&mut self) {
        self.history_pos = None;
    }

    /// Ctrl+U: clears the line up to the cursor, as shells do; at the start
    /// of a line it takes the line above instead, so repeating it empties a
    /// multi-line draft line by line.
    pub(crate) fn clear_line(&mut self) {
        let at = self.area.cursor();
        let (row, col) = (at.0, at.1);
        if col == 0 && row > 0 {
            self.area.delete_newline();
        }
        self.area.delete_line_by_head();
    }

    /// Recomputes the completion menu after the text changed: `/word`
    /// lists hive's and the agent's (`agent_commands`) commands starting
    /// with `word`. A menu closed with Esc stays closed until the text
    /// changes.
    pub(crate) fn refresh_completion(&mut self, agent_commands: &[String]) {
        let text = self.text();
        if self.menu_dismissed.as_deref() == Some(text.as_str()) {
            self.menu = None;
            return;
        }
        self.menu_dismissed = None;
        self.menu = commands::completing(&text).and_then(|word| {
            let items: Vec<MenuItem> = commands::candidates(word, agent_commands)
                .into_iter()
                .map(|c| {
                    let detail = match (c.hint.is_empty(), c.agent) {
                        (_, true) => "agent".to_owned(),
                        (true, false) => c.about,
                        (false, false) => format!("{}  {}", c.hint, c.about),
                    };
                    MenuItem::new(format!("/{}", c.name), detail).with_value(c.name)
                })
                .collect();
            (!items.is_empty()).then(|| Menu::completion(MenuKind::Commands, items))
        });
    }

    /// The completion menu was not closed for the current text.
    pub(crate) fn may_complete(&self) -> bool {
        self.menu_dismissed.is_none()
    }

    /// Closes the completion menu until the text changes.
    pub(crate) fn dismiss_completion(&mut self) {
        self.menu = None;
        self.menu_dismissed = Some(self.text());
    }

    /// Tab (`delta` 1) / Shift+Tab (-1): a single candidate is inserted
    /// whole; several are cycled through. False: nothing to complete.
    pub(crate) fn complete(&mut self, delta: isize) -> bool {
        let Some(menu) = self.menu.as_mut() else {
            return false;
        };
        if menu.kind == MenuKind::Files {
            let single = menu.visible().len() == 1;
            if !single {
                menu.step(delta);
            }
            let target = menu.selected().or(menu.visible().first().copied());
            if let Some(path) = target.map(|i| i.value.clone()) {
                self.insert_mention(&path, single);
            }
            return true;
        }
        let visible = menu.visible();
        if let [only] = visible.as_slice() {
            let text = format!("/{} ", only.value);
            self.menu = None;
            self.set(&text);
            return true;
        }
        menu.step(delta);
        if let Some(item) = menu.selected() {
            let text = format!("/{}", item.value);
            self.set(&text);
        }
        true
    }

    /// Puts `@path` in place of the mention (and a space when `done`).
    pub(crate) fn insert_mention(&mut self, path: &str, done: bool) {
        let Some(m) = self.mention else {
            return;
        };
        let mut lines: Vec<String> = self.area.lines().to_vec();
        let Some(line) = lines.get_mut(m.row) else {
            return;
        };
        let chars: Vec<char> = line.chars().collect();
        let (start, end) = (m.start.min(chars.len()), m.end.min(chars.len()));
        let head: String = chars[..start].iter().collect();
        let tail: String = chars[end..].iter().collect();
        let token = if done && !tail.starts_with(char::is_whitespace) {
            format!("@{path} ")
        } else {
            format!("@{path}")
        };
        *line = format!("{head}{token}{tail}");
        let col = start + token.chars().count();
        self.set(&lines.join("\n"));
        self.area
            .move_cursor(CursorMove::Jump(m.row as u16, col as u16));
        self.mention = Some(Mention { end: col, ..m });
        if done {
            self.menu = None;
            self.mention = None;
        }
    }
}
