//! The git side of a console over several servers (issue 30): each server
//! runs the worktree service of its own panes (src/server/worktrees.rs).
//! A request about console pane `g` goes to the server that runs it, as
//! that server's pane number; one about every pane (`CheckOverlaps`) to
//! every connected server. An answer comes back re-numbered for the
//! console. The state each server sends unasked (overlaps, what each
//! worktree changed, predicted conflicts) replaces the whole of that state
//! in the console, so the mux keeps each server's latest, in its own
//! numbering, and hands the console the union.

use std::ops::Range;

use crate::protocol::git::{FileChange, Overlap, Prediction, WorktreeEvent, WorktreeRequest};

/// One server's latest git state, in its own pane numbering.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct GitState {
    overlaps: Vec<Overlap>,
    changed: Vec<(usize, Vec<FileChange>)>,
    conflicts: Prediction,
}

impl GitState {
    /// Keeps a state event; gives back an answer to one request (which is
    /// not state) for the caller to re-number.
    pub(super) fn take(&mut self, ev: WorktreeEvent) -> Option<WorktreeEvent> {
        match ev {
            WorktreeEvent::Overlaps(o) => self.overlaps = o,
            WorktreeEvent::Changed(c) => self.changed = c,
            WorktreeEvent::Conflicts(p) => self.conflicts = p,
            answer => return Some(answer),
        }
        None
    }

    /// Whether it holds nothing (a server without worktrees, or none heard).
    pub(super) fn is_empty(&self) -> bool {
        self.overlaps.is_empty()
            && self.changed.is_empty()
            && self.conflicts.conflicts.is_empty()
            && self.conflicts.pending.is_empty()
    }
}

/// The console's state: every server's, its panes re-numbered by `range`
/// (a pane number outside its server's range is dropped).
pub(super) fn merged<'a>(
    members: impl Iterator<Item = (&'a GitState, &'a Range<usize>)> + Clone,
) -> [WorktreeEvent; 3] {
    let overlaps = members
        .clone()
        .flat_map(|(s, _)| s.overlaps.iter().cloned())
        .collect();
    let changed = members
        .clone()
        .flat_map(|(s, range)| {
            s.changed
                .iter()
                .filter_map(move |(p, files)| Some((global(range, *p)?, files.clone())))
        })
        .collect();
    let mut conflicts = Prediction::default();
    for (s, _) in members {
        conflicts
            .conflicts
            .extend(s.conflicts.conflicts.iter().cloned());
        conflicts
            .pending
            .extend(s.conflicts.pending.iter().cloned());
    }
    [
        WorktreeEvent::Overlaps(overlaps),
        WorktreeEvent::Changed(changed),
        WorktreeEvent::Conflicts(conflicts),
    ]
}

/// An answer of the server whose panes are `range`, for the console
/// (`None`: it names a pane that server does not have).
pub(super) fn answer_for_console(
    mut ev: WorktreeEvent,
    range: &Range<usize>,
) -> Option<WorktreeEvent> {
    if let Some(pane) = ev.pane_mut() {
        *pane = global(range, *pane)?;
    }
    Some(ev)
}

/// Where a console's request goes.
#[derive(Debug, PartialEq)]
pub(super) enum Route {
    /// To member `.0`, re-numbered.
    One(usize, WorktreeRequest),
    /// To every connected member.
    All(WorktreeRequest),
    /// Nowhere: no server runs that pane.
    Nowhere,
}

/// Routes `req` by `owner` (console pane → member, its own number).
pub(super) fn route(
    mut req: WorktreeRequest,
    owner: impl Fn(usize) -> Option<(usize, usize)>,
) -> Route {
    let Some(pane) = req.pane_mut() else {
        return Route::All(req);
    };
    match owner(*pane) {
        Some((member, own)) => {
            *pane = own;
            Route::One(member, req)
        }
        None => Route::Nowhere,
    }
}

