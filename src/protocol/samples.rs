//! The boundary's promise (docs/architecture.md, "The boundary"): every
//! `RunnerCommand` and `PaneEvent` survives serde, so #29 can send them
//! over a socket as length-prefixed frames.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::agent::{
    Capabilities, DiagnosticLevel, PermissionDecision, PermissionOption, PermissionRequest,
    SessionInfo,
};
use super::event::Origin;
use super::hold::{Hold, HoldKind};
use super::pane::{
    Decider, PaneEvent, PaneUpdate, QueueEdit, RunnerCommand, SubmitMode, TurnState,
};
use super::screen::{CellStyle, Colour, ScreenRow, ScreenUpdate};
use super::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) {
    let json = serde_json::to_string(value).expect("serialises");
    let back: T = serde_json::from_str(&json).expect("deserialises");
    assert_eq!(&back, value, "{json}");
}

pub(crate) fn screen() -> ScreenUpdate {
    ScreenUpdate {
        rows: 1,
        cols: 2,
        cursor: (0, 1),
        lines: vec![ScreenRow {
            text: "中".into(),
            cells: vec![
                CellStyle {
                    len: 3,
                    fg: Colour::Idx(2),
                    bg: Colour::Rgb(1, 2, 3),
                    attrs: super::screen::attr::WIDE,
                },
                CellStyle::default(),
            ],
            wrapped: false,
        }],
        ..ScreenUpdate::default()
    }
}

pub(crate) fn upsert() -> Upsert {
    Upsert {
        turn_id: "t".into(),
        session_id: "s".into(),
        item_id: "i".into(),
        source_timestamp: chrono::DateTime::UNIX_EPOCH,
        emitted_at: chrono::DateTime::UNIX_EPOCH,
        status: UpsertStatus::Complete,
        error_code: None,
        error_message: None,
        kind: UpsertKind::Message {
            content: "hello".into(),
            origin: Origin::Agent,
        },
    }
}

/// One of every runner command (also the console protocol's samples).
pub(crate) fn sample_commands() -> Vec<RunnerCommand> {
    // A 1×1 PNG's signature is enough for the media type to be found again.
    let png = super::image::Image {
        path: "/tmp/a.png".into(),
        media_type: "image/png",
        data: b"\x89PNG\r\n\x1a\nrest".to_vec(),
    };
    vec![
        RunnerCommand::Submit {
            text: "hi".into(),
            mode: SubmitMode::Steer,
        },
        RunnerCommand::Interrupt,
        RunnerCommand::InterruptFrom("Architect (architect)".into()),
        RunnerCommand::Queue(QueueEdit::Remove(1)),
        RunnerCommand::Queue(QueueEdit::Replace(0, "x".into())),
        RunnerCommand::Queue(QueueEdit::Move { from: 0, to: 1 }),
        RunnerCommand::Queue(QueueEdit::PopLast),
        RunnerCommand::Queue(QueueEdit::Clear),
        RunnerCommand::DrainQueue,
        RunnerCommand::Permission {
            request_id: "r".into(),
            decision: PermissionDecision::Deny {
                reason: "no".into(),
            },
            by: Decider::Unknown,
        },
        RunnerCommand::Restart,
        RunnerCommand::Budget(super::hold::BudgetAnswer::Raise),
        RunnerCommand::Input(vec![0x1b, b'a']),
        RunnerCommand::Resize { cols: 80, rows: 24 },
        RunnerCommand::SetModel("m".into()),
        RunnerCommand::SwitchAccount("work".into()),
        RunnerCommand::SetEffort("high".into()),
        RunnerCommand::Attach(vec![png]),
        RunnerCommand::SwitchSession {
            session: "s".into(),
            resume: Some("r".into()),
        },
        RunnerCommand::Focused(true),
        RunnerCommand::TermView {
            scroll: 3,
            seen: 40,
            hold: true,
        },
        RunnerCommand::CopyTerminal {
            from: (1, 2),
            to: (3, 4),
        },
        RunnerCommand::Shutdown,
    ]
}

#[test]
fn every_runner_command_round_trips() {
    for c in &sample_commands() {
        round_trip(c);
    }
}

/// One of every pane event (also the console protocol's samples).
pub(crate) fn sample_events() -> Vec<PaneEvent> {
    vec![
        PaneEvent::Upsert(upsert()),
        PaneEvent::Live(upsert()),
        PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: "t".into(),
            session_id: "s".into(),
            status: TurnStatus::Completed,
            usage: None,
            finish_reason: Some("stop".into()),
        }),
        PaneEvent::State(TurnState::Streaming),
        PaneEvent::Queue(vec!["a".into()]),
        PaneEvent::Notice {
            level: DiagnosticLevel::Warn,
            text: "n".into(),
        },
        PaneEvent::Permission(PermissionRequest {
            request_id: "r".into(),
            tool_name: "Bash".into(),
            input: serde_json::json!({"command": "ls"}),
            description: None,
            options: vec![PermissionOption {
                option_id: "o".into(),
                label: "Allow".into(),
                kind: "allow_once".into(),
            }],
            display: None,
            kind: Some("execute".into()),
            locations: vec!["/w/a".into()],
        }),
        PaneEvent::PermissionSettled {
            request_id: "r".into(),
        },
        PaneEvent::Session(SessionInfo {
            resume_handle: Some("h".into()),
            model: Some("m".into()),
            commands: vec!["/x".into()],
        }),
        PaneEvent::Recalled("back".into()),
        PaneEvent::Attached {
            capabilities: Capabilities::default(),
            terminal: Some(Box::new(screen())),
        },
        PaneEvent::Terminal(Box::new(screen())),
        PaneEvent::TerminalText("copied".into()),
        PaneEvent::Bell,
        PaneEvent::Idle,
        PaneEvent::Models(vec!["a".into()]),
        PaneEvent::Effort("low".into()),
        PaneEvent::SessionSwitched {
            session: "s".into(),
            resume: None,
        },
        PaneEvent::HistoryNotSaved("disk full".into()),
        PaneEvent::Stalled(None),
        PaneEvent::Held(Some(Hold {
            kind: HoldKind::Quota,
            until: chrono::DateTime::from_timestamp(1_795_867_200, 0),
            reported: true,
            resend: true,
            spent: None,
        })),
        PaneEvent::Held(Some(Hold {
            kind: HoldKind::Budget,
            until: None,
            reported: false,
            resend: false,
            spent: Some("$5.02 of $5.00".into()),
        })),
        PaneEvent::Held(None),
        PaneEvent::Process(Some(super::pane::ProcessSample {
            cpu_percent: 12.5,
            rss_bytes: 48 << 20,
            processes: 3,
        })),
        PaneEvent::Process(None),
    ]
}

#[test]
fn every_pane_event_round_trips() {
    for e in &sample_events() {
        round_trip(e);
    }
    round_trip(&PaneUpdate {
        pane: 2,
        event: PaneEvent::Bell,
    });
}

/// An `Instant` crosses as "this long ago", read against the reader's clock.
#[test]
fn a_stall_crosses_as_time_ago() {
    let since = Instant::now() - Duration::from_secs(5);
    let json = serde_json::to_string(&PaneEvent::Stalled(Some(since))).expect("serialises");
    let back: PaneEvent = serde_json::from_str(&json).expect("deserialises");
    let PaneEvent::Stalled(Some(back)) = back else {
        panic!("{json}");
    };
    let ago = back.elapsed();
    assert!(
        ago >= Duration::from_secs(5) && ago < Duration::from_secs(60),
        "{ago:?}"
    );
}
