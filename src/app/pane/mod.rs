//! One pane's model: its agent, transcript, turn state, queue, approval
//! cards, composer and scroll request. Where and how it was drawn lives in
//! the UI's view state (`ui::view`); the app reads it back as `Geometry`.

mod attention;
mod terminal;

use std::collections::VecDeque;

use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use super::commands;
use super::geometry::PaneGeometry;
use super::mention::Mention;
use super::menu::{Menu, MenuItem, MenuKind};
use super::transcript::Transcript;
use crate::config::AgentConfig;
use crate::event::Usage;
use crate::files::FileFinder;
use crate::provider::{Capabilities, PermissionRequest};
use crate::runner::TurnState;
pub use attention::Attention;
pub use terminal::Terminal;

pub struct Pane {
    pub agent: AgentConfig,
    pub transcript: Transcript,
    pub state: TurnState,
    pub capabilities: Option<Capabilities>,
    /// The provider could not start: shown instead of a conversation.
    pub failed: Option<String>,
    pub model: Option<String>,
    /// Slash commands the agent offers (completion in the composer).
    pub commands: Vec<String>,
    /// Models the agent offers (the `/model` picker).
    pub models: Vec<String>,
    /// The effort level set with `/effort` (or configured).
    pub effort: Option<String>,
    /// The completion menu following the composer (`/`, `@`).
    pub menu: Option<Menu>,
    /// The composer text the menu was closed for (Esc).
    menu_dismissed: Option<String>,
    /// A picker opened by a command; it takes the keys while open.
    pub picker: Option<Menu>,
    /// The `@` file finder over the agent's directory (from the first `@`).
    pub files: Option<FileFinder>,
    /// The `@word` the file menu completes.
    pub mention: Option<Mention>,
    /// Usage of every finished turn added up.
    pub usage: Usage,
    pub turns: u64,
    /// The running turn has had no output since then (runner's stall_after).
    pub stalled_since: Option<std::time::Instant>,
    pub queue: Vec<String>,
    /// The queue came back from a previous run and waits for the user.
    pub queue_restored: bool,
    /// Queue management mode: the selected entry.
    pub queue_sel: Option<usize>,
    /// The composer edits queued message `n` (whose text was this).
    pub editing_queued: Option<(usize, String)>,
    pub permissions: VecDeque<PermissionRequest>,
    /// The composer collects a reason for denying the first card.
    pub deny_reason: bool,
    pub composer: TextArea<'static>,
    history: Vec<String>,
    history_pos: Option<usize>,
    draft: String,
    /// Transcript lines scrolled up from the bottom (0 = follow); clamped
    /// after each frame to what the view measured.
    pub scroll: usize,
    /// Whether, and what, happened while the user looked elsewhere.
    pub attention: Attention,
    /// Thinking and tool output shown in full.
    pub expanded: bool,
    /// Terminal (PTY) panes: the child's screen and how it is shown.
    pub terminal: Terminal,
    /// Scroll entry `n` into view at the next frame (a search jump).
    pub reveal: Option<usize>,
    /// Text to highlight in the transcript (the search that jumped here).
    pub highlight: Option<String>,
    /// The agent's own git worktree (`worktree = true`).
    pub worktree: Option<crate::worktree::Worktree>,
    /// The history session the pane shows and records into.
    pub history_session: Option<String>,
    /// Images the next message carries (chips above the composer).
    pub attachments: Vec<crate::image::Image>,
}

impl Pane {
    pub fn new(agent: AgentConfig) -> Self {
        let mut pane = Self {
            agent,
            transcript: Transcript::default(),
            state: TurnState::Idle,
            capabilities: None,
            failed: None,
            model: None,
            commands: Vec::new(),
            models: Vec::new(),
            effort: None,
            menu: None,
            menu_dismissed: None,
            picker: None,
            files: None,
            mention: None,
            usage: Usage::default(),
            turns: 0,
            stalled_since: None,
            queue: Vec::new(),
            queue_restored: false,
            queue_sel: None,
            editing_queued: None,
            permissions: VecDeque::new(),
            deny_reason: false,
            composer: TextArea::default(),
            history: Vec::new(),
            history_pos: None,
            draft: String::new(),
            scroll: 0,
            attention: Attention::default(),
            expanded: false,
            terminal: Terminal::default(),
            reveal: None,
            highlight: None,
            worktree: None,
            history_session: None,
            attachments: Vec::new(),
        };
        pane.model = pane.agent.model.clone();
        pane.effort = pane.agent.thinking.clone();
        pane.composer.set_wrap_mode(WrapMode::WordOrGlyph);
        pane.composer.set_max_histories(100);
        pane
    }