fn global(range: &Range<usize>, pane: usize) -> Option<usize> {
    (pane < range.len()).then_some(range.start + pane)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::git::{Conflict, DiffScope};

    fn overlap(a: &str, b: &str) -> Overlap {
        Overlap {
            a: a.into(),
            b: b.into(),
            files: Vec::new(),
        }
    }

    #[test]
    fn a_request_goes_to_the_panes_server_as_its_own_number() {
        // Console panes 0..2 are the local server's, 2..5 the host's.
        let owner = |g: usize| match g {
            0..2 => Some((0, g)),
            2..5 => Some((1, g - 2)),
            _ => None,
        };
        let diff = |pane| WorktreeRequest::Diff {
            pane,
            scope: DiffScope::Overall,
        };
        assert_eq!(route(diff(3), owner), Route::One(1, diff(1)));
        assert_eq!(route(diff(1), owner), Route::One(0, diff(1)));
        assert_eq!(route(diff(9), owner), Route::Nowhere);
        assert_eq!(
            route(WorktreeRequest::CheckOverlaps, owner),
            Route::All(WorktreeRequest::CheckOverlaps)
        );
    }

    #[test]
    fn an_answer_comes_back_as_the_consoles_number_and_never_outside_its_server() {
        let reset = |pane| WorktreeEvent::Reset {
            pane,
            result: Ok(()),
        };
        assert_eq!(answer_for_console(reset(1), &(2..5)), Some(reset(3)));
        // A server that names a pane it does not have reaches no other's.
        assert_eq!(answer_for_console(reset(3), &(2..5)), None);
    }

    #[test]
    fn each_servers_state_is_kept_and_the_console_gets_the_union() {
        let (mut local, mut host) = (GitState::default(), GitState::default());
        assert!(local.is_empty());
        assert!(
            local
                .take(WorktreeEvent::Overlaps(vec![overlap("a", "b")]))
                .is_none()
        );
        local.take(WorktreeEvent::Changed(vec![(1, vec![("x".into(), 1, 0)])]));
        host.take(WorktreeEvent::Changed(vec![
            (0, vec![("y".into(), 2, 1)]),
            (7, vec![("bogus".into(), 0, 0)]),
        ]));
        host.take(WorktreeEvent::Conflicts(Prediction {
            conflicts: vec![Conflict {
                a: "c".into(),
                b: None,
                files: vec!["y".into()],
            }],
            pending: vec!["c".into()],
        }));
        // Later state of one server replaces only its own.
        host.take(WorktreeEvent::Overlaps(Vec::new()));
        let (r0, r1) = (0..2, 2..5);
        let [o, c, p] = merged([(&local, &r0), (&host, &r1)].into_iter());
        assert_eq!(o, WorktreeEvent::Overlaps(vec![overlap("a", "b")]));
        assert_eq!(
            c,
            WorktreeEvent::Changed(vec![
                (1, vec![("x".into(), 1, 0)]),
                (2, vec![("y".into(), 2, 1)]),
            ])
        );
        let WorktreeEvent::Conflicts(p) = p else {
            panic!("{p:?}")
        };
        assert_eq!(p.pending, ["c"]);
        assert_eq!(p.conflicts.len(), 1);
        // An answer is not state: it is handed back.
        let answer = WorktreeEvent::Reset {
            pane: 0,
            result: Ok(()),
        };
        assert_eq!(host.take(answer.clone()), Some(answer));
    }

    /// The mux itself: a local server of two panes, then a host of two.
    /// (Its `@` file lists are routed the same way.)
    mod through_the_mux {
        use tokio::sync::mpsc;

        use super::*;
        use crate::client::FromServer;
        use crate::client::inflight::Delivery;
        use crate::client::mux::{Member, Mux};
        use crate::protocol::ClientMsg;
        use crate::protocol::snapshot::{PaneSnapshot, ServerInfo, Snapshot};

        fn snapshot(ids: &[&str]) -> Snapshot {
            let pane = |id: &str| {
                PaneSnapshot::empty(crate::protocol::snapshot::PaneCard::new(id, "script"))
            };
            Snapshot {
                server: ServerInfo {
                    pid: 1,
                    config: "t".into(),
                    config_path: None,
                    socket: Default::default(),
                    started: 0,
                },
                focus: 0,
                away_since: None,
                panes: ids.iter().map(|id| pane(id)).collect(),
            }
        }

        struct Wired {
            console: mpsc::UnboundedSender<ClientMsg>,
            members: mpsc::Sender<(usize, Delivery)>,
            to_member: Vec<mpsc::UnboundedReceiver<ClientMsg>>,
            out: crate::client::Inbox,
        }

        async fn wired() -> Wired {
            let (out_tx, out) = mpsc::channel(64);
            let (members_tx, mut members_rx) = mpsc::channel(64);
            let mut to_member = Vec::new();
            let mut members = Vec::new();
            for (name, remote) in [("local", false), ("box", true)] {
                let (tx, rx) = mpsc::unbounded_channel();
                members.push(Member::new(name.into(), tx, remote, true));
                to_member.push(rx);
            }
            let mut mux = Mux::new(members, out_tx);
            let got = vec![Some(snapshot(&["a", "b"])), Some(snapshot(&["c", "d"]))];
            let deadline = tokio::time::Instant::now();
            mux.first(got, &mut members_rx, deadline).await;
            let (console, from_console) = mpsc::unbounded_channel();
            tokio::spawn(mux.run(from_console, members_rx));
            Wired {
                console,
                members: members_tx,
                to_member,
                out: crate::client::Inbox::new(out, Vec::new()),
            }
        }

        async fn git_out(w: &mut Wired) -> WorktreeEvent {
            match w.out.recv().await {
                Some(FromServer::Worktree(ev)) => ev,
                other => panic!("not a git event: {other:?}"),
            }
        }

        /// Member server `i` sends the console's mux `msg`.
        async fn from_member(w: &mut Wired, i: usize, msg: FromServer) {
            w.members.send((i, Delivery::local(msg))).await.unwrap();
        }

        #[tokio::test]
        async fn requests_reach_the_panes_server_and_answers_and_state_come_back_renumbered() {
            let mut w = wired().await;
            let diff = |pane| WorktreeRequest::Diff {
                pane,
                scope: DiffScope::Overall,
            };
            // Console pane 3 is the host's second.
            w.console.send(ClientMsg::Worktree(diff(3))).unwrap();
            assert_eq!(
                w.to_member[1].recv().await,
                Some(ClientMsg::Worktree(diff(1)))
            );
            let check = ClientMsg::Worktree(WorktreeRequest::CheckOverlaps);
            w.console.send(check.clone()).unwrap();
            assert_eq!(w.to_member[0].recv().await, Some(check.clone()));
            assert_eq!(w.to_member[1].recv().await, Some(check));
            // Its answer, as the console's pane 3.
            let answer = |pane| WorktreeEvent::Diff {
                pane,
                scope: DiffScope::Overall,
                result: Ok(Vec::new()),
            };
            let from_box = FromServer::Worktree(answer(1));
            from_member(&mut w, 1, from_box).await;
            assert_eq!(git_out(&mut w).await, answer(3));
            // State: each server's kept, the console gets the union.
            let files = vec![("x".to_owned(), 1, 0)];
            let changed = WorktreeEvent::Changed(vec![(0, files.clone())]);
            from_member(&mut w, 1, FromServer::Worktree(changed.clone())).await;
            assert_eq!(git_out(&mut w).await, WorktreeEvent::Overlaps(Vec::new()));
            assert_eq!(
                git_out(&mut w).await,
                WorktreeEvent::Changed(vec![(2, files.clone())])
            );
            assert!(matches!(git_out(&mut w).await, WorktreeEvent::Conflicts(_)));
            from_member(
                &mut w,
                0,
                FromServer::Worktree(WorktreeEvent::Changed(vec![(1, files.clone())])),
            )
            .await;
            git_out(&mut w).await;
            assert_eq!(
                git_out(&mut w).await,
                WorktreeEvent::Changed(vec![(1, files.clone()), (2, files)])
            );
            assert!(matches!(git_out(&mut w).await, WorktreeEvent::Conflicts(_)));
            // `@` in the host's first pane: its server lists, renumbered.
            w.console.send(ClientMsg::Files { pane: 2 }).unwrap();
            assert_eq!(
                w.to_member[1].recv().await,
                Some(ClientMsg::Files { pane: 0 })
            );
            let listed = |pane| FromServer::Files {
                pane,
                paths: vec!["src/main.rs".into()],
                complete: true,
            };
            from_member(&mut w, 1, listed(0)).await;
            // One naming a pane the host does not have goes nowhere.
            from_member(&mut w, 1, listed(5)).await;
            from_member(&mut w, 1, FromServer::NotSent("end".into())).await;
            match w.out.recv().await {
                Some(FromServer::Files { pane, .. }) => assert_eq!(pane, 2),
                other => panic!("{other:?}"),
            }
            assert!(matches!(w.out.recv().await, Some(FromServer::NotSent(_))));
        }
    }
}
