//! `hive mcp` end to end: the real binary, started as an agent's MCP
//! server would be (`--socket`, `--agent`), speaks MCP JSON-RPC on stdio
//! and reaches a hive over its control socket: `initialize`, `tools/list`
//! (the four meta-tools), and `tools/call` of `hive_call` with
//! `agent.send` + `agent.wait` on a scripted demo pane, whose reply comes
//! back and whose pane shows who sent the message. `can_message` holds
//! for MCP callers too.
//!
//! The hive here has no screen: runners, the ops host and a control socket
//! server, joined the way the app's loop joins them.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

#[path = "../support/demo_agent.rs"]
mod demo_agent;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use demo_agent::demo;
use hive::config::AgentConfig;
use hive::control::protocol::Call;
use hive::control::server::Server;
use hive::event::Origin;
use hive::ops::OpsHost;
use hive::panes::Panes;
use hive::provider::{ProviderFactory, ProviderSpec, Registry};
use hive::runner::{PaneEvent, PaneUpdate, RunnerHandle, RunnerOptions, spawn_runner};
use hive::upsert::{UpsertKind, UpsertStatus};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;

const GUARD: Duration = Duration::from_secs(60);

/// Starts runners for `agents`, the ops host and a control socket in
/// `dir`; returns the socket path and every pane update seen (shared).
fn start_hive(
    agents: Vec<AgentConfig>,
    dir: &std::path::Path,
) -> (std::path::PathBuf, Arc<Mutex<Vec<PaneUpdate>>>) {
    let (server, mut ctl_rx, _consoles) = Server::start(dir, "mcp-test").unwrap();
    let socket = server.path().to_owned();
    let (_ops_tx, mut ops_rx) = mpsc::unbounded_channel();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut host = OpsHost::new();
    let mut panes: Panes<()> = Panes::of_agents(agents.iter().cloned());
    let registry = Registry::builtin();
    let runners: Vec<_> = agents
        .into_iter()
        .enumerate()
        .map(|(i, agent)| {
            let factory: Arc<dyn ProviderFactory> = registry.get(&agent.provider).unwrap();
            let spec = ProviderSpec {
                agent,
                resume: None,
            };
            Some(spawn_runner(i, factory, spec, RunnerOptions::default(), tx.clone()).unwrap())
        })
        .collect();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        let _server = server;
        loop {
            tokio::select! {
                Some(req) = ops_rx.recv() => door(&mut host, &panes, req, &runners),
                Some(u) = rx.recv() => {
                    panes.observe(&u);
                    host.observe(&u);
                    log.lock().unwrap().push(u);
                }
                Some(req) = ctl_rx.recv() => match req.call {
                    Call::Op { agent, op, args } => {
                        if let Some(op) = hive::ops::remote::request(agent, &op, args, req.reply) {
                            door(&mut host, &panes, op, &runners);
                        }
                    }
                    other => panic!("unexpected control call {other:?}"),
                },
            }
        }
    });
    (socket, seen)
}

/// What the server's door does with an operation: the ops host answers
/// it, and the runner command it makes goes to that pane's runner.
fn door(
    host: &mut OpsHost,
    panes: &Panes<()>,
    req: hive::ops::HiveRequest,
    runners: &[Option<RunnerHandle>],
) {
    if let Some((pane, cmd)) = host.handle(req, panes, runners)
        && let Some(r) = runners.get(pane).and_then(Option::as_ref)
    {
        r.send(cmd);
    }
}

struct McpClient {
    _child: Child,
    stdin: ChildStdin,
    lines: tokio::io::Lines<BufReader<ChildStdout>>,
    next: u64,
}

impl McpClient {
    fn start(socket: &std::path::Path, agent: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hive"))
            .arg("mcp")
            .arg("--socket")
            .arg(socket)
            .args(["--agent", agent])
            .env_remove("HIVE_SOCKET")
            .env_remove("HIVE_AGENT")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            _child: child,
            stdin,
            lines,
            next: 1,
        }
    }

    async fn send(&mut self, msg: Value) {
        let line = format!("{msg}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Sends a request and returns its `result` (panics on an error reply).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let reply = tokio::time::timeout(GUARD, async {
            loop {
                let line = self
                    .lines
                    .next_line()
                    .await
                    .unwrap()
                    .expect("hive mcp hung up");
                let v: Value = serde_json::from_str(&line).unwrap();
                if v["id"] == json!(id) {
                    return v;
                }
            }
        })
        .await
        .expect("no reply from hive mcp");
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply["result"].clone()
    }

    async fn call_tool(&mut self, name: &str, arguments: Value) -> (bool, Value) {
        let r = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        let parsed = serde_json::from_str(text).unwrap_or(Value::String(text.into()));
        (r["isError"] == json!(true), parsed)
    }
}