    pub fn name(&self) -> &str {
        self.agent.display_name()
    }

    pub fn is_terminal(&self) -> bool {
        self.terminal.screen.is_some()
    }

    pub fn is_busy(&self) -> bool {
        self.state.is_busy()
    }

    /// Needs the user: an unanswered approval card.
    pub fn is_waiting(&self) -> bool {
        !self.permissions.is_empty()
    }

    pub fn composer_text(&self) -> String {
        self.composer.lines().join("\n")
    }

    pub fn composer_is_empty(&self) -> bool {
        self.composer.lines().iter().all(|l| l.is_empty())
    }

    pub fn set_composer(&mut self, text: &str) {
        let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let mut ta = TextArea::new(lines);
        ta.set_wrap_mode(WrapMode::WordOrGlyph);
        ta.set_max_histories(100);
        ta.move_cursor(CursorMove::Bottom);
        ta.move_cursor(CursorMove::End);
        self.composer = ta;
    }

    /// Takes the composer's text, leaving it empty, and remembers it.
    pub fn take_composer(&mut self) -> String {
        let text = self.composer_text();
        self.set_composer("");
        self.menu = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        self.history_pos = None;
        text
    }

    pub fn cursor_row(&self) -> usize {
        self.composer.cursor().0
    }

    pub fn last_row(&self) -> usize {
        self.composer.lines().len().saturating_sub(1)
    }

