//! The server's side of what each console looks at (#46 item 8): who a
//! client is, the panes it looks at and leaves, its dismissals, and the
//! idle terminal panes, over the bookkeeping of src/server/seen.rs and
//! src/server/idle.rs.

use std::time::Instant;

use super::clients::{ClientId, Link};
use super::seen::{MAX_WHAT, SeenBy, anonymous, identity, key};
use super::serve::Server;
use crate::protocol::mutes::ReasonKind;
use crate::runner::{PaneEvent, PaneUpdate};

impl Server {
    /// `ClientMsg::Identify`: client `id` is console `raw`.
    pub(super) fn identify(&mut self, id: ClientId, raw: &str) {
        let Some(who) = identity(raw) else {
            tracing::warn!(
                client = id,
                "an identity that is none: a console of its own"
            );
            return;
        };
        if let Some(link) = self.clients.get_mut(id) {
            tracing::info!(client = id, console = %who, "client identified");
            link.who = Some(who);
        }
    }

    /// Client `id` looks at slot `to` now (`None`: at none of ours): the
    /// pane it leaves is seen up to here, and so is the one it looks at.
    pub(super) fn focus_moves(&mut self, id: ClientId, to: Option<usize>) {
        let seq = self.seq;
        let Some(link) = self.clients.get_mut(id) else {
            return;
        };
        let who = key(link.who.as_deref(), id);
        for slot in link.focus.iter().chain(to.iter()) {
            self.memory.saw(&who, *slot, seq);
        }
        link.focus = to;
    }

    /// `link` left: the pane it looked at is seen up to here; a
    /// connection of its own is forgotten.
    pub(super) fn saw_until_now(&mut self, link: &Link) {
        let who = key(link.who.as_deref(), link.id);
        if anonymous(&who) {
            self.memory.forget(&who);
        } else if let Some(slot) = link.focus {
            self.memory.saw(&who, slot, self.seq);
        }
    }

    /// `ClientMsg::Dismiss`: client `id` dismissed an entry of pane `pane`,
    /// having had the events up to `up_to` (never past ours: a client's
    /// claim of the future would dismiss entries not yet made).
    pub(super) fn dismiss(
        &mut self,
        id: ClientId,
        pane: usize,
        kind: ReasonKind,
        what: String,
        up_to: u64,
    ) {
        let (Some(slot), Some(link)) = (
            self.panes.order.get(pane).copied(),
            self.clients.get_mut(id),
        ) else {
            return;
        };
        let who = key(link.who.as_deref(), id);
        let what: String = what.chars().take(MAX_WHAT).collect();
        self.memory
            .dismiss(&who, slot, kind, what, up_to.min(self.seq));
    }

    /// What client `id`'s console saw and dismissed.
    pub(super) fn seen_by(&self, id: ClientId) -> SeenBy<'_> {
        let who = key(self.clients.who_of(id), id);
        let looking = self
            .clients
            .attached()
            .filter(|l| key(l.who.as_deref(), l.id) == who)
            .filter_map(|l| l.focus)
            .collect();
        SeenBy {
            consoles: &self.memory,
            who,
            looking,
            seq: self.seq,
        }
    }
}

impl Server {
    /// The panes gone idle: each gets its `Idle`, logged and sent as a
    /// runner event would be.
    pub(super) fn idle_due(&mut self) {
        for slot in self.idle.due(Instant::now()) {
            self.on_update(PaneUpdate {
                pane: slot,
                event: PaneEvent::Idle,
            });
        }
        self.send_events();
    }
}
