//! The `codex` provider: captured Codex CLI 0.169.0 output replayed through
//! the translators and the upsert processor (every event type the real CLI
//! emitted, plus the documented item types the captures lack), and lifecycle
//! tests of both transports against a fake CLI (tests/fake/fake_codex.py)
//! driven through the pane runner.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;
use support::{Pane, Replay, WAIT, assert_all_dead, fake_command, jsonl, tempdir};

use std::ops::{Deref, DerefMut};
use std::time::Duration;

use hive::config::AgentConfig;
use hive::event::{ErrorInfo, Payload, ResponseStatus, StreamEvent, Usage};
use hive::provider::codex::app_server::{AppTurn, DeltaNote};
use hive::provider::codex::exec::{ExecTurn, ThreadUsage};
use hive::provider::codex::items::Out;
use hive::provider::{PermissionDecision, ProviderEvent, Registry};
use hive::runner::{Decider, PaneEvent, RunnerCommand, SubmitMode};
use hive::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};
use serde_json::Value;
use tokio::time::Instant;

// ------------------------------------------------------------ replay ----

fn fixture(name: &str) -> String {
    support::fixture("codex", name)
}

/// A tool call upsert: (status, name, arguments, output, is_error).
type Tool = (UpsertStatus, String, Value, Option<String>, Option<bool>);

/// What a replay produced, with what only Codex's translators report
/// besides provider events: thread ids, diagnostics, a terminal event seen.
#[derive(Default)]
struct Run {
    r: Replay,
    threads: Vec<String>,
    diagnostics: Vec<String>,
    finished: bool,
}

impl Deref for Run {
    type Target = Replay;
    fn deref(&self) -> &Replay {
        &self.r
    }
}

impl Replay {
    /// Final (complete) contents of message / thinking items, in order.
    fn texts(&self, want_thinking: bool) -> Vec<(String, String)> {
        self.upserts()
            .into_iter()
            .filter(|u| u.status == UpsertStatus::Complete)
            .filter_map(|u| match &u.kind {
                UpsertKind::Message { content, origin } if !want_thinking => {
                    Some((format!("{origin:?}"), content.to_string()))
                }
                UpsertKind::Thinking { content, .. } if want_thinking => {
                    Some(("thinking".into(), content.to_string()))
                }
                _ => None,
            })
            .collect()
    }
}

/// `tools` per provider: the test binary shares one `Replay` type.
trait CodexTools {
    fn tools(&self) -> Vec<Tool>;
}

impl CodexTools for Replay {
    /// Tool calls as (status, name, arguments, output, is_error), in order:
    /// invocation and final rows (a running call's live updates are looked
    /// at on their own).
    fn tools(&self) -> Vec<Tool> {
        self.tool_rows()
            .into_iter()
            .filter(|row| row.0 != UpsertStatus::Update)
            .map(|(status, name, _, arguments, output, is_error)| {
                (status, name, arguments, output, is_error)
            })
            .collect()
    }
}

/// Feeds translator outputs to a processor the way the transports do:
/// `response_start` before the first event of the turn.
struct Feed {
    turn: String,
    started: bool,
    replay: Run,
}

impl Feed {
    fn new(turn: &str) -> Self {
        Self {
            turn: turn.into(),
            started: false,
            replay: Run::default(),
        }
    }

    fn payload(&mut self, p: Payload) {
        let ev = StreamEvent::new(&self.turn, "thread", p);
        self.replay.r.feed(ProviderEvent::Stream(ev));
    }

    fn start(&mut self) {
        if !self.started {
            self.started = true;
            self.payload(Payload::ResponseStart {
                model_id: "gpt-5.5".into(),
                provider_id: "codex".into(),
            });
        }
    }

    fn out(&mut self, out: Out) {
        match out {
            Out::Thread { id, .. } => self.replay.threads.push(id),
            Out::Started => self.start(),
            Out::Event(p) => {
                self.start();
                self.payload(p);
            }
            Out::Finished(p) => {
                self.start();
                self.payload(p);
                self.replay.finished = true;
            }
            Out::Diagnostic(_, m) => self.replay.diagnostics.push(m),
        }
    }
}

fn replay_exec(name: &str) -> Run {
    let text = fixture(name);
    let mut tr = ExecTurn::new();
    let mut feed = Feed::new("turn_1");
    for line in text.lines() {
        for out in tr.line(line) {
            feed.out(out);
        }
    }
    feed.replay
}

/// A run that printed no terminal event ended by process exit or interrupt:
/// what the transport does then.
fn end_exec(name: &str, cancelled: bool) -> Run {
    let text = fixture(name);
    let mut tr = ExecTurn::new();
    let mut feed = Feed::new("turn_1");
    for line in text.lines() {
        for out in tr.line(line) {
            feed.out(out);
        }
    }
    assert!(!tr.finished(), "{name} has no terminal event");
    if cancelled {
        feed.payload(Payload::ResponseDone {
            status: ResponseStatus::Cancelled,
            finish_reason: Some("interrupted".into()),
            error: None,
            usage: None,
        });
    } else {
        feed.payload(Payload::ResponseError {
            error: ErrorInfo::new("agent_exited", "exited with status 1"),
        });
    }
    feed.replay
}

fn usage(input: u64, output: u64, cached: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_input_tokens: Some(cached),
        cache_creation_input_tokens: Some(0),
        cost_usd: None,
        cost_estimated: false,
        context_tokens: None,
        context_window: None,
        model: None,
    }
}

fn assert_completed(r: &Run, expected: Option<Usage>) {
    match r.last_turn() {
        TurnEvent::TurnComplete { status, usage, .. } => {
            assert_eq!(*status, TurnStatus::Completed);
            if expected.is_some() {
                // The context's fill has tests of its own.
                let counts = usage.clone().map(|u| Usage {
                    context_tokens: None,
                    context_window: None,
                    ..u
                });
                assert_eq!(counts, expected);
            }
        }
        other => panic!("expected turn_complete, got {other:?}"),
    }
}

fn assert_turn_error(r: &Run, needle: &str) {
    match r.last_turn() {
        TurnEvent::TurnError { error_message, .. } => {
            assert!(error_message.contains(needle), "{error_message}")
        }
        other => panic!("expected turn_error, got {other:?}"),
    }
}

/// Issue 13 item 3: the captures of a thread's two turns report 9661/25
/// then 19433/50 (the thread so far); the second turn used the difference.
#[test]
fn exec_resumed_thread_usage_is_reported_per_turn() {
    let total = |name: &str| match replay_exec(name).last_turn() {
        TurnEvent::TurnComplete { usage, .. } => usage.clone().expect("usage"),
        other => panic!("{other:?}"),
    };
    let (one, two) = (total("resume_1.jsonl"), total("resume_2.jsonl"));
    let mut thread = ThreadUsage::default();
    assert_eq!(thread.turn(false, one.clone()), Some(one.clone()));
    let second = thread.turn(true, two.clone()).expect("known total");
    assert_eq!(
        (second.input_tokens, second.output_tokens),
        (two.input_tokens - one.input_tokens, 25)
    );
    // A resumed thread whose earlier total hive never saw: no figure
    // rather than the whole thread's.
    assert_eq!(ThreadUsage::default().turn(true, two), None);
}

