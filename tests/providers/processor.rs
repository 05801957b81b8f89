//! Upsert processor acceptance tests: seed 002 §5, every TC-5.x by name, plus
//! the idle flush on tokio's paused clock.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::time::Duration;

use hive::event::{
    ErrorInfo, FinalItem, ItemType, Origin, Payload, ResponseStatus, StreamEvent, Usage,
};
use hive::processor::{Processor, ProcessorConfig, estimate_tokens};
use hive::upsert::{Output, TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};
use serde_json::json;
use tokio::time::Instant;

#[path = "processor/live_tools.rs"]
mod live_tools;

const TURN: &str = "turn_1";
const SESSION: &str = "session_1";

fn ev(payload: Payload) -> StreamEvent {
    StreamEvent::new(TURN, SESSION, payload)
}

fn start(item_id: &str, item_type: ItemType) -> StreamEvent {
    ev(Payload::ItemStart {
        item_id: item_id.into(),
        item_type,
        initial_content: None,
        name: None,
        call_id: None,
    })
}

fn tool_start(item_id: &str, name: &str, call_id: &str) -> StreamEvent {
    ev(Payload::ItemStart {
        item_id: item_id.into(),
        item_type: ItemType::FunctionCall,
        initial_content: None,
        name: Some(name.into()),
        call_id: Some(call_id.into()),
    })
}

fn delta(item_id: &str, text: &str) -> StreamEvent {
    ev(Payload::ItemDelta {
        item_id: item_id.into(),
        delta_content: text.into(),
    })
}

fn message_done(item_id: &str, content: &str) -> StreamEvent {
    ev(Payload::ItemDone {
        item_id: item_id.into(),
        final_item: FinalItem::Message {
            content: content.into(),
            origin: Origin::Agent,
        },
    })
}

fn tool_output(item_id: &str, call_id: &str, output: &str) -> StreamEvent {
    ev(Payload::ItemDone {
        item_id: item_id.into(),
        final_item: FinalItem::FunctionCallOutput {
            call_id: call_id.into(),
            output: output.into(),
            is_error: false,
        },
    })
}

fn response_start() -> StreamEvent {
    ev(Payload::ResponseStart {
        model_id: "model-x".into(),
        provider_id: "test".into(),
    })
}

fn response_done(status: ResponseStatus) -> StreamEvent {
    ev(Payload::ResponseDone {
        status,
        finish_reason: Some("end_turn".into()),
        error: None,
        usage: Some(Usage {
            input_tokens: 5,
            output_tokens: 7,
            ..Usage::default()
        }),
    })
}

/// Feeds events at one instant and collects every output.
fn run(p: &mut Processor, events: &[StreamEvent]) -> Vec<Output> {
    let now = Instant::now();
    events.iter().flat_map(|e| p.process(e, now)).collect()
}

fn upserts(outs: &[Output]) -> Vec<&Upsert> {
    outs.iter()
        .filter_map(|o| match o {
            Output::Upsert(u) => Some(u),
            Output::Turn(_) => None,
        })
        .collect()
}

fn turns(outs: &[Output]) -> Vec<&TurnEvent> {
    outs.iter()
        .filter_map(|o| match o {
            Output::Turn(t) => Some(t),
            Output::Upsert(_) => None,
        })
        .collect()
}

fn content(u: &Upsert) -> String {
    u.text().map(|t| t.to_string()).unwrap_or_default()
}

/// One "token" per delta: 4 chars estimate to exactly 1 token.
fn tok(i: usize) -> String {
    format!("{:<4}", i % 1000).chars().take(4).collect()
}

#[test]
fn estimate_is_quarter_chars_rounded_up_minimum_one() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("a"), 1);
    assert_eq!(estimate_tokens("abcd"), 1);
    assert_eq!(estimate_tokens("abcde"), 2);
    assert_eq!(estimate_tokens("ééééé"), 2, "counts chars, not bytes");
}

