//! `hive ctl watch`'s side of the hub: each runner event as a JSON line
//! to every watcher of its pane, a growing text as what was appended to
//! the watchers that have the rest — each watcher keeps the appended-text
//! encoder a console's connection keeps (`protocol::delta::TextSent`), so
//! both follow one rule — and a watcher that cannot keep up treated as a
//! console is (src/backlog.rs): past the bound it is sent nothing, and once
//! it has read everything it gets a `{"lagged": N}` line (N lines missed)
//! and every text whole from then on.

use std::sync::Arc;

use serde::Serialize;

use super::{Hub, Watch, serialized};
use crate::backlog::Admit;
use crate::control::protocol::{ApprovalEvent, ApprovalLine, DeltaLine, TextDelta};
use crate::protocol::delta::TextSent;
use crate::upsert::Upsert;

pub(super) struct Subscriber {
    pub(super) pane: Option<usize>,
    pub(super) watch: Watch,
    /// What it last got of each open text item.
    pub(super) sent: TextSent,
    /// Lines skipped while it was behind.
    pub(super) missed: u64,
    /// It caught up: its next line goes whatever its size, as a console's
    /// fresh snapshot does.
    pub(super) fresh: bool,
}

impl Subscriber {
    fn hears(&self, i: usize) -> bool {
        self.pane.is_none_or(|p| p == i)
    }

    /// A watcher behind that has read everything starts again: it is told
    /// how much it missed, and its texts go whole (a delta would extend a
    /// text it did not get).
    fn catch_up(&mut self) {
        if !self.watch.backlog.drained() {
            return;
        }
        self.watch.backlog.caught_up();
        self.sent = TextSent::default();
        if let Some(line) = serialized(&Lagged {
            lagged: self.missed,
        }) {
            self.watch.backlog.force(line.len());
            let _ = self.watch.tx.send(line);
        }
        self.missed = 0;
        self.fresh = true;
    }

    /// Offers one line; false when the watcher is gone.
    fn offer(&mut self, line: &Arc<str>) -> bool {
        if std::mem::take(&mut self.fresh) {
            self.watch.backlog.force(line.len());
            return self.watch.tx.send(line.clone()).is_ok();
        }
        match self.watch.backlog.admit(line.len()) {
            Admit::Queue => self.watch.tx.send(line.clone()).is_ok(),
            Admit::Skip { .. } => {
                self.missed += 1;
                !self.watch.tx.is_closed()
            }
        }
    }
}

/// The line a watcher gets once it caught up after falling behind.
#[derive(Serialize)]
struct Lagged {
    lagged: u64,
}

/// `watch` lines borrow the event instead of cloning it: same JSON as
/// [`crate::control::protocol::EventLine`].
#[derive(Serialize)]
struct EventRef<'a, T: Serialize> {
    pane: &'a str,
    event: &'a T,
}

impl Hub {
    pub(super) fn broadcast<T: Serialize>(&mut self, pane: &str, i: usize, event: &T) {
        if self.subscribers.is_empty() {
            return;
        }
        let Some(line) = serialized(&EventRef { pane, event }) else {
            return;
        };
        self.send_lines(i, |_| &line);
    }

    pub(super) fn broadcast_approval(&mut self, pane: &str, i: usize, approval: ApprovalEvent) {
        if self.subscribers.is_empty() {
            return;
        }
        let pane = pane.to_owned();
        if let Some(line) = serialized(&ApprovalLine { pane, approval }) {
            self.send_lines(i, |_| &line);
        }
    }

    /// Sends pane `i`'s watchers each line `pick` chooses for them.
    pub(super) fn send_lines<'a>(&mut self, i: usize, pick: impl Fn(&Subscriber) -> &'a Arc<str>) {
        self.subscribers.retain_mut(|s| {
            if !s.hears(i) {
                return !s.watch.tx.is_closed();
            }
            s.catch_up();
            let line = pick(s);
            s.offer(line)
        });
    }

    /// An upsert of a message or thinking item goes to each watcher that
    /// has its text so far as the appended text, to the others whole (each
    /// watcher's `TextSent` says which): a long answer costs its length,
    /// not its length once per update. Each line is made once.
    pub(super) fn broadcast_upsert(&mut self, pane: &str, i: usize, u: &Upsert) {
        if u.text().is_none() {
            return self.broadcast(pane, i, u);
        }
        // Per watcher of pane `i`: from which byte it needs the text.
        let bases: Vec<Option<Option<usize>>> = self
            .subscribers
            .iter_mut()
            .map(|s| {
                s.hears(i).then(|| {
                    s.catch_up();
                    s.sent.grown(i, u)
                })
            })
            .collect();
        let mut lines: Vec<(Option<usize>, Option<Arc<str>>)> = Vec::new();
        for base in bases.iter().flatten() {
            if !lines.iter().any(|(b, _)| b == base) {
                lines.push((*base, line_of(pane, u, *base)));
            }
        }
        let mut next = bases.iter();
        self.subscribers.retain_mut(|s| {
            let Some(Some(base)) = next.next() else {
                return true;
            };
            let line = lines
                .iter()
                .find(|(b, _)| b == base)
                .and_then(|(_, l)| l.as_ref());
            line.is_none_or(|line| s.offer(line))
        });
    }
}

/// Upsert `u`'s line: whole, or (`from`) the text after its first bytes.
fn line_of(pane: &str, u: &Upsert, from: Option<usize>) -> Option<Arc<str>> {
    let delta = from.and_then(|from| {
        u.text()?.with_str(|t| {
            let event = TextDelta::of(u, t, from)?;
            serialized(&DeltaLine {
                pane: pane.into(),
                event,
            })
        })
    });
    delta.or_else(|| serialized(&EventRef { pane, event: u }))
}
