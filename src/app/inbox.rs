//! The attention inbox: one list, oldest first, of everything waiting for
//! the user across panes (approval requests, failed or finished turns,
//! bells, idle terminals, exited or stalled agents, and entries other
//! features post through `InboxEvent`).
//!
//! Entries are facts about panes, so they go away when handled anywhere:
//! an approval answered in its pane, a pane focused, an agent restarted.
//! `App::reconcile_inbox` applies those rules after every change. An entry
//! dismissed with `d` is this console's choice: the server keeps it for
//! this console (`ClientMsg::Dismiss`, `PaneSnapshot::dismissed`), so the
//! replay of a snapshot leaves it out (#46 item 8).

use std::collections::HashMap;
use std::time::Instant;

use super::pane::Pane;
pub(crate) use crate::config::ReasonKind;
pub use crate::notify::reason::Reason;
pub(crate) use crate::notify::reason::summarize_args;
use crate::protocol::pane::TurnState;
use crate::protocol::snapshot::Dismissed;

/// What other features send to post or withdraw an entry (the worktree
/// view posts "overlap" warnings this way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InboxEvent {
    Post {
        pane: usize,
        kind: String,
        text: String,
    },
    /// Withdraws every posted entry of `kind` for `pane`.
    Resolve { pane: usize, kind: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub pane: usize,
    pub at: Instant,
    pub reason: Reason,
}

/// The inbox and its overlay state (selection, a deny reason being typed).
#[derive(Debug, Default)]
pub struct Inbox {
    pub entries: Vec<Entry>,
    pub sel: usize,
    /// Typing a reason for denying the selected approval.
    pub deny: Option<String>,
    /// By pane: the entries this console dismissed, as the server keeps
    /// them (src/server/seen.rs).
    pub(crate) dismissed: HashMap<usize, Vec<Dismissed>>,
    /// The event (`seq`) a snapshot's replay is applying, if one is.
    pub(crate) replaying: Option<u64>,
    /// Types silenced with `/mute TYPE`, for every pane.
    pub muted_kinds: Vec<ReasonKind>,
    /// `[ui] notify_command`'s rate limit.
    pub notify: crate::notify::Limiter,
}

impl Inbox {
    /// Adds an entry unless the same one is already waiting, or this
    /// console dismissed it; true if added.
    pub fn post(&mut self, pane: usize, at: Instant, reason: Reason) -> bool {
        if self
            .entries
            .iter()
            .any(|e| e.pane == pane && e.reason == reason)
            || self.was_dismissed(pane, &reason)
        {
            return false;
        }
        self.entries.push(Entry { pane, at, reason });
        true
    }

    /// Whether `reason` of `pane` is one this console dismissed: made by
    /// an event the dismissal came after (a replayed one), or a feature's
    /// post of the same words (posted again after each snapshot).
    fn was_dismissed(&self, pane: usize, reason: &Reason) -> bool {
        let Some(list) = self.dismissed.get(&pane) else {
            return false;
        };
        let (kind, what) = (reason.kind(), reason.describe());
        list.iter().any(|d| {
            d.kind == kind
                && d.what == what
                && (matches!(reason, Reason::Posted { .. })
                    || self.replaying.is_some_and(|seq| seq <= d.up_to))
        })
    }

