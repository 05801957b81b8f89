//! A client's questions about one of its panes that only this machine
//! can answer (issue 30: a console elsewhere completing `@`, or listing and
//! reopening the pane's history sessions for `/resume`): the client's pane
//! number turned into the pane's slot, then the work handed to
//! `lists::Listings` off the loop, or the session switched.

use super::clients::ClientId;
use super::lists::handle;
use crate::wire::ClientMsg;

impl super::serve::Server {
    /// Client `to` asks for the files or the sessions of its pane `n` (as
    /// it numbers them; no such pane: an empty list).
    pub(super) fn list_for(&mut self, to: ClientId, msg: ClientMsg) {
        let pane_of = |n: usize| self.order.get(n).and_then(|&s| self.panes.get(s));
        match msg {
            ClientMsg::Files { pane } => {
                let cwd = pane_of(pane).map(|p| p.agent.cwd.clone());
                self.lists.files(to, pane, cwd);
            }
            ClientMsg::Sessions { pane } => {
                let agent = pane_of(pane).map(|p| p.agent.id.clone());
                self.lists.sessions(to, pane, agent);
            }
            _ => {}
        }
    }

    /// The slot of a client's pane `n` and the handle to switch it to
    /// `session` with (`None`: no such pane, or no such session here).
    pub(super) fn resume_of(&self, n: usize, session: &str) -> Option<(usize, Option<String>)> {
        let slot = *self.order.get(n)?;
        let runner = self.runners.get(slot).and_then(Option::as_ref);
        let can_resume = runner.is_some_and(|r| r.capabilities.resume);
        let agent = &self.panes.get(slot)?.agent;
        Some((
            slot,
            handle(self.lists.store(), agent, session, can_resume)?,
        ))
    }
}
