//! One pane's model, made of parts (one file each): the conversation, the
//! composer, the pending queue and approval cards, the terminal screen and
//! the attention marks, plus the agent, the scroll request and the
//! worktree. Where and how it was drawn lives in the UI's view state
//! (`ui::view`); the app reads it back as `Geometry`.

mod attention;
mod composer;
mod conversation;
mod pending;
mod terminal;

use super::geometry::PaneGeometry;
use crate::config::AgentConfig;
use crate::protocol::snapshot::PaneCard;
pub(crate) use attention::Attention;
pub(crate) use composer::Composer;
pub(crate) use composer::Mention;
pub(crate) use conversation::Conversation;
pub(crate) use pending::Pending;
pub(crate) use terminal::CopyMode;
pub use terminal::{Terminal, selected};

pub struct Pane {
    pub agent: AgentConfig,
    /// The transcript, turn state and what the agent offers.
    pub conversation: Conversation,
    /// The text being written and what follows it (menus, history).
    pub composer: Composer,
    /// Queued messages and approval cards.
    pub pending: Pending,
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
    pub worktree: Option<crate::protocol::git::Worktree>,
    /// The host whose server runs the pane, when not this machine's.
    pub host: Option<String>,
    /// Its window (1-based), as the server placed it.
    pub window: usize,
    /// The agent that spawned it (`agent.spawn`), by id.
    pub parent: Option<String>,
    /// The history session the pane shows and records into.
    pub history_session: Option<String>,
    /// Images the next message carries (chips above the composer).
    pub attachments: Vec<crate::protocol::image::Image>,
    /// Words that show a scripted agent's features (its scenario's `match`
    /// words), offered while the pane is empty.
    pub try_words: Vec<String>,
    /// The agent's process tree, as the server last sampled it.
    pub process: Option<crate::protocol::pane::ProcessSample>,
}

impl Pane {
    pub fn new(agent: AgentConfig) -> Self {
        Self {
            conversation: Conversation::new(&agent),
            composer: Composer::default(),
            pending: Pending::default(),
            scroll: 0,
            attention: Attention::default(),
            expanded: false,
            terminal: Terminal::default(),
            reveal: None,
            highlight: None,
            worktree: None,
            host: None,
            window: 1,
            parent: None,
            history_session: None,
            attachments: Vec::new(),
            try_words: Vec::new(),
            process: None,
            agent,
        }
    }

    /// The pane of a card from the server: its agent is what the card
    /// says (`AgentConfig::from_card`), its try words the server's.
    pub fn of_card(card: &PaneCard) -> Self {
        Self {
            try_words: card.try_words.clone(),
            ..Self::new(AgentConfig::from_card(card))
        }
    }

    pub fn name(&self) -> &str {
        self.agent.display_name()
    }

    pub fn is_terminal(&self) -> bool {
        self.terminal.screen.is_some()
    }

    pub(crate) fn is_busy(&self) -> bool {
        self.conversation.is_busy()
    }

    /// The agent's processes use more than the agent's configured
    /// `max_cpu_percent` or `max_rss_mb`.
    pub(crate) fn over_limit(&self) -> bool {
        let Some(s) = &self.process else {
            return false;
        };
        self.agent
            .max_cpu_percent
            .is_some_and(|m| s.cpu_percent > m)
            || self
                .agent
                .max_rss_mb
                .is_some_and(|m| s.rss_bytes > m.saturating_mul(1 << 20))
    }

    /// Needs the user: an unanswered approval card.
    pub(crate) fn is_waiting(&self) -> bool {
        self.pending.asks()
    }

    /// Ctrl+U in the composer (`Composer::clear_line`), then the menu
    /// follows the text.
    pub(crate) fn clear_line(&mut self) {
        self.composer.clear_line();
        self.refresh_completion();
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
    pub(crate) fn scroll_page(&mut self, dir: isize, g: &PaneGeometry) {
        let page = usize::from(g.view_rows.saturating_sub(2).max(1));
        self.scroll_by(dir * page as isize, g.max_scroll);
    }

    /// Recomputes the completion menu after the composer changed, over
    /// hive's and the agent's slash commands.
    pub(crate) fn refresh_completion(&mut self) {
        self.composer
            .refresh_completion(&self.conversation.commands);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui_textarea::CursorMove;

    fn pane() -> Pane {
        Pane::new(AgentConfig::new("a", "script"))
    }

    #[test]
    fn history_walks_back_and_restores_the_draft() {
        let mut p = pane();
        p.composer.set("one");
        p.composer.take();
        p.composer.set("two");
        p.composer.take();
        p.composer.set("draft");
        assert!(p.composer.history_prev());
        assert_eq!(p.composer.text(), "two");
        assert!(p.composer.history_prev());
        assert_eq!(p.composer.text(), "one");
        assert!(!p.composer.history_prev());
        assert!(p.composer.history_next());
        assert!(p.composer.history_next());
        assert_eq!(p.composer.text(), "draft");
        assert!(!p.composer.history_next());
    }

    fn typed(p: &mut Pane, text: &str) {
        p.composer.set(text);
        p.refresh_completion();
    }

    #[test]
    fn completes_slash_commands() {
        let mut p = pane();
        p.conversation.commands = vec!["/compact".into(), "/config".into(), "/review".into()];
        typed(&mut p, "/rev");
        assert!(p.composer.complete(1));
        assert_eq!(p.composer.text(), "/review ");
        assert!(p.composer.menu.is_none());
        // Several candidates: Tab cycles (hive's own first), Shift+Tab back.
        typed(&mut p, "/co");
        assert!(p.composer.complete(1));
        assert_eq!(p.composer.text(), "/compact");
        assert!(p.composer.complete(1));
        assert_eq!(p.composer.text(), "/copy");
        assert!(p.composer.complete(1));
        assert_eq!(p.composer.text(), "/config");
        assert!(p.composer.complete(-1));
        assert_eq!(p.composer.text(), "/copy");
        typed(&mut p, "hello");
        assert!(!p.composer.complete(1));
        assert_eq!(p.composer.text(), "hello");
    }

    #[test]
    fn ctrl_u_clears_a_multi_line_draft_line_by_line() {
        let mut p = pane();
        p.composer.set("first line\nsecond\nthird one");
        p.clear_line();
        assert_eq!(p.composer.text(), "first line\nsecond\n");
        p.clear_line();
        assert_eq!(p.composer.text(), "first line\n");
        p.clear_line();
        assert_eq!(p.composer.text(), "");
        assert!(p.composer.is_empty());
        // Mid-line: only what is before the cursor goes.
        p.composer.set("keep this");
        p.composer.area.move_cursor(CursorMove::Head);
        p.composer.area.move_cursor(CursorMove::WordForward);
        p.clear_line();
        assert_eq!(p.composer.text(), "this");
    }

    #[test]
    fn an_escaped_menu_stays_closed_until_the_text_changes() {
        let mut p = pane();
        typed(&mut p, "/m");
        assert!(p.composer.menu.is_some());
        p.composer.dismiss_completion();
        p.refresh_completion();
        assert!(p.composer.menu.is_none());
        typed(&mut p, "/mo");
        assert!(p.composer.menu.is_some());
    }
}
