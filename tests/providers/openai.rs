//! The `openai` provider against a scripted Chat Completions server
//! (tests/support/openai_server.rs): the agent loop's steps, tools, limits,
//! retries, cancel, usage and resume.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

#[path = "../support/openai_server.rs"]
pub(crate) mod server;
use crate::support;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use hive::config::AgentConfig;
use hive::event::{FinalItem, Payload, ResponseStatus, Usage};
use hive::provider::openai::OpenAiFactory;
use hive::provider::openai::tools::{ToolDef, ToolResult, Toolbox};
use hive::provider::{ProviderCommand, ProviderEvent, ProviderFactory, ProviderSpec};
use serde_json::{Value, json};
use server::{Reply, Server, answer_text, finish, reasoning, status, text, tool_args, tool_call};
use support::{Live, WAIT};
use tokio::sync::mpsc;

/// The loop's own tests: the coding tools off, so only the test toolbox
/// is offered (`openai_coding.rs` tests the tools).
fn agent(server: &Server) -> AgentConfig {
    let mut a = coding_agent(server);
    a.set("tools", false).unwrap();
    a
}

/// An agent as a user writes it: provider, base_url and model.
pub(crate) fn coding_agent(server: &Server) -> AgentConfig {
    let mut a = AgentConfig::new("oa", "openai");
    a.model = Some("test-model".into());
    a.set("base_url", server.base_url.clone()).unwrap();
    a
}

/// `add` sums, `fail` fails, `meet` returns only once two calls wait in it.
struct TestTools {
    meet: Arc<tokio::sync::Barrier>,
}

impl TestTools {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            meet: Arc::new(tokio::sync::Barrier::new(2)),
        })
    }
}

impl Toolbox for TestTools {
    fn definitions(&self) -> Vec<ToolDef> {
        ["add", "fail", "meet"]
            .into_iter()
            .map(|n| ToolDef {
                name: n.into(),
                description: format!("test tool {n}"),
                parameters: json!({"type": "object"}),
            })
            .collect()
    }

    fn call(&self, name: &str, arguments: Value) -> BoxFuture<'static, ToolResult> {
        let name = name.to_owned();
        let meet = Arc::clone(&self.meet);
        Box::pin(async move {
            match name.as_str() {
                "add" => Ok((arguments["a"].as_i64().unwrap_or(0)
                    + arguments["b"].as_i64().unwrap_or(0))
                .to_string()),
                "meet" => {
                    meet.wait().await;
                    Ok(format!("met {}", arguments["who"].as_str().unwrap_or("?")))
                }
                _ => Err("this tool always fails".into()),
            }
        })
    }
}

fn factory_with_tools() -> OpenAiFactory {
    let tools: Arc<dyn Toolbox> = TestTools::new();
    let store = hive::history::Store::at(tempfile::tempdir().unwrap().keep());
    OpenAiFactory::default()
        .with_store(store)
        .with_toolbox(Arc::new(move |_a: &AgentConfig| Some(Arc::clone(&tools))))
}

/// A bare provider (the shared `support::Live` harness) and its turns.
pub(crate) struct Driven {
    pub(crate) live: Live,
    turns: usize,
    /// A paused clock jumps to the next timer while the test waits on the
    /// server, so backoff tests wait without the harness's guard.
    guarded: bool,
}

impl Driven {
    pub(crate) fn start(
        factory: &OpenAiFactory,
        agent: AgentConfig,
        resume: Option<String>,
    ) -> Self {
        let live = Live::spawn(factory, ProviderSpec { agent, resume }).expect("spawn");
        Self {
            live,
            turns: 0,
            guarded: true,
        }
    }

    fn turn_id(&self) -> String {
        format!("turn_{}", self.turns)
    }

    pub(crate) fn send(&mut self, text: &str) {
        self.turns += 1;
        self.live.send(&self.turn_id(), text);
    }