#[test]
fn tc_5_1a_simple_text_message_produces_create_and_complete() {
    let mut p = Processor::new(ProcessorConfig::default());
    let mut events = vec![response_start(), start("m1", ItemType::Message)];
    let mut full = String::new();
    for i in 0..15 {
        let d = tok(i);
        full.push_str(&d);
        events.push(delta("m1", &d));
    }
    events.push(message_done("m1", &full));
    events.push(response_done(ResponseStatus::Completed));
    let outs = run(&mut p, &events);
    let ups = upserts(&outs);
    assert_eq!(ups.first().map(|u| u.status), Some(UpsertStatus::Create));
    assert_eq!(ups.last().map(|u| u.status), Some(UpsertStatus::Complete));
    assert_eq!(content(ups.last().unwrap()), full);
    let t = turns(&outs);
    assert!(matches!(t[0], TurnEvent::TurnStarted { model_id, .. } if model_id == "model-x"));
    assert!(matches!(
        t.last().unwrap(),
        TurnEvent::TurnComplete { status: TurnStatus::Completed, usage: Some(u), .. } if u.output_tokens == 7
    ));
}

#[test]
fn tc_5_1b_each_emission_carries_full_content() {
    let mut p = Processor::new(ProcessorConfig::default());
    let mut events = vec![start("m1", ItemType::Message)];
    let mut sent = String::new();
    for i in 0..100 {
        let d = tok(i);
        sent.push_str(&d);
        events.push(delta("m1", &d));
    }
    let outs = run(&mut p, &events);
    let ups = upserts(&outs);
    // Gradient 10,20,40,80 → emissions at 11, 31, 71 tokens.
    let sizes: Vec<usize> = ups.iter().map(|u| content(u).len() / 4).collect();
    assert_eq!(sizes, vec![11, 31, 71]);
    for u in &ups {
        let c = content(u);
        assert!(
            sent.starts_with(&c),
            "emission is a prefix of everything sent"
        );
    }
    assert_eq!(ups[1].status, UpsertStatus::Update);
}

#[test]
fn tc_5_1c_tool_calls_emit_on_invocation_and_completion_only() {
    let mut p = Processor::new(ProcessorConfig::default());
    let events = vec![
        response_start(),
        tool_start("t1", "Bash", "call_1"),
        delta("t1", "{\"comm"),
        delta("t1", "and\":\"ls\"}"),
        ev(Payload::ItemDone {
            item_id: "t1".into(),
            final_item: FinalItem::FunctionCall {
                name: "Bash".into(),
                call_id: "call_1".into(),
                arguments: json!({"command": "ls"}).as_object().cloned().unwrap(),
                display: None,
            },
        }),
        tool_output("out_1", "call_1", "file.txt"),
    ];
    let outs = run(&mut p, &events);
    let ups = upserts(&outs);
    assert_eq!(ups.len(), 2, "exactly two emissions: {ups:#?}");
    assert_eq!(ups[0].status, UpsertStatus::Create);
    assert_eq!(ups[1].status, UpsertStatus::Complete);
    assert_eq!(ups[1].item_id, "t1");
    match &ups[1].kind {
        UpsertKind::ToolCall {
            tool_name,
            arguments,
            output,
            output_is_error,
            ..
        } => {
            assert_eq!(tool_name, "Bash");
            assert_eq!(arguments, &json!({"command": "ls"}));
            assert_eq!(output.as_deref(), Some("file.txt"));
            assert_eq!(*output_is_error, Some(false));
        }
        other => panic!("not a tool call: {other:?}"),
    }
}