#[tokio::test]
async fn hive_mcp_sends_and_waits_through_the_control_socket() {
    let tmp = tempfile::tempdir().unwrap();
    let mut architect = demo("architect", tmp.path(), "unused");
    architect.name = Some("Architect".into());
    architect.hive_tools = true;
    architect.can_message = vec!["backend".into()];
    let backend = demo("backend", tmp.path(), "schema done: 3 tables");
    let reviewer = demo("reviewer", tmp.path(), "never asked");
    let sock_dir = tmp.path().join("run");
    let (socket, seen) = start_hive(vec![architect, backend, reviewer], &sock_dir);

    let mut mcp = McpClient::start(&socket, "architect");
    let init = mcp
        .request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}),
        )
        .await;
    assert_eq!(init["serverInfo"]["name"], "hive");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    let tools = mcp.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["hive_list", "hive_search", "hive_schema", "hive_call"]
    );
    // Same schemas as the direct agent's tools.
    let direct = hive::ops::meta::definitions();
    assert_eq!(tools["tools"][3]["inputSchema"], direct[3].parameters);

    let (err, panes) = mcp
        .call_tool(
            "hive_call",
            json!({"calls": [{"op": "agents.list", "args": {}}]}),
        )
        .await;
    assert!(!err);
    let list = &panes[0]["result"];
    assert_eq!(list[1]["id"], "backend");
    assert_eq!(list[1]["can_message"], true);
    assert_eq!(list[2]["can_message"], false);

    let (err, results) = mcp
        .call_tool(
            "hive_call",
            json!({"calls": [
                {"op": "agent.send", "args": {"agent": "backend", "text": "design the schema"}},
                {"op": "agent.wait", "args": {"agent": "backend", "timeout_secs": 30}},
                {"op": "agent.send", "args": {"agent": "reviewer", "text": "psst"}}
            ]}),
        )
        .await;
    assert!(!err, "{results}");
    assert_eq!(results[0]["ok"], true, "{results}");
    assert_eq!(results[1]["result"]["status"], "completed", "{results}");
    assert_eq!(results[1]["result"]["text"], "schema done: 3 tables");
    // The architect may not reach the reviewer: the MCP caller is its pane.
    assert_eq!(results[2]["ok"], false);
    assert_eq!(results[2]["error"]["code"], "not_allowed");

    // The backend pane shows the message with who sent it.
    let shown: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|u| u.pane == 1)
        .filter_map(|u| match &u.event {
            PaneEvent::Upsert(up) if up.status == UpsertStatus::Complete => match &up.kind {
                UpsertKind::Message {
                    content,
                    origin: Origin::User,
                } => Some(content.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with("[message from Architect (architect) via hive"),
        "{shown:?}"
    );
    assert!(shown[0].ends_with("design the schema"));

    // An unknown meta-tool is an error result, not a protocol error.
    let (err, _) = mcp.call_tool("hive_nope", json!({})).await;
    assert!(err);
}

#[tokio::test]
async fn hive_mcp_without_a_hive_says_so_in_the_tool_result() {
    let tmp = tempfile::tempdir().unwrap();
    let mut mcp = McpClient::start(&tmp.path().join("nobody.sock"), "architect");
    mcp.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    )
    .await;
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    // Discovery needs no hive.
    let (err, ops) = mcp.call_tool("hive_list", json!({})).await;
    assert!(!err);
    assert!(ops.as_array().unwrap().len() >= 5);
    let (err, results) = mcp
        .call_tool("hive_call", json!({"calls": [{"op": "agents.list"}]}))
        .await;
    assert!(!err);
    assert_eq!(results[0]["error"]["code"], "unavailable", "{results}");
    assert!(
        results[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nobody.sock")
    );
}