    /// Events until the turn ends (its `response_done`), inclusive.
    pub(crate) async fn until_done(&mut self) -> Vec<ProviderEvent> {
        let from = self.live.seen.len();
        if self.guarded {
            self.live.turn_end(&self.turn_id()).await;
        } else {
            loop {
                let ev = self.live.rx.recv().await.expect("provider gone");
                self.live.seen.push(ev.clone());
                if matches!(&ev, ProviderEvent::Stream(s) if matches!(s.payload, Payload::ResponseDone { .. } | Payload::ResponseError { .. }))
                {
                    break;
                }
            }
        }
        self.live.seen[from..].to_vec()
    }

    pub(crate) async fn turn(&mut self, text: &str) -> Vec<ProviderEvent> {
        self.send(text);
        self.until_done().await
    }

    pub(crate) async fn kill(self) {
        self.live.handle.kill().await;
    }
}

pub(crate) fn payloads(events: &[ProviderEvent]) -> Vec<&Payload> {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Stream(s) => Some(&s.payload),
            _ => None,
        })
        .collect()
}

pub(crate) fn finals(events: &[ProviderEvent]) -> Vec<&FinalItem> {
    payloads(events)
        .into_iter()
        .filter_map(|p| match p {
            Payload::ItemDone { final_item, .. } => Some(final_item),
            _ => None,
        })
        .collect()
}

pub(crate) fn done(
    events: &[ProviderEvent],
) -> (
    ResponseStatus,
    Option<String>,
    Option<String>,
    Option<Usage>,
) {
    match payloads(events).last() {
        Some(Payload::ResponseDone {
            status,
            finish_reason,
            error,
            usage,
        }) => (
            *status,
            finish_reason.clone(),
            error.as_ref().map(|e| e.message.clone()),
            usage.clone(),
        ),
        other => panic!("turn did not end with response_done: {other:?}"),
    }
}

