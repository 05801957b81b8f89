//! `@` file mentions in a composer: the word at the cursor starting with
//! `@` is a query for the pane's file finder (started on the first `@`,
//! over the agent's working directory); its best matches fill the
//! completion menu, and Tab / Enter put `@path` in place of the word, the
//! form Claude Code, Codex and Gemini read as a file reference.

use std::sync::Arc;

use super::menu::{Menu, MenuItem, MenuKind};
use super::pane::{Composer, Mention};
use super::state::App;
use crate::files::FileFinder;

/// Matches shown in the menu.
const SHOWN: usize = 50;

impl Composer {
    /// The `@word` ending at the cursor, with its query (the word less `@`).
    fn mention_at_cursor(&self) -> Option<(Mention, String)> {
        let cursor = self.area.cursor();
        let (row, col) = (cursor.0, cursor.1);
        let line: Vec<char> = self.area.lines().get(row)?.chars().collect();
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
}

impl App {
    /// After the composer changed: opens, narrows or closes the `@` menu.
    pub(super) fn refresh_mention(&mut self) {
        let wake = self.wake.clone();
        let Some(p) = self.focused_mut() else {
            return;
        };
        if p.composer
            .menu
            .as_ref()
            .is_some_and(|m| m.kind == MenuKind::Commands)
            || !p.composer.may_complete()
        {
            return;
        }
        let Some((mention, query)) = p.composer.mention_at_cursor() else {
            if p.composer
                .menu
                .as_ref()
                .is_some_and(|m| m.kind == MenuKind::Files)
            {
                p.composer.menu = None;
            }
            p.composer.mention = None;
            return;
        };
        if p.composer.files.is_none() {
            // Its files are its server's to list (here or on its host), in
            // the pane's working directory as the server runs it.
            let wake = wake.unwrap_or_else(|| Arc::new(|| {}));
            p.composer.files = Some(FileFinder::awaiting(wake));
            let pane = self.focus;
            self.outbox
                .push(super::command::AppCommand::ListFiles { pane });
            return self.refresh_mention();
        }
        if let Some(f) = p.composer.files.as_mut() {
            f.set_query(&query);
            f.tick(0);
        }
        p.composer.mention = Some(mention);
        let mut menu = Menu::completion(MenuKind::Files, p.composer.file_items());
        menu.note = p.composer.file_note();
        p.composer.menu = Some(menu);
    }

    /// Pane `pane`'s files, listed by its server: its finder takes them.
    /// True: the focused pane's menu shows them (redraw).
    pub fn on_files(&mut self, pane: usize, paths: Vec<String>) -> bool {
        let Some(f) = self
            .panes
            .get_mut(pane)
            .and_then(|p| p.composer.files.as_mut())
        else {
            return false;
        };
        f.fill(paths);
        pane == self.focus && self.tick_files()
    }

    /// The finder has news (woken from its threads): refresh the focused
    /// pane's `@` menu unless the user is walking it. True: redraw.
    pub fn tick_files(&mut self) -> bool {
        let Some(p) = self.focused_mut() else {
            return false;
        };
        let Some(f) = p.composer.files.as_mut() else {
            return false;
        };
        f.tick(0);
        let walking = p
            .composer
            .menu
            .as_ref()
            .is_some_and(|m| m.kind == MenuKind::Files && m.sel.is_none());
        if !walking {
            return false;
        }
        let mut menu = Menu::completion(MenuKind::Files, p.composer.file_items());
        menu.note = p.composer.file_note();
        p.composer.menu = Some(menu);
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::app::pane::Pane;
    use crate::config::AgentConfig;
    use ratatui_textarea::CursorMove;

    #[test]
    fn finds_the_word_at_the_cursor_and_replaces_it() {
        let mut p = Pane::new(AgentConfig::new("a", "script"));
        p.composer.set("look at @src/ma please");
        p.composer.area.move_cursor(CursorMove::Jump(0, 15));
        let (m, q) = p.composer.mention_at_cursor().unwrap();
        assert_eq!((m.start, m.end, q.as_str()), (8, 15, "src/ma"));
        p.composer.mention = Some(m);
        p.composer.insert_mention("src/main.rs", true);
        assert_eq!(p.composer.text(), "look at @src/main.rs please");
        assert_eq!(p.composer.area.cursor(), (0, 20));
        p.composer.set("mail me@example.com");
        assert!(p.composer.mention_at_cursor().is_none());
    }
}
