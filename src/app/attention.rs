//! The app side of the attention inbox: posting entries (with the bell /
//! OSC 9 the config asks for), dropping handled ones, and the inbox
//! overlay's keys. Stalled agents come from the runner, idle terminals from
//! the server (src/server/idle.rs).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::command::AppCommand;
use super::inbox::{InboxEvent, Reason};
use super::state::{App, Overlay};
use super::unread::Unread;
use crate::config::ReasonKind;
use crate::notify::{Mute, Mutes, Note};
use crate::protocol::agent::PermissionDecision;
use crate::protocol::pane::{Decider, RunnerCommand};

impl App {
    /// Posts `reason` for pane `i`, marks it and notifies as configured.
    pub(super) fn call_attention(&mut self, i: usize, reason: Reason) {
        let Some(p) = self.panes.get_mut(i) else {
            return;
        };
        if i != self.focus {
            p.attention.flagged = true;
        }
        let note = Note {
            kind: reason.kind(),
            pane: p.agent.id.clone(),
            title: format!("hive: {}", p.name()),
            body: reason.describe(),
        };
        let muted = p.attention.muted || self.inbox.muted_kinds.contains(&note.kind);
        if !self.inbox.post(i, self.now, reason) || muted {
            return;
        }
        self.notify(&note);
    }

    /// Sends `note` every way `[ui]` asks for its type.
    fn notify(&mut self, note: &Note) {
        let kind = note.kind;
        if self.ui.bell.wants(kind) {
            self.outbox.terminal("\x07");
        }
        if self.ui.osc9.wants(kind) {
            // Tool names and arguments come from the agent.
            let name = note.title.trim_start_matches("hive: ");
            let clean: String = format!("{name} {}", note.body)
                .chars()
                .filter(|c| !c.is_control())
                .collect();
            self.outbox.terminal(format!("\x1b]9;hive: {clean}\x07"));
        }
        if self.ui.osc777.wants(kind) {
            self.outbox.terminal(note.osc777());
        }
        // The server runs the command for what it sees itself (src/server/notifier.rs).
        if crate::notify::reason::told_by_server(kind) {
            return;
        }
        let Some(argv) =
            crate::notify::command_line(&self.ui, &mut self.inbox.notify, note.clone(), self.now)
        else {
            return;
        };
        self.outbox.push(AppCommand::Notify(argv));
    }

    /// `/mute`: the focused pane; `/mute TYPE`: that type in every pane.
    /// Again to unmute.
    pub(crate) fn mute(&mut self, arg: &str) {
        let arg = arg.trim();
        if arg.is_empty() {
            let Some(p) = self.focused_mut() else {
                return;
            };
            p.attention.muted = !p.attention.muted;
            let (id, on) = (p.agent.id.clone(), p.attention.muted);
            let what = if on { "muted" } else { "unmuted" };
            let msg = format!("{} {what}: no bell or notification", p.name());
            self.outbox.push(AppCommand::Mute(Mute::Pane { id, on }));
            return self.set_status(msg);
        }
        let Some(kind) = ReasonKind::parse(arg) else {
            let names: Vec<&str> = ReasonKind::ALL.iter().map(|k| k.name()).collect();
            return self.set_status(format!(
                "/mute: no type `{arg}`; types: {}",
                names.join(" ")
            ));
        };
        let kinds = &mut self.inbox.muted_kinds;
        let on = !kinds.contains(&kind);
        let msg = if on {
            kinds.push(kind);
            format!("{arg}: muted in every pane")
        } else {
            kinds.retain(|k| *k != kind);
            format!("{arg}: notifications on again")
        };
        self.outbox.push(AppCommand::Mute(Mute::Kind { kind, on }));
        self.set_status(msg);
    }

    /// The server's mutes (after a snapshot, or another console's
    /// `/mute`): for `panes`, or every pane.
    pub fn set_mutes(&mut self, mutes: &Mutes, panes: Option<&[usize]>) {
        for (i, p) in self.panes.iter_mut().enumerate() {
            if panes.is_none_or(|these| these.contains(&i)) {
                p.attention.muted = mutes.panes.contains(&p.agent.id);
            }
        }
        self.inbox.muted_kinds = mutes.kinds.iter().copied().collect();
    }

    /// The server of `panes` (`None`: every pane) has sent every event up
    /// to `seq` (`FromServer::Heard`).
    pub fn heard(&mut self, seq: u64, panes: Option<std::ops::Range<usize>>) {
        for (i, p) in self.panes.iter_mut().enumerate() {
            if panes.as_ref().is_none_or(|r| r.contains(&i)) {
                p.attention.heard = p.attention.heard.max(seq);
            }
        }
    }

    /// Another feature posts or withdraws an entry.
    pub fn inbox_event(&mut self, ev: InboxEvent) {
        match ev {
            InboxEvent::Post { pane, kind, text } => {
                self.call_attention(pane, Reason::Posted { kind, text })
            }
            InboxEvent::Resolve { pane, kind } => self.inbox.entries.retain(|e| {
                e.pane != pane || !matches!(&e.reason, Reason::Posted { kind: k, .. } if *k == kind)
            }),
        }
        self.reconcile_inbox();
    }