pub(crate) fn notices(events: &[ProviderEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Diagnostic { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn add_call() -> Reply {
    Reply::Chunks(vec![
        reasoning("I should add."),
        tool_call(0, "call_1", "add", "{\"a\": 1,"),
        tool_args(0, " \"b\": 2}"),
        finish("tool_calls"),
        server::usage(100, 10, 40),
    ])
}

#[tokio::test]
async fn multi_step_tool_loop_streams_calls_runs_tools_and_answers() {
    let server = Server::start(vec![add_call(), answer_text("The sum is 3.", 130, 5)]);
    let factory = factory_with_tools();
    let mut p = Driven::start(&factory, agent(&server), None);
    let events = p.turn("what is 1 + 2?").await;

    // The arguments stream as deltas of the tool-call item.
    let deltas: Vec<&str> = payloads(&events)
        .into_iter()
        .filter_map(|p| match p {
            Payload::ItemDelta { delta_content, .. } => Some(delta_content.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.contains(&"{\"a\": 1,"), "{deltas:?}");
    assert!(deltas.contains(&" \"b\": 2}"), "{deltas:?}");
    let f = finals(&events);
    assert!(matches!(f[0], FinalItem::Reasoning { content, .. } if content == "I should add."));
    assert!(
        matches!(f[1], FinalItem::FunctionCall { name, call_id, arguments, .. } if name == "add" && call_id == "call_1" && arguments["b"] == 2)
    );
    assert!(
        matches!(f[2], FinalItem::FunctionCallOutput { call_id, output, is_error: false } if call_id == "call_1" && output == "3")
    );
    assert!(matches!(f[3], FinalItem::Message { content, .. } if content == "The sum is 3."));
    let (status, reason, _, _) = done(&events);
    assert_eq!(status, ResponseStatus::Completed);
    assert_eq!(reason.as_deref(), Some("stop"));

    // The second call carries the call and its result; tools were offered.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body["stream"], true);
    assert_eq!(reqs[0].body["stream_options"]["include_usage"], true);
    assert_eq!(reqs[0].body["tools"][0]["function"]["name"], "add");
    let m = server.messages(1);
    assert_eq!(m[0], json!({"role": "user", "content": "what is 1 + 2?"}));
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[1]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        m[1]["tool_calls"][0]["function"]["arguments"],
        "{\"a\": 1, \"b\": 2}"
    );
    assert_eq!(
        m[2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "3"})
    );
    p.kill().await;
}

/// The console benchmark's model: a paced stream arrives whole, in order,
/// and the server keeps when each chunk left (what latency is measured from).
#[tokio::test]
async fn a_paced_stream_arrives_whole_and_its_send_times_are_kept() {
    let parts = ["one ", "two ", "three"];
    let mut chunks: Vec<Value> = parts.iter().map(|t| text(t)).collect();
    chunks.push(finish("stop"));
    let server = Server::start(vec![Reply::Paced(chunks, Duration::from_millis(2))]);
    let factory = factory_with_tools();
    let mut p = Driven::start(&factory, agent(&server), None);
    let events = p.turn("go").await;
    assert!(
        matches!(finals(&events).last(), Some(FinalItem::Message { content, .. }) if content == "one two three")
    );
    let sent = server.sent();
    assert_eq!(sent.len(), parts.len() + 2, "the chunks, finish and [DONE]");
    assert!(sent.windows(2).all(|w| w[0] <= w[1]));
    p.kill().await;
}

#[tokio::test]
async fn usage_is_summed_over_the_steps_of_a_turn() {
    let server = Server::start(vec![add_call(), answer_text("3", 130, 5)]);
    let factory = factory_with_tools();
    let mut p = Driven::start(&factory, agent(&server), None);
    let events = p.turn("add").await;
    let (_, _, _, usage) = done(&events);
    let usage = usage.expect("usage reported");
    // Step 1: 100 prompt (40 cached) + 10 out; step 2: 130 prompt + 5 out.
    assert_eq!(usage.input_tokens, 60 + 130);
    assert_eq!(usage.cache_read_input_tokens, Some(40));
    assert_eq!(usage.output_tokens, 15);
    p.kill().await;
}

#[tokio::test]
async fn two_tool_calls_of_a_step_run_concurrently() {
    // `meet` returns only when both calls are inside it at once.
    let server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "c_a", "meet", "{\"who\": \"a\"}"),
            tool_call(1, "c_b", "meet", "{\"who\": \"b\"}"),
            finish("tool_calls"),
        ]),
        answer_text("both met", 1, 1),
    ]);
    let factory = factory_with_tools();
    let mut p = Driven::start(&factory, agent(&server), None);
    let events = p.turn("meet").await;
    let mut outputs: Vec<(&str, &str)> = finals(&events)
        .into_iter()
        .filter_map(|f| match f {
            FinalItem::FunctionCallOutput {
                call_id, output, ..
            } => Some((call_id.as_str(), output.as_str())),
            _ => None,
        })
        .collect();
    // Each output shows as its call finishes (#46 item 20); the
    // conversation keeps them in call order.
    outputs.sort_unstable();
    assert_eq!(outputs, [("c_a", "met a"), ("c_b", "met b")]);
    let m = server.messages(1);
    assert_eq!(m[1]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(m[2]["tool_call_id"], "c_a");
    assert_eq!(m[3]["tool_call_id"], "c_b");
    p.kill().await;
}

#[tokio::test]
async fn a_failing_tool_goes_back_to_the_model_as_an_error() {
    let server = Server::start(vec![
        Reply::Chunks(vec![tool_call(0, "c1", "fail", "{}"), finish("tool_calls")]),
        answer_text("the tool failed", 1, 1),
    ]);
    let factory = factory_with_tools();
    let mut p = Driven::start(&factory, agent(&server), None);
    let events = p.turn("try").await;
    assert!(finals(&events).iter().any(|f| matches!(f, FinalItem::FunctionCallOutput { is_error: true, output, .. } if output.contains("always fails"))));
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let m = server.messages(1);
    assert_eq!(m[2]["content"], "error: this tool always fails");
    p.kill().await;
}

#[tokio::test]
async fn max_steps_ends_the_turn_with_max_steps() {
    let again = || Reply::Chunks(vec![tool_call(0, "c", "add", "{}"), finish("tool_calls")]);
    let server = Server::start(vec![again(), again(), again()]);
    let factory = factory_with_tools();
    let mut a = agent(&server);
    a.set("max_steps", 2).unwrap();
    let mut p = Driven::start(&factory, a, None);
    let events = p.turn("loop forever").await;
    let (status, reason, _, _) = done(&events);
    assert_eq!(status, ResponseStatus::Completed);
    assert_eq!(reason.as_deref(), Some("max-steps"));
    assert_eq!(server.requests().len(), 2);
    assert!(notices(&events).iter().any(|n| n.contains("max_steps")));
    p.kill().await;
}

