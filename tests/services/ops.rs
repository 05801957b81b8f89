//! hive's operations end to end: a direct agent (the `openai` provider on a
//! scripted server) with `hive_tools = true` calls `hive_call` with
//! `agent.send` + `agent.wait` on a scripted demo pane, and answers with
//! that pane's reply; the target pane shows who sent the message;
//! `can_message` and the chain rule refuse what they must.
//!
//! The loop below is what the app's loop does: pane updates go through
//! `OpsHost::observe`, requests through `OpsHost::handle`.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

#[path = "../support/demo_agent.rs"]
mod demo_agent;
#[path = "../support/openai_server.rs"]
mod server;

use std::sync::Arc;
use std::time::Duration;

use demo_agent::demo;
use hive::config::AgentConfig;
use hive::event::Origin;
use hive::ops::meta::toolbox_factory;
use hive::ops::{Caller, HiveRequest, OpsHost};
use hive::panes::Panes;
use hive::provider::openai::OpenAiFactory;
use hive::provider::{ProviderFactory, ProviderSpec, Registry};
use hive::runner::{
    PaneEvent, PaneUpdate, RunnerCommand, RunnerHandle, RunnerOptions, SubmitMode, spawn_runner,
};
use hive::upsert::{TurnEvent, UpsertKind, UpsertStatus};
use serde_json::{Value, json};
use server::{Reply, Server, answer_text, finish, tool_call};
use tokio::sync::mpsc;

const GUARD: Duration = Duration::from_secs(30);

fn direct(id: &str, server: &Server, can_message: &[&str]) -> AgentConfig {
    let mut a = AgentConfig::new(id, "openai");
    a.name = Some(format!("{}{}", id[..1].to_uppercase(), &id[1..]));
    a.model = Some("test-model".into());
    a.set("base_url", server.base_url.clone()).unwrap();
    a.hive_tools = true;
    a.can_message = can_message.iter().map(|s| s.to_string()).collect();
    a
}

/// A hive without a screen: runners for `agents`, the ops host, and the
/// loop between them. Returns every pane update seen until `done` says so.
struct Hive {
    runners: Vec<Option<RunnerHandle>>,
    rx: mpsc::UnboundedReceiver<PaneUpdate>,
    ops_rx: mpsc::UnboundedReceiver<HiveRequest>,
    host: OpsHost,
    /// The registry the server keeps beside the ops host.
    panes: Panes<()>,
    seen: Vec<PaneUpdate>,
}

impl Hive {
    /// One pane recording into `history` (its recorder and resume handle).
    fn start_with_history(
        agents: Vec<AgentConfig>,
        store: &std::path::Path,
        history: hive::history::PaneHistory,
    ) -> Self {
        let mut hive = Self::start_with(agents, store, Some(history));
        hive.seen.clear();
        hive
    }

    fn start(agents: Vec<AgentConfig>, store: &std::path::Path) -> Self {
        Self::start_with(agents, store, None)
    }

    fn start_with(
        agents: Vec<AgentConfig>,
        store: &std::path::Path,
        mut history: Option<hive::history::PaneHistory>,
    ) -> Self {
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let mut registry = Registry::builtin();
        registry.register(
            "openai",
            Arc::new(
                OpenAiFactory::default()
                    .with_store(hive::history::Store::at(store))
                    .with_toolbox(toolbox_factory(ops_tx)),
            ),
        );
        let (tx, rx) = mpsc::unbounded_channel();
        let host = OpsHost::new();
        let panes = Panes::of_agents(agents.iter().cloned());
        let runners = agents
            .into_iter()
            .enumerate()
            .map(|(i, agent)| {
                let factory: Arc<dyn ProviderFactory> = registry.get(&agent.provider).unwrap();
                let h = history.take();
                let spec = ProviderSpec {
                    agent,
                    resume: h.as_ref().and_then(|h| h.resume.clone()),
                };
                let options = RunnerOptions {
                    recorder: h.and_then(|h| h.recorder),
                    ..RunnerOptions::default()
                };
                Some(spawn_runner(i, factory, spec, options, tx.clone()).unwrap())
            })
            .collect();
        Self {
            runners,
            rx,
            ops_rx,
            host,
            panes,
            seen: Vec::new(),
        }
    }

