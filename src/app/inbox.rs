//! The attention inbox: one list, oldest first, of everything waiting for
//! the user across panes (approval requests, failed or finished turns,
//! bells, idle terminals, exited or stalled agents, and entries other
//! features post through `InboxEvent`).
//!
//! Entries are facts about panes, so they go away when handled anywhere:
//! an approval answered in its pane, a pane focused, an agent restarted.
//! `App::reconcile_inbox` applies those rules after every change.

use std::time::{Duration, Instant};

use super::pane::Pane;
pub(crate) use crate::config::ReasonKind;
pub use crate::notify::reason::Reason;
pub(crate) use crate::notify::reason::summarize_args;
use crate::protocol::pane::TurnState;

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
    /// When each typed-into terminal pane last showed output (idle
    /// detection).
    pub(crate) activity: std::collections::HashMap<usize, Instant>,
    /// Terminal panes typed into since their last idle report: only their
    /// output counts (a shell printing its prompt at start is not news).
    pub typed: std::collections::HashSet<usize>,
    /// Types silenced with `/mute TYPE`, for every pane.
    pub muted_kinds: Vec<ReasonKind>,
    /// `[ui] notify_command`'s rate limit.
    pub notify: crate::notify::Limiter,
}

/// A terminal pane quiet this long after output is idle.
pub(crate) const IDLE_AFTER: Duration = Duration::from_secs(5);

impl Inbox {
    /// Adds an entry unless the same one is already waiting; true if added.
    pub fn post(&mut self, pane: usize, at: Instant, reason: Reason) -> bool {
        if self
            .entries
            .iter()
            .any(|e| e.pane == pane && e.reason == reason)
        {
            return false;
        }
        self.entries.push(Entry { pane, at, reason });
        true
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
    fn args_on_one_line() {
        let v = serde_json::json!({"command": "mkdir -p build\ntouch x", "timeout": 5});
        assert_eq!(summarize_args(&v), "mkdir -p build touch x");
        let v = serde_json::json!({"a": 1});
        assert_eq!(summarize_args(&v), "a=1");
    }
}