/// One turn against `script` with the clock paused (backoff waits take no
/// real time): its events, the virtual time it took, and the server.
async fn paused_turn(script: Vec<Reply>) -> (Vec<ProviderEvent>, Duration, Server) {
    let server = Server::start(script);
    let mut p = Driven::start(&factory_with_tools(), agent(&server), None);
    p.guarded = false;
    let t0 = tokio::time::Instant::now();
    let events = p.turn("hi").await;
    let took = t0.elapsed();
    p.kill().await;
    (events, took, server)
}

#[tokio::test(start_paused = true)]
async fn http_429_is_retried_after_retry_after() {
    let (events, took, server) = paused_turn(vec![
        status(429, "rate limited", Some("2")),
        answer_text("ok", 1, 1),
    ])
    .await;
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let n = notices(&events);
    assert!(
        n.iter().any(|m| m.contains("429")
            && m.contains("rate limited")
            && m.contains("retrying in 2 s")),
        "{n:?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn http_500_is_retried_with_exponential_backoff_then_given_up() {
    // Two 5xx then success: 1 s then 2 s of backoff.
    let (events, took, server) = paused_turn(vec![
        status(500, "boom", None),
        status(503, "busy", None),
        answer_text("ok", 1, 1),
    ])
    .await;
    assert!(took >= Duration::from_secs(3), "{took:?}");
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let n = notices(&events);
    assert!(n[0].contains("retrying in 1 s"), "{n:?}");
    assert!(n[1].contains("retrying in 2 s"), "{n:?}");
    assert_eq!(server.requests().len(), 3);

    // Four failures in a row: three retries, then the turn fails.
    let (events, _, server) =
        paused_turn((0..4).map(|_| status(500, "down", None)).collect()).await;
    let (status, _, error, _) = done(&events);
    assert_eq!(status, ResponseStatus::Error);
    assert!(error.unwrap().contains("down"));
    assert_eq!(server.requests().len(), 4);
    assert_eq!(notices(&events).len(), 3);
}

#[tokio::test]
async fn a_400_ends_the_turn_with_the_servers_message_and_no_retry() {
    let server = Server::start(vec![status(400, "model `nope` does not exist", None)]);
    let factory = factory_with_tools();
    let mut p = Driven::start(&factory, agent(&server), None);
    let events = p.turn("hi").await;
    let (status, _, error, _) = done(&events);
    assert_eq!(status, ResponseStatus::Error);
    let error = error.unwrap();
    assert!(
        error.contains("400") && error.contains("model `nope` does not exist"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1);
    assert!(notices(&events).is_empty());
    // The agent stays usable.
    p.kill().await;
}

#[tokio::test]
async fn cancel_mid_stream_drops_the_http_stream_and_ends_cancelled() {
    let server = Server::start(vec![
        Reply::Hang(vec![text("partial ")]),
        answer_text("after", 1, 1),
    ]);
    let factory = factory_with_tools();
    let mut p = Driven::start(&factory, agent(&server), None);
    p.send("long answer please");
    // Wait for the first streamed text, then interrupt.
    p.live
        .until("the first streamed text", |ev| {
            matches!(ev, ProviderEvent::Stream(s) if matches!(s.payload, Payload::ItemDelta { .. }))
        })
        .await;
    assert!(p.live.handle.send(ProviderCommand::Cancel));
    let events = p.until_done().await;
    assert!(
        payloads(&events)
            .iter()
            .any(|p| matches!(p, Payload::ItemCancelled { .. }))
    );
    assert_eq!(done(&events).0, ResponseStatus::Cancelled);
    // The server sees the client leave: the HTTP stream was dropped.
    tokio::time::timeout(WAIT, server.stream_closed())
        .await
        .expect("the HTTP stream stayed open after cancel");
    // The next turn works and carries the interrupted user message.
    let events = p.turn("short then").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let m = server.messages(1);
    assert_eq!(m[0]["content"], "long answer please");
    assert_eq!(m[1]["content"], "short then");
    p.kill().await;
}

#[tokio::test]
async fn headers_and_the_api_key_are_sent() {
    let server = Server::start(vec![answer_text("ok", 1, 1)]);
    let factory = factory_with_tools();
    let mut a = agent(&server);
    a.set("api_key_env", "HIVE_OPENAI_TEST_KEY").unwrap();
    a.env
        .insert("HIVE_OPENAI_TEST_KEY".into(), "sk-test".into());
    a.set(
        "headers",
        std::collections::BTreeMap::from([("X-Title", "hive")]),
    )
    .unwrap();
    a.set("temperature", 0.2).unwrap();
    a.set("reasoning_effort", "low").unwrap();
    a.system_prompt = Some("be brief".into());
    let mut p = Driven::start(&factory, a, None);
    p.turn("hi").await;
    let r = &server.requests()[0];
    assert_eq!(r.authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(r.headers["x-title"], "hive");
    assert_eq!(r.body["temperature"], 0.2);
    assert_eq!(r.body["reasoning_effort"], "low");
    assert_eq!(
        r.body["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    p.kill().await;
}

/// `/model` and `/effort` (issue 14): the next request carries the new
/// model and `reasoning_effort`; `off` leaves the field out.
#[tokio::test]
async fn set_model_and_effort_change_the_next_request() {
    let server = Server::start(vec![
        answer_text("one", 1, 1),
        answer_text("two", 1, 1),
        answer_text("three", 1, 1),
    ]);
    let factory = factory_with_tools();
    assert!(factory.capabilities(&agent(&server)).set_model);
    let mut p = Driven::start(&factory, agent(&server), None);
    p.turn("first").await;
    p.live.handle.send(ProviderCommand::SetModel {
        model: "other-model".into(),
    });
    p.live.handle.send(ProviderCommand::SetEffort {
        effort: "high".into(),
    });
    p.turn("second").await;
    p.live.handle.send(ProviderCommand::SetEffort {
        effort: "off".into(),
    });
    p.turn("third").await;
    let reqs = server.requests();
    let first_model = reqs[0].body["model"].as_str().unwrap().to_owned();
    assert_ne!(first_model, "other-model");
    assert!(reqs[0].body.get("reasoning_effort").is_none());
    assert_eq!(reqs[1].body["model"], "other-model");
    assert_eq!(reqs[1].body["reasoning_effort"], "high");
    assert_eq!(reqs[2].body["model"], "other-model");
    assert!(reqs[2].body.get("reasoning_effort").is_none());
    p.kill().await;
}

/// Images (issue 14 item 8): an attached image goes with the next message
/// as an `image_url` data URL, and only with that one.
#[tokio::test]
async fn an_attached_image_goes_with_the_next_request_as_a_data_url() {
    let server = Server::start(vec![answer_text("a cat", 1, 1), answer_text("ok", 1, 1)]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cat.gif");
    std::fs::write(&path, b"GIF89a\x01\x00\x01\x00\x00\x00\x00;").unwrap();
    let img = hive::image::Image::load(&path).unwrap();
    let factory = factory_with_tools();
    assert!(factory.capabilities(&agent(&server)).images);
    let mut p = Driven::start(&factory, agent(&server), None);
    p.live
        .handle
        .send(ProviderCommand::Attach(vec![img.clone()]));
    p.turn("what is this?").await;
    p.turn("and now?").await;
    let reqs = server.requests();
    let first = reqs[0].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        first["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": img.data_url()}},
        ])
    );
    let second = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(second["content"], "and now?");
    p.kill().await;
}

/// Through the runner and the history store: a restarted pane rebuilds the
/// conversation, tool call and result included, from hive's history.
#[tokio::test]
async fn resume_rebuilds_the_conversation_from_history() {
    use hive::history::{OpenOptions, open_pane_in};
    use hive::runner::{PaneEvent, RunnerCommand, RunnerOptions, SubmitMode, spawn_runner};
    use hive::upsert::TurnEvent;

    let dir = tempfile::tempdir().unwrap();
    let store = hive::history::Store::at(dir.path());
    let server = Server::start(vec![
        add_call(),
        answer_text("The sum is 3.", 1, 1),
        answer_text("You asked me to add.", 1, 1),
    ]);
    let tools: Arc<dyn Toolbox> = TestTools::new();
    let factory = OpenAiFactory::default()
        .with_store(store.clone())
        .with_toolbox(Arc::new(move |_a: &AgentConfig| Some(Arc::clone(&tools))));
    let factory: Arc<dyn ProviderFactory> = Arc::new(factory);
    let a = agent(&server);

    let run = |text: &'static str| {
        let (store, factory, a) = (store.clone(), Arc::clone(&factory), a.clone());
        async move {
            let mut history = open_pane_in(&store, &a, &OpenOptions::default());
            let options = RunnerOptions {
                recorder: history.recorder.take(),
                ..RunnerOptions::default()
            };
            let spec = ProviderSpec {
                agent: a,
                resume: history.resume.take(),
            };
            let (tx, mut rx) = mpsc::unbounded_channel();
            let runner = spawn_runner(0, factory, spec, options, tx).unwrap();
            runner.send(RunnerCommand::Submit {
                text: text.into(),
                mode: SubmitMode::Auto,
            });
            loop {
                let u = tokio::time::timeout(WAIT, rx.recv())
                    .await
                    .unwrap()
                    .unwrap();
                if let PaneEvent::Turn(TurnEvent::TurnComplete { .. }) = &u.event {
                    break;
                }
            }
            runner.shutdown().await;
        }
    };
    run("what is 1 + 2?").await;
    run("what did I ask?").await;

    let m = server.messages(2);
    assert_eq!(m[0], json!({"role": "user", "content": "what is 1 + 2?"}));
    assert_eq!(m[1]["tool_calls"][0]["function"]["name"], "add");
    assert_eq!(
        m[2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "3"})
    );
    assert_eq!(
        m[3],
        json!({"role": "assistant", "content": "The sum is 3."})
    );
    assert_eq!(m[4], json!({"role": "user", "content": "what did I ask?"}));
    assert_eq!(m.len(), 5, "{m:#?}");
}

