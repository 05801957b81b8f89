//! The server's git side (issue 30): the worktree service
//! (`worktree::spawn_service`) runs where the panes and their repositories
//! are, so a console on another machine gets a pane's diff, merges it or
//! reviews it without ever touching that machine's paths, and two consoles
//! of one server share one service instead of each snapshotting the same
//! turns.
//!
//! The server feeds the service each worktree pane's turn boundaries from
//! the runner events it sees. A client's request is answered to that client
//! alone: the service answers every request that is answered at all with
//! exactly one event, in order, so a queue of who asked is enough to route
//! the answers. What the service sends unasked (overlaps, each worktree's
//! changes, predicted conflicts) is the state of every pane: it goes to
//! every attached client, and the latest of each to a client after its
//! snapshot.

use std::collections::VecDeque;

use tokio::sync::mpsc;

use super::clients::{ClientId, Clients};
use crate::runner::{PaneEvent, PaneUpdate};
use crate::wire::ServerMsg;
use crate::worktree::{Worktree, WorktreeEvent, WorktreeRequest};

pub(super) struct Worktrees {
    tx: mpsc::UnboundedSender<WorktreeRequest>,
    rx: mpsc::UnboundedReceiver<WorktreeEvent>,
    /// The panes with a worktree.
    panes: Vec<usize>,
    /// Who asked each answered request still in the service, in order.
    asked: VecDeque<(usize, ClientId)>,
    /// The latest state events, for a client that attaches later.
    overlaps: Option<WorktreeEvent>,
    changed: Option<WorktreeEvent>,
    conflicts: Option<WorktreeEvent>,
}

impl Worktrees {
    /// Starts the service for the panes that have worktrees (with none,
    /// it answers each request that the pane has no worktree).
    pub(super) fn start(panes: Vec<(usize, Worktree)>) -> Self {
        let with: Vec<usize> = panes.iter().map(|(i, _)| *i).collect();
        let (events, rx) = mpsc::unbounded_channel();
        let tx = crate::worktree::spawn_service(panes, events);
        Self {
            tx,
            rx,
            panes: with,
            asked: VecDeque::new(),
            overlaps: None,
            changed: None,
            conflicts: None,
        }
    }

    /// A runner event: a worktree pane's turn started or ended.
    pub(super) fn observe(&self, update: &PaneUpdate) {
        if let PaneEvent::Turn(t) = &update.event
            && self.panes.contains(&update.pane)
        {
            let _ = self.tx.send(WorktreeRequest::of_turn(update.pane, t));
        }
    }

    /// Client `from`'s request. Turn boundaries are the server's to say.
    pub(super) fn request(&mut self, from: ClientId, mut req: WorktreeRequest) {
        if matches!(
            req,
            WorktreeRequest::TurnStarted { .. } | WorktreeRequest::TurnEnded { .. }
        ) {
            return;
        }
        if let Some(pane) = req.pane_mut().copied()
            && req.is_answered()
        {
            self.asked.push_back((pane, from));
        }
        let _ = self.tx.send(req);
    }

    /// The service's next event.
    pub(super) async fn next(&mut self) -> Option<WorktreeEvent> {
        self.rx.recv().await
    }

    /// Sends an event of the service where it belongs.
    pub(super) fn deliver(&mut self, mut ev: WorktreeEvent, clients: &mut Clients) {
        match ev.pane_mut().copied() {
            Some(pane) => match self.asked.pop_front() {
                Some((asked, id)) if asked == pane => {
                    clients.send(id, &ServerMsg::Worktree(ev));
                }
                other => {
                    tracing::warn!(pane, ?other, "a git answer nobody waits for dropped");
                }
            },
            None => {
                let msg = ServerMsg::Worktree(ev.clone());
                clients.broadcast(&msg, None);
                let slot = match ev {
                    WorktreeEvent::Overlaps(_) => &mut self.overlaps,
                    WorktreeEvent::Changed(_) => &mut self.changed,
                    _ => &mut self.conflicts,
                };
                *slot = Some(ev);
            }
        }
    }

    /// After client `id`'s snapshot: the current state of the worktrees.
    pub(super) fn catch_up(&self, id: ClientId, clients: &mut Clients) {
        for ev in [&self.overlaps, &self.changed, &self.conflicts]
            .into_iter()
            .flatten()
        {
            clients.send(id, &ServerMsg::Worktree(ev.clone()));
        }
    }
}
