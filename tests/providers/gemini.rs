//! The `gemini` provider: real Gemini CLI 0.61.0 captures replayed through the
//! translator and the upsert processor, and lifecycle tests against a fake CLI
//! (tests/fake/fake_gemini.py) through the runner; the scenarios every provider
//! shares (crash, interrupt, stale session…) run from lifecycle.rs.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;
use support::{Pane, Replay, argv, fake_command, flag, gone, jsonl, tempdir};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hive::config::AgentConfig;
use hive::event::{ItemType, Origin, Payload};
use hive::processor::{Processor, ProcessorConfig};
use hive::provider::gemini::{GeminiFactory, GeminiTurn};
use hive::provider::{ProviderEvent, Registry};
use hive::runner::{PaneEvent, RunnerCommand, SubmitMode};
use hive::upsert::{Output, TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};
use serde_json::Value;

// ---------------------------------------------------------------- replay

fn fixture(name: &str) -> String {
    support::fixture("gemini", name)
}

impl Replay {
    /// Final agent messages with `status`.
    fn agent_messages(&self, status: UpsertStatus) -> Vec<String> {
        self.finals()
            .into_iter()
            .filter(|u| u.status == status)
            .filter_map(|u| match &u.kind {
                UpsertKind::Message { content, origin } if *origin == Origin::Agent => {
                    Some(content.to_string())
                }
                _ => None,
            })
            .collect()
    }
}

/// `tools` per provider: the test binary shares one `Replay` type.
trait GeminiTools {
    fn tools(&self) -> Vec<&Upsert>;
}

impl GeminiTools for Replay {
    fn tools(&self) -> Vec<&Upsert> {
        self.upserts()
            .into_iter()
            .filter(|u| matches!(u.kind, UpsertKind::ToolCall { .. }))
            .collect()
    }
}

/// Feeds every line through a fresh turn; `end` runs after the last line
/// (the driver calls `cancelled`/`exited` when the process ends without a result).
fn replay_with(text: &str, end: impl FnOnce(&mut GeminiTurn) -> Vec<ProviderEvent>) -> Replay {
    let mut turn = GeminiTurn::new("turn_1", "pending", None);
    let mut r = Replay::lines(text, |line| turn.push_line(line));
    r.feed_all(end(&mut turn));
    for ev in r.stream() {
        assert_eq!(ev.turn_id, "turn_1");
    }
    r
}

fn replay(name: &str) -> Replay {
    replay_with(&fixture(name), |_| Vec::new())
}

#[test]
fn text_streams_one_message_and_completes_with_usage() {
    let r = replay("text.jsonl");
    let turns = r.turn_events();
    assert!(matches!(
        turns[0],
        TurnEvent::TurnStarted { model_id, provider_id, session_id, .. }
            if model_id == "auto" && provider_id == "gemini"
                && session_id == "186179bf-ce01-46e1-99f9-c78956e7b000"
    ));
    assert_eq!(
        r.agent_messages(UpsertStatus::Complete),
        [
            "**Mock reply.** This answer comes from `mockllm.py`.\n\n- item one\n- item two\n\n```sh\necho hello\n```\n"
        ]
    );
    match r.last_turn() {
        TurnEvent::TurnComplete {
            status: TurnStatus::Completed,
            usage: Some(u),
            ..
        } => {
            assert_eq!((u.input_tokens, u.output_tokens), (13055, 45));
            assert_eq!(u.cache_read_input_tokens, Some(0));
            // The turn started on `auto`; its end names the model that
            // answered, for the footer (issue 34 item 9).
            assert_eq!(u.model.as_deref(), Some("gemini-3.8-flash"));
        }
        other => panic!("unexpected end {other:?}"),
    }
    // init names the session; result names the model that did the work.
    let sessions = r.sessions();
    assert_eq!(
        sessions.first().and_then(|s| s.0.as_deref()),
        Some("186179bf-ce01-46e1-99f9-c78956e7b000")
    );
    assert_eq!(
        sessions.last().and_then(|s| s.1.as_deref()),
        Some("gemini-3.8-flash")
    );
    // The user's echoed prompt is not shown again.
    assert!(!r.agent_messages(UpsertStatus::Complete)[0].contains("Say hello"));
}

/// Issue 13 item 3: Gemini reports tokens, no cost.
#[test]
fn footer_usage_is_what_gemini_reports() {
    match replay("text.jsonl").last_turn() {
        TurnEvent::TurnComplete { usage: Some(u), .. } => {
            assert_eq!(hive::ui::cells::usage_text(u), "↑13.1k ↓45");
        }
        other => panic!("unexpected end {other:?}"),
    }
}

