//! The registry's tests: one record learns from its runner's updates what
//! every door reads, and a closed pane keeps its slot but is found by none.

use super::*;
use crate::protocol::agent::Capabilities;
use crate::protocol::agent::SessionInfo;
use crate::protocol::upsert::TurnStatus;

fn two() -> Panes<()> {
    let mut panes = Panes::default();
    for id in ["a", "b"] {
        panes.push(
            PaneRecord::new(AgentConfig::new(id, "script"), Started::Starting),
            (),
        );
    }
    panes
}

fn at(pane: usize, event: PaneEvent) -> PaneUpdate {
    PaneUpdate { pane, event }
}

#[test]
fn a_record_follows_its_runner_and_nobody_elses() {
    let mut panes = two();
    let caps = Capabilities {
        interrupt: true,
        ..Capabilities::default()
    };
    panes.observe(&at(
        1,
        PaneEvent::Attached {
            capabilities: caps,
            terminal: None,
        },
    ));
    panes.observe(&at(1, PaneEvent::State(TurnState::Streaming)));
    panes.observe(&at(
        1,
        PaneEvent::Session(SessionInfo {
            model: Some("opus".into()),
            ..SessionInfo::default()
        }),
    ));
    panes.observe(&at(
        1,
        PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: "t1".into(),
            session_id: "s".into(),
            status: TurnStatus::Completed,
            usage: Some(Usage {
                input_tokens: 7,
                cost_usd: Some(0.5),
                ..Usage::default()
            }),
            finish_reason: None,
        }),
    ));
    let b = panes.record(1).unwrap();
    assert!(b.alive());
    assert_eq!(b.model(), Some("opus"));
    assert_eq!(b.usage.input_tokens, 7);
    assert_eq!(b.cost(), Some(0.5));
    assert_eq!(b.live.turns, 1);
    let a = panes.record(0).unwrap();
    assert!(!a.alive(), "pane a never started");
    assert_eq!(a.live.turns, 0);
    assert_eq!(a.cost(), Some(0.0));
}

#[test]
fn a_closed_pane_keeps_its_slot_and_is_found_by_none() {
    let mut panes = two();
    panes.close(0);
    assert_eq!(panes.len(), 2, "the slot stays");
    assert_eq!(panes.find("a"), None);
    assert_eq!(panes.find("b"), Some(1));
    assert_eq!(panes.order, vec![1]);
    assert_eq!(panes.ids(), "b");
    let slot = panes.push(
        PaneRecord::new(AgentConfig::new("a", "script"), Started::Starting),
        (),
    );
    assert_eq!(
        slot, 2,
        "a new pane takes the next slot, even under a closed one's id"
    );
    assert_eq!(panes.find("a"), Some(2));
}
