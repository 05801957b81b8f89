//! Keys, paste and mouse → state changes and runner commands.
//!
//! Which part gets a key is decided by the layer stack (`super::layers`):
//! overlays, then the prefix key's next key, then hive's actions (global
//! ones also in terminal panes), then the focused pane's queue selection,
//! approval card and composer. Actions bound to keys a composer types (`?`,
//! `y`, Home…) only fire while the composer is empty.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use super::commands::{self, HiveCommand, Parsed};
use super::layers::Flow;
use super::pty_input as term;
use super::state::{App, Leave, Overlay};
use crate::keymap::{Action, Chord};
use crate::protocol::agent::PermissionDecision;
use crate::protocol::hold::BudgetAnswer;
use crate::protocol::hold::HoldKind;
use crate::protocol::pane::{QueueEdit, RunnerCommand, SubmitMode, TurnState};
use crate::protocol::verb::read_only_refusal;

impl App {
    /// Offers the key to each layer, top first, until one consumes it
    /// (`super::layers`).
    pub fn on_key(&mut self, ev: KeyEvent) {
        if ev.kind == KeyEventKind::Release {
            return;
        }
        let key = self.read_key(&ev);
        for layer in self.layers() {
            if self.layer_key(layer, &key) == Flow::Consumed {
                return;
            }
        }
    }

    /// A key for a terminal pane that no global action took.
    pub(super) fn terminal_pane_key(&mut self, chord: &Chord, ev: &KeyEvent) {
        // A program that exited takes no keys: the restart key brings
        // it back (while it runs, the key is the program's).
        if self.keymap.lookup(chord) == Some(Action::Restart)
            && self
                .focused()
                .is_some_and(|p| p.conversation.state == TurnState::Dead)
        {
            self.send(self.focus, RunnerCommand::Restart);
            return;
        }
        self.terminal_key(ev)
    }

    /// Actions that work anywhere. False: not one of them.
    pub(super) fn global_action(&mut self, a: Action) -> bool {
        if let Some(i) = a.focus_index() {
            self.focus_in_window(i);
            return true;
        }
        match a {
            Action::Quit => self.open_leave(),
            Action::Detach => self.leave = Some(Leave::Detach),
            Action::Help => {
                self.overlay = Overlay::Help;
                self.help_scroll = 0;
            }
            Action::FocusNext => self.step_pane(1),
            Action::FocusPrev => self.step_pane(-1),
            Action::NextWindow => self.step_window(1),
            Action::PrevWindow => self.step_window(-1),
            Action::NewPane => self.open_new_pane_picker(),
            Action::ClosePane => self.close_focused(false),
            Action::FocusUp => self.focus_vertical(-1),
            Action::FocusDown => self.focus_vertical(1),
            Action::Zoom => self.zoom = !self.zoom,
            Action::Prefix => self.prefix_armed = true,
            Action::ToggleView => self.toggle_full_view(),
            Action::Inbox => self.open_inbox(),
            Action::Search => self.open_search(),
            Action::Overview => self.open_overview(),
            Action::FanOut => self.open_fanout(),
            Action::ToggleMouse => self.toggle_mouse(),
            Action::Diff => self.open_diff(),
            Action::Resume => self.run_command(super::commands::HiveCommand::Resume, ""),
            Action::CopyMode => self.enter_copy_mode(),
            Action::PageBack | Action::PageForward => {
                let dir = if a == Action::PageBack { 1 } else { -1 };
                if self.focused().is_some_and(|p| p.is_terminal()) {
                    self.term_page(dir);
                } else {
                    let g = self.geometry.pane(self.focus);
                    if let Some(p) = self.focused_mut() {
                        p.scroll_page(dir, &g);
                    }
                }
            }
            _ => return false,
        }
        true
    }

    /// Ctrl+Q always asks: leaving can mean detaching (agents live on) or
    /// stopping them all, and guessing wrong loses work either way.
    pub(crate) fn open_leave(&mut self) {
        // A read-only console stops nothing: leaving is detaching.
        if self.read_only {
            self.leave = Some(Leave::Detach);
            return;
        }
        self.overlay = Overlay::Leave;
    }

