//! The windows of a console of several servers (issue 46 item 12): nine
//! panes to a window, as each server keeps its own. Each server's windows
//! come in turn, whole and apart; a server's first window joins the
//! console window before it when both fit in nine panes (two small servers
//! share a grid; two servers' full windows never merge into one of
//! eighteen). A pane moved to a console window
//! goes to the server's window shown there.

use std::ops::Range;

use crate::protocol::snapshot::PANES_PER_WINDOW;
use crate::wire::snapshot::PaneSnapshot;

/// One member's windows: (its own number, the console's).
pub(super) type WindowMap = Vec<(usize, usize)>;

/// Renumbers the windows of `panes`, the members' panes in order (member
/// `i`'s at `ranges[i]`), into the console's; returns each member's map.
pub(super) fn pack(panes: &mut [PaneSnapshot], ranges: &[Range<usize>]) -> Vec<WindowMap> {
    let mut windows: Vec<usize> = panes.iter().map(|p| p.window).collect();
    let maps = pack_windows(&mut windows, ranges);
    for (p, w) in panes.iter_mut().zip(windows) {
        p.window = w;
    }
    maps
}

/// [`pack`] of the panes' window numbers alone (a layout change keeps no
/// snapshot of the panes it moves).
pub(super) fn pack_windows(windows: &mut [usize], ranges: &[Range<usize>]) -> Vec<WindowMap> {
    let mut maps = Vec::with_capacity(ranges.len());
    let (mut window, mut used) = (0usize, PANES_PER_WINDOW);
    for range in ranges {
        let mut own: Vec<usize> = windows[range.clone()].to_vec();
        own.sort_unstable();
        own.dedup();
        let mut map = WindowMap::new();
        for w in own {
            let size = windows[range.clone()].iter().filter(|&&x| x == w).count();
            // A server's own windows stay apart, as it keeps them.
            if used + size > PANES_PER_WINDOW || !map.is_empty() {
                window += 1;
                used = 0;
            }
            used += size;
            map.push((w, window.max(1)));
        }
        for x in &mut windows[range.clone()] {
            if let Some(&(_, c)) = map.iter().find(|(w, _)| w == x) {
                *x = c;
            }
        }
        maps.push(map);
    }
    maps
}

/// The member's window shown as console window `window`; one the member
/// has none in is a new window of its own.
pub(super) fn to_member(map: &WindowMap, window: usize) -> usize {
    match map.iter().find(|(_, c)| *c == window) {
        Some(&(w, _)) => w,
        None => map.iter().map(|(w, _)| *w).max().unwrap_or(0) + 1,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests may panic

    use super::*;
    use crate::config::AgentConfig;

    fn panes(windows: &[usize]) -> Vec<PaneSnapshot> {
        windows
            .iter()
            .enumerate()
            .map(|(i, &w)| PaneSnapshot {
                window: w,
                ..PaneSnapshot::empty(AgentConfig::new(&format!("p{i}"), "script").card())
            })
            .collect()
    }

    #[test]
    fn servers_windows_are_packed_nine_to_a_window() {
        // Server A: 7 panes in its window 1; B: 7 in its window 1, 2 in
        // its window 2; C: one pane.
        let mut all = panes(&[1; 7]);
        all.extend(panes(&[1, 1, 1, 1, 1, 1, 1, 2, 2]));
        all.extend(panes(&[1]));
        let ranges = [0..7, 7..16, 16..17];
        let maps = pack(&mut all, &ranges);
        let windows: Vec<usize> = all.iter().map(|p| p.window).collect();
        assert_eq!(&windows[..7], &[1; 7]);
        assert_eq!(
            &windows[7..14],
            &[2; 7],
            "B's window 1 does not fit beside A's"
        );
        assert_eq!(&windows[14..16], &[3, 3], "B's own windows stay apart");
        assert_eq!(windows[16], 3, "C fits beside B's window 2");
        for w in 1..=4 {
            assert!(windows.iter().filter(|&&x| x == w).count() <= PANES_PER_WINDOW);
        }
        // Two small servers share one grid.
        let mut two = panes(&[1, 1]);
        let maps2 = pack(&mut two, &[0..1, 1..2]);
        assert_eq!(two[0].window, two[1].window);
        assert_eq!(to_member(&maps2[1], 1), 1);
        // Moving a pane of B to console window 3 is to B's window 2; to
        // window 1 (A's), to a new window of B's.
        assert_eq!(to_member(&maps[1], 2), 1);
        assert_eq!(to_member(&maps[1], 3), 2);
        assert_eq!(to_member(&maps[1], 1), 3);
    }

    /// Through the mux: two servers of seven panes each get a console
    /// window each (before: one window of fourteen), and a move to the
    /// second server's console window is a move to its own window 1.
    #[tokio::test]
    async fn a_console_of_two_full_servers_shows_two_windows() {
        use tokio::sync::mpsc;

        use crate::client::mux::{Member, Mux};
        use crate::wire::ClientMsg;
        use crate::wire::edit::PaneEdit;
        use crate::wire::snapshot::{ServerInfo, Snapshot};

        let snapshot = || Snapshot {
            server: ServerInfo {
                pid: 1,
                config: "t".into(),
                config_path: None,
                socket: Default::default(),
                started: 0,
            },
            focus: 0,
            away_since: None,
            panes: panes(&[1; 7]),
        };
        let (out_tx, _out) = mpsc::channel(64);
        let (_members_tx, mut members_rx) = mpsc::channel(64);
        let mut to_member = Vec::new();
        let mut members = Vec::new();
        for (name, remote) in [("local", false), ("box", true)] {
            let (tx, rx) = mpsc::unbounded_channel();
            members.push(Member::new(name.into(), tx, remote, true));
            to_member.push(rx);
        }
        let mut mux = Mux::new(members, out_tx);
        let got = vec![Some(snapshot()), Some(snapshot())];
        let snap = mux
            .first(got, &mut members_rx, tokio::time::Instant::now())
            .await;
        let windows: Vec<usize> = snap.panes.iter().map(|p| p.window).collect();
        assert_eq!(&windows[..7], &[1; 7]);
        assert_eq!(&windows[7..], &[2; 7], "{windows:?}");

        let (console, from_console) = mpsc::unbounded_channel();
        tokio::spawn(mux.run(from_console, members_rx));
        console.send(ClientMsg::Focus(8)).unwrap();
        let edit = |window| {
            ClientMsg::Edit(PaneEdit::Window {
                pane: "p1".into(),
                window,
            })
        };
        console.send(edit(2)).unwrap();
        assert_eq!(to_member[1].recv().await, Some(ClientMsg::Focus(1)));
        // #46 item 8: the other server was told the console looks at none
        // of its panes (it kept the last one as looked at), with the focus.
        assert_eq!(
            to_member[0].try_recv().ok(),
            Some(ClientMsg::Focus(crate::protocol::NO_PANE))
        );
        assert_eq!(to_member[1].recv().await, Some(edit(1)));
    }
}
