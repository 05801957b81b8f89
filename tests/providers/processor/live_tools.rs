//! Live tool calls (issue 13 item 4): a running call shows its arguments as
//! they stream and the output it prints, as `update`s, and a call its turn
//! completed without a result ends failed, never done (item 7).

use hive::event::ToolDisplay;
use hive::processor::{LIVE_OUTPUT_MAX, UNFINISHED};

use super::*;

fn progress(display: Option<&str>, output: Option<&str>, delta: Option<&str>) -> StreamEvent {
    ev(Payload::ToolProgress {
        item_id: "t1".into(),
        display: display.map(|s| ToolDisplay {
            summary: s.into(),
            diff: None,
        }),
        output: output.map(str::to_owned),
        output_delta: delta.map(str::to_owned),
    })
}

fn live(u: &Upsert) -> (Option<&str>, Option<&str>) {
    match &u.kind {
        UpsertKind::ToolCall {
            display, output, ..
        } => (
            display.as_deref().map(|d| d.summary.as_str()),
            output.as_deref(),
        ),
        other => panic!("not a tool call: {other:?}"),
    }
}

#[test]
fn a_running_call_shows_its_streamed_summary_and_output_as_updates() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            response_start(),
            tool_start("t1", "Bash", "c1"),
            delta("t1", "{\"command\":\"ca"),
            progress(Some("ca"), None, None),
            delta("t1", "rgo test\"}"),
            progress(Some("cargo test"), None, None),
            // The same state again is not news.
            progress(Some("cargo test"), None, None),
            progress(None, None, Some("running 3 tests\n")),
            progress(None, None, Some("test a ... ok\n")),
        ],
    );
    let ups = upserts(&outs);
    let statuses: Vec<UpsertStatus> = ups.iter().map(|u| u.status).collect();
    assert_eq!(
        statuses,
        [
            UpsertStatus::Create,
            UpsertStatus::Update,
            UpsertStatus::Update,
            UpsertStatus::Update,
            UpsertStatus::Update
        ]
    );
    assert_eq!(live(ups[1]), (Some("ca"), None));
    assert_eq!(live(ups[2]), (Some("cargo test"), None));
    assert_eq!(
        live(ups[4]),
        (Some("cargo test"), Some("running 3 tests\ntest a ... ok\n"))
    );
    // Replacing output (pi, ACP) replaces; the result completes the call.
    let outs = run(
        &mut p,
        &[
            progress(None, Some("all of it\n"), None),
            ev(Payload::ItemDone {
                item_id: "t1".into(),
                final_item: FinalItem::FunctionCall {
                    name: "Bash".into(),
                    call_id: "c1".into(),
                    arguments: json!({"command": "cargo test"})
                        .as_object()
                        .cloned()
                        .unwrap(),
                    display: Some(ToolDisplay {
                        summary: "cargo test".into(),
                        diff: None,
                    }),
                },
            }),
            tool_output("o1", "c1", "3 passed"),
        ],
    );
    let ups = upserts(&outs);
    assert_eq!(live(ups[0]), (Some("cargo test"), Some("all of it\n")));
    // The final invocation of a call shown live is shown too.
    assert_eq!(ups[1].status, UpsertStatus::Update);
    assert_eq!(ups[2].status, UpsertStatus::Complete);
    assert_eq!(live(ups[2]), (Some("cargo test"), Some("3 passed")));
}

#[test]
fn live_output_keeps_a_bounded_tail_of_whole_lines() {
    let mut p = Processor::new(ProcessorConfig::default());
    run(&mut p, &[tool_start("t1", "Bash", "c1")]);
    let mut last = None;
    for i in 0..5000 {
        let outs = run(
            &mut p,
            &[progress(None, None, Some(&format!("line {i:05}\n")))],
        );
        last = upserts(&outs).last().map(|u| live(u).1.unwrap().to_owned());
    }
    let tail = last.unwrap();
    assert!(tail.len() <= LIVE_OUTPUT_MAX, "{}", tail.len());
    assert!(
        tail.starts_with("line "),
        "cut at a line start: {:?}",
        &tail[..20]
    );
    assert!(tail.ends_with("line 04999\n"));
}

#[test]
fn progress_for_an_unknown_call_is_ignored() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(&mut p, &[progress(Some("x"), Some("y"), None)]);
    assert!(outs.is_empty(), "{outs:?}");
}

#[test]
fn a_call_left_open_by_a_completed_turn_ends_failed_with_its_arguments() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            response_start(),
            tool_start("t1", "Bash", "c1"),
            delta("t1", "{\"command\":\"rm -rf build\"}"),
            response_done(ResponseStatus::Completed),
        ],
    );
    let ups = upserts(&outs);
    let last = ups.last().unwrap();
    assert_eq!(last.status, UpsertStatus::Error, "never done: {last:?}");
    assert_eq!(last.error_code.as_deref(), Some(UNFINISHED));
    assert!(
        matches!(&last.kind, UpsertKind::ToolCall { arguments, .. } if arguments == &json!({"command": "rm -rf build"}))
    );
    assert!(matches!(
        turns(&outs).last(),
        Some(TurnEvent::TurnComplete {
            status: TurnStatus::Completed,
            ..
        })
    ));
}
