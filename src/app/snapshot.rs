//! A console attached to a hive server rebuilds its panes from the server's
//! snapshot (`wire::snapshot`): each pane's restored history, then its
//! logged events through `App::apply`, the one place events are read, so
//! a pane drawn from a snapshot is the pane the live stream would have
//! drawn.
//!
//! Events the user had seen (up to the pane's `seen`: the last event of it
//! a console showed while looking at it) are applied as if their pane had
//! the focus: no unread tally, no flag, no status line, as a restored
//! history. Those that came while no console looked at the pane (none was
//! attached, or each looked at another pane) are applied with no pane
//! focused, so they are tallied, flagged `●` and put in the inbox exactly
//! as a live event in a pane out of view: the inbox outlives a detach, a
//! `kill -9` of the console, a reconnect (#46 item 8). Focusing a pane
//! afterwards turns its tally into the "since you looked" digest. Whatever the replay would send out
//! (runner commands, git requests, bells) already happened at the server
//! and is dropped.

use std::collections::{HashMap, HashSet};

use super::inbox::Inbox;
use super::pane::Pane;
use super::state::{App, Overlay};
use crate::protocol::pane::PaneUpdate;
use crate::protocol::snapshot::{LayoutPane, PaneSnapshot, Snapshot};

/// The focus while away events are applied: no pane.
const NOBODY: usize = usize::MAX;

/// What of a client's own view a resync carries over to a pane.
struct Kept {
    composer: super::pane::Composer,
    attachments: Vec<crate::protocol::image::Image>,
    scroll: usize,
    expanded: bool,
}

impl App {
    /// Replaces every pane with the snapshot's. `keep_view`: this client
    /// already showed the server (a resync, or panes added, closed or
    /// moved) and keeps its focus, zoom, overlay and each pane's composer,
    /// scroll and expansion, matched by the pane's id; otherwise it starts at the pane the
    /// last client looked at.
    pub fn load_snapshot(&mut self, snap: Snapshot, keep_view: bool) {
        // What points at panes by number follows them by id.
        let runs = self.runs_by_id();
        let mut old = std::mem::take(&mut self.panes);
        // Panes come and go and move (issue 32): a kept view follows its
        // pane by id, not by number.
        let focused_id = old.get(self.focus).map(|p| p.agent.id.clone());
        let focus = match focused_id.filter(|_| keep_view) {
            Some(id) => snap
                .panes
                .iter()
                .position(|p| p.agent.id == id)
                .unwrap_or(self.focus),
            None if keep_view => self.focus,
            None => snap.focus,
        };
        self.panes = snap.panes.iter().map(|s| Pane::of_card(&s.agent)).collect();
        self.inbox = Inbox::default();
        self.overview.state_since.clear();
        self.search.synced.clear();
        let (outbox, status, now) = self.replay_begin();
        for (i, s) in snap.panes.into_iter().enumerate() {
            let kept = old
                .iter_mut()
                .find(|p| keep_view && p.agent.id == s.agent.id)
                .map(take_view);
            // Each pane by what a console saw of it (#46 item 8).
            let away = s.seen.or(snap.away_since);
            self.fill(i, s, away, kept);
        }
        self.replay_end(outbox, status, now);
        self.put_runs(runs);
        if !keep_view {
            self.zoom = false;
            self.overlay = Overlay::None;
        }
        self.clamp_view();
        if self.panes.is_empty() {
            self.focus = 0;
        }
        // From no pane: the pane focused turns its tally into its digest.
        self.set_focus(focus.min(self.panes.len().saturating_sub(1)));
        // Panes may have come, gone or moved: the git service, in the
        // server, knows them by slot (src/server/worktrees.rs).
        self.best_of_ready();
    }

