//! `@` file mentions in a composer: the word at the cursor starting with
//! `@` is a query for the pane's file finder (started on the first `@`,
//! over the agent's working directory); its best matches fill the
//! completion menu, and Tab / Enter put `@path` in place of the word, the
//! form Claude Code, Codex and Gemini read as a file reference.

use std::sync::Arc;

use ratatui_textarea::CursorMove;

use super::menu::{Menu, MenuItem, MenuKind};
use super::pane::Pane;
use super::state::App;
use crate::files::FileFinder;

/// Matches shown in the menu.
const SHOWN: usize = 50;

/// Where the `@word` being completed sits: row, first and end char column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mention {
    pub row: usize,
    pub start: usize,
    pub end: usize,
}

impl Pane {
    /// The `@word` ending at the cursor, with its query (the word less `@`).
    fn mention_at_cursor(&self) -> Option<(Mention, String)> {
        let cursor = self.composer.cursor();
        let (row, col) = (cursor.0, cursor.1);
        let line: Vec<char> = self.composer.lines().get(row)?.chars().collect();
        let col = col.min(line.len());
        let start = line[..col]
            .iter()
            .rposition(|c| c.is_whitespace())
            .map_or(0, |i| i + 1);
        if line.get(start) != Some(&'@') {
            return None;
        }
        let query: String = line[start + 1..col].iter().collect();
        Some((
            Mention {
                row,
                start,
                end: col,
            },
            query,
        ))
    }

    /// The finder's current best matches as menu entries.
    fn file_items(&self) -> Vec<MenuItem> {
        self.files
            .as_ref()
            .map(|f| {
                f.top(SHOWN)
                    .into_iter()
                    .map(|path| MenuItem::new(path, ""))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn file_note(&self) -> String {
        match self.files.as_ref().map(FileFinder::listed) {
            Some((n, false)) => format!("listing files… {n}"),
            _ => "no matching file".into(),
        }
    }

    /// Puts `@path` in place of the mention (and a space when `done`).
    pub fn insert_mention(&mut self, path: &str, done: bool) {
        let Some(m) = self.mention else {
            return;
        };
        let mut lines: Vec<String> = self.composer.lines().to_vec();
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
        self.set_composer(&lines.join("\n"));
        self.composer
            .move_cursor(CursorMove::Jump(m.row as u16, col as u16));
        self.mention = Some(Mention { end: col, ..m });
        if done {
            self.menu = None;
            self.mention = None;
        }
    }
}

impl App {
    /// After the composer changed: opens, narrows or closes the `@` menu.
    pub(super) fn refresh_mention(&mut self) {
        let wake = self.wake.clone();
        let Some(p) = self.focused_mut() else {
            return;
        };
        if p.menu
            .as_ref()
            .is_some_and(|m| m.kind == MenuKind::Commands)
            || !p.may_complete()
        {
            return;
        }
        let Some((mention, query)) = p.mention_at_cursor() else {
            if p.menu.as_ref().is_some_and(|m| m.kind == MenuKind::Files) {
                p.menu = None;
            }
            p.mention = None;
            return;
        };
        if p.files.is_none() {
            let root = p
                .agent
                .cwd
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| ".".into());
            let wake = wake.unwrap_or_else(|| Arc::new(|| {}));
            p.files = Some(FileFinder::start(root, wake));
        }
        if let Some(f) = p.files.as_mut() {
            f.set_query(&query);
            f.tick(0);
        }
        p.mention = Some(mention);
        let mut menu = Menu::completion(MenuKind::Files, p.file_items());
        menu.note = p.file_note();
        p.menu = Some(menu);
    }

    /// The finder has news (woken from its threads): refresh the focused
    /// pane's `@` menu unless the user is walking it. True: redraw.
    pub fn tick_files(&mut self) -> bool {
        let Some(p) = self.focused_mut() else {
            return false;
        };
        let Some(f) = p.files.as_mut() else {
            return false;
        };
        f.tick(0);
        let walking = p
            .menu
            .as_ref()
            .is_some_and(|m| m.kind == MenuKind::Files && m.sel.is_none());
        if !walking {
            return false;
        }
        let mut menu = Menu::completion(MenuKind::Files, p.file_items());
        menu.note = p.file_note();
        p.menu = Some(menu);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AgentConfig;

    #[test]
    fn finds_the_word_at_the_cursor_and_replaces_it() {
        let mut p = Pane::new(AgentConfig::new("a", "script"));
        p.set_composer("look at @src/ma please");
        p.composer.move_cursor(CursorMove::Jump(0, 15));
        let (m, q) = p.mention_at_cursor().unwrap();
        assert_eq!((m.start, m.end, q.as_str()), (8, 15, "src/ma"));
        p.mention = Some(m);
        p.insert_mention("src/main.rs", true);
        assert_eq!(p.composer_text(), "look at @src/main.rs please");
        assert_eq!(p.composer.cursor(), (0, 20));
        p.set_composer("mail me@example.com");
        assert!(p.mention_at_cursor().is_none());
    }
}
