//! `hive ctl watch`'s side of the hub: each runner event as a JSON line
//! to every watcher of its pane, a growing text as what was appended to
//! the watchers that have the rest, and a watcher that cannot keep up
//! dropped rather than buffered without bound.

use std::sync::Arc;

use serde::Serialize;
use tokio::sync::mpsc;

use super::{Hub, serialized};
use crate::control::protocol::{ApprovalEvent, ApprovalLine, DeltaLine, TextDelta};
use crate::runner::mirror;
use crate::text::SharedText;
use crate::upsert::Upsert;

pub(super) struct Subscriber {
    pub(super) pane: Option<usize>,
    pub(super) tx: mpsc::Sender<Arc<str>>,
    /// Its place in the order watchers came in.
    pub(super) joined: u64,
}

/// What the watchers last got of one open item's text.
pub(super) struct Streamed {
    text: SharedText,
    /// Watchers that joined before this one all got it (one that misses a
    /// line is dropped); later ones have not seen the item yet.
    known_below: u64,
}

/// `watch` lines borrow the event instead of cloning it: same JSON as
/// [`crate::control::protocol::EventLine`].
#[derive(Serialize)]
struct EventRef<'a, T: Serialize> {
    pane: &'a str,
    event: &'a T,
}

impl Hub {
    pub(super) fn broadcast<T: Serialize>(&mut self, i: usize, event: &T) {
        if self.subscribers.is_empty() {
            return;
        }
        let Some(line) = serialized(&EventRef {
            pane: &self.panes[i].agent.id,
            event,
        }) else {
            return;
        };
        self.send_lines(i, |_| &line);
    }

    pub(super) fn broadcast_approval(&mut self, i: usize, approval: ApprovalEvent) {
        if self.subscribers.is_empty() {
            return;
        }
        let pane = self.panes[i].agent.id.clone();
        if let Some(line) = serialized(&ApprovalLine { pane, approval }) {
            self.send_lines(i, |_| &line);
        }
    }

    /// Sends pane `i`'s watchers each line `pick` chooses for them. A watcher
    /// that cannot keep up is dropped (its stream then ends with an error)
    /// rather than buffering without bound.
    pub(super) fn send_lines<'a>(&mut self, i: usize, pick: impl Fn(&Subscriber) -> &'a Arc<str>) {
        self.subscribers
            .retain(|s| s.pane.is_some_and(|p| p != i) || s.tx.try_send(pick(s).clone()).is_ok());
    }

    /// An upsert of a message or thinking item goes to the watchers that
    /// have its text so far as the appended text (`mirror::appended_from`),
    /// to the others whole: a long answer costs its length, not its length
    /// once per update.
    pub(super) fn broadcast_upsert(&mut self, i: usize, u: &Upsert) {
        let Some(text) = u.text() else {
            return self.broadcast(i, u);
        };
        if self.subscribers.is_empty() {
            self.streamed.clear();
            return;
        }
        let key = (i, u.item_id.clone());
        let from = self
            .streamed
            .get(&key)
            .and_then(|s| mirror::appended_from(&s.text, text).map(|from| (from, s.known_below)));
        let pane = self.panes[i].agent.id.as_str();
        let delta = from.and_then(|(from, below)| {
            text.with_str(|t| {
                let event = TextDelta::of(u, t, from)?;
                serialized(&DeltaLine {
                    pane: pane.into(),
                    event,
                })
            })
            .map(|line| (line, below))
        });
        let knows = |s: &Subscriber| delta.as_ref().is_some_and(|(_, below)| s.joined < *below);
        let watching = |s: &Subscriber| s.pane.is_none_or(|p| p == i);
        let needs_whole = self.subscribers.iter().any(|s| watching(s) && !knows(s));
        let whole = needs_whole
            .then(|| serialized(&EventRef { pane, event: u }))
            .flatten();
        if u.is_closed() {
            self.streamed.remove(&key);
        } else {
            let known_below = self.next_watcher;
            let text = text.clone();
            self.streamed.insert(key, Streamed { text, known_below });
        }
        match (delta.as_ref().map(|(line, _)| line), whole.as_ref()) {
            (Some(delta), Some(whole)) => {
                self.send_lines(i, |s| if knows(s) { delta } else { whole })
            }
            (Some(line), None) | (None, Some(line)) => self.send_lines(i, |_| line),
            (None, None) => {}
        }
    }
}
