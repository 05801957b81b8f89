//! A layout change of one server in a console of several (issue 44): the
//! console's panes move as a local layout moves them (`ServerMsg::Layout`:
//! kept panes by id, new ones whole), with no fresh snapshot of every
//! server. The mux keeps each member's panes as placed (id, title, its own
//! window, parent); a change re-packs the windows (src/client/mux_windows.rs)
//! and re-numbers the members' ranges. Ids that two servers share cannot be
//! kept by id: then the merge of fresh snapshots runs as before.

use std::collections::HashSet;

use super::{FromServer, Mux, State};
use crate::protocol::snapshot::{LayoutPane, PaneSnapshot};

/// A pane as its server placed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Placed {
    id: String,
    name: Option<String>,
    /// The member's own window number.
    window: usize,
    parent: Option<String>,
}

impl Placed {
    pub(super) fn of(snapshot: &PaneSnapshot) -> Self {
        Self {
            id: snapshot.agent.id.clone(),
            name: snapshot.agent.name.clone(),
            window: snapshot.window,
            parent: snapshot.parent.clone(),
        }
    }

    fn of_layout(pane: &LayoutPane) -> Self {
        match pane {
            LayoutPane::Kept {
                id,
                name,
                window,
                parent,
            } => Self {
                id: id.clone(),
                name: name.clone(),
                window: *window,
                parent: parent.clone(),
            },
            LayoutPane::New(snapshot) => Self::of(snapshot),
        }
    }
}

impl Mux {
    /// Member `i`'s panes are now `layout`: the console gets the whole
    /// layout in its numbering. False when it cannot be moved by id (the
    /// caller merges fresh snapshots instead).
    pub(super) async fn moved(&mut self, i: usize, layout: Vec<LayoutPane>) -> bool {
        if self.members.get(i).is_none_or(|m| m.state != State::Up) {
            return false;
        }
        let mut placed: Vec<Vec<Placed>> = self.members.iter().map(|m| m.panes.clone()).collect();
        placed[i] = layout.iter().map(Placed::of_layout).collect();
        let mut seen = HashSet::new();
        if !placed.iter().flatten().all(|p| seen.insert(p.id.clone())) {
            return false;
        }
        let focused = self.owner(self.focus).and_then(|(m, p)| {
            let id = self.members[m].panes.get(p)?.id.clone();
            Some((m, id))
        });
        let mut ranges = Vec::with_capacity(placed.len());
        let mut windows = Vec::new();
        for panes in &placed {
            let start = windows.len();
            windows.extend(panes.iter().map(|p| p.window));
            ranges.push(start..windows.len());
        }
        let maps = super::super::mux_windows::pack_windows(&mut windows, &ranges);
        let mut fresh = layout.into_iter();
        let mut out = Vec::with_capacity(windows.len());
        for (j, panes) in placed.iter().enumerate() {
            for (k, p) in panes.iter().enumerate() {
                let window = windows[ranges[j].start + k];
                // Member i's entries are its layout's, in order.
                let own = if j == i { fresh.next() } else { None };
                out.push(match own {
                    Some(LayoutPane::New(mut snapshot)) => {
                        snapshot.window = window;
                        LayoutPane::New(snapshot)
                    }
                    _ => LayoutPane::Kept {
                        id: p.id.clone(),
                        name: p.name.clone(),
                        window,
                        parent: p.parent.clone(),
                    },
                });
            }
        }
        for ((m, panes), (range, map)) in self
            .members
            .iter_mut()
            .zip(placed)
            .zip(ranges.into_iter().zip(maps))
        {
            m.panes = panes;
            m.range = range;
            m.windows = map;
        }
        if let Some((m, id)) = focused
            && let Some(p) = self.members[m].panes.iter().position(|p| p.id == id)
        {
            self.focus = self.members[m].range.start + p;
        }
        self.say(FromServer::Layout(out)).await;
        // The panes moved: the git state in the console's new numbers.
        self.git_state().await;
        true
    }
}