    /// Focus the pane above/below in the grid (by the drawn rectangles).
    fn focus_vertical(&mut self, dir: i32) {
        let Some(cur) = self.geometry.panes.get(self.focus).map(|g| g.rect) else {
            return;
        };
        let cx = i32::from(cur.x) + i32::from(cur.width) / 2;
        let best = self
            .geometry
            .rects()
            .enumerate()
            .filter(|(i, r)| *i != self.focus && r.width > 0)
            .filter(|(_, r)| if dir < 0 { r.y < cur.y } else { r.y > cur.y })
            .min_by_key(|(_, r)| {
                let dy = (i32::from(r.y) - i32::from(cur.y)).abs();
                let dx = (i32::from(r.x) + i32::from(r.width) / 2 - cx).abs();
                (dy, dx)
            })
            .map(|(i, _)| i);
        if let Some(i) = best {
            self.set_focus(i);
        }
    }

    pub(super) fn help_key(&mut self, ev: KeyEvent) {
        match ev.code {
            KeyCode::Down | KeyCode::Char('j') => {
                self.help_scroll = self.help_scroll.saturating_add(1)
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.help_scroll = self.help_scroll.saturating_sub(1)
            }
            KeyCode::PageDown => self.help_scroll = self.help_scroll.saturating_add(10),
            KeyCode::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
            _ => {
                if self.keymap.lookup(&Chord::from_event(&ev)) == Some(Action::Quit) {
                    return self.open_leave();
                }
                self.overlay = Overlay::None;
            }
        }
    }