#[test]
fn exec_text_arrives_whole_and_completes_with_usage() {
    let r = replay_exec("text.jsonl");
    assert_eq!(
        r.threads,
        vec!["01a200e3-9198-7023-a141-6660266459d6".to_string()]
    );
    assert!(
        matches!(r.turn_events()[0], TurnEvent::TurnStarted { model_id, .. } if model_id == "gpt-5.5")
    );
    let texts = r.texts(false);
    assert_eq!(texts.len(), 1);
    assert_eq!(texts[0].0, "Agent");
    assert!(texts[0].1.starts_with("**Mock reply.**"));
    assert!(texts[0].1.ends_with("```\n"));
    assert_completed(&r, Some(usage(9659, 25, 0)));
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
}

/// Issue 13 item 3: codex reports tokens and no cost, in both transports;
/// the footer shows no cost rather than `$0`.
#[test]
fn footer_usage_is_what_codex_reports() {
    use hive::ui::cells::usage_text;
    let end = |r: &Run| match r.last_turn() {
        TurnEvent::TurnComplete { usage, .. } => usage.clone().expect("usage"),
        other => panic!("{other:?}"),
    };
    assert_eq!(usage_text(&end(&replay_exec("text.jsonl"))), "↑9.7k ↓25");
    let turns = replay_app("appserver_turns.jsonl");
    assert_eq!(usage_text(&end(&turns[1])), "↑10.0k ↓30");
}

#[test]
fn exec_reasoning_becomes_thinking_before_the_answer() {
    let r = replay_exec("reasoning.jsonl");
    let thinking = r.texts(true);
    assert_eq!(
        thinking,
        vec![(
            "thinking".into(),
            "The user wants a short answer. I will think for a moment, then reply with a greeting."
                .into()
        )]
    );
    assert_eq!(r.texts(false)[0].1, "Thought about it. **Answer:** 42.");
    let kinds: Vec<bool> = r
        .upserts()
        .iter()
        .map(|u| matches!(u.kind, UpsertKind::Thinking { .. }))
        .collect();
    assert_eq!(kinds.first(), Some(&true), "thinking comes first");
    assert_completed(&r, Some(usage(9663, 30, 0)));
}

#[test]
fn exec_command_execution_is_a_tool_call_with_output() {
    let r = replay_exec("tool_command.jsonl");
    let tools = r.tools();
    assert_eq!(tools.len(), 2, "one create, one complete: {tools:?}");
    assert_eq!(tools[0].0, UpsertStatus::Create);
    assert_eq!(tools[0].1, "shell");
    assert_eq!(
        tools[0].2["command"], "/bin/bash -lc 'echo hello-from-tool && pwd'",
        "the command is shown while it runs"
    );
    assert_eq!(tools[1].0, UpsertStatus::Complete);
    assert_eq!(
        tools[1].3.as_deref(),
        Some("hello-from-tool\n/tmp/hive-lab-work\n")
    );
    assert_eq!(tools[1].4, Some(false));
    let texts: Vec<String> = r.texts(false).into_iter().map(|t| t.1).collect();
    assert_eq!(
        texts,
        vec![
            "Let me run a command.".to_string(),
            "The command ran. It printed `hello-from-tool` and the working directory.".into()
        ]
    );
    assert_completed(&r, Some(usage(19552, 45, 0)));
}

#[test]
fn exec_sequential_tools_are_tracked_independently() {
    for (name, outputs) in [
        ("two_tools.jsonl", ["second\n", "first\n"]),
        ("tool_chain.jsonl", ["step-one\n", "step-two\n"]),
    ] {
        let r = replay_exec(name);
        let tools = r.tools();
        let statuses: Vec<UpsertStatus> = tools.iter().map(|t| t.0).collect();
        assert_eq!(
            statuses,
            vec![
                UpsertStatus::Create,
                UpsertStatus::Complete,
                UpsertStatus::Create,
                UpsertStatus::Complete
            ],
            "{name}"
        );
        assert_eq!(tools[1].3.as_deref(), Some(outputs[0]), "{name}");
        assert_eq!(tools[3].3.as_deref(), Some(outputs[1]), "{name}");
        assert_completed(&r, None);
    }
}

#[test]
fn exec_file_change_lists_the_files() {
    let r = replay_exec("file_change.jsonl");
    let tools = r.tools();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].1, "apply_patch");
    assert_eq!(
        tools[0].2["changes"][0]["path"],
        "/tmp/hive-lab-work/mock-written.txt"
    );
    assert_eq!(
        tools[1].3.as_deref(),
        Some("add /tmp/hive-lab-work/mock-written.txt\n")
    );
    assert_completed(&r, Some(usage(19504, 33, 0)));
}

/// The files a run's tool calls changed, as the "since you looked" digest
/// tallies them from the upserts.
fn digest_files(r: &Replay) -> Vec<String> {
    let mut unread = hive::app::unread::Unread::default();
    for (i, u) in r.upserts().into_iter().enumerate() {
        unread.item(u, i, None);
    }
    unread.files.into_iter().collect()
}

/// Issue 46 item 19: the digest left out the files Codex's `apply_patch`
/// changed (its call has `changes[].path`, no diff). Failed before: no files.
#[test]
fn the_digest_counts_the_files_of_an_apply_patch() {
    let exec = replay_exec("file_change.jsonl");
    assert_eq!(digest_files(&exec), ["/tmp/hive-lab-work/mock-written.txt"]);
    let app = replay_app("synthetic_appserver.jsonl");
    let files: Vec<String> = app.iter().flat_map(|r| digest_files(r)).collect();
    assert_eq!(files, ["src/a.rs"]);
}

#[test]
fn exec_plain_cases_complete() {
    for name in [
        "plan.jsonl",
        "stdin_prompt.jsonl",
        "resume_1.jsonl",
        "resume_2.jsonl",
    ] {
        let r = replay_exec(name);
        assert_eq!(r.texts(false).len(), 1, "{name}");
        assert_completed(&r, None);
    }
    // The resumed run names the same thread.
    assert_eq!(
        replay_exec("resume_1.jsonl").threads,
        replay_exec("resume_2.jsonl").threads
    );
}

#[test]
fn exec_retry_notice_is_shown_and_not_fatal() {
    let r = replay_exec("error_429_once.jsonl");
    let texts = r.texts(false);
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(texts[0].0, "System");
    assert!(texts[0].1.starts_with("Reconnecting... 1/1"));
    assert_eq!(
        texts[1],
        ("Agent".into(), "Answer after one 429 retry.".into())
    );
    assert_completed(&r, Some(usage(9660, 7, 0)));
}

