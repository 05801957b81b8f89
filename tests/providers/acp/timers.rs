//! Engine timers with explicit time: no process involved.

use super::*;

fn writes(fx: &[Effect]) -> Vec<Value> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Write(l) => serde_json::from_str(l).ok(),
            _ => None,
        })
        .collect()
}

fn payloads(fx: &[Effect]) -> Vec<Payload> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Emit(ev) => match ev.as_ref() {
                ProviderEvent::Stream(s) => Some(s.payload.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// An engine with an open session; returns it and the now it was opened at.
fn open_engine() -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = Engine::new(EngineConfig::new("t", dir.path().to_path_buf()));
    e.start();
    let init = writes(&e.drain());
    let now = Instant::now();
    e.on_line(
        &json!({"jsonrpc": "2.0", "id": init[0]["id"], "result": {"protocolVersion": 1}})
            .to_string(),
        now,
    );
    let new = writes(&e.drain());
    assert_eq!(new[0]["method"], "session/new");
    e.on_line(
        &json!({"jsonrpc": "2.0", "id": new[0]["id"], "result": {"sessionId": "s9"}}).to_string(),
        now,
    );
    e.drain();
    (e, dir)
}

#[test]
fn engine_ends_an_unconfirmed_cancel_itself_and_ignores_the_late_answer() {
    let (mut e, _dir) = open_engine();
    let t0 = Instant::now();
    e.on_command(
        ProviderCommand::Send {
            turn_id: "a".into(),
            text: "x".into(),
        },
        t0,
    );
    let prompt = writes(&e.drain())[0].clone();
    assert_eq!(prompt["method"], "session/prompt");
    e.on_command(ProviderCommand::Cancel, t0);
    let fx = e.drain();
    assert_eq!(writes(&fx)[0]["method"], "session/cancel");
    let deadline = e.next_deadline().expect("a cancel deadline");
    assert!(deadline > t0 && deadline <= t0 + Duration::from_secs(1));
    e.on_timer(deadline - Duration::from_millis(1));
    assert!(
        payloads(&e.drain()).is_empty(),
        "not before the grace ran out"
    );
    e.on_timer(deadline);
    let ended = payloads(&e.drain());
    assert!(
        matches!(
            &ended[..],
            [Payload::ResponseDone {
                status: ResponseStatus::Cancelled,
                ..
            }]
        ),
        "{ended:?}"
    );
    // The next turn runs; the old prompt's late answer does not end it.
    e.on_command(
        ProviderCommand::Send {
            turn_id: "b".into(),
            text: "y".into(),
        },
        deadline,
    );
    let second = writes(&e.drain())[0].clone();
    e.on_line(
        &json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "end_turn"}})
            .to_string(),
        deadline,
    );
    assert!(payloads(&e.drain()).is_empty(), "late answer ignored");
    e.on_line(
        &json!({"jsonrpc": "2.0", "id": second["id"], "result": {"stopReason": "end_turn"}})
            .to_string(),
        deadline,
    );
    let done = payloads(&e.drain());
    assert!(
        matches!(
            &done[..],
            [Payload::ResponseDone {
                status: ResponseStatus::Completed,
                ..
            }]
        ),
        "{done:?}"
    );
}

#[test]
fn engine_gives_up_on_a_silent_agent_and_retries_on_the_next_send() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = Engine::new(EngineConfig::new("t", dir.path().to_path_buf()));
    e.start();
    e.drain();
    e.on_command(
        ProviderCommand::Send {
            turn_id: "a".into(),
            text: "x".into(),
        },
        Instant::now(),
    );
    assert!(e.drain().is_empty(), "the turn waits for the session");
    let deadline = e.next_deadline().expect("a start-up deadline");
    e.on_timer(deadline);
    let fx = e.drain();
    let failed = payloads(&fx);
    match &failed[..] {
        [Payload::ResponseError { error }] => {
            assert_eq!(error.code, "session_failed");
            assert!(error.message.contains("initialize"), "{}", error.message);
        }
        other => panic!("{other:?}"),
    }
    e.on_command(
        ProviderCommand::Send {
            turn_id: "b".into(),
            text: "x".into(),
        },
        Instant::now(),
    );
    let retry = writes(&e.drain());
    assert_eq!(retry[0]["method"], "initialize", "start-up is tried again");
}

#[test]
fn engine_sends_steer_nowhere_and_says_so() {
    let (mut e, _dir) = open_engine();
    e.on_command(ProviderCommand::Steer { text: "hi".into() }, Instant::now());
    let fx = e.drain();
    assert!(writes(&fx).is_empty());
    assert!(fx.iter().any(
        |f| matches!(f, Effect::Emit(ev) if matches!(ev.as_ref(), ProviderEvent::Diagnostic { .. }))
    ));
}