    /// The panes after an edit (`ServerMsg::Layout`): the ones this
    /// console shows already move to their new places whole (no replay of
    /// their history), with their new titles, windows and parents; new
    /// ones are built from their snapshots. What points at panes by number
    /// follows them by id. False when a kept pane is not here (this copy
    /// went wrong): the caller asks for a fresh snapshot.
    pub fn relayout(&mut self, layout: Vec<LayoutPane>) -> bool {
        let ids: Vec<String> = self.panes.iter().map(|p| p.agent.id.clone()).collect();
        let kept: Vec<&String> = layout
            .iter()
            .filter_map(|l| match l {
                LayoutPane::Kept { id, .. } => Some(id),
                LayoutPane::New(_) => None,
            })
            .collect();
        let once: HashSet<&String> = kept.iter().copied().collect();
        if once.len() != kept.len() || !kept.iter().all(|id| ids.contains(id)) {
            return false;
        }
        let (focused, was) = (ids.get(self.focus).cloned(), self.focus);
        let runs = self.runs_by_id();
        let mut old: Vec<Option<Pane>> = std::mem::take(&mut self.panes)
            .into_iter()
            .map(Some)
            .collect();
        // Old number -> new number, for what is kept.
        let mut moved: HashMap<usize, usize> = HashMap::new();
        let mut fresh = Vec::new();
        for (i, l) in layout.into_iter().enumerate() {
            match l {
                LayoutPane::Kept {
                    id,
                    name,
                    window,
                    parent,
                } => {
                    let at = ids.iter().position(|x| *x == id).unwrap_or_default();
                    // Checked above: here, and named once.
                    let Some(mut p) = old.get_mut(at).and_then(Option::take) else {
                        continue;
                    };
                    p.agent.name = name;
                    p.window = window.max(1);
                    p.parent = parent;
                    moved.insert(at, i);
                    self.panes.push(p);
                }
                LayoutPane::New(snap) => {
                    self.panes.push(Pane::of_card(&snap.agent));
                    fresh.push((i, *snap));
                }
            }
        }
        self.renumber(&moved);
        let (outbox, status, now) = self.replay_begin();
        for (i, snap) in fresh {
            self.fill(i, snap, None, None);
        }
        self.replay_end(outbox, status, now);
        self.put_runs(runs);
        self.clamp_view();
        // A closed pane's console looks at the one now in its place.
        let focus = focused
            .and_then(|id| self.panes.iter().position(|p| p.agent.id == id))
            .unwrap_or(was);
        self.focus = focus.min(self.panes.len().saturating_sub(1));
        self.reconcile_inbox();
        self.best_of_ready();
        true
    }

    /// What the app keeps by pane number follows kept panes to their new
    /// numbers (`moved`); what belonged to a pane gone, goes.
    fn renumber(&mut self, moved: &HashMap<usize, usize>) {
        let to = |i: &usize| moved.get(i).copied();
        self.inbox.entries.retain_mut(|e| match to(&e.pane) {
            Some(n) => {
                e.pane = n;
                true
            }
            None => false,
        });
        self.inbox.dismissed = self
            .inbox
            .dismissed
            .drain()
            .filter_map(|(i, d)| Some((to(&i)?, d)))
            .collect();
        self.overview.state_since = self
            .overview
            .state_since
            .drain()
            .filter_map(|(i, t)| Some((to(&i)?, t)))
            .collect();
        self.worktree_changes = std::mem::take(&mut self.worktree_changes)
            .into_iter()
            .filter_map(|(i, c)| Some((to(&i)?, c)))
            .collect();
        if let Some(d) = self.diff.as_mut() {
            match to(&d.pane) {
                Some(n) => d.pane = n,
                None => self.diff = None,
            }
        }
        // The search worker knows items by pane number: all again.
        self.search.synced.clear();
        self.search.term_asked.clear();
        self.search.term_text.clear();
        self.search.hits.clear();
    }

    /// Fan-out runs and chosen panes, by pane id (numbers change).
    fn runs_by_id(&mut self) -> (Vec<(String, super::overlay::Run)>, Vec<String>) {
        let runs = self
            .fanout
            .runs
            .drain(..)
            .filter_map(|r| Some((self.panes.get(r.pane)?.agent.id.clone(), r)))
            .collect();
        let chosen = self
            .fanout
            .chosen
            .iter()
            .filter_map(|&i| Some(self.panes.get(i)?.agent.id.clone()))
            .collect();
        (runs, chosen)
    }

    /// `runs_by_id`'s runs and chosen panes at their panes' new numbers.
    fn put_runs(&mut self, (runs, chosen): (Vec<(String, super::overlay::Run)>, Vec<String>)) {
        let at = |id: &str| self.panes.iter().position(|p| p.agent.id == id);
        self.fanout.chosen = chosen.iter().filter_map(|id| at(id)).collect();
        self.fanout.runs = runs
            .into_iter()
            .filter_map(|(id, r)| {
                Some(super::overlay::Run {
                    pane: at(&id)?,
                    ..r
                })
            })
            .collect();
    }