    /// Closing a pane whose turn runs: y/Enter close it, anything else
    /// keeps it.
    pub(super) fn close_key(&mut self, ev: KeyEvent) {
        match ev.code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter => self.close_focused(true),
            _ => self.overlay = Overlay::None,
        }
    }

    /// The leave dialog: d/Enter (or Ctrl+Q again, the quick way out)
    /// detach, s stops everything, Esc/n cancel; other keys do nothing, so
    /// a stray key neither leaves nor loses the question.
    pub(super) fn leave_key(&mut self, ev: KeyEvent) {
        let action = self.keymap.lookup(&Chord::from_event(&ev));
        if matches!(action, Some(Action::Quit | Action::Detach)) {
            self.leave = Some(Leave::Detach);
            return;
        }
        if ev
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return;
        }
        match ev.code {
            KeyCode::Char('d' | 'D') | KeyCode::Enter => self.leave = Some(Leave::Detach),
            KeyCode::Char('s' | 'S') => self.leave = Some(Leave::Stop),
            KeyCode::Esc | KeyCode::Char('n' | 'N') => self.overlay = Overlay::None,
            _ => {}
        }
    }

    /// The key after the prefix: tmux-like pane commands; anything else goes
    /// verbatim to a terminal pane (the escape chord for keys hive uses).
    pub(super) fn prefix_key(&mut self, ev: KeyEvent) {
        let chord = Chord::from_event(&ev);
        if let (KeyCode::Char(c), KeyModifiers::NONE) =
            (ev.code, ev.modifiers - KeyModifiers::SHIFT)
            && let Some(a) = Action::from_prefix_char(c)
        {
            self.global_action(a);
            return;
        }
        match (ev.code, ev.modifiers - KeyModifiers::SHIFT) {
            (KeyCode::Char(c @ '1'..='9'), KeyModifiers::NONE) => {
                self.focus_in_window(c as usize - '1' as usize);
            }
            (KeyCode::Left | KeyCode::Char('h'), KeyModifiers::NONE) => self.step_pane(-1),
            (KeyCode::Right | KeyCode::Char('l'), KeyModifiers::NONE) => self.step_pane(1),
            (KeyCode::Up | KeyCode::Char('k'), KeyModifiers::NONE) => self.focus_vertical(-1),
            (KeyCode::Down | KeyCode::Char('j'), KeyModifiers::NONE) => self.focus_vertical(1),
            (KeyCode::Char('z'), KeyModifiers::NONE) => self.zoom = !self.zoom,
            (KeyCode::Char('?'), _) => self.overlay = Overlay::Help,
            (KeyCode::Char('q'), KeyModifiers::NONE) => self.open_leave(),
            _ => {
                // Prefix twice sends the prefix itself, like tmux.
                let _ = chord;
                self.terminal_key(&ev);
            }
        }
    }

    fn terminal_key(&mut self, ev: &KeyEvent) {
        let focus = self.focus;
        let Some(p) = self.panes.get_mut(focus) else {
            return;
        };
        let Some(screen) = p.terminal.screen.as_ref() else {
            return;
        };
        if let Some(bytes) = term::encode_key(ev, screen) {
            p.terminal.scroll = 0;
            p.terminal.note = None;
            self.send(focus, RunnerCommand::Input(bytes));
        }
    }

    /// Queue selection mode: ↑/↓ select, e/Enter edit, d/Delete remove,
    /// Shift+↑/↓ (or K/J) move, Esc leaves.
    pub(super) fn queue_key(&mut self, ev: &KeyEvent) {
        let focus = self.focus;
        let Some(p) = self.panes.get_mut(focus) else {
            return;
        };
        let Some(sel) = p.pending.selected else {
            return;
        };
        let len = p.pending.queue.len();
        if len == 0 {
            p.pending.selected = None;
            return;
        }
        let shift = ev.modifiers.contains(KeyModifiers::SHIFT);
        let mut cmd = None;
        match ev.code {
            KeyCode::Up | KeyCode::Char('K') if shift || ev.code == KeyCode::Char('K') => {
                if sel > 0 {
                    cmd = Some(QueueEdit::Move {
                        from: sel,
                        to: sel - 1,
                    });
                    p.pending.selected = Some(sel - 1);
                }
            }
            KeyCode::Down | KeyCode::Char('J') if shift || ev.code == KeyCode::Char('J') => {
                if sel + 1 < len {
                    cmd = Some(QueueEdit::Move {
                        from: sel,
                        to: sel + 1,
                    });
                    p.pending.selected = Some(sel + 1);
                }
            }
            KeyCode::Up | KeyCode::Char('k') => p.pending.selected = Some(sel.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => p.pending.selected = Some((sel + 1).min(len - 1)),
            KeyCode::Char('d') | KeyCode::Delete | KeyCode::Backspace => {
                cmd = Some(QueueEdit::Remove(sel));
            }
            KeyCode::Char('e') | KeyCode::Enter => {
                let text = p.pending.queue[sel].clone();
                p.composer.set(&text);
                p.composer.editing_queued = Some((sel, text));
                p.pending.selected = None;
            }
            _ => p.pending.selected = None,
        }
        if let Some(c) = cmd {
            self.send(focus, RunnerCommand::Queue(c));
        }
    }

    /// Digits pick one of the options an approval card offers.
    pub(super) fn permission_option_key(&mut self, ev: &KeyEvent) -> bool {
        let focus = self.focus;
        let Some(p) = self.panes.get_mut(focus) else {
            return false;
        };
        let Some(req) = p.pending.permissions.front() else {
            return false;
        };
        let KeyCode::Char(c @ '1'..='9') = ev.code else {
            return false;
        };
        if req.options.is_empty() || !ev.modifiers.is_empty() {
            return false;
        }
        let Some(opt) = req.options.get(c as usize - '1' as usize) else {
            return false;
        };
        let decision = PermissionDecision::Option {
            option_id: opt.option_id.clone(),
        };
        self.answer_permission(decision);
        true
    }

    fn answer_permission(&mut self, decision: PermissionDecision) {
        let focus = self.focus;
        let Some(id) = self
            .focused()
            .and_then(|p| p.pending.permissions.front())
            .map(|r| r.request_id.clone())
        else {
            return;
        };
        self.answer_request(focus, &id, decision);
    }

    /// Conversation-pane actions. False: let the composer have the key.
    pub(super) fn pane_action(&mut self, a: Action) -> bool {
        let focus = self.focus;
        let g = self.geometry.pane(focus);
        let Some(p) = self.panes.get_mut(focus) else {
            return false;
        };
        let has_card = !p.pending.permissions.is_empty();
        // The budget card answers r / s while nothing is typed.
        let budget_card = !has_card
            && p.composer.text().is_empty()
            && p.conversation
                .held
                .as_ref()
                .is_some_and(|h| h.kind == HoldKind::Budget);
        match a {
            Action::Submit => self.submit(SubmitMode::Auto),
            Action::Steer => self.submit(SubmitMode::Steer),
            Action::Newline => p.composer.area.insert_newline(),
            Action::Interrupt => self.escape(),
            Action::RecallQueued if p.pending.queue.is_empty() => self.set_status("nothing queued"),
            Action::RecallQueued => self.send(focus, RunnerCommand::Queue(QueueEdit::PopLast)),
            Action::ManageQueue if p.pending.queue.is_empty() => self.set_status("nothing queued"),
            Action::ManageQueue => p.pending.selected = Some(p.pending.queue.len() - 1),
            Action::HistoryPrev => {
                if p.composer.cursor_row() != 0 || !p.composer.history_prev() {
                    return false;
                }
            }
            Action::HistoryNext => {
                if p.composer.cursor_row() != p.composer.last_row() || !p.composer.history_next() {
                    return false;
                }
            }
            Action::ClearLine => p.clear_line(),
            // Tab never types a tab: with nothing to complete it does nothing.
            Action::Complete => {
                p.composer.complete(1);
            }
            Action::CompletePrev => {
                p.composer.complete(-1);
            }
            Action::ScrollUp => p.scroll_page(1, &g),
            Action::ScrollDown => p.scroll_page(-1, &g),
            Action::ScrollTop => p.scroll = usize::MAX / 2,
            Action::ScrollBottom => p.scroll = 0,
            Action::Copy => self.run_command(HiveCommand::Copy, ""),
            Action::Expand => {
                p.expanded = !p.expanded;
                p.conversation.transcript.invalidate();
            }
            Action::JumpUnread => self.jump_unread(),
            Action::SearchNext => self.search_step(1),
            Action::SearchPrev => self.search_step(-1),
            // A failed worktree setup runs again (the server decides).
            Action::Restart
                if p.conversation.state == TurnState::Dead
                    || (p.conversation.failed.is_some() && p.worktree.is_some()) =>
            {
                self.send(focus, RunnerCommand::Restart);
            }
            Action::AllowOnce if has_card && !p.composer.deny_reason => {
                self.answer_permission(PermissionDecision::AllowOnce)
            }
            Action::AllowAlways if has_card && !p.composer.deny_reason => {
                self.answer_permission(PermissionDecision::AllowAlways)
            }
            Action::Deny if has_card && !p.composer.deny_reason && !self.read_only => {
                p.composer.deny_reason = true;
            }
            Action::Deny if has_card && self.read_only => {
                self.set_status(read_only_refusal("answer an approval"))
            }
            Action::RaiseBudget if budget_card => {
                self.send(focus, RunnerCommand::Budget(BudgetAnswer::Raise));
            }
            Action::StopBudget if budget_card => {
                self.send(focus, RunnerCommand::Budget(BudgetAnswer::Stop));
            }
            _ => return false,
        }
        true
    }

    /// Esc in a conversation pane: closes what is open (search highlight,
    /// digest, deny reason, queued edit) before it interrupts a busy agent.
    fn escape(&mut self) {
        let focus = self.focus;
        let Some(p) = self.panes.get_mut(focus) else {
            return;
        };
        if p.highlight.take().is_some() {
            self.search.active = false;
        }
        // Esc first closes a digest, so it never interrupts by surprise.
        if p.attention.digest.take().is_some() {
            return;
        }
        if p.composer.deny_reason {
            p.composer.deny_reason = false;
        } else if p.composer.editing_queued.is_some() {
            p.composer.editing_queued = None;
            p.composer.set("");
        } else if p.is_busy() {
            self.send(focus, RunnerCommand::Interrupt);
            self.set_status(super::state::INTERRUPTING);
        } else if p.conversation.held.is_some() {
            // Lets a queue held for a vendor's limit go (the runner's
            // interrupt between turns).
            self.send(focus, RunnerCommand::Interrupt);
        } else {
            self.status = None;
        }
    }

    fn submit(&mut self, mode: SubmitMode) {
        if self.read_only {
            // The composer keeps what it shows (another console's draft).
            return self.refuse_typing();
        }
        let focus = self.focus;
        let Some(p) = self.panes.get_mut(focus) else {
            return;
        };
        if p.composer.deny_reason {
            let reason = p.composer.take();
            let reason = if reason.trim().is_empty() {
                "denied by the user".to_owned()
            } else {
                reason
            };
            return self.answer_permission(PermissionDecision::Deny { reason });
        }
        if p.composer.is_empty() {
            if !p.is_busy()
                && !p.pending.queue.is_empty()
                && p.conversation.state != TurnState::Dead
            {
                p.pending.restored = false;
                self.send(focus, RunnerCommand::DrainQueue);
            }
            return;
        }
        if let Some((i, original)) = p.composer.editing_queued.take()
            && p.pending.queue.get(i) == Some(&original)
        {
            let text = p.composer.take();
            self.send(focus, RunnerCommand::Queue(QueueEdit::Replace(i, text)));
            return;
        }
        if p.worktree.is_some() && p.composer.text().trim() == "/diff" {
            p.composer.take();
            return self.open_diff();
        }
        let text = p.composer.take();
        match commands::parse(&text, &p.conversation.commands) {
            Parsed::Text(text) => self.submit_with_images(text, mode),
            Parsed::Hive(cmd, arg) => self.run_command(cmd, &arg),
            Parsed::Unknown(name) => {
                let agent = p.name().to_owned();
                self.refuse(format!(
                    "/{name} is not a hive command and {agent} does not offer it: not sent. \
                     Start with // to send it as text."
                ));
            }
        }
    }

    /// Bracketed paste: into the composer (never sent), or to the child.
    pub fn on_paste(&mut self, text: &str) {
        if self.overlay == Overlay::Leave {
            return;
        }
        if self.overlay == Overlay::FanOut
            && let Some(prompt) = self.fanout.prompt.as_mut()
        {
            prompt.push_str(&text.replace("\r\n", "\n").replace('\r', "\n"));
            return;
        }
        let focus = self.focus;
        let Some(p) = self.panes.get_mut(focus) else {
            return;
        };
        if let Some(screen) = p.terminal.screen.as_ref() {
            let bytes = term::encode_paste(text, screen);
            self.send(focus, RunnerCommand::Input(bytes));
            return;
        }
        if self.paste_images(text) {
            return;
        }
        let Some(p) = self.panes.get_mut(focus) else {
            return;
        };
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        p.composer.area.insert_str(text);
    }

    pub fn on_mouse(&mut self, ev: MouseEvent) {
        // The leave dialog waits for its answer; a click must not move
        // focus behind it.
        if self.overlay == Overlay::Leave {
            return;
        }
        let hit = self
            .geometry
            .rects()
            .position(|r| r.width > 0 && r.contains((ev.column, ev.row).into()));
        let Some(i) = hit else {
            return;
        };
        match ev.kind {
            MouseEventKind::Down(_) => self.set_focus(i),
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let up = matches!(ev.kind, MouseEventKind::ScrollUp);
                let g = self.geometry.pane(i);
                let p = &mut self.panes[i];
                if let Some(screen) = p.terminal.screen.as_ref()
                    && term::wants_mouse(screen)
                {
                    // SGR mouse report for the wheel, relative to the pane.
                    let col = ev.column.saturating_sub(g.inner.x) + 1;
                    let row = ev.row.saturating_sub(g.inner.y) + 1;
                    let button = if up { 64 } else { 65 };
                    let bytes = format!("\x1b[<{button};{col};{row}M").into_bytes();
                    self.send(i, RunnerCommand::Input(bytes));
                    return;
                }
                p.scroll_by(if up { 3 } else { -3 }, g.max_scroll);
            }
            _ => {}
        }
    }
}