/// Issue 34 item 9: a call announced again with its command (claude-code-acp
/// sends `Terminal` with no input, then the command) shows the command while
/// it runs: one `update` between create and complete. Failed before: the
/// pane showed `Terminal` until the command finished.
#[test]
fn a_call_announced_again_with_news_is_shown_while_it_runs() {
    let mut p = Processor::new(ProcessorConfig::default());
    let call = |name: &str, args: serde_json::Value| {
        ev(Payload::ItemDone {
            item_id: "t1".into(),
            final_item: FinalItem::FunctionCall {
                name: name.into(),
                call_id: "call_1".into(),
                arguments: args.as_object().cloned().unwrap(),
                display: None,
            },
        })
    };
    let events = vec![
        response_start(),
        tool_start("t1", "Terminal", "call_1"),
        call("Terminal", json!({})),
        call("Terminal", json!({})),
        call("sleep 10", json!({"command": "sleep 10"})),
    ];
    let ups = upserts(&run(&mut p, &events))
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    let seen: Vec<(UpsertStatus, String)> = ups
        .iter()
        .map(|u| match &u.kind {
            UpsertKind::ToolCall { tool_name, .. } => (u.status, tool_name.clone()),
            other => panic!("not a tool call: {other:?}"),
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (UpsertStatus::Create, "Terminal".to_owned()),
            (UpsertStatus::Update, "sleep 10".to_owned()),
        ]
    );
}

#[test]
fn tool_arguments_streamed_as_json_are_parsed_when_no_final_call_arrives() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            tool_start("t1", "Read", "c1"),
            delta("t1", "{\"file_path\":"),
            delta("t1", "\"a.rs\"}"),
            tool_output("o1", "c1", "fn main() {}"),
        ],
    );
    let ups = upserts(&outs);
    assert!(
        matches!(&ups[1].kind, UpsertKind::ToolCall { arguments, .. } if arguments == &json!({"file_path": "a.rs"}))
    );
}

#[test]
fn tc_5_1d_thinking_blocks_are_processed_as_reasoning() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            response_start(),
            start("r1", ItemType::Reasoning),
            delta(
                "r1",
                "Let me think about this carefully, step by step, before answering.",
            ),
            ev(Payload::ItemDone {
                item_id: "r1".into(),
                final_item: FinalItem::Reasoning {
                    content: "Let me think about this carefully, step by step, before answering."
                        .into(),
                    provider_id: "test".into(),
                },
            }),
        ],
    );
    let ups = upserts(&outs);
    assert!(!ups.is_empty());
    for u in &ups {
        assert!(
            matches!(&u.kind, UpsertKind::Thinking { provider_id, .. } if provider_id == "test")
        );
    }
    assert_eq!(
        content(ups.last().unwrap()),
        "Let me think about this carefully, step by step, before answering."
    );
}

/// Feeds single-token deltas and returns the token counts at which it emitted.
fn emission_points(p: &mut Processor, n: usize) -> Vec<usize> {
    let now = Instant::now();
    p.process(&start("m1", ItemType::Message), now);
    let mut points = Vec::new();
    for i in 1..=n {
        if !p.process(&delta("m1", &tok(i)), now).is_empty() {
            points.push(i);
        }
    }
    points
}

#[test]
fn tc_5_2a_early_emissions_are_frequent() {
    let mut p = Processor::new(ProcessorConfig::default());
    let points = emission_points(&mut p, 12);
    assert_eq!(
        points,
        vec![11],
        "first emission once 10 tokens are strictly exceeded"
    );
}

#[test]
fn tc_5_2b_later_emissions_are_less_frequent() {
    let mut p = Processor::new(ProcessorConfig::default());
    let points = emission_points(&mut p, 300);
    assert_eq!(points, vec![11, 31, 71, 151, 271]);
    let gaps: Vec<usize> = points.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps, vec![20, 40, 80, 120]);
}

#[test]
fn tc_5_2c_threshold_must_be_strictly_exceeded() {
    let mut p = Processor::new(ProcessorConfig::default());
    let points = emission_points(&mut p, 10);
    assert!(
        points.is_empty(),
        "10 tokens equal the threshold: no emission"
    );
    assert!(!p.process(&delta("m1", "abcd"), Instant::now()).is_empty());
}