    /// Pane `slot` was spawned by `parent` (as a restored team's is).
    fn set_parent(&mut self, slot: usize, parent: &str) {
        self.panes.record_mut(slot).unwrap().parent = Some(parent.into());
    }

    fn submit(&self, pane: usize, text: &str) {
        self.runners[pane]
            .as_ref()
            .unwrap()
            .send(RunnerCommand::Submit {
                text: text.into(),
                mode: SubmitMode::Auto,
            });
    }

    /// Runs the loop until pane `pane` ends a turn.
    async fn until_turn_end(&mut self, pane: usize) -> TurnEvent {
        let deadline = tokio::time::Instant::now() + GUARD;
        loop {
            tokio::select! {
                Some(req) = self.ops_rx.recv() => self.handle(req),
                Some(u) = self.rx.recv() => {
                    self.panes.observe(&u);
                    self.host.observe(&u);
                    self.seen.push(u.clone());
                    if u.pane == pane
                        && let PaneEvent::Turn(t) = u.event
                        && !matches!(t, TurnEvent::TurnStarted { .. })
                    {
                        return t;
                    }
                }
                _ = tokio::time::sleep_until(deadline) => panic!("no turn end on pane {pane}"),
            }
        }
    }

    /// Completed messages shown in `pane`, with their origin.
    fn messages(&self, pane: usize) -> Vec<(Origin, String)> {
        self.seen
            .iter()
            .filter(|u| u.pane == pane)
            .filter_map(|u| match &u.event {
                PaneEvent::Upsert(up) if up.status == UpsertStatus::Complete => match &up.kind {
                    UpsertKind::Message { content, origin } => Some((*origin, content.to_string())),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    async fn stop(self) {
        for r in self.runners.iter().flatten() {
            r.shutdown().await;
        }
    }
}

#[tokio::test]
async fn a_direct_agent_delegates_to_a_demo_pane_and_answers_with_its_reply() {
    let dir = tempfile::tempdir().unwrap();
    let calls = json!({"calls": [
        {"op": "agents.list"},
        {"op": "agent.send", "args": {"agent": "backend", "text": "Build the login API."}},
        {"op": "agent.wait", "args": {"agent": "backend", "timeout_secs": 30}},
        {"op": "agent.send", "args": {"agent": "reviewer", "text": "sneaky"}},
        {"op": "agent.read", "args": {"agent": "backend", "last": 1}},
    ]});
    let server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "c1", "hive_call", &calls.to_string()),
            finish("tool_calls"),
        ]),
        answer_text("Backend says the login API is ready.", 1, 1),
    ]);
    let agents = vec![
        direct("architect", &server, &["backend"]),
        demo("backend", dir.path(), "Login API is ready: POST /login."),
        demo("reviewer", dir.path(), "LGTM"),
    ];
    let mut hive = Hive::start(agents, dir.path());
    hive.submit(0, "Get the login API built.");
    let end = hive.until_turn_end(0).await;
    assert!(matches!(end, TurnEvent::TurnComplete { .. }), "{end:?}");

    // The four meta-tools were offered, not one tool per operation (after
    // the agent's own coding tools, docs/openai.md).
    let tools: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        tools,
        [
            "read",
            "write",
            "edit",
            "glob",
            "grep",
            "bash",
            "hive_list",
            "hive_search",
            "hive_schema",
            "hive_call"
        ]
    );

    // The model got one result per call: the list, the send, the backend's
    // reply, and a refusal for the pane it may not message.
    let results = server.tool_result(1);
    assert_eq!(results[0]["ok"], true);
    let list = results[0]["result"].as_array().unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(list[1]["id"], "backend");
    assert_eq!(list[1]["can_message"], true);
    assert_eq!(list[2]["can_message"], false);
    assert_eq!(results[1]["ok"], true, "{results}");
    assert_eq!(results[2]["result"]["status"], "completed", "{results}");
    assert_eq!(
        results[2]["result"]["text"],
        "Login API is ready: POST /login."
    );
    assert_eq!(results[3]["ok"], false);
    assert_eq!(results[3]["error"]["code"], "not_allowed");
    let read = results[4]["result"].as_array().unwrap();
    assert_eq!(read.len(), 1, "{read:?}");
    assert_eq!(read[0]["kind"], "agent");
    assert_eq!(read[0]["text"], "Login API is ready: POST /login.");

    // The backend pane shows the message with who sent it.
    let backend = hive.messages(1);
    let (origin, text) = &backend[0];
    assert_eq!(*origin, Origin::User);
    assert!(
        text.starts_with("[message from Architect (architect) via hive"),
        "{text}"
    );
    assert!(text.ends_with("\nBuild the login API."), "{text}");
    // The reviewer got nothing.
    assert!(hive.messages(2).is_empty());
    // And the architect answered with the backend's reply in hand.
    assert!(
        hive.messages(0)
            .iter()
            .any(|(o, t)| *o == Origin::Agent && t == "Backend says the login API is ready.")
    );
    hive.stop().await;
}