/// Issue 51: `[[mcp_server]]`s of the config reach the built-in agent the
/// config gives them to, over stdio (tests/fake/fake_mcp.py) and over
/// streamable HTTP (the same server's `--http`, which wants the
/// configured `Authorization` header): the tools of both are in the
/// model's request and a call goes to each; an HTTP server nobody
/// listens at is a warning in the pane, and the agent goes on.
#[tokio::test]
async fn config_mcp_servers_over_stdio_and_http_reach_the_built_in_agent() {
    let fake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake/fake_mcp.py");
    let web = support::HttpMcp::start(Some("Authorization: Bearer t0k3n"));
    let server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "c1", "fake__add", "{\"a\": 2, \"b\": 3}"),
            tool_call(1, "c2", "web__add", "{\"a\": 40, \"b\": 2}"),
            finish("tool_calls"),
        ]),
        answer_text("5 and 42", 10, 5),
    ]);
    let text = format!(
        r#"
[[mcp_server]]
name = "fake"
command = "python3"
args = ["{fake}"]

[[mcp_server]]
name = "web"
url = "{}"
headers = {{ Authorization = "Bearer t0k3n" }}

[[mcp_server]]
name = "gone"
url = "http://127.0.0.1:9/mcp"

[[agent]]
id = "oa"
provider = "openai"
model = "test-model"
base_url = "{}"
tools = false
"#,
        web.url, server.base_url
    );
    let config = hive::config::Config::parse(&text, hive::config::ConfigSource::Builtin).unwrap();
    let a = config.agent("oa").unwrap().clone();
    let mut p = Driven::start(&factory_with_tools(), a, None);
    let events = p.turn("add 2 and 3, then 40 and 2").await;

    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let names: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "add",
            "fail",
            "meet",
            "fake__add",
            "fake__fail",
            "web__add",
            "web__fail"
        ]
    );
    let m = server.messages(1);
    assert_eq!(
        m[2],
        json!({"role": "tool", "tool_call_id": "c1", "content": "5"})
    );
    assert_eq!(
        m[3],
        json!({"role": "tool", "tool_call_id": "c2", "content": "42"})
    );
    // Over HTTP: the session opened, the tools listed, the call made.
    let asked = web.methods();
    for method in [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
    ] {
        assert!(asked.iter().any(|m| m == method), "{method}: {asked:?}");
    }
    let notes = notices(&p.live.seen);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("MCP server `gone` did not start") && n.contains("127.0.0.1:9")),
        "{notes:?}"
    );
    assert!(!notes.iter().any(|n| n.contains("`web`")), "{notes:?}");
    p.kill().await;
}