#[test]
fn exec_failed_turns_report_the_cli_message_once() {
    for (name, needle) in [
        ("error_500.jsonl", "currently experiencing high demand"),
        (
            "error_400.jsonl",
            "mock invalid request: prompt is not allowed",
        ),
        ("stream_failed.jsonl", "mock overloaded (in stream)"),
        ("stream_drop.jsonl", "error decoding response body"),
        ("idle_timeout.jsonl", "idle timeout waiting for SSE"),
    ] {
        let r = replay_exec(name);
        assert!(r.finished, "{name}");
        assert_turn_error(&r, needle);
        // The message that failed the turn is not repeated as a notice.
        let notices: Vec<String> = r
            .texts(false)
            .into_iter()
            .filter(|t| t.0 == "System")
            .map(|t| t.1)
            .collect();
        assert!(
            notices.iter().all(|n| n.starts_with("Reconnecting")),
            "{name}: {notices:?}"
        );
        assert!(
            r.turn_events()
                .iter()
                .all(|t| !matches!(t, TurnEvent::TurnComplete { .. })),
            "{name}: failed turn never completes"
        );
    }
    // Both partial answers of the timed-out attempts are kept, as errors.
    let r = replay_exec("idle_timeout.jsonl");
    let partial: Vec<&Upsert> = r
        .upserts()
        .into_iter()
        .filter(|u| matches!(&u.kind, UpsertKind::Message { content, .. } if content.with_str(|c| c == "Starting to answer... ")))
        .collect();
    assert_eq!(partial.len(), 2);
}

#[test]
fn exec_sigint_runs_end_as_cancelled_without_leftovers() {
    for name in [
        "sigint_streaming.jsonl",
        "sigint_no_headers.jsonl",
        "sigint_tool.jsonl",
    ] {
        let r = end_exec(name, true);
        match r.last_turn() {
            TurnEvent::TurnComplete { status, .. } => assert_eq!(*status, TurnStatus::Cancelled),
            other => panic!("{name}: {other:?}"),
        }
        // The interrupted command never shows as completed.
        assert!(
            r.tools().iter().all(|t| t.0 != UpsertStatus::Complete),
            "{name}"
        );
    }
    // A crash at the same point is an error carrying the exit report.
    let r = end_exec("sigint_tool.jsonl", false);
    assert_turn_error(&r, "exited with status 1");
}

#[test]
fn exec_documented_items_without_captures_map_generically() {
    let r = replay_exec("synthetic_exec.jsonl");
    let tools = r.tools();
    let names: Vec<&str> = tools
        .iter()
        .filter(|t| t.0 == UpsertStatus::Create)
        .map(|t| t.1.as_str())
        .collect();
    assert_eq!(
        names,
        vec![
            "mcp__docs__search",
            "web_search",
            "update_plan",
            "update_plan",
            "collab_tool_call",
            "brand_new_item"
        ]
    );
    let done: Vec<(String, Option<String>, Option<bool>)> = tools
        .iter()
        .filter(|t| t.0 == UpsertStatus::Complete)
        .map(|t| (t.1.clone(), t.3.clone(), t.4))
        .collect();
    assert_eq!(
        done[0],
        (
            "mcp__docs__search".into(),
            Some("found 3 pages".into()),
            Some(false)
        )
    );
    assert_eq!(done[1].1.as_deref(), Some("searched: rust tui"));
    assert_eq!(
        done[2].1.as_deref(),
        Some("[ ] read code\n[ ] write tests\n")
    );
    assert_eq!(
        done[3].1.as_deref(),
        Some("[x] read code\n[ ] write tests\n")
    );
    assert!(
        done[5]
            .1
            .as_deref()
            .is_some_and(|o| o.contains("\"detail\":\"kept\""))
    );
    // item.updated snapshots stream into the message; the error item and the
    // question exec cannot answer are notices.
    let texts = r.texts(false);
    assert!(
        texts.contains(&(
            "Agent".into(),
            "Hello there, this message grows while codex exec updates it: done.".into()
        )),
        "{texts:?}"
    );
    assert!(
        texts.contains(&("Agent".into(), "1. plan step".into())),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.0 == "System" && t.1.contains("Model metadata for `x` not found"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.0 == "System" && t.1.contains("Which file?"))
    );
    let message_updates = r
        .upserts()
        .iter()
        .filter(|u| u.item_id == "item_msg" && u.status != UpsertStatus::Complete)
        .count();
    assert!(
        message_updates >= 1,
        "snapshots produce progressive upserts"
    );
    // The malformed line and the unknown event are diagnostics; the stream went on.
    assert_eq!(r.diagnostics.len(), 2, "{:?}", r.diagnostics);
    assert!(r.diagnostics[0].contains("unreadable"));
    assert!(r.diagnostics[1].contains("thread.renamed"));
    assert_completed(&r, Some(usage(10, 2, 0)));
}

/// Replays app-server stdout: a `turn/start` result opens a turn, its
/// notifications go through `AppTurn` until `turn/completed`.
fn replay_app(name: &str) -> Vec<Run> {
    let text = fixture(name);
    let mut turns = Vec::new();
    let mut current: Option<(AppTurn, Feed)> = None;
    // The thread's token total carries over from turn to turn.
    let mut total = Usage::default();
    for line in text.lines() {
        // As the provider reads its lines: text deltas straight into their
        // fields, everything else as a JSON tree.
        if let Some(note) = DeltaNote::read(line) {
            if let Some((tr, feed)) = current.as_mut() {
                for out in tr.delta_note(&note) {
                    feed.out(out);
                }
            }
            continue;
        }
        let msg: Value = serde_json::from_str(line).expect("captured line is JSON");
        if let Some(id) = msg.pointer("/result/turn/id").and_then(Value::as_str) {
            let mut tr = AppTurn::with_base(total.clone());
            tr.codex_turn = Some(id.to_owned());
            let mut feed = Feed::new(&format!("turn_{}", turns.len() + 1));
            feed.start();
            current = Some((tr, feed));
            continue;
        }
        let (Some(method), None) = (msg.get("method").and_then(Value::as_str), msg.get("id"))
        else {
            continue;
        };
        let Some((tr, feed)) = current.as_mut() else {
            continue;
        };
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        for out in tr.notification(method, &params) {
            feed.out(out);
        }
        if tr.finished()
            && let Some((tr, feed)) = current.take()
        {
            if let Some(t) = tr.total() {
                total = t.clone();
            }
            turns.push(feed.replay);
        }
    }
    turns
}