#[test]
fn tc_5_2d_single_large_delta_crossing_several_thresholds_emits_once() {
    let mut p = Processor::new(ProcessorConfig::default());
    let now = Instant::now();
    p.process(&start("m1", ItemType::Message), now);
    // 80 tokens in one delta crosses 10, 30 and 70.
    let outs = p.process(&delta("m1", &"x".repeat(320)), now);
    assert_eq!(outs.len(), 1);
    // Next threshold is 150: 70 more tokens (=150) must not emit, one more must.
    assert!(p.process(&delta("m1", &"y".repeat(280)), now).is_empty());
    assert_eq!(p.process(&delta("m1", "z"), now).len(), 1);
}

#[test]
fn tc_5_2e_gradient_exhaustion_repeats_last_value() {
    let mut p = Processor::new(ProcessorConfig::default());
    let points = emission_points(&mut p, 640);
    assert_eq!(points, vec![11, 31, 71, 151, 271, 391, 511, 631]);
}

#[test]
fn tc_5_2f_default_gradient_sequence_is_explicit() {
    let p = Processor::new(ProcessorConfig::default());
    assert_eq!(p.config().batch_gradient, vec![10, 20, 40, 80, 120]);
    assert_eq!(p.config().batch_timeout, Duration::from_millis(1000));
}

#[test]
fn gradient_is_configurable() {
    let mut p = Processor::new(ProcessorConfig {
        batch_gradient: vec![2, 3],
        batch_timeout: Duration::from_millis(50),
        first_emit: None,
    });
    assert_eq!(emission_points(&mut p, 12), vec![3, 6, 9, 12]);
}

#[test]
fn tc_5_3a_result_is_correlated_to_invocation_by_call_id() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            tool_start("invocation_item", "Read", "call_9"),
            tool_output("some_other_item", "call_9", "contents"),
        ],
    );
    let ups = upserts(&outs);
    assert_eq!(ups[1].item_id, "invocation_item");
    assert!(matches!(&ups[1].kind, UpsertKind::ToolCall { call_id, .. } if call_id == "call_9"));
}

#[test]
fn tc_5_3b_concurrent_tool_calls_are_tracked_independently() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            tool_start("a", "Read", "call_a"),
            tool_start("b", "Bash", "call_b"),
            tool_output("ob", "call_b", "from b"),
            tool_output("oa", "call_a", "from a"),
        ],
    );
    let completes: Vec<_> = upserts(&outs)
        .into_iter()
        .filter(|u| u.status == UpsertStatus::Complete)
        .map(|u| match &u.kind {
            UpsertKind::ToolCall {
                tool_name, output, ..
            } => (
                u.item_id.clone(),
                tool_name.clone(),
                output.clone().unwrap_or_default(),
            ),
            _ => panic!("not a tool"),
        })
        .collect();
    assert_eq!(
        completes,
        vec![
            ("b".into(), "Bash".into(), "from b".into()),
            ("a".into(), "Read".into(), "from a".into())
        ]
    );
}

#[test]
fn unknown_call_id_still_yields_a_defensive_complete() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[tool_output("orphan", "call_unknown", "late output")],
    );
    let ups = upserts(&outs);
    assert_eq!(ups.len(), 1);
    assert_eq!(ups[0].status, UpsertStatus::Complete);
    assert_eq!(ups[0].item_id, "orphan");
    assert!(
        matches!(&ups[0].kind, UpsertKind::ToolCall { output: Some(o), call_id, .. } if o == "late output" && call_id == "call_unknown")
    );
}

