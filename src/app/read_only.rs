//! A read-only console (`hive attach --read-only`, issue 47): for sharing
//! a live pane without control. It shows every pane as any console does,
//! moves its own focus, scrolls, searches and copies, and changes nothing:
//! nothing it types reaches a composer or a terminal pane, an approval card
//! stays until someone else answers it, and leaving only detaches.
//!
//! The server is what holds to it (it refuses every request of a read-only
//! connection that changes anything, `verb::Caller::may`); the console only
//! keeps its own copy true to the server's by not sending what would be
//! refused, and says why in the status line with the server's words.

use super::command::AppCommand;
use super::state::App;
use crate::protocol::pane::RunnerCommand;
use crate::protocol::verb::read_only_refusal;

impl App {
    /// A key that would type into the focused pane (its composer, or a
    /// terminal pane's program): refused, and said.
    pub(super) fn refuse_typing(&mut self) {
        let what = if self.focused().is_some_and(|p| p.is_terminal()) {
            "type into a pane"
        } else {
            "send"
        };
        self.set_status(read_only_refusal(what));
    }

    /// Takes out of the outbox what a read-only console may not ask (the
    /// server would refuse it), saying so; what only looks goes on. A
    /// terminal pane's size goes quietly: it is never a read-only
    /// console's (as tmux's `attach -r`), and the console asks it on
    /// every layout.
    pub(super) fn hold_back_changes(&mut self) {
        if !self.read_only {
            return;
        }
        let refused = self.outbox.drain_where(|c| changes(c).is_some());
        let said = refused
            .iter()
            .rev()
            .filter_map(changes)
            .find(|what| *what != QUIET);
        if let Some(what) = said {
            self.set_status(read_only_refusal(what));
        }
    }
}

/// What a size change is refused as (never said).
const QUIET: &str = "size a pane";

/// What `cmd` would change, in a few words; `None`: it only looks (or is
/// the console's own: its inbox, its terminal, its notifications, a
/// search).
fn changes(cmd: &AppCommand) -> Option<&'static str> {
    match cmd {
        AppCommand::Runner { cmd, .. } if cmd.only_looks() => None,
        AppCommand::Runner {
            cmd: RunnerCommand::Resize { .. },
            ..
        } => Some(QUIET),
        AppCommand::Runner { cmd, .. } => Some(cmd.what_it_does()),
        AppCommand::Edit(_) => Some("change the panes"),
        // The server's own list of what a session message changes.
        other => other.clone().into_request().ok().and_then(|m| m.changes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::agent::PermissionDecision;
    use crate::protocol::git::WorktreeRequest;
    use crate::protocol::pane::Decider;

    #[test]
    fn only_what_looks_goes_out_and_a_refusal_is_said() {
        let mut app = App::new(
            &crate::config::Config::builtin(),
            crate::theme::Theme::default(),
            crate::keymap::Keymap::default(),
        );
        app.read_only = true;
        app.outbox.runner(
            0,
            RunnerCommand::TermView {
                scroll: 3,
                seen: 10,
                hold: true,
            },
        );
        app.outbox.runner(
            0,
            RunnerCommand::Permission {
                request_id: "r1".into(),
                decision: PermissionDecision::AllowOnce,
                by: Decider::Console,
            },
        );
        app.outbox
            .runner(0, RunnerCommand::Resize { cols: 80, rows: 24 });
        app.outbox.git(WorktreeRequest::CheckOverlaps);
        app.hold_back_changes();
        let left: Vec<_> = app.outbox.runner_commands();
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(matches!(left[0].1, RunnerCommand::TermView { .. }));
        assert_eq!(app.outbox.git_requests().len(), 1);
        let said = app.status.as_ref().map(|(s, _)| s.as_str());
        assert_eq!(said, Some("read-only: may not answer an approval"));
    }
}