    /// Up at the composer's top: the previous input. False when there is none.
    pub fn history_prev(&mut self) -> bool {
        let pos = match self.history_pos {
            None if self.history.is_empty() => return false,
            None => {
                self.draft = self.composer_text();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(p) => p - 1,
        };
        self.history_pos = Some(pos);
        let text = self.history[pos].clone();
        self.set_composer(&text);
        true
    }

    /// Down at the composer's bottom: the next input, then the draft.
    pub fn history_next(&mut self) -> bool {
        let Some(pos) = self.history_pos else {
            return false;
        };
        if pos + 1 < self.history.len() {
            self.history_pos = Some(pos + 1);
            let text = self.history[pos + 1].clone();
            self.set_composer(&text);
        } else {
            self.history_pos = None;
            let draft = std::mem::take(&mut self.draft);
            self.set_composer(&draft);
        }
        true
    }

    /// Ctrl+U: clears the composer's line up to the cursor, as shells do;
    /// at the start of a line it takes the line above instead, so repeating
    /// it empties a multi-line draft line by line.
    pub fn clear_line(&mut self) {
        let at = self.composer.cursor();
        let (row, col) = (at.0, at.1);
        if col == 0 && row > 0 {
            self.composer.delete_newline();
        }
        self.composer.delete_line_by_head();
        self.refresh_completion();
    }

    pub fn forget_history_walk(&mut self) {
        self.history_pos = None;
    }

    /// Scrolls by `delta` rows, at most `max_scroll` (from the last frame).
    pub fn scroll_by(&mut self, delta: isize, max_scroll: usize) {
        if self.terminal.scroll_by(delta) {
            return;
        }
        self.scroll = self.scroll.saturating_add_signed(delta).min(max_scroll);
    }

    /// Scrolls a page (the last frame's viewport less two rows of context)
    /// up (`dir` 1) or down (-1).
    pub fn scroll_page(&mut self, dir: isize, g: &PaneGeometry) {
        let page = usize::from(g.view_rows.saturating_sub(2).max(1));
        self.scroll_by(dir * page as isize, g.max_scroll);
    }

    /// Recomputes the completion menu after the composer changed: `/word`
    /// lists the commands starting with `word`. A menu closed with Esc
    /// stays closed until the text changes.
    pub fn refresh_completion(&mut self) {
        let text = self.composer_text();
        if self.menu_dismissed.as_deref() == Some(text.as_str()) {
            self.menu = None;
            return;
        }
        self.menu_dismissed = None;
        self.menu = commands::completing(&text).and_then(|word| {
            let items: Vec<MenuItem> = commands::candidates(word, &self.commands)
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

    /// The completion menu was not closed for the composer's current text.
    pub fn may_complete(&self) -> bool {
        self.menu_dismissed.is_none()
    }

    /// Closes the completion menu until the composer changes.
    pub fn dismiss_completion(&mut self) {
        self.menu = None;
        self.menu_dismissed = Some(self.composer_text());
    }

    /// Tab (`delta` 1) / Shift+Tab (-1): a single candidate is inserted
    /// whole; several are cycled through. False: nothing to complete.
    pub fn complete(&mut self, delta: isize) -> bool {
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
            self.set_composer(&text);
            return true;
        }
        menu.step(delta);
        if let Some(item) = menu.selected() {
            let text = format!("/{}", item.value);
            self.set_composer(&text);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane() -> Pane {
        Pane::new(AgentConfig::new("a", "script"))
    }

    #[test]
    fn history_walks_back_and_restores_the_draft() {
        let mut p = pane();
        p.set_composer("one");
        p.take_composer();
        p.set_composer("two");
        p.take_composer();
        p.set_composer("draft");
        assert!(p.history_prev());
        assert_eq!(p.composer_text(), "two");
        assert!(p.history_prev());
        assert_eq!(p.composer_text(), "one");
        assert!(!p.history_prev());
        assert!(p.history_next());
        assert!(p.history_next());
        assert_eq!(p.composer_text(), "draft");
        assert!(!p.history_next());
    }

    fn typed(p: &mut Pane, text: &str) {
        p.set_composer(text);
        p.refresh_completion();
    }

    #[test]
    fn completes_slash_commands() {
        let mut p = pane();
        p.commands = vec!["/compact".into(), "/config".into(), "/review".into()];
        typed(&mut p, "/rev");
        assert!(p.complete(1));
        assert_eq!(p.composer_text(), "/review ");
        assert!(p.menu.is_none());
        // Several candidates: Tab cycles (hive's own first), Shift+Tab back.
        typed(&mut p, "/co");
        assert!(p.complete(1));
        assert_eq!(p.composer_text(), "/compact");
        assert!(p.complete(1));
        assert_eq!(p.composer_text(), "/copy");
        assert!(p.complete(1));
        assert_eq!(p.composer_text(), "/config");
        assert!(p.complete(-1));
        assert_eq!(p.composer_text(), "/copy");
        typed(&mut p, "hello");
        assert!(!p.complete(1));
        assert_eq!(p.composer_text(), "hello");
    }

    #[test]
    fn ctrl_u_clears_a_multi_line_draft_line_by_line() {
        let mut p = pane();
        p.set_composer("first line\nsecond\nthird one");
        p.clear_line();
        assert_eq!(p.composer_text(), "first line\nsecond\n");
        p.clear_line();
        assert_eq!(p.composer_text(), "first line\n");
        p.clear_line();
        assert_eq!(p.composer_text(), "");
        assert!(p.composer_is_empty());
        // Mid-line: only what is before the cursor goes.
        p.set_composer("keep this");
        p.composer.move_cursor(CursorMove::Head);
        p.composer.move_cursor(CursorMove::WordForward);
        p.clear_line();
        assert_eq!(p.composer_text(), "this");
    }

    #[test]
    fn an_escaped_menu_stays_closed_until_the_text_changes() {
        let mut p = pane();
        typed(&mut p, "/m");
        assert!(p.menu.is_some());
        p.dismiss_completion();
        p.refresh_completion();
        assert!(p.menu.is_none());
        typed(&mut p, "/mo");
        assert!(p.menu.is_some());
    }
}