#[test]
fn tc_5_4a_destruction_mid_stream_flushes_buffered_content_as_error() {
    let mut p = Processor::new(ProcessorConfig::default());
    let now = Instant::now();
    for e in [
        response_start(),
        start("m1", ItemType::Message),
        delta("m1", "partial"),
    ] {
        p.process(&e, now);
    }
    let outs = p.fail_turn((TURN, SESSION), "agent_exited", "exit status 1");
    let ups = upserts(&outs);
    assert_eq!(ups.len(), 1);
    assert_eq!(ups[0].status, UpsertStatus::Error);
    assert_eq!(content(ups[0]), "partial");
    assert_eq!(ups[0].error_code.as_deref(), Some("agent_exited"));
    assert!(outs.iter().all(|o| !matches!(
        o,
        Output::Upsert(Upsert {
            status: UpsertStatus::Complete,
            ..
        })
    )));
    assert!(
        matches!(turns(&outs)[0], TurnEvent::TurnError { error_code, .. } if error_code == "agent_exited")
    );
}

#[test]
fn response_error_flushes_open_items_as_error() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            response_start(),
            start("m1", ItemType::Message),
            delta("m1", "half an answer"),
            tool_start("t1", "Bash", "c1"),
            ev(Payload::ResponseError {
                error: ErrorInfo::new("rate_limit", "429"),
            }),
        ],
    );
    let ups = upserts(&outs);
    let finals: Vec<_> = ups.iter().filter(|u| u.is_final()).collect();
    assert_eq!(finals.len(), 2);
    assert!(finals.iter().all(|u| u.status == UpsertStatus::Error));
    let t = turns(&outs);
    assert!(
        matches!(t.last().unwrap(), TurnEvent::TurnError { error_code, error_message, .. } if error_code == "rate_limit" && error_message == "429")
    );
}

#[tokio::test(start_paused = true)]
async fn tc_5_4b_batch_timeout_forces_emission_after_delay() {
    let mut p = Processor::new(ProcessorConfig::default());
    let t0 = Instant::now();
    p.process(&start("m1", ItemType::Message), t0);
    assert!(p.process(&delta("m1", "short"), t0).is_empty());
    assert_eq!(p.next_deadline(), Some(t0 + Duration::from_millis(1000)));

    tokio::time::sleep(Duration::from_millis(999)).await;
    assert!(
        p.flush_idle(Instant::now()).is_empty(),
        "not idle long enough"
    );

    tokio::time::sleep(Duration::from_millis(1)).await;
    let outs = p.flush_idle(Instant::now());
    let ups = upserts(&outs);
    assert_eq!(ups.len(), 1);
    assert_eq!(ups[0].status, UpsertStatus::Create);
    assert_eq!(content(ups[0]), "short");
    assert_eq!(p.next_deadline(), None, "nothing buffered any more");
    assert!(
        p.flush_idle(Instant::now() + Duration::from_secs(5))
            .is_empty()
    );
}

#[tokio::test(start_paused = true)]
async fn batch_timeout_is_configurable_and_restarts_with_each_delta() {
    let mut p = Processor::new(ProcessorConfig {
        batch_gradient: vec![10, 20, 40, 80, 120],
        batch_timeout: Duration::from_millis(200),
        first_emit: None,
    });
    let t0 = Instant::now();
    p.process(&start("m1", ItemType::Message), t0);
    p.process(&delta("m1", "a"), t0);
    tokio::time::sleep(Duration::from_millis(150)).await;
    p.process(&delta("m1", "b"), Instant::now());
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(p.flush_idle(Instant::now()).is_empty());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(content(upserts(&p.flush_idle(Instant::now()))[0]), "ab");
}

#[test]
fn tc_5_4c_empty_content_is_handled_without_error() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[start("m1", ItemType::Message), message_done("m1", "")],
    );
    let ups = upserts(&outs);
    assert_eq!(ups.len(), 1);
    assert_eq!(ups[0].status, UpsertStatus::Complete);
    assert_eq!(content(ups[0]), "");
}

#[test]
fn tc_5_4d_cancelled_items_are_discarded_silently() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            start("m1", ItemType::Message),
            delta("m1", "buffered"),
            ev(Payload::ItemCancelled {
                item_id: "m1".into(),
                reason: None,
            }),
        ],
    );
    assert!(outs.is_empty());
    assert!(!p.has_open_items());
    assert_eq!(p.next_deadline(), None);
}