/// An HTTP server that refuses the agent's credentials is a warning that
/// says so, and the token is never in it.
#[tokio::test]
async fn an_http_mcp_server_that_refuses_the_token_is_a_warning() {
    let web = support::HttpMcp::start(Some("Authorization: Bearer right"));
    let server = Server::start(vec![answer_text("ok", 10, 5)]);
    let text = format!(
        r#"
[[mcp_server]]
name = "web"
url = "{}"
headers = {{ Authorization = "Bearer wr0ng" }}

[[agent]]
id = "oa"
provider = "openai"
model = "test-model"
base_url = "{}"
tools = false
"#,
        web.url, server.base_url
    );
    let config = hive::config::Config::parse(&text, hive::config::ConfigSource::Builtin).unwrap();
    let a = config.agent("oa").unwrap().clone();
    let mut p = Driven::start(&factory_with_tools(), a, None);
    let events = p.turn("hello").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let notes = notices(&p.live.seen);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("MCP server `web` did not start") && n.contains("401")),
        "{notes:?}"
    );
    assert!(!notes.iter().any(|n| n.contains("wr0ng")), "{notes:?}");
    p.kill().await;
}

/// `mcp_servers`: a fake MCP server (tests/fake/fake_mcp.py) is started,
/// its tools are offered next to the agent's own as `<server>__<tool>`,
/// and a call goes to it; a server that fails to start is reported in the
/// pane and the agent works on.
#[tokio::test]
async fn mcp_servers_tools_are_offered_and_called_and_a_broken_one_is_reported() {
    let fake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake/fake_mcp.py");
    let server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "c1", "fake__add", "{\"a\": 2, \"b\": 3}"),
            tool_call(1, "c2", "fake__fail", "{}"),
            finish("tool_calls"),
        ]),
        answer_text("2 + 3 = 5", 10, 5),
    ]);
    let mut a = agent(&server);
    let mcp = |name: &str, extra: &[&str]| hive::config::McpServerConfig {
        name: name.into(),
        command: "python3".into(),
        args: std::iter::once(fake)
            .chain(extra.iter().copied())
            .map(String::from)
            .collect(),
        env: Default::default(),
        url: None,
        headers: Default::default(),
    };
    a.set(
        "mcp_servers",
        vec![mcp("fake", &[]), mcp("broken", &["--crash"])],
    )
    .unwrap();
    let mut p = Driven::start(&factory_with_tools(), a, None);
    let events = p.turn("add 2 and 3").await;

    let (status, _, _, _) = done(&events);
    assert_eq!(status, ResponseStatus::Completed);
    let names: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["add", "fail", "meet", "fake__add", "fake__fail"]);
    let schema = &server.requests()[0].body["tools"][3]["function"]["parameters"];
    assert_eq!(schema["required"], json!(["a", "b"]));
    let m = server.messages(1);
    assert_eq!(
        m[2],
        json!({"role": "tool", "tool_call_id": "c1", "content": "5"})
    );
    assert_eq!(m[3]["tool_call_id"], "c2");
    assert!(
        m[3]["content"]
            .as_str()
            .unwrap()
            .contains("fail always fails"),
        "{m:?}"
    );
    let f = finals(&events);
    assert!(f.iter().any(|i| matches!(i, FinalItem::FunctionCallOutput { call_id, is_error: true, .. } if call_id == "c2")));
    let notes = notices(&p.live.seen);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("MCP server `broken` did not start")),
        "{notes:?}"
    );
    p.kill().await;
}