    /// `d`: the selected entry goes, and is remembered as dismissed; what
    /// the server is told (`None`: an approval, which waits until answered).
    pub(crate) fn dismiss_selected(&mut self) -> Option<(usize, Reason)> {
        let e = self.entries.get(self.sel)?;
        if matches!(e.reason, Reason::Permission { .. }) {
            return None;
        }
        let e = self.entries.remove(self.sel);
        // Until the server's list comes with the next snapshot.
        self.dismissed.entry(e.pane).or_default().push(Dismissed {
            kind: e.reason.kind(),
            what: e.reason.describe(),
            up_to: 0,
        });
        Some((e.pane, e.reason))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn selected(&self) -> Option<&Entry> {
        self.entries.get(self.sel)
    }

    /// Drops what was handled elsewhere: answered approvals, everything
    /// but approvals and posts for the focused pane, exits of restarted
    /// agents, stalls that moved on.
    pub(crate) fn reconcile(&mut self, panes: &[Pane], focus: usize) {
        self.entries.retain(|e| {
            let Some(p) = panes.get(e.pane) else {
                return false;
            };
            match &e.reason {
                Reason::Permission { request_id, .. } => p
                    .pending
                    .permissions
                    .iter()
                    .any(|r| &r.request_id == request_id),
                Reason::Posted { .. } => true,
                Reason::Exited => e.pane != focus && p.conversation.state == TurnState::Dead,
                Reason::Stalled => e.pane != focus && p.conversation.stalled_since.is_some(),
                _ => e.pane != focus,
            }
        });
        self.sel = self.sel.min(self.entries.len().saturating_sub(1));
        if self.entries.is_empty() {
            self.deny = None;
        }
    }

    pub(crate) fn move_sel(&mut self, delta: isize) {
        if self.entries.is_empty() {
            return;
        }
        let n = self.entries.len() as isize;
        self.sel = (self.sel as isize + delta).clamp(0, n - 1) as usize;
        self.deny = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AgentConfig;
    use crate::protocol::agent::PermissionRequest;

    fn req(id: &str) -> PermissionRequest {
        PermissionRequest {
            request_id: id.into(),
            tool_name: "Bash".into(),
            input: serde_json::json!({"command": "ls"}),
            description: None,
            options: Vec::new(),
            display: None,
            ..Default::default()
        }
    }

    #[test]
    fn entries_go_when_handled_elsewhere() {
        let mut panes = vec![
            Pane::new(AgentConfig::new("a", "script")),
            Pane::new(AgentConfig::new("b", "script")),
        ];
        panes[1].pending.permissions.push_back(req("r1"));
        let now = Instant::now();
        let mut inbox = Inbox::default();
        let perm = Reason::Permission {
            request_id: "r1".into(),
            tool: "Bash".into(),
            args: "ls".into(),
        };
        assert!(inbox.post(1, now, perm.clone()));
        assert!(!inbox.post(1, now, perm), "the same entry twice");
        inbox.post(1, now, Reason::TurnFinished);
        inbox.post(0, now, Reason::Bell);
        inbox.reconcile(&panes, 0);
        assert_eq!(inbox.len(), 2, "pane 0 is focused: its bell is seen");
        inbox.reconcile(&panes, 1);
        assert_eq!(inbox.len(), 1, "focusing pane 1 sees its finished turn");
        panes[1].pending.permissions.clear();
        inbox.reconcile(&panes, 0);
        assert!(inbox.is_empty(), "the approval was answered in its pane");
    }

    #[test]
    fn a_dismissed_entry_stays_out_of_a_replay_up_to_its_dismissal() {
        let now = Instant::now();
        let mut inbox = Inbox::default();
        inbox.post(1, now, Reason::TurnFinished);
        assert!(inbox.dismiss_selected().is_some());
        assert!(inbox.is_empty());
        // The snapshot after: the server heard of it at event 10.
        inbox.dismissed.insert(
            1,
            vec![Dismissed {
                kind: ReasonKind::Finished,
                what: "turn finished".into(),
                up_to: 10,
            }],
        );
        inbox.replaying = Some(9);
        assert!(!inbox.post(1, now, Reason::TurnFinished), "dismissed");
        assert!(inbox.post(0, now, Reason::TurnFinished), "another pane's");
        inbox.replaying = Some(11);
        assert!(
            inbox.post(1, now, Reason::TurnFinished),
            "a later turn is news"
        );
        let posted = Reason::Posted {
            kind: "overlap".into(),
            text: "x".into(),
        };
        inbox.entries.clear();
        inbox.replaying = None;
        assert!(inbox.post(2, now, posted.clone()));
        inbox.sel = 0;
        assert!(inbox.dismiss_selected().is_some());
        assert!(!inbox.post(2, now, posted), "posted again after a snapshot");
    }

    #[test]
    fn args_on_one_line() {
        let v = serde_json::json!({"command": "mkdir -p build\ntouch x", "timeout": 5});
        assert_eq!(summarize_args(&v), "mkdir -p build touch x");
        let v = serde_json::json!({"a": 1});
        assert_eq!(summarize_args(&v), "a=1");
    }
}