#[test]
fn tc_5_4e_turn_cancellation_is_represented_at_turn_level() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            response_start(),
            start("m1", ItemType::Message),
            delta("m1", &"x".repeat(60)),
            start("m2", ItemType::Message),
            delta("m2", "y"),
            ev(Payload::ItemCancelled {
                item_id: "m1".into(),
                reason: Some("interrupted".into()),
            }),
            response_done(ResponseStatus::Cancelled),
        ],
    );
    let ups = upserts(&outs);
    assert!(
        ups.iter().all(|u| !u.is_final()),
        "no cancelled item is labelled complete or error: {ups:#?}"
    );
    assert!(matches!(
        turns(&outs).last().unwrap(),
        TurnEvent::TurnComplete {
            status: TurnStatus::Cancelled,
            ..
        }
    ));
}

/// Issue 13 item 5: an interrupt keeps everything the agent had sent,
/// the batched part too, marked interrupted (neither complete nor error).
#[test]
fn interrupt_keeps_the_text_already_received() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            response_start(),
            start("m1", ItemType::Message),
            delta("m1", &"x".repeat(60)),
            delta("m1", " and the rest"),
            start("r1", ItemType::Reasoning),
            delta("r1", "thought"),
            tool_start("t1", "Bash", "c1"),
            start("empty", ItemType::Message),
            response_done(ResponseStatus::Cancelled),
        ],
    );
    let last = |id: &str| {
        upserts(&outs)
            .into_iter()
            .rfind(|u| u.item_id == id)
            .cloned()
    };
    let m1 = last("m1").expect("message kept");
    assert_eq!(m1.status, UpsertStatus::Interrupted);
    assert_eq!(content(&m1), format!("{} and the rest", "x".repeat(60)));
    let r1 = last("r1").expect("thinking kept");
    assert_eq!(
        (r1.status, content(&r1)),
        (UpsertStatus::Interrupted, "thought".into())
    );
    let t1 = last("t1").expect("tool shown");
    assert_eq!(
        t1.status,
        UpsertStatus::Interrupted,
        "the tool stops spinning"
    );
    assert!(last("empty").is_none(), "nothing received, nothing shown");
    assert!(!p.has_open_items());
}

/// The same when the agent names the interrupted item, and when hive ends
/// a turn the agent would not stop.
#[test]
fn interrupted_items_and_forced_cancels_keep_their_text() {
    let mut p = Processor::new(ProcessorConfig::default());
    let mut outs = run(
        &mut p,
        &[
            response_start(),
            start("m1", ItemType::Message),
            delta("m1", "partial"),
            ev(Payload::item_interrupted("m1")),
            start("m2", ItemType::Message),
            delta("m2", "more"),
        ],
    );
    outs.extend(p.cancel_turn(("turn_1", "s1")));
    let kept: Vec<(String, UpsertStatus, String)> = upserts(&outs)
        .into_iter()
        .map(|u| (u.item_id.clone(), u.status, content(u)))
        .collect();
    assert_eq!(
        kept,
        vec![
            ("m1".into(), UpsertStatus::Interrupted, "partial".into()),
            ("m2".into(), UpsertStatus::Interrupted, "more".into()),
        ]
    );
}

#[test]
fn tc_5_4f_turn_errors_are_turn_error_events() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            response_start(),
            ev(Payload::ResponseDone {
                status: ResponseStatus::Error,
                finish_reason: None,
                error: Some(ErrorInfo::new("api_error", "500 internal")),
                usage: None,
            }),
        ],
    );
    let t = turns(&outs);
    assert!(
        matches!(t.last().unwrap(), TurnEvent::TurnError { error_code, error_message, .. } if error_code == "api_error" && error_message == "500 internal")
    );
    assert!(
        !t.iter()
            .any(|e| matches!(e, TurnEvent::TurnComplete { .. }))
    );
}