#[tokio::test]
async fn a_message_chain_back_to_its_sender_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let to_b = json!({"calls": [
        {"op": "agent.send", "args": {"agent": "b", "text": "ping"}},
        {"op": "agent.wait", "args": {"agent": "b", "timeout_secs": 30}},
    ]});
    let to_a = json!({"calls": [{"op": "agent.send", "args": {"agent": "a", "text": "pong"}}]});
    // Requests arrive in this order: a asks b; b (answering) tries a and
    // then answers; a answers with b's reply.
    let server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "a1", "hive_call", &to_b.to_string()),
            finish("tool_calls"),
        ]),
        Reply::Chunks(vec![
            tool_call(0, "b1", "hive_call", &to_a.to_string()),
            finish("tool_calls"),
        ]),
        answer_text("b could not ping back", 1, 1),
        answer_text("done", 1, 1),
    ]);
    let agents = vec![direct("a", &server, &["b"]), direct("b", &server, &["a"])];
    let mut hive = Hive::start(agents, dir.path());
    hive.submit(0, "start the ping-pong");
    let end = hive.until_turn_end(0).await;
    assert!(matches!(end, TurnEvent::TurnComplete { .. }), "{end:?}");
    // b's attempt to message a came back as a clear error.
    let refused = server.tool_result(2);
    assert_eq!(refused[0]["ok"], false, "{refused}");
    assert_eq!(refused[0]["error"]["code"], "message_loop");
    assert!(
        refused[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a → b → a")
    );
    // a never received a message.
    assert_eq!(hive.messages(0)[0].1, "start the ping-pong");
    assert!(
        !hive
            .messages(0)
            .iter()
            .any(|(o, t)| *o == Origin::User && t.starts_with("[message from"))
    );
    let waited = server.tool_result(3);
    assert_eq!(waited[1]["result"]["text"], "b could not ping back");
    hive.stop().await;
}

#[test]
fn the_example_config_has_an_architect_that_delegates_to_backend_and_reviewer() {
    use hive::config::{Config, ConfigSource};
    let text = include_str!("../../config/hive.example.toml");
    let c = Config::parse(text, ConfigSource::File("hive.example.toml".into())).unwrap();
    let lead = c.agent("lead").unwrap();
    assert_eq!(lead.provider, "openai");
    assert!(lead.hive_tools);
    assert_eq!(lead.can_message, ["backend", "reviewer"]);
    for target in &lead.can_message {
        assert!(c.agent(target).is_some(), "{target} is a pane");
    }
    // The Claude Architect delegates through `hive mcp`.
    let architect = c.agent("architect").unwrap();
    assert_eq!(architect.provider, "claude");
    assert!(architect.hive_tools);
    assert_eq!(architect.can_message, ["backend", "reviewer"]);
}

/// `agent.read` returns the turns from before a restart: hive loads them
/// from its history into the ops host before the runner starts (what the
/// app's start does), then live items follow them.
#[tokio::test]
async fn agent_read_returns_history_loaded_from_disk() {
    use hive::history::{OpenOptions, Store, open_pane_in};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("store"));
    let backend = demo("backend", dir.path(), "Earlier answer.");

    // First run: one turn, recorded.
    let h = open_pane_in(&store, &backend, &OpenOptions::default());
    assert!(h.items.is_empty());
    let mut hive = Hive::start_with_history(vec![backend.clone()], dir.path(), h);
    hive.submit(0, "Earlier question.");
    hive.until_turn_end(0).await;
    hive.stop().await;

    // Restart: the ops host sees the stored items before any live one.
    let h = open_pane_in(&store, &backend, &OpenOptions::default());
    assert!(!h.items.is_empty());
    let mut host = OpsHost::new();
    let panes: Panes<()> = Panes::of_agents([backend.clone()]);
    host.restore(0, &h.items);
    let (reply, rx) = tokio::sync::oneshot::channel();
    // A read makes no runner command.
    let none = host.handle(
        HiveRequest {
            caller: hive::ops::Caller::Cli,
            verb: hive::ops::parse("agent.read", json!({"agent": "backend"})).unwrap(),
            reply,
        },
        &panes,
        &[None],
    );
    assert!(none.is_none());
    let items = rx.await.unwrap().unwrap();
    let texts: Vec<(&str, &str, bool)> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["kind"].as_str().unwrap(),
                i["text"].as_str().unwrap(),
                i["restored"] == true,
            )
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("user", "Earlier question.", true),
            ("agent", "Earlier answer.", true)
        ]
    );
}

