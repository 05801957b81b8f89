//! A running Claude tool shows its command while the model still streams
//! it (issue 13 item 4): `input_json_delta` → a live summary.

use super::*;

/// The live summaries a tool call showed before its result, in order.
fn live_summaries(r: &Capture) -> Vec<String> {
    r.upserts()
        .into_iter()
        .filter(|u| u.status == UpsertStatus::Update)
        .filter_map(|u| match &u.kind {
            UpsertKind::ToolCall { display, .. } => display.as_ref().map(|d| d.summary.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_streaming_bash_call_shows_its_command_as_it_arrives() {
    let r = replay("tool_bash");
    // The command the model sent, from the capture's own input deltas.
    let input: String = r
        .stream()
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ItemDelta { delta_content, .. } if delta_content.contains("command") => {
                Some(delta_content.clone())
            }
            _ => None,
        })
        .collect();
    assert!(input.contains("echo he"), "{input}");
    let summaries = live_summaries(&r);
    assert!(!summaries.is_empty(), "no live summary: {:?}", r.upserts());
    // Mid-stream the command is partial, then whole; never empty.
    assert!(summaries.iter().all(|s| !s.is_empty()));
    assert!(
        summaries
            .iter()
            .any(|s| s.starts_with("echo he") && s.len() < "echo hello-from-tool && pwd".len()),
        "a partial command first: {summaries:?}"
    );
    assert_eq!(
        summaries.last().map(String::as_str),
        Some("echo hello-from-tool && pwd")
    );
    // Every live update comes before the result.
    let ups = r.upserts();
    let done = ups
        .iter()
        .position(|u| {
            u.status == UpsertStatus::Complete && matches!(u.kind, UpsertKind::ToolCall { .. })
        })
        .unwrap();
    assert!(ups[done..].iter().all(
        |u| u.status != UpsertStatus::Update || !matches!(u.kind, UpsertKind::ToolCall { .. })
    ));
}
