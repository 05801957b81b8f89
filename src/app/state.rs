//! The console's state: panes, focus, zoom, overlays, and what the runners
//! tell it. Pure data plus methods; no terminal, no tasks, so tests can build
//! one and feed it events.

use std::time::{Duration, Instant};

use super::geometry::Geometry;
use super::inbox::{Inbox, Reason};
use super::pane::Pane;
use super::transcript::EntryKind;
use crate::config::{AgentConfig, Config, UiSettings};
use crate::keymap::Keymap;
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::pane::{PaneEvent, PaneUpdate, RunnerCommand};
use crate::protocol::snapshot::Restored;
use crate::protocol::upsert::TurnEvent;
use crate::theme::Theme;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    /// Ctrl+Q's question: detach, or stop every agent and the server.
    Leave,
    /// The attention inbox (`super::inbox`).
    Inbox,
    /// Search across panes (`super::search`).
    Search,
    /// Every pane in a table (`super::overview`).
    Overview,
    /// The focused pane's worktree diff (`App::diff`).
    Diff,
    /// Fan-out: choose panes, type one prompt (`super::fanout`).
    FanOut,
    /// The last fan-out's answers side by side.
    Compare,
    /// Close the focused pane while its turn runs? (`Ctrl+B x`)
    Close,
    /// A pane's pull request: state, checks, reviews (`/checks`,
    /// `super::forge`).
    Checks,
}

/// How the user asked to leave the console (`App::leave`): the loop ends
/// either way, and what happens to the agents depends on which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leave {
    /// This console goes away; the agents keep running and `hive attach`
    /// comes back to them.
    Detach,
    /// Stop every agent and the server.
    Stop,
}

pub struct App {
    pub panes: Vec<Pane>,
    pub focus: usize,
    pub zoom: bool,
    /// Thinking and tool calls shown (full) or hidden (simple).
    pub full_view: bool,
    pub overlay: Overlay,
    pub(crate) help_scroll: u16,
    pub(crate) keymap: Keymap,
    pub theme: Theme,
    pub ui: UiSettings,
    /// What the app asks of runners, the git service, the search worker
    /// and the terminal, drained by the event loop in one place.
    pub outbox: super::command::Outbox,
    /// A transient line in the status bar and when it goes away.
    pub status: Option<(String, Instant)>,
    /// The link to a remote server is down: what the status bar says
    /// until it is back (issue 30).
    pub link: Option<String>,
    /// This console only looks (`hive attach --read-only`, src/app/
    /// read_only.rs).
    pub read_only: bool,
    /// The prefix key was pressed; the next key is a prefix command.
    pub(crate) prefix_armed: bool,
    /// Set when the user leaves (detach or stop): the app loop ends.
    pub leave: Option<Leave>,
    /// Clock origin for spinners.
    pub started: Instant,
    /// "Now" for this frame (tests pin it so snapshots are stable).
    pub now: Instant,
    /// What the last frame measured (mouse hit-testing, page size, scroll
    /// bounds, PTY sizes), handed over by the app loop after each frame.
    pub geometry: Geometry,
    /// Where the config came from (shown in help).
    pub(crate) config_source: String,
    /// Everything waiting for the user across panes.
    pub inbox: Inbox,
    pub search: super::overlay::Search,
    pub overview: super::overlay::Overview,
    pub fanout: super::overlay::FanOut,
    /// hive takes mouse events (off: the terminal selects text).
    pub mouse_capture: bool,
    /// The desktop clipboard tool copies also go to (set by the console;
    /// tests leave it empty so nothing is spawned).
    pub(crate) system_clipboard: Option<(std::path::PathBuf, &'static [&'static str])>,
    /// hive runs inside tmux (OSC 52 is also sent wrapped for passthrough).
    pub(crate) in_tmux: bool,
    /// Wakes the app loop from background work (the `@` file finder).
    pub(crate) wake: Option<crate::files::Wake>,
    /// The diff view's model while it is open.
    pub diff: Option<super::overlay::DiffView>,
    /// Agents whose pending changes touch the same files (for panes and
    /// an attention inbox).
    pub overlaps: Vec<crate::protocol::git::Overlap>,
    /// Merges that would conflict, and who has work to bring home.
    pub conflicts: crate::protocol::git::Prediction,
    /// What each worktree pane changed overall: [(path, added, removed)].
    pub worktree_changes: std::collections::HashMap<usize, Vec<crate::protocol::git::FileChange>>,
    /// A terminal pane in a worktree had output: check overlaps then.
    pub overlap_check_at: Option<Instant>,
    /// The config's agents: what `/new` copies (issue 32).
    pub(crate) templates: Vec<AgentConfig>,
    /// The pane last focused in each window, by id (`Ctrl+B n/p` come
    /// back to it).
    pub(crate) window_focus: std::collections::HashMap<usize, String>,
    /// The checks view's model while it is open (`/checks`).
    pub checks: Option<super::forge_view::ChecksView>,
}

