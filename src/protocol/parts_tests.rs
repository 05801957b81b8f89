//! Tests of src/protocol/parts.rs: a snapshot a hive server sends comes
//! whole; one past the bounds is refused, and what it held is dropped.

use super::*;
use crate::protocol::frame;
use crate::protocol::pane::PaneEvent;
use crate::protocol::snapshot::{Logged, PaneCard, PaneSnapshot, Restored, ServerInfo};
use crate::protocol::upsert::UpsertKind;

fn server() -> ServerInfo {
    ServerInfo {
        pid: 1,
        config: "hive.toml".into(),
        config_path: None,
        socket: "/tmp/x.sock".into(),
        started: 0,
    }
}

fn start(panes: usize) -> ServerMsg {
    ServerMsg::SnapshotStart {
        server: server(),
        focus: 0,
        away_since: None,
        panes,
    }
}

fn pane(events: Vec<Logged>) -> PaneSnapshot {
    PaneSnapshot {
        agent: PaneCard {
            id: "a".into(),
            provider: "script".into(),
            ..PaneCard::default()
        },
        worktree: None,
        failed: None,
        restored: Restored::default(),
        events,
        draft: String::new(),
        window: 1,
        parent: None,
        host: None,
        seen: None,
        dismissed: Vec::new(),
    }
}

/// An answer of `bytes` bytes, item `n`.
fn answer(n: u64, bytes: usize) -> Logged {
    let mut u = crate::protocol::samples::upsert();
    u.item_id = format!("item-{n}");
    if let UpsertKind::Message { content, .. } = &mut u.kind {
        *content = "x".repeat(bytes).into();
    }
    Logged {
        seq: n,
        at: None,
        event: PaneEvent::Upsert(u),
    }
}

/// Takes `msg` with its real frame length.
fn take(parts: &mut Parts, msg: ServerMsg) -> Result<Option<Snapshot>, PartsError> {
    let len = frame::encode(&msg).expect("encodes").len();
    parts.take(msg, len)
}

/// Issue 53: a hostile server starts a snapshot, then sends 4 MiB batches
/// of events without end. The console held every one (only the server
/// bounded a snapshot); now the pane is refused past `MAX_PANE_BYTES` and
/// what it held is dropped. Asserted on the parts' own byte counter.
#[test]
fn endless_snapshot_events_are_refused_within_the_bound() {
    let mut parts = Parts::default();
    assert!(take(&mut parts, start(1)).expect("a start").is_none());
    assert!(
        take(
            &mut parts,
            ServerMsg::SnapshotPane(Box::new(pane(Vec::new())))
        )
        .is_ok()
    );
    let mut most = 0;
    let mut refused = None;
    for n in 0..100 {
        let batch = ServerMsg::SnapshotEvents(vec![answer(n, 4 << 20)]);
        match take(&mut parts, batch) {
            Ok(None) => most = most.max(parts.held()),
            Ok(Some(_)) => panic!("no end was sent"),
            Err(e) => {
                refused = Some((n, e));
                break;
            }
        }
    }
    let Some((n, e)) = refused else {
        panic!(
            "400 MiB of one pane's events taken in: {} MiB held",
            most >> 20
        );
    };
    assert!(matches!(e, PartsError::TooLarge { .. }), "{e}");
    assert!(
        e.to_string().contains("more than a hive server sends"),
        "{e}"
    );
    assert!(most <= MAX_PANE_BYTES, "{most} bytes held");
    assert!(
        n >= 40,
        "refused after {n} batches: below the server's own bound"
    );
    assert_eq!(parts.held(), 0, "the refused snapshot is dropped");
    assert!(!parts.started());
    // The stream may start over: a fresh snapshot comes whole.
    take(&mut parts, start(0)).expect("a start");
    assert!(
        take(&mut parts, ServerMsg::SnapshotEnd)
            .expect("an end")
            .is_some()
    );
}

/// A pane at the server's own bound (40 MiB of item text, in the batches
/// the server cuts) crosses whole.
#[test]
fn a_pane_at_the_servers_bound_comes_whole() {
    let events: Vec<Logged> = (0..10).map(|n| answer(n, 4 << 20)).collect();
    let snap = Snapshot {
        server: server(),
        focus: 0,
        away_since: None,
        panes: vec![pane(events)],
    };
    let mut parts = Parts::default();
    let mut whole = None;
    for msg in snap.into_messages() {
        if let Some(s) = take(&mut parts, msg).expect("within the bounds") {
            whole = Some(s);
        }
    }
    let whole = whole.expect("whole");
    assert_eq!(whole.panes.len(), 1);
    assert_eq!(whole.panes[0].events.len(), 10);
    assert_eq!(parts.held(), 0);
}

/// More panes than `MAX_PANES`, announced or sent, are refused; so is a
/// snapshot whose frames pass `MAX_SNAPSHOT_BYTES` in all, each pane
/// within its own bound (frame lengths as the reader reports them).
#[test]
fn too_many_panes_or_bytes_in_all_are_refused() {
    let mut parts = Parts::default();
    assert!(take(&mut parts, start(MAX_PANES + 1)).is_err());

    take(&mut parts, start(1)).expect("a start");
    let mut sent = 0;
    let e = loop {
        match take(
            &mut parts,
            ServerMsg::SnapshotPane(Box::new(pane(Vec::new()))),
        ) {
            Ok(_) => sent += 1,
            Err(e) => break e,
        }
        assert!(sent <= MAX_PANES, "{sent} panes taken");
    };
    assert_eq!(sent, MAX_PANES, "{e}");
    assert_eq!(parts.held(), 0);

    let each = MAX_PANE_BYTES - (1 << 20);
    parts.take(start(64), 100).expect("a start");
    let mut panes = 0;
    let e = loop {
        let msg = ServerMsg::SnapshotPane(Box::new(pane(Vec::new())));
        match parts.take(msg, each) {
            Ok(_) => panes += 1,
            Err(e) => break e,
        }
        assert!(panes <= 64, "{panes} panes of {each} bytes taken");
    };
    assert_eq!(panes, MAX_SNAPSHOT_BYTES / each, "{e}");
    assert!(e.to_string().contains("in all"), "{e}");
}

/// The order is checked as before.
#[test]
fn parts_out_of_order_are_refused() {
    let mut parts = Parts::default();
    let e = take(&mut parts, ServerMsg::SnapshotEnd).unwrap_err();
    assert!(matches!(e, PartsError::OutOfOrder(_)), "{e}");
    let e = take(&mut parts, ServerMsg::SnapshotEvents(Vec::new())).unwrap_err();
    assert!(matches!(e, PartsError::OutOfOrder(_)), "{e}");
    let e = take(
        &mut parts,
        ServerMsg::SnapshotPane(Box::new(pane(Vec::new()))),
    )
    .unwrap_err();
    assert!(matches!(e, PartsError::OutOfOrder(_)), "{e}");
}