/// Issue 34 item 10: a caller outside any pane (`hive mcp` without
/// `--agent`, `hive ctl`'s `op`) sends, then waits by agent name, as the
/// docs show. It said "you have sent nothing to `backend`" before.
#[tokio::test]
async fn a_caller_outside_any_pane_waits_for_what_it_sent() {
    let dir = tempfile::tempdir().unwrap();
    let mut hive = Hive::start(
        vec![demo("backend", dir.path(), "Outside answer.")],
        dir.path(),
    );
    let call = |hive: &mut Hive, op: &str, args: Value| {
        let (reply, rx) = tokio::sync::oneshot::channel();
        hive.handle(HiveRequest {
            caller: hive::ops::Caller::Cli,
            verb: hive::ops::parse(op, args).unwrap(),
            reply,
        });
        rx
    };
    let sent = call(
        &mut hive,
        "agent.send",
        json!({"agent": "backend", "text": "hi"}),
    );
    let sent = sent.await.unwrap().unwrap();
    let waited = call(&mut hive, "agent.wait", json!({"agent": "backend"}));
    hive.until_turn_end(0).await;
    // The turn's end reaches the ops host, which answers the parked wait.
    let outcome = tokio::time::timeout(GUARD, waited)
        .await
        .expect("the wait is answered")
        .unwrap()
        .unwrap();
    assert_eq!(sent["message_id"], "m1", "{sent}");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(outcome["text"], "Outside answer.", "{outcome}");
}

/// A scripted pane that asks before it writes (tests/fixtures/ctl/asker.toml).
fn asker(id: &str) -> AgentConfig {
    let mut a = AgentConfig::new(id, "script");
    a.script = Some(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/asker.toml"),
    );
    a
}

impl Hive {
    /// What the server's door does with an operation: the ops host answers
    /// it, and the runner command it makes goes to that pane's runner.
    fn handle(&mut self, req: HiveRequest) {
        if let Some((pane, cmd)) = self.host.handle(req, &self.panes, &self.runners)
            && let Some(runner) = self.runners.get(pane).and_then(Option::as_ref)
        {
            runner.send(cmd);
        }
    }

    /// Runs the loop until `pred` holds for an update.
    async fn until(&mut self, mut pred: impl FnMut(&PaneUpdate) -> bool) {
        let deadline = tokio::time::Instant::now() + GUARD;
        loop {
            tokio::select! {
                Some(req) = self.ops_rx.recv() => self.handle(req),
                Some(u) = self.rx.recv() => {
                    self.panes.observe(&u);
                    self.host.observe(&u);
                    self.seen.push(u.clone());
                    if pred(&u) {
                        return;
                    }
                }
                _ = tokio::time::sleep_until(deadline) => panic!("timed out"),
            }
        }
    }

    /// Runs operation `name` as `caller` (what `hive_call` does).
    fn call(
        &mut self,
        caller: Caller,
        name: &str,
        args: Value,
    ) -> Result<Value, hive::ops::OpError> {
        let (reply, mut rx) = tokio::sync::oneshot::channel();
        let verb = hive::ops::parse(name, args)?;
        self.handle(HiveRequest {
            caller,
            verb,
            reply,
        });
        rx.try_recv().unwrap()
    }