impl App {
    pub fn new(config: &Config, theme: Theme, keymap: Keymap) -> Self {
        let now = Instant::now();
        Self {
            panes: config.agents.iter().cloned().map(Pane::new).collect(),
            focus: 0,
            zoom: false,
            full_view: config.ui.full_view,
            overlay: Overlay::None,
            help_scroll: 0,
            keymap,
            theme,
            ui: config.ui.clone(),
            outbox: Default::default(),
            status: None,
            link: None,
            read_only: false,
            prefix_armed: false,
            leave: None,
            started: now,
            now,
            geometry: Geometry::default(),
            config_source: config.source.describe(),
            inbox: Inbox::default(),
            search: Default::default(),
            overview: Default::default(),
            fanout: Default::default(),
            mouse_capture: true,
            system_clipboard: None,
            in_tmux: false,
            wake: None,
            diff: None,
            overlaps: Vec::new(),
            conflicts: crate::protocol::git::Prediction::default(),
            worktree_changes: std::collections::HashMap::new(),
            overlap_check_at: None,
            templates: config.agents.clone(),
            window_focus: std::collections::HashMap::new(),
            checks: None,
        }
    }

    /// A pane for an agent, filled from its restored history.
    pub fn restore(&mut self, pane: usize, history: &mut Restored) {
        let Some(p) = self.panes.get_mut(pane) else {
            return;
        };
        p.conversation.restore(history);
        p.history_session = Some(history.session.clone());
        for w in history.warnings.drain(..) {
            p.conversation.transcript.notice(DiagnosticLevel::Warn, w);
        }
        if !history.queue.is_empty() {
            p.pending.queue = history.queue.clone();
            p.pending.restored = true;
        }
    }

    pub fn agents(&self) -> impl Iterator<Item = &AgentConfig> {
        self.panes.iter().map(|p| &p.agent)
    }

    pub fn focused(&self) -> Option<&Pane> {
        self.panes.get(self.focus)
    }

    pub(crate) fn focused_mut(&mut self) -> Option<&mut Pane> {
        self.panes.get_mut(self.focus)
    }

    pub fn send(&mut self, pane: usize, cmd: RunnerCommand) {
        self.outbox.runner(pane, cmd);
    }

    pub(crate) fn set_status(&mut self, text: impl Into<String>) {
        self.status = Some((text.into(), self.now + Duration::from_secs(4)));
    }

    pub fn set_focus(&mut self, i: usize) {
        if i < self.panes.len() {
            if i != self.focus && self.has_worktrees() {
                self.outbox
                    .git(crate::protocol::git::WorktreeRequest::CheckOverlaps);
            }
            if i != self.focus {
                self.looked_away(i);
            }
            self.focus = i;
            self.panes[i].attention.flagged = false;
            self.reconcile_inbox();
        }
    }

    /// Turns running anywhere (the leave dialog counts them).
    pub(crate) fn running_turns(&self) -> usize {
        self.panes.iter().filter(|p| p.is_busy()).count()
    }

    /// True while something on screen moves (spinners), so the loop ticks:
    /// a busy pane that is drawn. A busy pane in a window out of view shows
    /// a still `…` on its tab; it kept the loop ticking ten times a second
    /// for nothing (issue 45).
    pub(crate) fn animating(&self) -> bool {
        self.panes
            .iter()
            .enumerate()
            .any(|(i, p)| p.is_busy() && self.shows(i))
    }

    pub(crate) fn toggle_full_view(&mut self) {
        self.full_view = !self.full_view;
        for p in &mut self.panes {
            p.conversation.transcript.invalidate();
        }
        let what = if self.full_view {
            "full view: thinking and tool calls shown"
        } else {
            "simple view: thinking and tool calls hidden"
        };
        self.set_status(what);
    }

