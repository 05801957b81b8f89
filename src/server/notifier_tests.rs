//! The server's notifications, event by event: what runs the command, what
//! a console looking at the pane or a mute keeps quiet, and the rate.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Notifier, Of};
use crate::config::{NotifyOn, ReasonKind, UiSettings};
use crate::notify::{Mute, Mutes};
use crate::provider::PermissionRequest;
use crate::runner::PaneEvent;
use crate::upsert::{TurnEvent, TurnStatus};

fn notifier(per_minute: u32) -> Notifier {
    let ui = UiSettings {
        notify_command: vec![
            "notify".into(),
            "{type}".into(),
            "{pane}".into(),
            "{body}".into(),
        ],
        notify_on: NotifyOn::All(true),
        notify_per_minute: per_minute,
        ..UiSettings::default()
    };
    Notifier::new(&ui, Mutes::default())
}

fn of(slot: usize, looked_at: bool) -> Of<'static> {
    Of {
        slot,
        id: ["api", "web", "helper"][slot],
        title: ["API", "Web", "Helper"][slot],
        parent: (slot == 2).then_some("api"),
        looked_at,
    }
}

fn finished() -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnComplete {
        turn_id: "t".into(),
        session_id: "s".into(),
        status: TurnStatus::Completed,
        usage: None,
        finish_reason: None,
    })
}

fn asks(id: &str) -> PaneEvent {
    PaneEvent::Permission(PermissionRequest {
        request_id: id.into(),
        tool_name: "Bash".into(),
        input: json!({"command": "rm -rf build"}),
        description: None,
        options: Vec::new(),
        display: None,
        ..Default::default()
    })
}

#[test]
fn a_reason_runs_the_command_once_until_the_pane_is_looked_at() {
    let mut n = notifier(60);
    let now = Instant::now();
    assert_eq!(
        n.event(&of(0, false), &finished(), now).unwrap(),
        ["notify", "finished", "api", "turn finished"]
    );
    assert!(
        n.event(&of(0, false), &finished(), now).is_none(),
        "told once"
    );
    n.looked_at(0);
    assert!(n.event(&of(0, false), &finished(), now).is_some());
    // Looked at: a finished turn is seen, an approval still told.
    assert!(n.event(&of(1, true), &finished(), now).is_none());
    assert_eq!(
        n.event(&of(1, true), &asks("r1"), now).unwrap(),
        [
            "notify",
            "permission",
            "web",
            "asks to run Bash: rm -rf build"
        ]
    );
    // A helper's turn is its own type.
    assert_eq!(
        n.event(&of(2, false), &finished(), now).unwrap()[1..3],
        ["spawned", "helper"]
    );
}

#[test]
fn an_answered_approval_can_be_told_again() {
    let mut n = notifier(60);
    let now = Instant::now();
    assert!(n.event(&of(0, false), &asks("r1"), now).is_some());
    n.looked_at(0);
    assert!(
        n.event(&of(0, false), &asks("r1"), now).is_none(),
        "still waiting"
    );
    let settled = PaneEvent::PermissionSettled {
        request_id: "r1".into(),
    };
    assert!(n.event(&of(0, false), &settled, now).is_none());
    assert!(n.event(&of(0, false), &asks("r1"), now).is_some());
}

#[test]
fn mutes_silence_a_pane_or_a_type() {
    let mut n = notifier(60);
    let now = Instant::now();
    n.mute(&Mute::Pane {
        id: "api".into(),
        on: true,
    });
    n.mute(&Mute::Kind {
        kind: ReasonKind::Permission,
        on: true,
    });
    assert!(n.event(&of(0, false), &finished(), now).is_none());
    assert!(n.event(&of(1, false), &asks("r1"), now).is_none());
    assert!(n.event(&of(1, false), &finished(), now).is_some());
}

#[test]
fn the_rate_holds_back_and_counts_what_it_held() {
    let mut n = notifier(1);
    let now = Instant::now();
    assert!(n.event(&of(0, false), &finished(), now).is_some());
    assert!(n.event(&of(1, false), &finished(), now).is_none());
    let later = now + Duration::from_secs(61);
    assert_eq!(
        n.event(&of(2, false), &finished(), later).unwrap()[3],
        "helper of api: turn finished (+1 more held back)"
    );
}

#[test]
fn no_command_no_run() {
    let mut n = Notifier::new(&UiSettings::default(), Mutes::default());
    assert!(
        n.event(&of(0, false), &asks("r1"), Instant::now())
            .is_none()
    );
}

/// #46 item 15: a muted or held-back note does not use up the pane's one.
#[test]
fn a_muted_or_held_back_reason_is_not_told() {
    let mut n = notifier(1);
    let now = Instant::now();
    let api = Mute::Pane {
        id: "api".into(),
        on: true,
    };
    n.mute(&api);
    assert!(n.event(&of(0, false), &finished(), now).is_none(), "muted");
    n.mute(&Mute::Pane {
        id: "api".into(),
        on: false,
    });
    assert!(
        n.event(&of(0, false), &finished(), now).is_some(),
        "unmuted, the next finished turn is told"
    );
    assert!(n.event(&of(1, false), &finished(), now).is_none(), "rate");
    let later = now + Duration::from_secs(61);
    assert!(
        n.event(&of(1, false), &finished(), later).is_some(),
        "held back once, told when the rate allows"
    );
}