    /// Tool outputs pane `pane` got back (each once).
    fn tool_outputs(&self, pane: usize) -> Vec<String> {
        let mut outputs: Vec<String> = self
            .seen
            .iter()
            .filter(|u| u.pane == pane)
            .filter_map(|u| match &u.event {
                PaneEvent::Upsert(up) => match &up.kind {
                    UpsertKind::ToolCall {
                        output: Some(o), ..
                    } => Some(o.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        outputs.dedup();
        outputs
    }
}

/// Issue 32: an agent answers approvals only of the panes it spawned, not
/// of every pane it may message.
#[tokio::test]
async fn an_agent_answers_approvals_only_of_panes_it_spawned() {
    let dir = tempfile::tempdir().unwrap();
    let mut lead = demo("lead", dir.path(), "ok");
    lead.can_message = vec!["other".into()];
    let agents = vec![lead, asker("writer"), asker("other")];
    let mut hive = Hive::start(agents, dir.path());
    // `writer` is the lead's helper (as `agent.spawn` would record it).
    hive.set_parent(1, "lead");
    hive.submit(1, "notes please");
    hive.submit(2, "notes too");
    let mut asked = 0;
    hive.until(|u| {
        asked += usize::from(matches!(u.event, PaneEvent::Permission(_)));
        asked == 2
    })
    .await;

    let lead = || Caller::Agent("lead".into());
    let list = hive.call(lead(), "agents.list", json!({})).unwrap();
    assert_eq!(list[1]["state"], "awaiting_approval", "{list}");
    assert_eq!(list[1]["approvals"][0]["tool"], "write_file", "{list}");
    assert_eq!(list[0]["state"], "idle", "{list}");
    assert!(list[0].get("approvals").is_none(), "{list}");

    // Not a pane it may only message, nor its own, nor one with nothing
    // waiting.
    let refused = hive.call(lead(), "agent.approve", json!({"agent": "other"}));
    let refused = refused.unwrap_err();
    assert_eq!(refused.code, "not_allowed");
    assert!(
        refused.message.contains("only of the panes it spawned"),
        "{refused}"
    );
    assert_eq!(list[1]["spawned_by"], "lead", "{list}");
    let refused = hive.call(lead(), "agent.approve", json!({"agent": "lead"}));
    assert_eq!(refused.unwrap_err().code, "not_allowed");
    let args = json!({"agent": "writer", "request_id": "nope"});
    assert_eq!(
        hive.call(lead(), "agent.approve", args).unwrap_err().code,
        "no_approval"
    );

    let args = json!({"agent": "writer", "reason": "write it on a branch"});
    let denied = hive.call(lead(), "agent.deny", args).unwrap();
    assert_eq!(denied["decision"], "deny");
    assert_eq!(denied["tool"], "write_file");
    hive.until_turn_end(1).await;
    assert_eq!(
        hive.tool_outputs(1),
        ["Permission denied: write it on a branch"]
    );

    // Outside any pane (a script through `hive mcp`), any pane.
    let approved = hive.call(Caller::Cli, "agent.approve", json!({"agent": "other"}));
    assert_eq!(approved.unwrap()["decision"], "allow_once");
    hive.until_turn_end(2).await;
    assert_eq!(hive.tool_outputs(2), ["wrote notes.txt"]);
    hive.stop().await;
}

/// #53 item 3: a lead whose own commands wait for the user (an `openai`
/// agent, `permission_mode` ask) answers its helper's `bash` card itself
/// through `hive_call`: refused, the command never runs, the card stays for
/// the user; across vendors too (a Claude-style `Bash` card of a scripted
/// helper). Denying stays allowed. Failed before: the lead's approval ran
/// `touch laundered` and the user approved nothing.
#[tokio::test]
async fn a_lead_cannot_launder_an_approval_through_its_helper() {
    let dir = tempfile::tempdir().unwrap();
    let approve = json!({"calls": [{"op": "agent.approve", "args": {"agent": "helper"}}]});
    let lead_server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "l1", "hive_call", &approve.to_string()),
            finish("tool_calls"),
        ]),
        answer_text("Approved it for you.", 1, 1),
    ]);
    let bash = json!({"command": "touch laundered"});
    let helper_server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "h1", "bash", &bash.to_string()),
            finish("tool_calls"),
        ]),
        answer_text("Could not.", 1, 1),
    ]);
    let mut helper = direct("helper", &helper_server, &[]);
    helper.hive_tools = false;
    helper.cwd = Some(dir.path().to_owned());
    let script = dir.path().join("bashy.toml");
    std::fs::write(
        &script,
        "model = \"m\"\n[capabilities]\npermissions = true\n[[turn]]\n[[turn.step]]\n\
         permission = \"Run it?\"\ntool = \"Bash\"\nargs = { command = \"rm -rf ~\" }\n\
         output = \"ran\"\n[[turn.step]]\ntext = \"Finished\"\n",
    )
    .unwrap();
    let mut bashy = AgentConfig::new("bashy", "script");
    bashy.script = Some(script);
    let agents = vec![direct("lead", &lead_server, &[]), helper, bashy];
    let mut hive = Hive::start(agents, dir.path());
    hive.set_parent(1, "lead");
    hive.set_parent(2, "lead");
    hive.submit(1, "make a file");
    hive.submit(2, "clean up");
    let mut asked = 0;
    hive.until(|u| {
        asked += usize::from(matches!(u.event, PaneEvent::Permission(_)));
        asked == 2
    })
    .await;

    hive.submit(0, "approve your helper's card");
    hive.until_turn_end(0).await;
    let r = lead_server.tool_result(1);
    assert_eq!(r[0]["ok"], false, "{r}");
    assert_eq!(r[0]["error"]["code"], "not_allowed", "{r}");
    assert!(
        r[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the user answers"),
        "{r}"
    );
    let lead = || Caller::Agent("lead".into());
    let refused = hive.call(lead(), "agent.approve", json!({"agent": "bashy"}));
    assert_eq!(refused.unwrap_err().code, "not_allowed");
    let list = hive.call(lead(), "agents.list", json!({})).unwrap();
    assert_eq!(list[1]["state"], "awaiting_approval", "{list}");
    assert_eq!(list[2]["state"], "awaiting_approval", "{list}");
    assert!(!dir.path().join("laundered").exists());

    // Saying no does no more than asking would: allowed.
    let denied = hive.call(lead(), "agent.deny", json!({"agent": "helper"}));
    assert_eq!(denied.unwrap()["decision"], "deny");
    hive.until_turn_end(1).await;
    assert!(!dir.path().join("laundered").exists());
    hive.stop().await;
}