/// Every text delta of the app-server captures, read into its fields,
/// gives what the same line gives read as a JSON tree; the other lines
/// (items, requests, responses, usage) are not read that way at all.
#[test]
fn app_server_deltas_read_into_fields_translate_as_json_trees_do() {
    let mut deltas = 0;
    for name in [
        "appserver_turns.jsonl",
        "appserver_interrupt.jsonl",
        "appserver_steer.jsonl",
        "appserver_approval.jsonl",
    ] {
        for line in fixture(name).lines() {
            let msg: Value = serde_json::from_str(line).expect("captured line is JSON");
            let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
            let Some(note) = DeltaNote::read(line) else {
                assert!(
                    !method.ends_with("elta") || msg.get("id").is_some(),
                    "{name}: a delta was not read into fields: {line}"
                );
                continue;
            };
            deltas += 1;
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            let turn = params
                .get("turnId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            // The turn the line belongs to, another one, and one not named yet.
            for codex_turn in [turn, Some("another-turn".into()), None] {
                let mut fields = AppTurn::new();
                fields.codex_turn.clone_from(&codex_turn);
                let mut tree = AppTurn::new();
                tree.codex_turn = codex_turn;
                let by_fields = fields.delta_note(&note);
                let by_tree = tree.notification(method, &params);
                assert_eq!(
                    format!("{by_fields:?}"),
                    format!("{by_tree:?}"),
                    "{name}: {line}"
                );
            }
        }
    }
    assert!(deltas > 20, "the captures hold text deltas ({deltas})");
    // A request is never a notification, however it is shaped.
    let request =
        r#"{"id":7,"method":"item/agentMessage/delta","params":{"itemId":"m","delta":"x"}}"#;
    assert!(DeltaNote::read(request).is_none());
    // Escapes in the text are read, not borrowed.
    let escaped =
        r#"{"method":"item/agentMessage/delta","params":{"itemId":"m","delta":"a\n\"b\u00e9"}}"#;
    let note = DeltaNote::read(escaped).expect("a delta with escapes");
    assert_eq!(note.params.delta, "a\n\"b\u{e9}");
}

fn app_usage(input: u64, output: u64) -> Usage {
    usage(input, output, 0)
}

#[test]
fn app_server_turns_stream_thinking_text_and_tools() {
    let turns = replay_app("appserver_turns.jsonl");
    assert_eq!(turns.len(), 2);
    let t1 = &turns[0];
    assert_eq!(
        t1.texts(true),
        vec![(
            "thinking".into(),
            "I should run a shell command to look around.".into()
        )]
    );
    // Streamed deltas: the thinking item was shown before it completed.
    let thinking: Vec<UpsertStatus> = t1
        .upserts()
        .iter()
        .filter(|u| matches!(u.kind, UpsertKind::Thinking { .. }))
        .map(|u| u.status)
        .collect();
    assert_eq!(thinking, vec![UpsertStatus::Create, UpsertStatus::Complete]);
    let tools = t1.tools();
    assert_eq!(tools.len(), 2);
    assert_eq!(
        tools[0].2["command"],
        "/bin/bash -lc 'echo hello-from-tool && pwd'"
    );
    assert_eq!(tools[0].2["cwd"], "/tmp/hive-lab-work");
    assert_eq!(
        tools[1].3.as_deref(),
        Some("hello-from-tool\n/tmp/hive-lab-work\n")
    );
    let texts: Vec<String> = t1.texts(false).into_iter().map(|t| t.1).collect();
    assert_eq!(
        texts,
        vec![
            "Let me run a command.".to_string(),
            "The command ran. It printed `hello-from-tool` and the working directory.".into()
        ],
        "the user's own message item is not repeated"
    );
    assert_completed(t1, Some(app_usage(9650 + 9875, 26 + 19)));
    let t2 = &turns[1];
    assert_eq!(t2.texts(false)[0].1, "Thought about it. **Answer:** 42.");
    assert_completed(t2, Some(app_usage(9979, 30)));
}

/// Issue 33 item 2: after an app-server turn the context holds its last
/// model call (`tokenUsage.last`), against the window the server names.
#[test]
fn app_server_context_is_the_last_call_against_the_model_window() {
    let contexts: Vec<_> = replay_app("appserver_turns.jsonl")
        .iter()
        .map(|t| match t.last_turn() {
            TurnEvent::TurnComplete { usage: Some(u), .. } => (u.context_tokens, u.context_window),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        contexts,
        [(Some(9894), Some(258_400)), (Some(10009), Some(258_400))]
    );
}

#[test]
fn app_server_interrupted_turn_is_cancelled_and_the_next_works() {
    let turns = replay_app("appserver_interrupt.jsonl");
    assert_eq!(turns.len(), 2);
    match turns[0].last_turn() {
        TurnEvent::TurnComplete { status, .. } => assert_eq!(*status, TurnStatus::Cancelled),
        other => panic!("{other:?}"),
    }
    assert!(
        turns[0].upserts().iter().all(|u| !u.is_final()),
        "the cut message is never marked complete"
    );
    assert!(
        turns[0]
            .upserts()
            .iter()
            .any(|u| u.status == UpsertStatus::Create),
        "it streamed"
    );
    assert_completed(&turns[1], Some(app_usage(9780, 25)));
}

#[test]
fn app_server_steered_turn_completes_with_both_answers() {
    let turns = replay_app("appserver_steer.jsonl");
    assert_eq!(turns.len(), 1);
    let t = &turns[0];
    let tools = t.tools();
    assert_eq!(tools[1].3.as_deref(), Some("started\nfinished\n"));
    let texts: Vec<String> = t.texts(false).into_iter().map(|t| t.1).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(texts[0], "Starting a long command.");
    assert!(
        texts.iter().all(|t| !t.contains("STEER")),
        "user items are not echoed"
    );
    assert_completed(t, Some(app_usage(9648 + 9863, 19 + 25)));
}

#[test]
fn app_server_command_output_shows_while_the_command_runs() {
    let turns = replay_app("appserver_steer.jsonl");
    let live: Vec<(UpsertStatus, Option<String>)> = turns[0]
        .upserts()
        .iter()
        .filter_map(|u| match &u.kind {
            UpsertKind::ToolCall {
                output, display, ..
            } if display
                .as_ref()
                .is_some_and(|d| d.summary.contains("sleep")) =>
            {
                Some((u.status, output.clone()))
            }
            _ => None,
        })
        .collect();
    // Created with its command, updated with the delta it printed (the
    // capture's `outputDelta`), completed with the whole output.
    assert_eq!(
        live,
        [
            (UpsertStatus::Create, None),
            (UpsertStatus::Update, Some("finished\n".into())),
            (UpsertStatus::Complete, Some("started\nfinished\n".into())),
        ]
    );
}

#[test]
fn app_server_approved_command_runs() {
    let turns = replay_app("appserver_approval.jsonl");
    assert_eq!(turns.len(), 1);
    let tools = turns[0].tools();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[1].3.as_deref(), Some("made\n"));
    assert_completed(&turns[0], Some(app_usage(19496, 38)));
}

#[test]
fn app_server_documented_events_without_captures() {
    let turns = replay_app("synthetic_appserver.jsonl");
    assert_eq!(turns.len(), 2);
    let t = &turns[0];
    let texts = t.texts(false);
    assert!(
        texts
            .iter()
            .any(|x| x.0 == "System" && x.1 == "Reconnecting... 1/5"),
        "{texts:?}"
    );
    assert_eq!(
        t.texts(true),
        vec![("thinking".into(), "Part one.\n\nPart two.".into())]
    );
    let tools = t.tools();
    let done: Vec<_> = tools
        .iter()
        .filter(|x| x.0 == UpsertStatus::Complete)
        .collect();
    assert_eq!(done[0].1, "apply_patch");
    assert_eq!(
        done[0].3.as_deref(),
        Some("update src/a.rs\n@@ -1 +1 @@\n-a\n+b\n")
    );
    assert_eq!(done[1].1, "update_plan");
    assert_eq!(done[1].3.as_deref(), Some("Because.\n[x] one\n[~] two\n"));
    assert_eq!(done[2].1, "mcp__fs__read");
    assert_eq!(done[2].4, Some(true));
    assert_eq!(done[2].3.as_deref(), Some("no such file"));
    // A notification of another (abandoned) turn is ignored.
    assert!(texts.iter().all(|x| !x.1.contains("late")));
    assert_turn_error(t, "context window exceeded");
    assert_turn_error(&turns[1], "the turn failed");
}

// --------------------------------------------------------- lifecycle ----

/// A pane over the fake CLI, with the directory its records go to.
struct Codex {
    pane: Pane,
    dir: tempfile::TempDir,
}

impl Deref for Codex {
    type Target = Pane;
    fn deref(&self) -> &Pane {
        &self.pane
    }
}

impl DerefMut for Codex {
    fn deref_mut(&mut self) -> &mut Pane {
        &mut self.pane
    }
}

fn agent(transport: &str, dir: &tempfile::TempDir) -> AgentConfig {
    let mut a = AgentConfig::new("cx", "codex");
    a.command = fake_command("fake_codex.py");
    a.transport = Some(transport.into());
    a.env.insert(
        "FAKE_CODEX_LOG".into(),
        dir.path().join("log.jsonl").to_string_lossy().into_owned(),
    );
    a.env.insert(
        "FAKE_CODEX_PIDS".into(),
        dir.path().join("pids").to_string_lossy().into_owned(),
    );
    a.options
        .insert("interrupt_grace_ms".into(), toml::Value::Integer(300));
    a
}

fn pane(agent: AgentConfig, resume: Option<&str>, dir: tempfile::TempDir) -> Codex {
    let factory = Registry::builtin()
        .get("codex")
        .expect("codex is registered");
    Codex {
        pane: Pane::start(factory, agent, resume),
        dir,
    }
}

impl Pane {
    fn send(&self, text: &str) {
        self.runner.send(RunnerCommand::Submit {
            text: text.into(),
            mode: SubmitMode::Auto,
        });
    }

    fn messages(&self) -> Vec<String> {
        self.messages_where(|u, _| u.status == UpsertStatus::Complete)
    }
}

impl Codex {
    fn log(&self) -> Vec<Value> {
        jsonl(&self.dir.path().join("log.jsonl"))
    }

    fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.path().join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

fn turn_usage(t: &TurnEvent) -> Option<Usage> {
    match t {
        TurnEvent::TurnComplete { usage, .. } => usage.clone(),
        _ => None,
    }
}

fn status(t: &TurnEvent) -> Option<TurnStatus> {
    match t {
        TurnEvent::TurnComplete { status, .. } => Some(*status),
        _ => None,
    }
}

#[tokio::test]
async fn exec_turns_continue_the_thread_and_carry_config() {
    let dir = tempdir();
    let mut a = agent("exec", &dir);
    a.model = Some("gpt-test".into());
    a.env.insert("HIVE_TEST_MARK".into(), "marked".into());
    a.options.insert(
        "config".into(),
        toml::Value::Table(toml::from_str("model_provider = \"mock\"").expect("toml")),
    );
    let mut p = pane(a, None, dir);
    p.send("hello");
    let end = p.turn_end().await;
    assert_eq!(status(&end), Some(TurnStatus::Completed));
    assert_eq!(turn_usage(&end), Some(usage(60, 7, 40)));
    let thread = p.handles().last().cloned().expect("thread id announced");
    assert!(
        p.messages()
            .iter()
            .any(|m| m == &format!("echo: hello (thread {thread})"))
    );
    p.send("again -x");
    p.turn_end().await;
    assert!(
        p.messages()
            .iter()
            .any(|m| m == &format!("echo: again -x (thread {thread})"))
    );
    let log = p.log();
    assert_eq!(log.len(), 2);
    let argv =
        |i: usize| -> Vec<String> { serde_json::from_value(log[i]["argv"].clone()).expect("argv") };
    assert_eq!(
        argv(0),
        vec![
            "-c",
            "model_provider=\"mock\"",
            "exec",
            "--json",
            "--model",
            "gpt-test",
            "-"
        ]
    );
    let second = argv(1);
    assert_eq!(
        second[second.len() - 3..],
        ["resume".to_string(), thread, "-".into()]
    );
    assert_eq!(log[0]["mark"], "marked", "agent.env reaches the CLI");
    // Model shown from config.
    assert!(p.seen.iter().any(|e| matches!(e, PaneEvent::Turn(TurnEvent::TurnStarted { model_id, .. }) if model_id == "gpt-test")));
}

/// Issue 34 item 9: an image for codex exec goes on that turn's command
/// line as `--image=PATH` (the real 0.169.0 sends it as an `input_image`),
/// before `resume` and the `-` prompt; the next turn goes without it. A
/// path with a comma (Codex splits there) is refused with a notice. Failed
/// before: exec took no images, so a typed path went as text.
#[tokio::test]
async fn exec_an_attached_image_goes_as_an_image_flag() {
    let dir = tempdir();
    let png = dir.path().join("shot.png");
    let comma = dir.path().join("a,b.png");
    for p in [&png, &comma] {
        std::fs::write(p, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    }
    let img = |p: &std::path::Path| hive::image::Image::load(p).unwrap();
    let mut p = pane(agent("exec", &dir), None, dir);
    p.runner.send(RunnerCommand::Attach(vec![img(&png)]));
    p.send("what is this?");
    assert_eq!(status(&p.turn_end().await), Some(TurnStatus::Completed));
    p.runner
        .send(RunnerCommand::Attach(vec![img(&png), img(&comma)]));
    p.send("and this?");
    p.turn_end().await;
    p.send("no picture");
    p.turn_end().await;
    let argv: Vec<Vec<String>> = p
        .log()
        .iter()
        .map(|l| serde_json::from_value(l["argv"].clone()).unwrap())
        .collect();
    let flag = format!("--image={}", png.display());
    assert_eq!(argv[0][argv[0].len() - 2..], [flag.clone(), "-".into()]);
    let second = &argv[1];
    assert_eq!(
        second[second.len() - 4..],
        [flag, "resume".into(), p.handles()[0].clone(), "-".into()]
    );
    assert!(!argv[2].iter().any(|a| a.starts_with("--image")));
    assert!(
        p.notices()
            .iter()
            .any(|n| n.contains("a,b.png not sent: codex exec reads a comma")),
        "{:?}",
        p.notices()
    );
}

/// Item ids of the agent's upserts, per turn, in order.
fn agent_item_ids(p: &Pane) -> Vec<(String, String)> {
    p.seen
        .iter()
        .filter_map(|e| match e {
            PaneEvent::Upsert(u) if !matches!(&u.kind, UpsertKind::Message { origin, .. } if *origin == hive::event::Origin::User) => {
                Some((u.turn_id.clone(), u.item_id.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Issue 13 item 2: `codex exec resume` numbers its items `item_0` again
/// every turn; the second turn's answer must not overwrite the first's.
#[tokio::test]
async fn exec_second_turn_items_do_not_reuse_the_first_turns_ids() {
    let dir = tempdir();
    let mut p = pane(agent("exec", &dir), None, dir);
    p.send("hello");
    p.turn_end().await;
    p.send("again");
    p.turn_end().await;
    let ids = agent_item_ids(&p);
    let turns: Vec<&String> = ids.iter().map(|(t, _)| t).collect();
    let first = turns[0];
    let of = |same: bool| -> std::collections::HashSet<&String> {
        ids.iter()
            .filter(|(t, _)| (t == first) == same)
            .map(|(_, i)| i)
            .collect()
    };
    let (one, two) = (of(true), of(false));
    assert!(!one.is_empty() && !two.is_empty(), "{ids:?}");
    assert!(one.is_disjoint(&two), "turns share item ids: {ids:?}");
    let answers = p.messages();
    assert!(answers.iter().any(|m| m.starts_with("echo: hello")));
    assert!(answers.iter().any(|m| m.starts_with("echo: again")));
}

/// Issue 13 item 3, live: the second turn of a thread shows its own usage,
/// not the thread's; a thread resumed from before shows none.
#[tokio::test]
async fn exec_resumed_turns_report_their_own_usage() {
    let dir = tempdir();
    let mut p = pane(agent("exec", &dir), None, dir);
    p.send("hello");
    assert_eq!(turn_usage(&p.turn_end().await), Some(usage(60, 7, 40)));
    p.send("again");
    assert_eq!(turn_usage(&p.turn_end().await), Some(usage(60, 7, 40)));
    let dir = tempdir();
    let mut p = pane(agent("exec", &dir), Some("t-from-before"), dir);
    p.send("hello");
    let end = p.turn_end().await;
    assert_eq!(status(&end), Some(TurnStatus::Completed));
    assert_eq!(turn_usage(&end), None);
}

/// Issue 34 item 8: the first turn after a restart (or `/resume`) shows
/// its own usage: the thread's earlier total comes from Codex's rollout.
#[tokio::test]
async fn exec_first_turn_after_a_restart_reports_its_own_usage() {
    let dir = tempdir();
    let mut a = agent("exec", &dir);
    let home = dir.path().join("codex-home");
    a.env
        .insert("CODEX_HOME".into(), home.to_string_lossy().into_owned());
    let mut p = pane(a.clone(), None, dir);
    p.send("hello");
    p.turn_end().await;
    p.send("again");
    assert_eq!(turn_usage(&p.turn_end().await), Some(usage(60, 7, 40)));
    let thread = p.handles().last().cloned().expect("a thread");
    p.runner.shutdown().await;
    // hive restarted: a new provider resumes the thread (the first pane's
    // folder, which its agent writes to, lives on with it).
    let mut p = pane(a, Some(&thread), tempdir());
    p.send("after the restart");
    let end = p.turn_end().await;
    assert_eq!(status(&end), Some(TurnStatus::Completed));
    assert_eq!(turn_usage(&end), Some(usage(60, 7, 40)));
}

#[tokio::test]
async fn exec_stale_thread_falls_back_to_a_new_one_visibly() {
    let dir = tempdir();
    let mut p = pane(agent("exec", &dir), Some("stale-0001"), dir);
    p.send("hello");
    let end = p.turn_end().await;
    assert_eq!(status(&end), Some(TurnStatus::Completed), "{:#?}", p.seen);
    assert!(
        p.notices()
            .iter()
            .any(|n| n.contains("stale-0001") && n.contains("could not be resumed"))
    );
    assert!(
        p.messages()
            .iter()
            .any(|m| m.contains("could not be resumed")),
        "notice in the conversation"
    );
    let handles = p.handles();
    assert_eq!(handles.first().map(String::as_str), Some("stale-0001"));
    assert!(!handles.last().expect("new handle").starts_with("stale"));
    let log = p.log();
    assert_eq!(log.len(), 2, "one failed resume, one fresh run");
    assert!(log[0]["argv"].to_string().contains("stale-0001"));
    assert!(!log[1]["argv"].to_string().contains("resume"));
}

#[tokio::test]
async fn exec_interrupt_cancels_and_ends_the_group() {
    for prompt in ["slow sleeper", "deaf sleeper"] {
        let dir = tempdir();
        let mut p = pane(agent("exec", &dir), None, dir);
        p.send(prompt);
        p.until(
            "running command",
            |e| matches!(e, PaneEvent::Upsert(u) if matches!(u.kind, UpsertKind::ToolCall { .. })),
        )
        .await;
        let asked = Instant::now();
        p.runner.send(RunnerCommand::Interrupt);
        let end = p.turn_end().await;
        println!(
            "exec interrupt ({prompt}): turn ended {:?} after the request",
            asked.elapsed()
        );
        assert_eq!(status(&end), Some(TurnStatus::Cancelled), "{prompt}");
        assert!(
            !p.notices().iter().any(|n| n.contains("did not stop")),
            "{prompt}: the provider ended the turn, not the runner's fallback"
        );
        assert_all_dead(&p.pids()).await;
        // The pane goes on.
        p.send("after");
        let end = p.turn_end().await;
        assert_eq!(status(&end), Some(TurnStatus::Completed), "{prompt}");
    }
}

#[tokio::test]
async fn exec_crash_is_a_turn_error_and_the_pane_goes_on() {
    let dir = tempdir();
    let mut p = pane(agent("exec", &dir), None, dir);
    p.send("crash sleeper");
    p.turn_started().await;
    let started = Instant::now();
    let end = p.turn_end().await;
    println!(
        "exec crash: turn_error {:?} after turn start",
        started.elapsed()
    );
    match &end {
        TurnEvent::TurnError { error_message, .. } => {
            assert!(error_message.contains("status 3"), "{error_message}");
            assert!(
                error_message.contains("fake codex crashed"),
                "{error_message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_all_dead(&p.pids()).await;
    p.send("hello");
    assert_eq!(status(&p.turn_end().await), Some(TurnStatus::Completed));
}

#[tokio::test]
async fn exec_malformed_lines_and_failures_are_reported() {
    let dir = tempdir();
    let mut p = pane(agent("exec", &dir), None, dir);
    p.send("malformed");
    assert_eq!(status(&p.turn_end().await), Some(TurnStatus::Completed));
    assert!(
        p.notices()
            .iter()
            .any(|n| n.contains("unreadable") && n.contains("this is not json"))
    );
    p.send("fail");
    match p.turn_end().await {
        TurnEvent::TurnError { error_message, .. } => assert_eq!(error_message, "boom"),
        other => panic!("{other:?}"),
    }
    assert!(p.messages().iter().any(|m| m.starts_with("Reconnecting")));
}

#[tokio::test]
async fn app_server_turns_stream_with_model_usage_and_thread() {
    let dir = tempdir();
    let mut a = agent("app-server", &dir);
    a.model = Some("m1".into());
    let mut p = pane(a, None, dir);
    p.send("hello");
    let end = p.turn_end().await;
    assert_eq!(status(&end), Some(TurnStatus::Completed));
    assert_eq!(
        turn_usage(&end),
        // Codex counts the 10 cached tokens inside its 250 of input; the
        // canonical usage keeps them apart. The context: the last call.
        Some(Usage {
            input_tokens: 240,
            output_tokens: 9,
            cache_read_input_tokens: Some(10),
            cache_creation_input_tokens: None,
            cost_usd: None,
            cost_estimated: false,
            context_tokens: Some(259),
            context_window: None,
            model: None,
        })
    );
    assert!(p.seen.iter().any(|e| matches!(e, PaneEvent::Turn(TurnEvent::TurnStarted { model_id, .. }) if model_id == "m1")));
    let thread = p.handles().last().cloned().expect("thread announced");
    assert!(
        p.messages()
            .contains(&format!("echo: hello (thread {thread})"))
    );
    assert!(p.seen.iter().any(|e| matches!(e, PaneEvent::Upsert(u) if matches!(&u.kind, UpsertKind::Thinking { content, .. } if content.with_str(|c| c == "Thinking it over.")))));
    // Progressive: the long answer was shown before it completed.
    assert!(p.seen.iter().any(|e| matches!(e, PaneEvent::Upsert(u) if u.status == UpsertStatus::Create && matches!(u.kind, UpsertKind::Message { .. }))));
    p.send("tool");
    let end = p.turn_end().await;
    let u = turn_usage(&end).expect("usage");
    assert_eq!(
        (u.input_tokens, u.output_tokens),
        (240, 9),
        "per turn, not per thread"
    );
    assert_eq!(p.log().len(), 1, "one persistent process");
    assert!(p.seen.iter().any(|e| matches!(e, PaneEvent::Upsert(u) if matches!(&u.kind, UpsertKind::ToolCall { output: Some(o), .. } if o == "approved\n"))));
}

#[tokio::test]
async fn app_server_resume_and_stale_fallback() {
    let dir = tempdir();
    let mut p = pane(agent("app-server", &dir), Some("thread-abc"), dir);
    p.send("hello");
    let end = p.turn_end().await;
    assert!(
        p.messages()
            .contains(&"echo: hello (thread thread-abc)".to_string())
    );
    // The thread's earlier usage (reported at resume) is not this turn's.
    let u = turn_usage(&end).expect("usage");
    assert_eq!((u.input_tokens, u.output_tokens), (240, 9));

    let dir = tempdir();
    let mut p = pane(agent("app-server", &dir), Some("stale-42"), dir);
    p.send("hello");
    assert_eq!(status(&p.turn_end().await), Some(TurnStatus::Completed));
    assert!(p.notices().iter().any(|n| n.contains("stale-42")));
    assert!(
        p.messages()
            .iter()
            .any(|m| m.contains("stale-42") && m.contains("new thread"))
    );
    assert!(!p.handles().last().expect("handle").starts_with("stale"));
}

#[tokio::test]
async fn app_server_interrupt_keeps_the_process() {
    for prompt in ["slow", "deaf"] {
        let dir = tempdir();
        let mut p = pane(agent("app-server", &dir), None, dir);
        p.send(prompt);
        p.turn_started().await;
        let asked = Instant::now();
        p.runner.send(RunnerCommand::Interrupt);
        let end = p.turn_end().await;
        println!(
            "app-server interrupt ({prompt}): turn ended {:?} after the request",
            asked.elapsed()
        );
        assert_eq!(status(&end), Some(TurnStatus::Cancelled), "{prompt}");
        assert!(
            !p.notices().iter().any(|n| n.contains("did not stop")),
            "{prompt}"
        );
        p.send("after");
        assert_eq!(
            status(&p.turn_end().await),
            Some(TurnStatus::Completed),
            "{prompt}"
        );
        assert!(
            p.messages().iter().any(|m| m.starts_with("echo: after")),
            "{prompt}"
        );
        assert_eq!(p.log().len(), 1, "{prompt}: same process");
    }
}

#[tokio::test]
async fn app_server_steer_reaches_the_running_turn() {
    let dir = tempdir();
    let mut p = pane(agent("app-server", &dir), None, dir);
    assert!(p.runner.capabilities.queue_while_streaming);
    p.send("slow");
    p.turn_started().await;
    p.runner.send(RunnerCommand::Submit {
        text: "also this".into(),
        mode: SubmitMode::Steer,
    });
    let end = p.turn_end().await;
    assert_eq!(status(&end), Some(TurnStatus::Completed));
    assert!(
        p.messages().contains(&"steered: also this".to_string()),
        "{:?}",
        p.messages()
    );
}

#[tokio::test]
async fn app_server_approvals_round_trip() {
    for (decision, expect_output, word) in [
        (PermissionDecision::AllowOnce, Some("approved\n"), "accept"),
        (
            PermissionDecision::Deny {
                reason: "no".into(),
            },
            None,
            "decline",
        ),
    ] {
        let dir = tempdir();
        let mut p = pane(agent("app-server", &dir), None, dir);
        p.send("approve");
        let req = match p
            .until("permission", |e| matches!(e, PaneEvent::Permission(_)))
            .await
        {
            PaneEvent::Permission(r) => r,
            _ => unreachable!(),
        };
        assert_eq!(req.tool_name, "shell");
        assert_eq!(req.input["command"], "/bin/bash -lc 'echo approved'");
        assert_eq!(req.description.as_deref(), Some("needs approval"));
        p.runner.send(RunnerCommand::Permission {
            request_id: req.request_id.clone(),
            decision,
            by: Decider::Console,
        });
        assert_eq!(status(&p.turn_end().await), Some(TurnStatus::Completed));
        let output = p.seen.iter().find_map(|e| match e {
            PaneEvent::Upsert(u) if u.status == UpsertStatus::Complete => match &u.kind {
                UpsertKind::ToolCall {
                    output,
                    output_is_error,
                    ..
                } => Some((output.clone(), *output_is_error)),
                _ => None,
            },
            _ => None,
        });
        let (out, is_error) = output.expect("tool completed");
        match expect_output {
            Some(o) => assert_eq!(out.as_deref(), Some(o)),
            None => {
                assert_eq!(out.as_deref(), Some("(declined)"));
                assert_eq!(is_error, Some(true));
            }
        }
        assert!(p.log().iter().any(|l| l["decision"] == word), "{word}");
    }
}

/// Issue 13 item 8: the reason the user typed on the deny card reaches the
/// agent (the approval answer has no field for it: it joins the turn).
#[tokio::test]
async fn app_server_deny_reason_reaches_the_agent() {
    let dir = tempdir();
    let mut p = pane(agent("app-server", &dir), None, dir);
    p.send("approve");
    let PaneEvent::Permission(req) = p
        .until("permission", |e| matches!(e, PaneEvent::Permission(_)))
        .await
    else {
        unreachable!()
    };
    p.runner.send(RunnerCommand::Permission {
        request_id: req.request_id,
        decision: PermissionDecision::Deny {
            reason: "use the staging database instead".into(),
        },
        by: Decider::Console,
    });
    p.turn_end().await;
    let log = p.log();
    assert!(log.iter().any(|l| l["decision"] == "decline"));
    assert!(
        log.iter().any(|l| l["steer"]
            .as_str()
            .is_some_and(|s| s.contains("use the staging database instead"))),
        "{log:#?}"
    );
}

#[tokio::test]
async fn app_server_crash_fails_the_turn_and_reports_exit() {
    let dir = tempdir();
    let mut p = pane(agent("app-server", &dir), None, dir);
    p.send("crash sleeper");
    p.turn_started().await;
    let started = Instant::now();
    let end = p.turn_end().await;
    println!(
        "app-server crash: turn_error {:?} after turn start",
        started.elapsed()
    );
    match &end {
        TurnEvent::TurnError { error_message, .. } => {
            assert!(error_message.contains("status 5"), "{error_message}");
            assert!(
                error_message.contains("fake app-server crashed"),
                "{error_message}"
            );
        }
        other => panic!("{other:?}"),
    }
    p.until("dead", |e| {
        matches!(e, PaneEvent::State(hive::runner::TurnState::Dead))
    })
    .await;
    assert_all_dead(&p.pids()).await;
}

/// Issue 34 item 4: an agent that refuses to start (codex with an option it
/// no longer takes) shows its own error line, not only its exit status and the
/// `<unknown>` frames of a stripped Rust backtrace.
#[tokio::test]
async fn a_start_up_failure_shows_the_agents_own_error() {
    for transport in ["exec", "app-server"] {
        let dir = tempdir();
        let mut a = agent(transport, &dir);
        a.command = fake_command("fake_startfail.py");
        let mut p = pane(a, None, dir);
        p.send("hello");
        let TurnEvent::TurnError { error_message, .. } = p.turn_end().await else {
            panic!("{transport}: the turn did not fail");
        };
        assert!(
            error_message.contains("status 1"),
            "{transport}: {error_message}"
        );
        assert!(
            error_message.contains("Error: approval_policy = \"untrusted\" is no longer supported"),
            "{transport}: {error_message}"
        );
        assert!(
            !error_message.contains("<unknown>"),
            "{transport}: {error_message}"
        );
        assert!(
            !error_message.contains("backtrace"),
            "{transport}: {error_message}"
        );
    }
}

#[tokio::test]
async fn app_server_malformed_line_is_a_diagnostic() {
    let dir = tempdir();
    let mut p = pane(agent("app-server", &dir), None, dir);
    p.send("malformed");
    assert_eq!(status(&p.turn_end().await), Some(TurnStatus::Completed));
    assert!(
        p.notices()
            .iter()
            .any(|n| n.contains("unreadable") && n.contains("{not json"))
    );
}

#[tokio::test]
async fn shutdown_leaves_no_process_behind() {
    for transport in ["exec", "app-server"] {
        let dir = tempdir();
        let mut p = pane(agent(transport, &dir), None, dir);
        p.send("slow sleeper");
        p.turn_started().await;
        // Let the fake record the sleeper.
        let deadline = Instant::now() + WAIT;
        while p.pids().len() < 2 {
            assert!(
                Instant::now() < deadline,
                "{transport}: sleeper never started"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        p.runner.send(RunnerCommand::Shutdown);
        assert_all_dead(&p.pids()).await;
    }
}

/// `/model` and `/effort` on codex exec: the next turn's command line
/// carries them, and its `response_start` names the new model.
#[tokio::test]
async fn exec_model_and_effort_switch_on_the_next_turn() {
    let dir = tempdir();
    let mut a = agent("exec", &dir);
    a.model = Some("gpt-old".into());
    let mut p = pane(a, None, dir);
    assert!(p.runner.capabilities.set_model && p.runner.capabilities.set_effort);
    p.send("hello");
    p.turn_end().await;
    p.runner.send(RunnerCommand::SetModel("gpt-new".into()));
    p.runner.send(RunnerCommand::SetEffort("high".into()));
    p.send("again");
    p.turn_end().await;
    let log = p.log();
    let argv = |i: usize| -> String {
        let v: Vec<String> = serde_json::from_value(log[i]["argv"].clone()).expect("argv");
        v.join(" ")
    };
    assert!(argv(0).contains("--model gpt-old"), "{}", argv(0));
    assert!(argv(1).contains("--model gpt-new"), "{}", argv(1));
    assert!(
        argv(1).contains("model_reasoning_effort=\"high\""),
        "{}",
        argv(1)
    );
    assert!(p.seen.iter().any(|e| matches!(e, PaneEvent::Turn(TurnEvent::TurnStarted { model_id, .. }) if model_id == "gpt-new")));
}

fn models(p: &Pane) -> Option<Vec<String>> {
    p.seen.iter().find_map(|e| match e {
        PaneEvent::Models(m) => Some(m.clone()),
        _ => None,
    })
}

/// Issue 34 item 7: the `/model` picker of an app-server pane lists what
/// `model/list` offers (every page, hidden models left out); a server that
/// cannot list them, and codex exec, leave the models of the configuration.
#[tokio::test]
async fn app_server_models_come_from_model_list_else_from_config() {
    let dir = tempdir();
    let mut p = pane(agent("app-server", &dir), None, dir);
    p.until("models", |e| matches!(e, PaneEvent::Models(_)))
        .await;
    assert_eq!(
        models(&p).unwrap(),
        ["gpt-5.5", "gpt-5.5-mini", "gpt-fid-7"]
    );

    let dir = tempdir();
    let home = dir.path().join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        "model = \"base\"\n[profiles.fast]\nmodel = \"quick\"\n",
    )
    .unwrap();
    let mut a = agent("app-server", &dir);
    a.model = Some("mine".into());
    a.env
        .insert("CODEX_HOME".into(), home.to_string_lossy().into_owned());
    a.env.insert("FAKE_CODEX_NO_MODEL_LIST".into(), "1".into());
    let mut p = pane(a.clone(), None, dir);
    p.until("models", |e| matches!(e, PaneEvent::Models(_)))
        .await;
    assert_eq!(models(&p).unwrap(), ["mine", "base", "quick"]);

    // exec cannot ask: the configured ones.
    a.transport = Some("exec".into());
    let mut p = pane(a, None, tempdir());
    p.until("models", |e| matches!(e, PaneEvent::Models(_)))
        .await;
    assert_eq!(models(&p).unwrap(), ["mine", "base", "quick"]);
}

/// Issue 51: a `[[mcp_server]]` Codex could not start (its app-server says
/// `mcpServer/startupStatus/updated` failed) is a warning in the pane; the
/// one that started is not.
#[tokio::test]
async fn app_server_mcp_server_that_did_not_start_is_a_warning() {
    let dir = tempdir();
    let mut a = agent("app-server", &dir);
    a.shared_mcp = support::fake_mcp_servers();
    let mut p = pane(a, None, dir);
    p.send("hello");
    p.turn_end().await;
    let notices = p.notices();
    assert!(
        notices.iter().any(|n| n.starts_with(
            "MCP server `broken` did not start (Codex: MCP client for `broken` failed to start:"
        )),
        "{notices:?}"
    );
    assert!(!notices.iter().any(|n| n.contains("`good`")), "{notices:?}");
    assert_eq!(
        notices.iter().filter(|n| n.contains("`broken`")).count(),
        1,
        "{notices:?}"
    );
}