    /// Applies one runner event.
    pub fn apply(&mut self, update: PaneUpdate) {
        let i = update.pane;
        match &update.event {
            PaneEvent::Turn(t) => {
                let ended = !matches!(t, TurnEvent::TurnStarted { .. });
                if ended && i == self.focus {
                    self.interrupt_done();
                }
            }
            PaneEvent::Terminal(_) => self.worktree_activity(i),
            PaneEvent::TerminalText(text) => {
                if !self.search_terminal(i, text) {
                    self.copy(text, "terminal selection");
                }
                return;
            }
            _ => {}
        }
        let focused = i == self.focus;
        let Some(p) = self.panes.get_mut(i) else {
            return;
        };
        let since = &mut self.overview.state_since;
        let (needs_user, status) = pane_event(p, i, update.event, focused, self.now, since);
        if let Some(text) = status {
            self.set_status(text);
        }
        // Approvals wait in the inbox even for the focused pane.
        if let Some(reason) = needs_user
            && (!focused || matches!(reason, Reason::Permission { .. }))
        {
            self.call_attention(i, reason);
        }
        self.reconcile_inbox();
        self.sync_term_views();
    }

    /// Takes in what a frame measured: scrolls clamped to what fits.
    pub fn observe(&mut self, geometry: Geometry) {
        for (p, g) in self.panes.iter_mut().zip(&geometry.panes) {
            if let Some(scroll) = g.scroll {
                p.scroll = scroll;
                p.reveal = None;
            }
        }
        self.geometry = geometry;
    }

    /// Sends the terminal size to PTY panes whose drawn area (as last
    /// observed) changed.
    pub(crate) fn sync_terminal_sizes(&mut self) {
        let mut cmds = Vec::new();
        for (i, p) in self.panes.iter_mut().enumerate() {
            let inner = self.geometry.pane(i).inner;
            if p.terminal.screen.is_none() || inner.width == 0 || inner.height == 0 {
                continue;
            }
            let size = (inner.width, inner.height);
            if p.terminal.size != Some(size) {
                p.terminal.size = Some(size);
                cmds.push((
                    i,
                    RunnerCommand::Resize {
                        cols: size.0,
                        rows: size.1,
                    },
                ));
            }
        }
        for (pane, cmd) in cmds {
            self.outbox.runner(pane, cmd);
        }
    }

    /// The focused pane's turn ended: an "interrupting…" status is over.
    fn interrupt_done(&mut self) {
        if self
            .status
            .as_ref()
            .is_some_and(|(text, _)| text == INTERRUPTING)
        {
            self.status = None;
        }
    }

    /// Drops an expired status line; true when something changed.
    pub(crate) fn expire_status(&mut self) -> bool {
        if let Some((_, until)) = &self.status
            && *until <= self.now
        {
            self.status = None;
            return true;
        }
        false
    }
}

/// The status line while an interrupt is on its way (cleared when the
/// turn ends, not left for its four seconds).
pub(crate) const INTERRUPTING: &str = "interrupting…";

/// What one runner event does to its pane `p` (number `i`): who needs the
/// user's attention, and what the status bar says.
fn pane_event(
    p: &mut Pane,
    i: usize,
    event: PaneEvent,
    focused: bool,
    now: Instant,
    state_since: &mut std::collections::HashMap<usize, Instant>,
) -> (Option<Reason>, Option<String>) {
    let needs_user = Reason::of(&event, p.parent.as_deref());
    let mut status: Option<String> = None;
    match event {
        PaneEvent::Upsert(u) => item(p, u, focused, now),
        PaneEvent::Live(u) => {
            if !focused {
                let entry = p.conversation.transcript.slot(&u.item_id);
                p.attention.unread.item(&u, entry, None);
            }
            p.conversation.transcript.live_at(u, now)
        }
        PaneEvent::Turn(t) => {
            turn_event(p, &t, now);
            if !focused {
                p.attention.unread.turn(&t, &p.conversation.transcript);
            }
        }
        PaneEvent::State(s) => {
            if p.conversation.state != s || !state_since.contains_key(&i) {
                state_since.insert(i, now);
            }
            p.conversation.state = s;
        }
        PaneEvent::Queue(list) => set_queue(p, list),
        PaneEvent::Notice { level, text } => status = notice(p, level, text, focused),
        PaneEvent::Permission(req) => p.pending.permissions.push_back(req),
        PaneEvent::PermissionSettled { request_id } => settled(p, &request_id),
        PaneEvent::Session(info) => session(p, info),
        PaneEvent::Recalled(text) => recall(p, &text),
        PaneEvent::Attached {
            capabilities,
            terminal,
        } => attached(p, capabilities, terminal),
        PaneEvent::Terminal(screen) => p.terminal.update(*screen),
        PaneEvent::TerminalText(_) => {}
        PaneEvent::Bell | PaneEvent::Idle => {}
        PaneEvent::Stalled(since) => p.conversation.stalled_since = since,
        PaneEvent::Held(hold) => p.conversation.held = hold,
        PaneEvent::Process(sample) => p.process = sample,
        PaneEvent::Models(list) => p.conversation.models = list,
        PaneEvent::Effort(level) => p.conversation.effort = Some(level),
        PaneEvent::SessionSwitched { session, .. } => p.history_session = Some(session),
        PaneEvent::HistoryNotSaved(reason) => {
            let text = format!("{}: {reason}", crate::protocol::pane::HISTORY_NOT_SAVED);
            p.conversation
                .transcript
                .notice(crate::protocol::agent::DiagnosticLevel::Error, text.clone());
            status = Some(format!("{}: {text}", p.name()));
        }
    }
    (needs_user, status)
}

