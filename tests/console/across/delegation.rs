//! Delegation in the console (issue 34 item 12): an agent's call of hive's
//! operations reads as who asked whom for what (`→ backend: …`, `waited
//! for backend: …`), running and done, not as its JSON.

use serde_json::json;

use super::console::*;
use hive::runner::PaneEvent;
use hive::upsert::{UpsertKind, UpsertStatus};

fn hive_call(output: Option<String>) -> PaneEvent {
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