impl Mux {
    /// Member `i`'s server is gone (it stopped, or its connection ended
    /// for good) while others are on: its panes give way to one that says
    /// so (#46 item 11: they stayed "streaming", their timers counting).
    pub(super) async fn gone(&mut self, i: usize, why: &str) {
        let state = State::Gone(why.to_owned());
        if let Some(merge) = self.merge.as_mut() {
            // A merge waiting for its snapshot: the stand-in takes its place.
            self.members[i].state = state;
            merge.waiting.remove(&i);
            if let Some(got) = merge.got.get_mut(i) {
                *got = None;
            }
            if merge.waiting.is_empty() {
                self.finish().await;
            }
            return;
        }
        let name = self.members[i].name.clone();
        let stand_in = super::placeholder(&name, &state);
        let moved = self
            .moved(i, vec![LayoutPane::New(Box::new(stand_in))])
            .await;
        self.members[i].state = state;
        if !moved {
            // Ids shared across servers: fresh snapshots of the others.
            self.relayout().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::super::{Member, Mux};
    use crate::client::FromServer;
    use crate::protocol::snapshot::{LayoutPane, PaneCard, PaneSnapshot, ServerInfo, Snapshot};

    fn snapshot(ids: &[&str]) -> Snapshot {
        Snapshot {
            server: ServerInfo {
                pid: 1,
                config: "t".into(),
                config_path: None,
                socket: "/tmp/t.sock".into(),
                started: 0,
            },
            focus: 0,
            away_since: None,
            panes: ids
                .iter()
                .map(|id| PaneSnapshot::empty(PaneCard::new(id, "script")))
                .collect(),
        }
    }

    fn kept(id: &str, window: usize) -> LayoutPane {
        LayoutPane::Kept {
            id: id.into(),
            name: None,
            window,
            parent: None,
        }
    }

    /// Two servers, `a` (here) and `far`: the mux as at its first merge.
    fn mux(a: &[&str], far: &[&str]) -> (Mux, crate::client::Inbox) {
        let (out, rx) = mpsc::channel(16);
        let members = ["here", "far"]
            .map(|name| Member::new(name.into(), mpsc::unbounded_channel().0, false, true));
        let mut mux = Mux::new(members.into(), out);
        mux.merged(vec![Some(snapshot(a)), Some(snapshot(far))]);
        (mux, crate::client::Inbox::new(rx, Vec::new()))
    }

    /// Issue 44: a pane made on one server of a console of several comes
    /// as a layout of kept panes and the new one, not a fresh snapshot of
    /// every server's panes.
    #[tokio::test]
    async fn a_new_pane_on_one_server_moves_the_layout_by_id() {
        let (mut mux, mut rx) = mux(&["a1", "a2"], &["f1"]);
        mux.focus = 2;
        let new = PaneSnapshot::empty(PaneCard::new("f2", "script"));
        let layout = vec![kept("f1", 1), LayoutPane::New(Box::new(new))];
        assert!(mux.moved(1, layout).await);
        let Some(FromServer::Layout(got)) = rx.recv().await else {
            panic!("no layout for the console");
        };
        let ids: Vec<(&str, usize, bool)> = got
            .iter()
            .map(|l| match l {
                LayoutPane::Kept { id, window, .. } => (id.as_str(), *window, false),
                LayoutPane::New(s) => (s.agent.id.as_str(), s.window, true),
            })
            .collect();
        // Both servers fit one console window, as at a merge.
        assert_eq!(
            ids,
            [
                ("a1", 1, false),
                ("a2", 1, false),
                ("f1", 1, false),
                ("f2", 1, true)
            ]
        );
        // The new pane is routed to its server as its own pane 1.
        assert_eq!(mux.owner(3), Some((1, 1)));
        assert_eq!(mux.owner(1), Some((0, 1)));
        assert_eq!(mux.focus, 2);
    }

    /// A pane closed on the first server: the others move up, the focus
    /// stays on the pane it was on.
    #[tokio::test]
    async fn a_closed_pane_moves_the_next_servers_panes_up() {
        let (mut mux, mut rx) = mux(&["a1", "a2"], &["f1"]);
        mux.focus = 2;
        assert!(mux.moved(0, vec![kept("a2", 1)]).await);
        let Some(FromServer::Layout(got)) = rx.recv().await else {
            panic!("no layout for the console");
        };
        assert_eq!(got, [kept("a2", 1), kept("f1", 1)]);
        assert_eq!(mux.owner(1), Some((1, 0)));
        assert_eq!(mux.focus, 1);
    }

    /// Two servers with a pane of the same id cannot be moved by id: the
    /// mux says so, and its caller merges fresh snapshots.
    #[tokio::test]
    async fn a_shared_id_falls_back_to_a_merge() {
        let (mut mux, mut rx) = mux(&["demo"], &["demo"]);
        assert!(!mux.moved(1, vec![kept("demo", 1), kept("demo", 1)]).await);
        let (mut mux2, _rx2) = self::mux(&["a"], &["demo"]);
        let new = PaneSnapshot::empty(PaneCard::new("a", "script"));
        assert!(!mux2.moved(1, vec![LayoutPane::New(Box::new(new))]).await);
        assert!(rx.try_recv().is_err());
    }

    /// #46 item 11: the local server of a console of two stops; its panes
    /// become one that says it is gone (they stayed "streaming"), the
    /// other server's stay as they were.
    #[tokio::test]
    async fn a_server_gone_leaves_one_pane_saying_so() {
        let (mut mux, mut rx) = mux(&["a1", "a2"], &["f1"]);
        assert!(
            mux.on_member(0, FromServer::Lost("stopped".into()), Default::default())
                .await
        );
        let Some(FromServer::Layout(got)) = rx.recv().await else {
            panic!("no layout for the console");
        };
        let [LayoutPane::New(stand_in), LayoutPane::Kept { id, .. }] = &got[..] else {
            panic!("not the stand-in and f1: {got:?}");
        };
        assert_eq!(stand_in.failed.as_deref(), Some("gone: stopped"));
        assert_eq!(id, "f1");
        assert_eq!(mux.owner(1), Some((1, 0)), "f1 is routed to its server");
    }
}