#[test]
fn deltas_are_forwarded_not_repeated() {
    let r = replay("text.jsonl");
    let deltas: String = r
        .events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Stream(ev) => match &ev.payload {
                Payload::ItemDelta { delta_content, .. } => Some(delta_content.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(deltas, r.agent_messages(UpsertStatus::Complete)[0]);
}

#[test]
fn tool_use_and_result_correlate_between_two_messages() {
    let r = replay("tool_shell.jsonl");
    assert_eq!(
        r.agent_messages(UpsertStatus::Complete),
        [
            "Let me run a command.",
            "The command ran. It printed `hello-from-tool` and the working directory."
        ]
    );
    let tools = r.tools();
    assert_eq!(tools.len(), 2, "one create, one complete: {tools:#?}");
    assert_eq!(tools[0].status, UpsertStatus::Create);
    assert_eq!(tools[0].item_id, tools[1].item_id);
    match &tools[1].kind {
        UpsertKind::ToolCall {
            tool_name,
            arguments,
            call_id,
            output,
            output_is_error,
            ..
        } => {
            assert_eq!(tool_name, "run_shell_command");
            assert_eq!(
                call_id,
                "run_shell_command__run_shell_command_1795311314989_0"
            );
            assert_eq!(arguments["command"], "echo hello-from-tool && pwd");
            assert_eq!(
                output.as_deref(),
                Some("hello-from-tool\n/tmp/hive-lab-work")
            );
            assert_eq!(*output_is_error, Some(false));
        }
        other => panic!("not a tool call: {other:?}"),
    }
    assert!(matches!(
        r.last_turn(),
        TurnEvent::TurnComplete {
            status: TurnStatus::Completed,
            ..
        }
    ));
}

#[test]
fn two_tools_complete_independently() {
    let r = replay("two_tools.jsonl");
    let completes: Vec<(String, String)> = r
        .tools()
        .into_iter()
        .filter(|u| u.status == UpsertStatus::Complete)
        .filter_map(|u| match &u.kind {
            UpsertKind::ToolCall {
                arguments, output, ..
            } => Some((
                arguments["command"].as_str().unwrap_or_default().to_owned(),
                output.clone().unwrap_or_default(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        completes,
        [
            ("echo first".to_owned(), "first".to_owned()),
            ("echo second".to_owned(), "second".to_owned())
        ]
    );
}

#[test]
fn read_and_write_results_without_output_complete_empty() {
    for name in ["tool_read.jsonl", "tool_write.jsonl"] {
        let r = replay(name);
        let done: Vec<_> = r
            .tools()
            .into_iter()
            .filter(|u| u.status == UpsertStatus::Complete)
            .collect();
        assert_eq!(done.len(), 1, "{name}");
        assert!(matches!(
            &done[0].kind,
            UpsertKind::ToolCall { output: Some(o), output_is_error: Some(false), .. } if o.is_empty()
        ));
    }
}

#[test]
fn failed_tool_result_is_an_error_output() {
    let r = replay("approval_default.jsonl");
    let failed = r
        .tools()
        .into_iter()
        .find(|u| u.status == UpsertStatus::Complete)
        .map(|u| u.kind.clone());
    match failed {
        Some(UpsertKind::ToolCall {
            tool_name,
            output: Some(out),
            output_is_error: Some(true),
            ..
        }) => {
            assert_eq!(tool_name, "Bash");
            assert!(out.contains("not found"), "{out}");
        }
        other => panic!("expected a failed tool result, got {other:?}"),
    }
}

#[test]
fn error_results_become_turn_errors_with_the_cli_message() {
    for (name, needle) in [
        ("error_500.jsonl", "mock internal server error"),
        ("error_400.jsonl", "prompt is not allowed"),
        ("stream_drop.jsonl", "[API Error: terminated]"),
    ] {
        let r = replay(name);
        match r.last_turn() {
            TurnEvent::TurnError {
                error_message,
                error_code,
                ..
            } => {
                assert!(error_message.contains(needle), "{name}: {error_message}");
                assert_eq!(error_code, "unknown");
            }
            other => panic!("{name}: expected turn_error, got {other:?}"),
        }
        assert!(
            r.agent_messages(UpsertStatus::Complete).is_empty(),
            "{name}"
        );
    }
    // The partial answer of a dropped stream is kept, marked as failed.
    let r = replay("stream_drop.jsonl");
    assert_eq!(
        r.agent_messages(UpsertStatus::Error),
        ["Partial answer that "]
    );
}

#[test]
fn sigint_without_result_ends_cancelled() {
    let r = replay_with(&fixture("sigint_streaming.jsonl"), GeminiTurn::cancelled);
    assert!(matches!(
        r.last_turn(),
        TurnEvent::TurnComplete {
            status: TurnStatus::Cancelled,
            ..
        }
    ));
    assert!(
        r.finals().is_empty(),
        "cancelled items emit nothing complete"
    );
}

#[test]
fn exit_without_result_is_a_turn_error() {
    let r = replay_with(&fixture("sigint_streaming.jsonl"), |t| {
        t.exited("agent_exited", "gemini exited with status 1")
    });
    assert!(matches!(
        r.last_turn(),
        TurnEvent::TurnError { error_code, error_message, .. }
            if error_code == "agent_exited" && error_message.contains("status 1")
    ));
    // Text streamed before the crash is flushed as failed, not complete.
    assert!(r.agent_messages(UpsertStatus::Complete).is_empty());
    assert_eq!(r.agent_messages(UpsertStatus::Error).len(), 1);
}

#[test]
fn resume_continues_the_same_session() {
    let first = replay("resume_1.jsonl");
    let second = replay("resume_2.jsonl");
    assert_eq!(first.sessions()[0].0, second.sessions()[0].0);
}

#[test]
fn thinking_scenario_has_no_reasoning_items() {
    let r = replay("thinking.jsonl");
    assert!(r.outputs.iter().all(|o| !matches!(
        o,
        Output::Upsert(Upsert {
            kind: UpsertKind::Thinking { .. },
            ..
        })
    )));
    assert!(!r.agent_messages(UpsertStatus::Complete).is_empty());
}

#[test]
fn malformed_and_unknown_lines_are_diagnostics() {
    let mut text = fixture("text.jsonl");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(3, "not json at all");
    lines.insert(4, r#"{"type":"telemetry","x":1}"#);
    text = lines.join("\n");
    let r = replay_with(&text, |_| Vec::new());
    let diags = r.diagnostics();
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert!(diags[0].contains("not json at all"));
    assert!(diags[1].contains("telemetry"));
    assert!(matches!(
        r.last_turn(),
        TurnEvent::TurnComplete {
            status: TurnStatus::Completed,
            ..
        }
    ));
}

#[test]
fn every_replayed_event_is_valid_and_item_types_are_expected() {
    for name in [
        "text.jsonl",
        "tool_shell.jsonl",
        "two_tools.jsonl",
        "error_429_once.jsonl",
        "resume_2.jsonl",
    ] {
        let r = replay(name);
        for ev in &r.events {
            if let ProviderEvent::Stream(ev) = ev
                && let Payload::ItemStart { item_type, .. } = &ev.payload
            {
                assert!(matches!(
                    item_type,
                    ItemType::Message | ItemType::FunctionCall
                ));
            }
        }
        assert!(matches!(
            r.last_turn(),
            TurnEvent::TurnComplete {
                status: TurnStatus::Completed,
                ..
            }
        ));
    }
}

// ---------------------------------------------------------------- lifecycle

pub(crate) fn fake_agent(dir: &Path) -> AgentConfig {
    let mut agent = AgentConfig::new("gem", "gemini");
    agent.command = fake_command("fake_gemini.py");
    agent.env.insert(
        "FAKE_GEMINI_LOG".into(),
        log_path(dir).display().to_string(),
    );
    let state = dir.join("sessions");
    std::fs::create_dir_all(&state).unwrap_or_else(|e| panic!("{e}"));
    agent
        .env
        .insert("FAKE_GEMINI_STATE".into(), state.display().to_string());
    agent
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join("runs.jsonl")
}

pub(crate) fn runs(dir: &Path) -> Vec<Value> {
    jsonl(&log_path(dir))
}

impl Pane {
    pub(crate) fn system_messages(&self) -> Vec<String> {
        self.messages_where(|_, o| o == Origin::System)
    }
}

pub(crate) fn start(
    agent: AgentConfig,
    resume: Option<&str>,
) -> (hive::runner::RunnerHandle, Pane) {
    Pane::start(Arc::new(GeminiFactory), agent, resume).split()
}

#[test]
fn registered_with_capabilities() {
    let factory = Registry::builtin()
        .get("gemini")
        .unwrap_or_else(|e| panic!("{e}"));
    let caps = factory.capabilities(&AgentConfig::new("g", "gemini"));
    assert!(caps.interrupt && caps.resume && caps.tool_events);
    assert!(!caps.queue_while_streaming && !caps.thinking);
}

#[tokio::test]
async fn turns_share_a_session_first_by_id_then_by_resume() {
    let dir = tempdir();
    let (h, mut pane) = start(fake_agent(dir.path()), None);
    pane.submit("first TOOL", SubmitMode::Auto);
    let end = pane.turn_end().await;
    match end {
        TurnEvent::TurnComplete {
            status: TurnStatus::Completed,
            usage: Some(u),
            ..
        } => assert_eq!(
            (u.input_tokens, u.output_tokens, u.cache_read_input_tokens),
            (15, 10, Some(5))
        ),
        other => panic!("{other:?}"),
    }
    pane.submit("second", SubmitMode::Auto);
    pane.turn_end().await;
    let runs = runs(dir.path());
    assert_eq!(runs.len(), 2);
    let id = flag(&runs[0], "--session-id").unwrap_or_else(|| panic!("{:?}", runs[0]));
    assert_eq!(flag(&runs[1], "--resume"), Some(id.clone()));
    assert_eq!(
        flag(&runs[0], "--output-format").as_deref(),
        Some("stream-json")
    );
    assert_eq!(flag(&runs[0], "-p").as_deref(), Some("first TOOL"));
    // The model the CLI reports after the turn reaches the pane.
    assert!(pane.seen.iter().any(|e| matches!(
        e,
        PaneEvent::Session(s) if s.model.as_deref() == Some("fake-pro") && s.resume_handle.as_deref() == Some(id.as_str())
    )));
    h.send(RunnerCommand::Shutdown);
}

#[tokio::test]
async fn model_args_and_env_reach_the_cli() {
    let dir = tempdir();
    let mut agent = fake_agent(dir.path());
    agent.model = Some("gemini-x".into());
    agent.args = vec!["--yolo".into()];
    agent.permission_mode = Some("auto_edit".into());
    agent.cwd = Some(dir.path().to_path_buf());
    let (h, mut pane) = start(agent, None);
    pane.submit("hello", SubmitMode::Auto);
    let started = pane
        .until("turn start", |e| {
            matches!(e, PaneEvent::Turn(TurnEvent::TurnStarted { .. }))
        })
        .await;
    assert!(
        matches!(started, PaneEvent::Turn(TurnEvent::TurnStarted { model_id, .. }) if model_id == "gemini-x")
    );
    pane.turn_end().await;
    let run = &runs(dir.path())[0];
    assert_eq!(flag(run, "--model").as_deref(), Some("gemini-x"));
    assert_eq!(flag(run, "--approval-mode").as_deref(), Some("auto_edit"));
    let cwd = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run["cwd"].as_str(), cwd.to_str());
    assert_eq!(argv(run).last().map(String::as_str), Some("--yolo"));
    h.send(RunnerCommand::Shutdown);
}

#[tokio::test]
async fn error_result_with_exit_244_is_a_turn_error() {
    let dir = tempdir();
    let (h, mut pane) = start(fake_agent(dir.path()), None);
    pane.submit("ERROR please", SubmitMode::Auto);
    match pane.turn_end().await {
        TurnEvent::TurnError { error_message, .. } => {
            assert_eq!(error_message, "[API Error: simulated 500]");
        }
        other => panic!("{other:?}"),
    }
    h.send(RunnerCommand::Shutdown);
}

#[tokio::test]
async fn grandchild_holding_stdout_does_not_hang_the_turn() {
    let dir = tempdir();
    let (h, mut pane) = start(fake_agent(dir.path()), None);
    pane.submit("ORPHAN then finish", SubmitMode::Auto);
    assert!(matches!(
        pane.turn_end().await,
        TurnEvent::TurnComplete {
            status: TurnStatus::Completed,
            ..
        }
    ));
    let grandchild = runs(dir.path())[0]["grandchild"]
        .as_i64()
        .unwrap_or_default();
    assert!(
        gone(grandchild).await,
        "grandchild {grandchild} survived the turn"
    );
    h.send(RunnerCommand::Shutdown);
}

#[tokio::test]
async fn restarted_hive_resumes_its_session() {
    let dir = tempdir();
    let agent = fake_agent(dir.path());
    std::fs::write(dir.path().join("sessions/known-session"), "").unwrap_or_else(|e| panic!("{e}"));
    let (h, mut pane) = start(agent, Some("known-session"));
    pane.submit("hello again", SubmitMode::Auto);
    pane.turn_end().await;
    let run = &runs(dir.path())[0];
    assert_eq!(flag(run, "--resume").as_deref(), Some("known-session"));
    assert!(flag(run, "--session-id").is_none());
    h.send(RunnerCommand::Shutdown);
}

#[tokio::test]
async fn missing_program_is_a_turn_error_not_a_hang() {
    let mut agent = AgentConfig::new("g", "gemini");
    agent.command = vec!["/nonexistent/gemini-binary".into()];
    let (h, mut pane) = start(agent, None);
    pane.submit("hi", SubmitMode::Auto);
    match pane.turn_end().await {
        TurnEvent::TurnError { error_code, .. } => assert_eq!(error_code, "spawn_failed"),
        other => panic!("{other:?}"),
    }
    h.send(RunnerCommand::Shutdown);
}

// ---------------------------------------------------------------- figures

/// Translator + processor cost of a 108k-character answer in 4000 deltas.
/// Run with `cargo test --release --test providers gemini:: -- --ignored --nocapture`.
#[test]
#[ignore = "figure, not a check; run on demand"]
fn figure_large_message_cost() {
    let chunk = "lorem ipsum dolor sit amet.";
    let mut lines = vec![r#"{"type":"init","session_id":"s","model":"m"}"#.to_owned()];
    for _ in 0..4000 {
        lines.push(format!(
            r#"{{"type":"message","timestamp":"2026-11-22T01:35:08.540Z","role":"assistant","content":"{chunk}","delta":true}}"#
        ));
    }
    lines.push(
        r#"{"type":"result","status":"success","stats":{"input":1,"output_tokens":1}}"#.into(),
    );
    let t0 = std::time::Instant::now();
    let mut turn = GeminiTurn::new("t", "s", None);
    let mut processor = Processor::new(ProcessorConfig::default());
    let now = tokio::time::Instant::now();
    let mut outputs = 0;
    for line in &lines {
        for ev in turn.push_line(line) {
            if let ProviderEvent::Stream(ev) = ev {
                outputs += processor.process(&ev, now).len();
            }
        }
    }
    eprintln!(
        "gemini: 108k chars in 4000 deltas: translate+process {:?}, {outputs} outputs",
        t0.elapsed()
    );
    assert!(outputs > 0);
}

/// Issue 46 item 7: headless Gemini denies what would ask, so a pane
/// without `permission_mode` says which tools its agent lacks; under
/// `auto_edit` it says shell commands are off; under `yolo` (or `--yolo`
/// in `args`) it says nothing.
#[tokio::test]
async fn a_pane_says_which_tools_headless_gemini_lacks() {
    let cases: [(Option<&str>, &[&str], Option<&str>); 4] = [
        (None, &[], Some("no shell, write or edit tools")),
        (Some("auto_edit"), &[], Some("runs no shell commands")),
        (Some("yolo"), &[], None),
        (None, &["--yolo"], None),
    ];
    for (mode, args, said) in cases {
        let dir = tempdir();
        let mut agent = fake_agent(dir.path());
        agent.permission_mode = mode.map(str::to_owned);
        agent.args = args.iter().map(|a| (*a).to_owned()).collect();
        let (h, mut pane) = start(agent, None);
        pane.submit("hello", SubmitMode::Auto);
        pane.turn_end().await;
        let notes = pane.notices();
        let told = notes.iter().find(|n| n.contains("Gemini runs headless"));
        match said {
            Some(s) => assert!(told.is_some_and(|n| n.contains(s)), "{mode:?}: {notes:?}"),
            None => assert!(told.is_none(), "{mode:?} {args:?}: {notes:?}"),
        }
        h.send(RunnerCommand::Shutdown);
    }
}

/// Issue 51: a `[[mcp_server]]` Gemini CLI could not reach (it says so on
/// stderr, `Error during discovery for MCP server 'NAME'`) is a warning in
/// the pane, once for the two turns that each start the CLI.
#[tokio::test]
async fn an_mcp_server_that_did_not_start_is_a_warning() {
    let dir = tempdir();
    let mut agent = fake_agent(dir.path());
    agent.shared_mcp = support::fake_mcp_servers();
    let (h, mut pane) = start(agent, None);
    let want =
        "MCP server `broken` did not start (Gemini CLI: MCP error -32000: Connection closed)";
    let warned = |e: &PaneEvent| matches!(e, PaneEvent::Notice { text, .. } if text == want);
    pane.submit("hello", SubmitMode::Auto);
    pane.turn_end().await;
    pane.submit("again", SubmitMode::Auto);
    pane.turn_end().await;
    // stderr is read beside stdout: the warning may come after the turns.
    if !pane.seen.iter().any(warned) {
        pane.until("the warning", warned).await;
    }
    let notices = pane.notices();
    assert_eq!(
        notices.iter().filter(|n| n.contains("MCP server")).count(),
        1,
        "{notices:?}"
    );
    h.send(RunnerCommand::Shutdown);
}