#[test]
fn error_status_without_details_falls_back_to_finish_reason() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[ev(Payload::ResponseDone {
            status: ResponseStatus::Error,
            finish_reason: Some("max_tokens".into()),
            error: None,
            usage: None,
        })],
    );
    assert!(
        matches!(turns(&outs)[0], TurnEvent::TurnError { error_code, .. } if error_code == "max_tokens")
    );
}

#[test]
fn final_item_content_is_authoritative() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            start("m1", ItemType::Message),
            delta("m1", "draft"),
            message_done("m1", "final text"),
        ],
    );
    assert_eq!(content(upserts(&outs).last().unwrap()), "final text");
}

#[test]
fn message_done_without_start_or_deltas_is_shown_whole() {
    // Codex exec delivers agent messages whole on item.completed.
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(&mut p, &[message_done("m1", "whole message")]);
    let ups = upserts(&outs);
    assert_eq!(ups.len(), 1);
    assert_eq!(ups[0].status, UpsertStatus::Complete);
    assert_eq!(content(ups[0]), "whole message");
}

#[test]
fn earlier_emissions_stay_unchanged_while_content_grows() {
    let mut p = Processor::new(ProcessorConfig::default());
    let now = Instant::now();
    p.process(&start("m1", ItemType::Message), now);
    let first = p.process(&delta("m1", &"a".repeat(44)), now);
    let second = p.process(&delta("m1", &"b".repeat(200)), now);
    let a = upserts(&first)[0];
    let b = upserts(&second)[0];
    assert_eq!(content(a), "a".repeat(44));
    assert_eq!(content(b).len(), 244);
    assert!(
        a.text().unwrap().same_buffer(b.text().unwrap()),
        "no copy per emission"
    );
}

#[test]
fn processor_output_round_trips_through_json() {
    let mut p = Processor::new(ProcessorConfig::default());
    let outs = run(
        &mut p,
        &[
            response_start(),
            message_done("m1", "hi"),
            response_done(ResponseStatus::Completed),
        ],
    );
    for o in outs {
        let line = serde_json::to_string(&o).unwrap();
        let back: Output = serde_json::from_str(&line).unwrap();
        assert_eq!(back, o);
    }
}

#[tokio::test(start_paused = true)]
async fn first_emit_deadline_shows_a_slow_start_promptly_then_the_gradient_resumes() {
    let mut p = Processor::new(ProcessorConfig {
        first_emit: Some(Duration::from_millis(100)),
        ..ProcessorConfig::default()
    });
    let t0 = Instant::now();
    p.process(&start("m1", ItemType::Message), t0);
    p.process(&delta("m1", "Hel"), t0);
    assert_eq!(p.next_deadline(), Some(t0 + Duration::from_millis(100)));
    tokio::time::sleep(Duration::from_millis(60)).await;
    // More deltas do not push the first-emit deadline back.
    p.process(&delta("m1", "lo"), Instant::now());
    assert_eq!(p.next_deadline(), Some(t0 + Duration::from_millis(100)));
    tokio::time::sleep(Duration::from_millis(40)).await;
    let outs = p.flush_idle(Instant::now());
    assert_eq!(content(upserts(&outs)[0]), "Hello");
    assert_eq!(upserts(&outs)[0].status, UpsertStatus::Create);
    // After the first emission only the gradient and the idle timeout apply.
    let t1 = Instant::now();
    p.process(&delta("m1", " world"), t1);
    assert_eq!(p.next_deadline(), Some(t1 + Duration::from_millis(1000)));
}

#[test]
fn hive_config_enables_the_first_emit_deadline_by_default() {
    let c = hive::config::Config::builtin().processor_config();
    assert_eq!(c.first_emit, Some(Duration::from_millis(100)));
    assert_eq!(c.batch_gradient, vec![10, 20, 40, 80, 120]);
    assert_eq!(
        ProcessorConfig::default().first_emit,
        None,
        "seed defaults unchanged"
    );
}