    pub(super) fn reconcile_inbox(&mut self) {
        self.inbox.reconcile(&self.panes, self.focus);
        if self.overlay == Overlay::Inbox && self.inbox.is_empty() {
            self.overlay = Overlay::None;
        }
    }

    pub(crate) fn open_inbox(&mut self) {
        self.reconcile_inbox();
        if self.inbox.is_empty() {
            self.set_status("inbox: nothing waiting");
        } else {
            self.overlay = Overlay::Inbox;
            self.inbox.sel = 0;
            self.inbox.deny = None;
        }
    }

    /// ↑/↓ select, Enter jumps to the pane, y / a / n answer an approval in
    /// place (n: type a reason, Enter), Esc closes.
    pub(super) fn inbox_key(&mut self, ev: KeyEvent) {
        if let Some(reason) = self.inbox.deny.as_mut() {
            match ev.code {
                KeyCode::Enter => {
                    let reason = std::mem::take(reason);
                    self.inbox.deny = None;
                    let reason = if reason.trim().is_empty() {
                        "denied by the user".to_owned()
                    } else {
                        reason
                    };
                    self.answer_selected(PermissionDecision::Deny { reason });
                }
                KeyCode::Esc => self.inbox.deny = None,
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char(c) if !ev.modifiers.contains(KeyModifiers::CONTROL) => reason.push(c),
                _ => {}
            }
            return;
        }
        let is_perm = matches!(
            self.inbox.selected().map(|e| &e.reason),
            Some(Reason::Permission { .. })
        );
        match ev.code {
            KeyCode::Up | KeyCode::Char('k') => self.inbox.move_sel(-1),
            KeyCode::Down | KeyCode::Char('j') => self.inbox.move_sel(1),
            KeyCode::Enter => {
                let pane = self.inbox.selected().map(|e| e.pane);
                self.overlay = Overlay::None;
                if let Some(i) = pane {
                    self.set_focus(i);
                }
            }
            KeyCode::Char('y') if is_perm => self.answer_selected(PermissionDecision::AllowOnce),
            KeyCode::Char('a') if is_perm => self.answer_selected(PermissionDecision::AllowAlways),
            KeyCode::Char('n') if is_perm => self.inbox.deny = Some(String::new()),
            KeyCode::Char('d') | KeyCode::Delete if !is_perm => {
                // The server keeps it for this console (#46 item 8).
                if let Some((pane, reason)) = self.inbox.dismiss_selected() {
                    let up_to = self.panes.get(pane).map_or(0, |p| p.attention.heard);
                    self.outbox.push(AppCommand::Dismiss {
                        pane,
                        kind: reason.kind(),
                        what: reason.describe(),
                        up_to,
                    });
                }
                self.reconcile_inbox();
            }
            _ => self.overlay = Overlay::None,
        }
    }

    fn answer_selected(&mut self, decision: PermissionDecision) {
        let Some(e) = self.inbox.selected() else {
            return;
        };
        let Reason::Permission { request_id, .. } = &e.reason else {
            return;
        };
        let (pane, id) = (e.pane, request_id.clone());
        self.answer_request(pane, &id, decision);
    }

    /// Answers approval `id` of pane `i`, wherever it was answered from.
    pub(super) fn answer_request(&mut self, i: usize, id: &str, decision: PermissionDecision) {
        if self.read_only {
            // The card stays until someone who may answers it.
            let why = crate::protocol::verb::read_only_refusal("answer an approval");
            return self.set_status(why);
        }
        let Some(p) = self.panes.get_mut(i) else {
            return;
        };
        let Some(pos) = p
            .pending
            .permissions
            .iter()
            .position(|r| r.request_id == id)
        else {
            return;
        };
        if pos == 0 {
            p.composer.deny_reason = false;
        }
        let Some(req) = p.pending.permissions.remove(pos) else {
            return;
        };
        self.send(
            i,
            RunnerCommand::Permission {
                request_id: req.request_id,
                decision,
                by: Decider::Console,
            },
        );
        self.reconcile_inbox();
    }
}

impl App {
    /// Focus moves to pane `to`: the pane left behind drops its digest and
    /// starts a fresh tally; `to` turns its tally into its digest.
    pub(super) fn looked_away(&mut self, to: usize) {
        if let Some(old) = self.panes.get_mut(self.focus) {
            old.attention.digest = None;
            old.attention.unread = Unread::default();
        }
        if let Some(p) = self.panes.get_mut(to)
            && !p.attention.unread.is_empty()
        {
            p.attention.digest = Some(std::mem::take(&mut p.attention.unread));
        }
    }

    /// The digest's key: scroll to the first unread item, close the digest.
    pub(super) fn jump_unread(&mut self) {
        let Some(p) = self.focused_mut() else {
            return;
        };
        match p.attention.digest.take().and_then(|d| d.first) {
            Some(entry) => p.reveal = Some(entry),
            None => self.set_status("nothing unread"),
        }
    }
}