    /// Pane `pane` started over (another client's `/resume` or `/clear`):
    /// it shows `snap` from now on, its events all as seen. This client's
    /// composer and expansion stay.
    pub fn reset_pane(&mut self, pane: usize, snap: PaneSnapshot) {
        let Some(old) = self.panes.get_mut(pane) else {
            return;
        };
        let kept = (old.agent.id == snap.agent.id).then(|| Kept {
            scroll: 0,
            ..take_view(old)
        });
        *old = Pane::of_card(&snap.agent);
        self.inbox
            .entries
            .retain(|e| e.pane != pane || matches!(e.reason, super::inbox::Reason::Posted { .. }));
        self.overview.state_since.remove(&pane);
        if let Some(synced) = self.search.synced.get_mut(pane) {
            synced.clear();
        }
        let focus = self.focus;
        let (outbox, status, now) = self.replay_begin();
        self.fill(pane, snap, None, kept);
        self.replay_end(outbox, status, now);
        self.focus = focus;
        self.reconcile_inbox();
    }

    /// Pane `i` (new) from its snapshot: history, events, then what only
    /// the server knows now (why it failed) and the composer.
    fn fill(&mut self, i: usize, mut s: PaneSnapshot, away_since: Option<u64>, kept: Option<Kept>) {
        if let Some(p) = self.panes.get_mut(i) {
            p.worktree = s.worktree;
            p.host = s.host;
            p.window = s.window.max(1);
            p.parent = s.parent;
        }
        self.restore(i, &mut s.restored);
        // What this console dismissed stays out (#46 item 8).
        if s.dismissed.is_empty() {
            self.inbox.dismissed.remove(&i);
        } else {
            self.inbox
                .dismissed
                .insert(i, std::mem::take(&mut s.dismissed));
        }
        // What a dismissal counts up to: this snapshot's events (a fresh
        // one replaces what the batches before it said).
        let heard = s.events.iter().map(|l| l.seq).max().unwrap_or(0);
        for logged in s.events {
            let away = away_since.is_some_and(|seen| logged.seq > seen);
            self.focus = if away { NOBODY } else { i };
            if let Some(at) = logged.at {
                self.now = at;
            }
            self.inbox.replaying = Some(logged.seq);
            self.apply(PaneUpdate {
                pane: i,
                event: logged.event,
            });
        }
        self.inbox.replaying = None;
        self.focus = NOBODY;
        let Some(p) = self.panes.get_mut(i) else {
            return;
        };
        p.attention.heard = heard;
        // The view's layout caches belong to the pane this one replaces.
        p.conversation.transcript.invalidate();
        // After the events: an `Attached` among them clears it.
        p.conversation.failed = s.failed;
        match kept {
            Some(k) => {
                p.composer = k.composer;
                p.attachments = k.attachments;
                p.scroll = k.scroll;
                p.expanded = k.expanded;
            }
            None => p.composer.set(&s.draft),
        }
    }

    /// Sets aside what a replay must not disturb or send.
    fn replay_begin(
        &mut self,
    ) -> (
        super::command::Outbox,
        Option<(String, std::time::Instant)>,
        std::time::Instant,
    ) {
        self.focus = NOBODY;
        (
            std::mem::take(&mut self.outbox),
            self.status.take(),
            self.now,
        )
    }

    fn replay_end(
        &mut self,
        outbox: super::command::Outbox,
        status: Option<(String, std::time::Instant)>,
        now: std::time::Instant,
    ) {
        self.outbox = outbox;
        self.status = status;
        self.now = now;
    }

    /// Overlays that point at a pane or an entry no longer there close or
    /// clamp.
    fn clamp_view(&mut self) {
        let n = self.panes.len();
        if n == 0 {
            self.zoom = false;
            self.overlay = Overlay::None;
        }
        if self.diff.as_ref().is_some_and(|d| d.pane >= n) {
            self.diff = None;
            if self.overlay == Overlay::Diff {
                self.overlay = Overlay::None;
            }
        }
        self.fanout.chosen.retain(|&i| i < n);
        self.fanout.runs.retain(|r| r.pane < n);
        self.fanout.sel = self.fanout.sel.min(n.saturating_sub(1));
        self.overview.sel = self.overview.sel.min(n.saturating_sub(1));
        self.search.hits.retain(|h| h.pane < n);
        self.search.sel = self
            .search
            .sel
            .min(self.search.hits.len().saturating_sub(1));
    }
}

fn take_view(p: &mut Pane) -> Kept {
    Kept {
        composer: std::mem::take(&mut p.composer),
        attachments: std::mem::take(&mut p.attachments),
        scroll: p.scroll,
        expanded: p.expanded,
    }
}
