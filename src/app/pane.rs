//! One pane's model: its agent, transcript, turn state, queue, approval
//! cards, composer and scroll request. Where and how it was drawn lives in
//! the UI's view state (`ui::view`); the app reads it back as `Geometry`.

use std::collections::VecDeque;

use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use super::geometry::PaneGeometry;
use super::transcript::Transcript;
use crate::config::AgentConfig;
use crate::event::Usage;
use crate::provider::{Capabilities, PermissionRequest, TerminalScreen};
use crate::runner::TurnState;

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
    /// Something happened while unfocused (turn ended, failed, asks, bell).
    pub attention: bool,
    /// Thinking and tool output shown in full.
    pub expanded: bool,
    /// Terminal (PTY) panes: the child's screen.
    pub terminal: Option<TerminalScreen>,
    pub term_scroll: usize,
    /// The child's size as last sent with `Resize` (what the runner was
    /// told, so it stays with the model).
    pub term_size: Option<(u16, u16)>,
    /// Scroll entry `n` into view at the next frame (a search jump).
    pub reveal: Option<usize>,
    /// Text to highlight in the transcript (the search that jumped here).
    pub highlight: Option<String>,
    /// The agent's own git worktree (`worktree = true`).
    pub worktree: Option<crate::worktree::Worktree>,
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
            attention: false,
            expanded: false,
            terminal: None,
            term_scroll: 0,
            term_size: None,
            reveal: None,
            highlight: None,
            worktree: None,
        };
        pane.model = pane.agent.model.clone();
        pane.composer.set_wrap_mode(WrapMode::WordOrGlyph);
        pane.composer.set_max_histories(100);
        pane
    }

    pub fn name(&self) -> &str {
        self.agent.display_name()
    }

    pub fn is_terminal(&self) -> bool {
        self.terminal.is_some()
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

    pub fn forget_history_walk(&mut self) {
        self.history_pos = None;
    }

    /// Scrolls by `delta` rows, at most `max_scroll` (from the last frame).
    pub fn scroll_by(&mut self, delta: isize, max_scroll: usize) {
        if self.is_terminal() {
            self.term_scroll = self.term_scroll.saturating_add_signed(delta);
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

    /// Slash-command completion for the composer's single line.
    pub fn complete(&mut self) -> Option<Vec<String>> {
        let text = self.composer_text();
        if !text.starts_with('/') || text.contains(['\n', ' ']) || self.commands.is_empty() {
            return None;
        }
        let word = &text[1..];
        let matches: Vec<String> = self
            .commands
            .iter()
            .map(|c| c.trim_start_matches('/').to_owned())
            .filter(|c| c.starts_with(word))
            .collect();
        match matches.as_slice() {
            [] => Some(Vec::new()),
            [one] => {
                self.set_composer(&format!("/{one} "));
                Some(matches)
            }
            many => {
                let mut prefix = many[0].clone();
                for m in many {
                    while !m.starts_with(&prefix) {
                        prefix.pop();
                    }
                }
                if prefix.len() > word.len() {
                    self.set_composer(&format!("/{prefix}"));
                }
                Some(matches)
            }
        }
    }

    /// The slash commands matching what is typed, for the hint line.
    pub fn command_hints(&self) -> Vec<&str> {
        let Some(first) = self.composer.lines().first() else {
            return Vec::new();
        };
        if self.composer.lines().len() != 1 || !first.starts_with('/') || first.contains(' ') {
            return Vec::new();
        }
        let word = &first[1..];
        self.commands
            .iter()
            .map(|c| c.trim_start_matches('/'))
            .filter(|c| c.starts_with(word))
            .take(8)
            .collect()
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

    #[test]
    fn completes_slash_commands() {
        let mut p = pane();
        p.commands = vec!["/compact".into(), "/config".into(), "/review".into()];
        p.set_composer("/r");
        assert_eq!(p.complete().unwrap(), ["review"]);
        assert_eq!(p.composer_text(), "/review ");
        p.set_composer("/c");
        assert_eq!(p.complete().unwrap().len(), 2);
        assert_eq!(p.composer_text(), "/co");
        p.set_composer("hello");
        assert!(p.complete().is_none());
    }
}
