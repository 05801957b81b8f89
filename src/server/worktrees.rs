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
//! snapshot (and after each change of the layout).
//!
//! The service knows panes by slot, which never changes while the server
//! runs; clients number the open panes in their order (`Server::order`), so
//! a request's pane is turned into a slot on the way in and an answer's back
//! into the client's number on the way out (an answer about a pane closed
//! meanwhile goes nowhere).

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
    /// Starts the service for the panes that have worktrees (each pane's,
    /// in order; with none, it answers each request that the pane has no
    /// worktree).
    pub(super) fn start(panes: impl Iterator<Item = Option<Worktree>>) -> Self {
        let panes: Vec<(usize, Worktree)> = panes
            .enumerate()
            .filter_map(|(i, w)| Some((i, w?)))
            .collect();
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

    /// A pane made at runtime in slot `slot` has a worktree.
    pub(super) fn track(&mut self, slot: usize, worktree: Worktree) {
        self.panes.push(slot);
        let worktree = Box::new(worktree);
        let _ = self.tx.send(WorktreeRequest::Track {
            pane: slot,
            worktree,
        });
    }

    /// The pane in slot `slot` was closed.
    pub(super) fn untrack(&mut self, slot: usize) {
        if self.panes.contains(&slot) {
            self.panes.retain(|&s| s != slot);
            let _ = self.tx.send(WorktreeRequest::Untrack { pane: slot });
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

    /// Client `from`'s request, its pane numbered as in `order` (a pane
    /// not there is dropped). Turn boundaries are the server's to say.
    pub(super) fn request(&mut self, from: ClientId, mut req: WorktreeRequest, order: &[usize]) {
        if !req.is_answered() && !matches!(req, WorktreeRequest::CheckOverlaps) {
            return;
        }
        if let Some(pane) = req.pane_mut() {
            let Some(&slot) = order.get(*pane) else {
                return;
            };
            *pane = slot;
            self.asked.push_back((slot, from));
        }
        let _ = self.tx.send(req);
    }

    /// The service's next event.
    pub(super) async fn next(&mut self) -> Option<WorktreeEvent> {
        self.rx.recv().await
    }

    /// Sends an event of the service where it belongs, its panes numbered
    /// as in `order`.
    pub(super) fn deliver(&mut self, ev: WorktreeEvent, clients: &mut Clients, order: &[usize]) {
        match self.route(ev, order) {
            Some((Some(id), msg)) => clients.send(id, &msg),
            Some((None, msg)) => clients.broadcast(&msg, None),
            None => {}
        }
    }

    /// Where an event goes: to the client that asked (`Some`), or, as
    /// state, to every attached client (`None`, and kept, by slot, for
    /// later ones).
    fn route(
        &mut self,
        mut ev: WorktreeEvent,
        order: &[usize],
    ) -> Option<(Option<ClientId>, ServerMsg)> {
        let Some(pane) = ev.pane_mut() else {
            let kept = match ev {
                WorktreeEvent::Overlaps(_) => &mut self.overlaps,
                WorktreeEvent::Changed(_) => &mut self.changed,
                _ => &mut self.conflicts,
            };
            *kept = Some(ev.clone());
            return Some((None, ServerMsg::Worktree(numbered(ev, order))));
        };
        let slot = *pane;
        match self.asked.pop_front() {
            Some((asked, id)) if asked == slot => {
                // Closed meanwhile: nobody shows it.
                *pane = order.iter().position(|&s| s == slot)?;
                Some((Some(id), ServerMsg::Worktree(ev)))
            }
            other => {
                tracing::warn!(slot, ?other, "a git answer nobody waits for dropped");
                None
            }
        }
    }

    /// After client `id`'s snapshot: the current state of the worktrees,
    /// its panes numbered as in `order`.
    pub(super) fn catch_up(&self, id: ClientId, clients: &mut Clients, order: &[usize]) {
        for msg in self.state(order) {
            clients.send(id, &msg);
        }
    }

    fn state(&self, order: &[usize]) -> Vec<ServerMsg> {
        [&self.overlaps, &self.changed, &self.conflicts]
            .into_iter()
            .flatten()
            .map(|ev| ServerMsg::Worktree(numbered(ev.clone(), order)))
            .collect()
    }
}

/// The service's state with its panes (slots) numbered as clients show
/// them; a closed pane's entry is left out.
fn numbered(ev: WorktreeEvent, order: &[usize]) -> WorktreeEvent {
    match ev {
        WorktreeEvent::Changed(changed) => WorktreeEvent::Changed(
            changed
                .into_iter()
                .filter_map(|(slot, files)| Some((order.iter().position(|&s| s == slot)?, files)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worktree::DiffScope;

    /// Slot 1 was closed and slot 2 moved first: the clients' pane 0 is
    /// slot 2, their pane 1 slot 0.
    const ORDER: [usize; 2] = [2, 0];

    /// The service's next event, routed.
    async fn next(w: &mut Worktrees) -> Option<(Option<ClientId>, ServerMsg)> {
        let ev = w.next().await?;
        w.route(ev, &ORDER)
    }

    fn answer(msg: &ServerMsg) -> (usize, &str) {
        match msg {
            ServerMsg::Worktree(WorktreeEvent::Diff { pane, .. }) => (*pane, "diff"),
            ServerMsg::Worktree(WorktreeEvent::Reset { pane, .. }) => (*pane, "reset"),
            other => panic!("not an answer: {other:?}"),
        }
    }

    #[tokio::test]
    async fn each_answer_goes_to_the_client_that_asked_and_state_to_all() {
        // No worktree here: the real service answers each request that
        // the pane has none, in order.
        let mut w = Worktrees::start(std::iter::empty());
        let diff = WorktreeRequest::Diff {
            pane: 1,
            scope: DiffScope::Overall,
        };
        w.request(7, diff, &ORDER);
        // A client does not say when a turn starts: the server does; and a
        // pane the client does not have is nobody's.
        w.request(8, WorktreeRequest::TurnStarted { pane: 0 }, &ORDER);
        w.request(8, WorktreeRequest::Reset { pane: 5 }, &ORDER);
        w.request(9, WorktreeRequest::Reset { pane: 0 }, &ORDER);
        assert_eq!(
            w.asked.iter().copied().collect::<Vec<_>>(),
            [(0, 7), (2, 9)],
            "by slot"
        );
        let (to, msg) = next(&mut w).await.unwrap();
        assert_eq!((to, answer(&msg)), (Some(7), (1, "diff")));
        // An overall diff also refreshes the state: every client's, and
        // kept for those that attach later.
        let (to, state) = next(&mut w).await.unwrap();
        assert_eq!(to, None);
        assert!(
            matches!(state, ServerMsg::Worktree(WorktreeEvent::Conflicts(_))),
            "{state:?}"
        );
        let (to, msg) = next(&mut w).await.unwrap();
        assert_eq!((to, answer(&msg)), (Some(9), (0, "reset")));
        assert_eq!(w.state(&ORDER), [state]);
        assert!(w.asked.is_empty());
    }

    #[tokio::test]
    async fn state_and_answers_follow_the_clients_numbers_and_skip_closed_panes() {
        let changed = WorktreeEvent::Changed(vec![
            (0, vec![("a".into(), 1, 0)]),
            (1, vec![("closed".into(), 1, 0)]),
            (2, vec![("c".into(), 2, 2)]),
        ]);
        assert_eq!(
            numbered(changed, &ORDER),
            WorktreeEvent::Changed(vec![
                (1, vec![("a".into(), 1, 0)]),
                (0, vec![("c".into(), 2, 2)]),
            ])
        );
        // The answer about a pane closed since it was asked goes nowhere.
        let mut w = Worktrees::start(std::iter::empty());
        w.asked.push_back((1, 3));
        let reset = WorktreeEvent::Reset {
            pane: 1,
            result: Ok(()),
        };
        assert_eq!(w.route(reset, &ORDER), None);
        assert!(w.asked.is_empty());
    }
}
