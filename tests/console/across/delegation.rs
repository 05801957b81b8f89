//! Delegation in the console (issue 34 item 12): an agent's call of hive's
//! operations reads as who asked whom for what (`→ backend: …`, `waited
//! for backend: …`), running and done, not as its JSON.

use std::time::Duration;

use serde_json::json;

use super::console::*;
use hive::runner::PaneEvent;
use hive::upsert::{UpsertKind, UpsertStatus};

pub(super) fn hive_call(output: Option<String>) -> PaneEvent {
    let mut ev = upsert(
        "t1",
        "call-1",
        UpsertKind::ToolCall {
            // Claude Code's name of the tool through `hive mcp`.
            tool_name: "mcp__hive__hive_call".into(),
            arguments: json!({"calls": [
                {"op": "agent.send", "args": {"agent": "backend", "text": "Add POST /login with tests."}},
                {"op": "agent.wait", "args": {"agent": "backend", "timeout_secs": 600}},
            ]}),
            call_id: "c1".into(),
            output_is_error: output.as_ref().map(|_| false),
            output,
            display: None,
        },
    );
    if let PaneEvent::Upsert(u) = &mut ev
        && matches!(&u.kind, UpsertKind::ToolCall { output: None, .. })
    {
        u.status = UpsertStatus::Create;
    }
    ev
}

/// Failed before: the pane showed `mcp__hive__hive_call` and the batch's
/// raw JSON (`[{"op":"agent.send","ok":true,…`).
#[test]
fn a_delegating_call_reads_as_who_asked_whom_for_what() {
    let mut c = console(1, "");
    c.send(0, started("t1"));
    c.send(0, hive_call(None));
    let running = c.render(80, 8);
    assert!(
        running.contains("hive  → backend: Add POST /login with tests."),
        "{running}"
    );
    assert!(running.contains("waiting for backend…"), "{running}");
    insta::assert_snapshot!("delegation_running", running);
    let results = json!([
        {"op": "agent.send", "ok": true, "result": {"message_id": "m1", "queued": false}},
        {"op": "agent.wait", "ok": true, "result": {"status": "completed", "turn_id": "t9",
            "text": "Done: POST /login is in, with 4 tests.\n\nDetails follow…"}},
    ]);
    c.send(0, hive_call(Some(results.to_string())));
    let done = c.render(80, 8);
    assert!(
        done.contains("waited for backend: Done: POST /login is in, with 4 tests."),
        "{done}"
    );
    assert!(!done.contains("\"op\""), "{done}");
    insta::assert_snapshot!("delegation_done", done);
}

/// The batch's results: the message went out, the backend answered.
pub(super) fn answered() -> String {
    json!([
        {"op": "agent.send", "ok": true, "result": {"message_id": "m1", "queued": false}},
        {"op": "agent.wait", "ok": true, "result": {"status": "completed", "turn_id": "t9",
            "text": "Done: POST /login is in."}},
    ])
    .to_string()
}

/// Failed before: the user watched the backend while the Architect
/// waited 6 s on it; back on the Architect, the digest timed the call
/// from when it was first seen unfocused (its result: nothing, or the
/// 0.3 s of its last update) and named it `mcp__hive__hive_call`.
#[test]
fn a_wait_watched_from_the_other_pane_shows_its_real_duration() {
    let mut c = console(2, "");
    c.send(0, started("t1"));
    c.send(0, hive_call(None));
    c.alt('2');
    c.app.now += Duration::from_millis(5_700);
    c.send(0, hive_call(None));
    c.app.now += Duration::from_millis(300);
    c.send(0, hive_call(Some(answered())));
    c.send(0, completed("t1"));
    c.alt('1');
    c.alt('z');
    let screen = c.render(120, 10);
    assert!(
        screen.contains("1 turn finished · 1 tool (hive_call 6.0s)"),
        "{screen}"
    );
    assert!(
        screen.contains("waited 6.0s for backend: Done: POST /login is in."),
        "{screen}"
    );
    assert!(
        screen.contains("── demo-1 · 6.0s"),
        "the turn's footer: {screen}"
    );
}