/// An item's upsert: in the transcript (which times tool calls), and
/// tallied when no one looks at the pane.
fn item(p: &mut Pane, u: crate::protocol::upsert::Upsert, focused: bool, now: Instant) {
    let transcript = &mut p.conversation.transcript;
    let entry = transcript.slot(&u.item_id);
    let took = transcript.upsert_at(u, now);
    if focused {
        return;
    }
    if let Some(EntryKind::Item(u)) = transcript.entries.get(entry).map(|e| &e.kind) {
        p.attention.unread.item(u, entry, took);
    }
}

/// A notice from the runner; a terminal pane shows no transcript, so the
/// note goes in its border and (returned) the status bar.
fn notice(p: &mut Pane, level: DiagnosticLevel, text: String, focused: bool) -> Option<String> {
    let mut status = None;
    if p.is_terminal() {
        status = Some(format!("{}: {text}", p.name()));
        p.terminal.note = Some(text.clone());
    }
    p.conversation.transcript.notice(level, text);
    if !focused {
        p.attention.unread.notice(level, &p.conversation.transcript);
    }
    status
}

/// Approval `id` was answered, here or in another client: its card goes
/// (the caller reconciles the inbox).
fn settled(p: &mut Pane, id: &str) {
    if let Some(pos) = p
        .pending
        .permissions
        .iter()
        .position(|r| r.request_id == id)
    {
        if pos == 0 {
            p.composer.deny_reason = false;
        }
        p.pending.permissions.remove(pos);
    }
}

/// The agent told its model or slash commands (kept when it tells neither).
fn session(p: &mut Pane, info: crate::protocol::agent::SessionInfo) {
    if let Some(m) = info.model {
        p.conversation.model = Some(m);
    }
    if !info.commands.is_empty() {
        p.conversation.commands = info.commands;
    }
}

/// The runner's queue changed: keep the selection inside it.
fn set_queue(p: &mut Pane, list: Vec<String>) {
    if list.is_empty() {
        p.pending.restored = false;
    }
    if let Some(sel) = p.pending.selected {
        p.pending.selected = if list.is_empty() {
            None
        } else {
            Some(sel.min(list.len() - 1))
        };
    }
    p.pending.queue = list;
}

/// A queued prompt came back to the composer, above what is typed there.
fn recall(p: &mut Pane, text: &str) {
    if !p.composer.is_empty() {
        let current = p.composer.text();
        p.composer.set(&format!("{text}\n{current}"));
    } else {
        p.composer.set(text);
    }
}

/// A (new) provider started: the pane forgets the old one's failure and screen.
fn attached(
    p: &mut Pane,
    capabilities: crate::protocol::agent::Capabilities,
    terminal: Option<Box<crate::protocol::screen::ScreenUpdate>>,
) {
    p.conversation.capabilities = Some(capabilities);
    p.conversation.failed = None;
    p.terminal.attach(terminal.map(|s| *s));
}

/// A turn started, finished or failed in `p`: its transcript, totals and
/// model.
fn turn_event(p: &mut Pane, t: &TurnEvent, now: Instant) {
    p.conversation.transcript.turn(t, now);
    match t {
        TurnEvent::TurnComplete { usage, .. } => {
            p.conversation.turns += 1;
            if let Some(u) = usage {
                p.conversation.usage.accumulate(u);
            }
        }
        TurnEvent::TurnError { .. } => {}
        TurnEvent::TurnStarted { model_id, .. } => {
            if !model_id.is_empty() {
                p.conversation.model = Some(model_id.clone());
            }
        }
    }
}
