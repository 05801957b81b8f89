//! A client's questions about one of its panes that only its server can
//! answer (issue 30; every console asks, here or on another machine:
//! completing `@`, or listing and reopening the pane's history sessions for
//! `/resume`): the client's pane number turned into the pane's slot, then
//! the work handed to `lists::Listings` off the loop, and what it made
//! applied on the loop.

use super::clients::ClientId;
use super::lists::{Listed, ResumeAsk};
use crate::protocol::pane::RunnerCommand;
use crate::protocol::snapshot::Restored;
use crate::wire::ClientMsg;

impl super::serve::Server {
    /// Client `to` asks for the files or the sessions of its pane `n` (as
    /// it numbers them; no such pane: an empty list).
    pub(super) fn list_for(&mut self, to: ClientId, msg: ClientMsg) {
        let pane_of = |n: usize| self.panes.order.get(n).and_then(|&s| self.panes.get(s));
        match msg {
            ClientMsg::Files { pane } => {
                let cwd = pane_of(pane).map(|p| p.record.agent.cwd.clone());
                self.lists.files(to, pane, cwd);
            }
            ClientMsg::Sessions { pane } => {
                let agent = pane_of(pane).map(|p| p.record.agent.id.clone());
                self.lists.sessions(to, pane, agent);
            }
            _ => {}
        }
    }

    /// Client `to` asks its pane `n` to switch to history session
    /// `session`: opened off the loop, then [`Self::listed`].
    pub(super) fn resume(&mut self, to: ClientId, n: usize, session: String) {
        let Some(&slot) = self.panes.order.get(n) else {
            return;
        };
        let runner = self.runners.get(slot).and_then(Option::as_ref);
        let can_resume = runner.is_some_and(|r| r.capabilities.resume);
        let Some(pane) = self.panes.get(slot) else {
            return;
        };
        self.lists.resume(ResumeAsk {
            to,
            slot,
            agent: pane.record.agent.clone(),
            session,
            can_resume,
            new: false,
        });
    }

    /// What the blocking pool made: a list for its client, or a session
    /// opened for a switch, which every client (the asker too) sees as the
    /// pane's `Reset`, a line saying whether the agent continues it.
    pub(super) fn listed(&mut self, listed: Listed) {
        let (slot, agent, session, opened, resume, new) = match listed {
            Listed::Answer(to, msg) => return self.clients.send(to, &msg),
            Listed::Opened {
                slot,
                agent,
                session,
                opened,
                resume,
                new,
            } => (slot, agent, session, opened, resume, new),
        };
        // The pane closed (or another took its slot) while it was opened.
        let Some(pane) = self
            .panes
            .get_mut(slot)
            .filter(|p| p.record.agent.id == agent)
        else {
            return;
        };
        let agent = &pane.record.agent;
        let who = format!("{} ({})", agent.display_name(), agent.provider);
        let note = match (&resume, &opened.resume) {
            _ if new => format!("new session {session}"),
            (Some(_), _) => format!("resumed session {session}: the agent continues it"),
            (None, Some(_)) => format!(
                "session {session}: {who} cannot resume its own sessions, so it starts a new one (the transcript is hive's)"
            ),
            (None, None) => format!(
                "session {session}: hive kept no agent session for it, so the agent starts a new one (the transcript is hive's)"
            ),
        };
        pane.log.reset(Restored::of(&opened));
        pane.log.note(note);
        let restoring = pane.log.restoring();
        pane.record.restore(restoring);
        self.reset_pane(slot, None);
        if let Some(r) = self.runners.get(slot).and_then(Option::as_ref) {
            r.send(RunnerCommand::SwitchSession { session, resume });
        }
    }
}