/// Issue 34 item 12: an interrupt from another agent says who asked for it
/// in the interrupted pane. Failed before: the turn ended cancelled with no
/// word of the sender.
#[tokio::test]
async fn an_interrupt_from_another_agent_names_it_in_the_pane() {
    let dir = tempfile::tempdir().unwrap();
    let calls = json!({"calls": [{"op": "agent.interrupt", "args": {"agent": "backend"}}]});
    let server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "c1", "hive_call", &calls.to_string()),
            finish("tool_calls"),
        ]),
        answer_text("Stopped the backend.", 1, 1),
    ]);
    let slow = dir.path().join("slow.toml");
    std::fs::write(
        &slow,
        "model = \"demo-1\"\nchunk_chars = 5\ndelay_ms = 200\n[[turn]]\n[[turn.step]]\ntext = \"Working on the login API, one careful step at a time, with tests.\"\n",
    )
    .unwrap();
    let mut backend = AgentConfig::new("backend", "script");
    backend.script = Some(slow);
    let agents = vec![direct("architect", &server, &["backend"]), backend];
    let mut hive = Hive::start(agents, dir.path());
    hive.submit(1, "Build the login API.");
    hive.submit(0, "Stop the backend.");
    let end = hive.until_turn_end(0).await;
    assert!(matches!(end, TurnEvent::TurnComplete { .. }), "{end:?}");
    // The backend's turn ends cancelled (maybe already, while the
    // architect's ran).
    let ended = |h: &Hive| {
        h.seen.iter().find_map(|u| match &u.event {
            PaneEvent::Turn(t) if u.pane == 1 && t.is_terminal() => Some(t.clone()),
            _ => None,
        })
    };
    if ended(&hive).is_none() {
        hive.until_turn_end(1).await;
    }
    assert!(
        matches!(
            ended(&hive),
            Some(TurnEvent::TurnComplete {
                status: hive::upsert::TurnStatus::Cancelled,
                ..
            })
        ),
        "{:?}",
        ended(&hive)
    );
    let notices: Vec<&str> = hive
        .seen
        .iter()
        .filter(|u| u.pane == 1)
        .filter_map(|u| match &u.event {
            PaneEvent::Notice { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        notices.contains(&"interrupted by Architect (architect) via hive"),
        "{notices:?}"
    );
    hive.stop().await;
}
