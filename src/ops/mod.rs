//! hive's operations (seed 001 "operations registry"): what an agent — or a
//! script through `hive mcp` — can ask of the running hive: list the panes,
//! read one, send it a message, wait for the answer, interrupt it.
//!
//! Each operation has a name, a description and a JSON schema
//! (`OPERATIONS`); [`parse`] turns a call into the [`Verb`] it asks for (the
//! one request of src/protocol/verb.rs). Requests reach the panes only as
//! `HiveRequest`s — the verb with a oneshot reply — through the server's
//! one door (src/server/door.rs); `host::OpsHost` keeps the bookkeeping
//! (messages, chains, items) and hands the door the runner command to send. `meta` offers the operations
//! to a model as the seed's four meta-tools.

pub mod across;
mod autonomy;
pub(crate) mod host;
pub(crate) mod mcp;
mod mcp_io;
pub mod meta;
pub mod remote;

use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

pub use crate::protocol::verb::{Caller, SpawnArgs, Verb, WaitFor};
pub use host::OpsHost;
pub(crate) use host::{allowed, is_child, reaches_host};

/// One operation as discovery shows it.
#[derive(Debug, Clone, Copy)]
pub struct OpSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    pub output: &'static str,
}

impl OpSpec {
    pub fn summary(&self) -> Value {
        json!({"op": self.name, "description": self.description})
    }

    pub fn schema(&self) -> Value {
        json!({"op": self.name, "description": self.description,
               "inputSchema": (self.input_schema)(), "output": self.output})
    }
}

/// Every operation hive offers.
pub(crate) const OPERATIONS: &[OpSpec] = &[
    OpSpec {
        name: "agents.list",
        description: "List hive's panes: id, name, provider, model, turn state, queue length, and whether you may message it.",
        input_schema: || json!({"type": "object", "properties": {}, "additionalProperties": false}),
        output: "[{id, name, provider, model, state, queue, can_message}]",
    },
    OpSpec {
        name: "agent.read",
        description: "Read a pane's recent transcript items (those of earlier runs, loaded from hive's history, are marked restored): the last N, or those after an item id. Text only (user and agent messages) unless full is true (thinking and tool calls too).",
        input_schema: || {
            json!({"type": "object", "required": ["agent"], "additionalProperties": false,
                "properties": {
                    "agent": {"type": "string", "description": "pane id from agents.list"},
                    "last": {"type": "integer", "minimum": 1, "maximum": 200, "description": "how many items (default 20)"},
                    "since": {"type": "string", "description": "only items after this item_id"},
                    "full": {"type": "boolean", "description": "include thinking and tool calls"}}})
        },
        output: "[{item_id, turn_id, kind: user|agent|thinking|tool, text, tool?, restored?}]",
    },
    OpSpec {
        name: "agent.send",
        description: "Send a message to a pane you may message. It runs after the pane's current turn (or now with steer: true). The target sees who sent it. Returns a message_id for agent.wait.",
        input_schema: || {
            json!({"type": "object", "required": ["agent", "text"], "additionalProperties": false,
                "properties": {
                    "agent": {"type": "string"},
                    "text": {"type": "string"},
                    "steer": {"type": "boolean", "description": "deliver now: into the running turn, or interrupt it"}}})
        },
        output: "{message_id, queued}",
    },
    OpSpec {
        name: "agent.wait",
        description: "Wait for the turn that answers a message (by message_id, or the last message you sent to agent) and return its final text.",
        input_schema: || {
            json!({"type": "object", "additionalProperties": false,
                "properties": {
                    "message_id": {"type": "string"},
                    "agent": {"type": "string", "description": "wait for your last message to this pane"},
                    "timeout_secs": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "default 300"}}})
        },
        output: "{status: completed|cancelled|error, turn_id, text, error?}",
    },
    OpSpec {
        name: "agent.interrupt",
        description: "Interrupt the running turn of a pane you may message.",
        input_schema: || {
            json!({"type": "object", "required": ["agent"], "additionalProperties": false,
                "properties": {"agent": {"type": "string"}}})
        },
        output: "{interrupted}",
    },
    OpSpec {
        name: "agent.approve",
        description: "Allow the tool call a pane you may message waits on (agents.list shows state awaiting_approval and the request). The oldest request unless request_id names one; always: true allows the tool for the rest of its session.",
        input_schema: || {
            json!({"type": "object", "required": ["agent"], "additionalProperties": false,
                "properties": {
                    "agent": {"type": "string"},
                    "request_id": {"type": "string"},
                    "always": {"type": "boolean"}}})
        },
        output: "{request_id, tool, decision}",
    },
    OpSpec {
        name: "agent.deny",
        description: "Deny the tool call a pane you may message waits on; the reason reaches that agent.",
        input_schema: || {
            json!({"type": "object", "required": ["agent"], "additionalProperties": false,
                "properties": {
                    "agent": {"type": "string"},
                    "request_id": {"type": "string"},
                    "reason": {"type": "string"}}})
        },
        output: "{request_id, tool, decision}",
    },
    OpSpec {
        name: "agent.spawn",
        description: "Start a helper agent in a new pane (as many as your can_spawn allows): a copy of one of hive's configured agents (template) or a provider with its defaults, in your directory (or a subdirectory), optionally in a git worktree of its own. With task, it gets that as its first message: agent.wait {agent: <its id>} returns its answer. You may message, wait for, interrupt, approve for and close the agents you spawned.",
        input_schema: || {
            json!({"type": "object", "additionalProperties": false,
                "properties": {
                    "template": {"type": "string", "description": "an agent id of hive's config to copy"},
                    "provider": {"type": "string", "description": "or a provider: claude, codex, gemini, pi, openai, acp, script"},
                    "id": {"type": "string", "description": "the new pane's id (default: yours, then the template's)"},
                    "task": {"type": "string", "description": "its first message"},
                    "model": {"type": "string"},
                    "cwd": {"type": "string", "description": "a subdirectory of yours (default: your directory)"},
                    "worktree": {"type": "boolean", "description": "in a git worktree of its own"},
                    "can_message": {"type": "array", "items": {"type": "string"}, "description": "panes it may message (only among yours, and you)"}}})
        },
        output: "{agent, message_id?, queued?}",
    },
    OpSpec {
        name: "agent.close",
        description: "Close a pane you spawned (and the ones it spawned): its agent stops; its history stays.",
        input_schema: || {
            json!({"type": "object", "required": ["agent"], "additionalProperties": false,
                "properties": {"agent": {"type": "string"}}})
        },
        output: "{closed: [ids]}",
    },
];

pub fn find(name: &str) -> Option<&'static OpSpec> {
    OPERATIONS.iter().find(|o| o.name == name)
}

pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(300);
const MAX_WAIT: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct OpError {
    pub code: &'static str,
    pub message: String,
}

impl OpError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({"code": self.code, "message": self.message})
    }

    /// `code` read back off a socket or a remote hive as one of ours (codes
    /// are `&'static str`), so `hive mcp` says what an in-process agent is
    /// told; `None` for a code hive does not make.
    pub(crate) fn known(code: &str) -> Option<&'static str> {
        CODES.iter().find(|c| **c == code).copied()
    }
}

/// Every code an `OpError` is made with (a test checks src/ for others).
const CODES: &[&str] = &[
    "budget_reached",
    "budget_unknown",
    "invalid_args",
    "message_loop",
    "no_approval",
    "no_message",
    "not_allowed",
    "rate_limited",
    "spawn_depth",
    "spawn_limit",
    "team_limit",
    "timeout",
    "too_deep",
    "unavailable",
    "unknown_agent",
    "unknown_message",
    "unknown_op",
    "unknown_tool",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    agent: String,
    last: Option<usize>,
    since: Option<String>,
    #[serde(default)]
    full: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    agent: String,
    text: String,
    #[serde(default)]
    steer: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WaitArgs {
    message_id: Option<String>,
    agent: Option<String>,
    timeout_secs: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentArg {
    agent: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveArgs {
    agent: String,
    request_id: Option<String>,
    #[serde(default)]
    always: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DenyArgs {
    agent: String,
    request_id: Option<String>,
    reason: Option<String>,
}

fn args<T: serde::de::DeserializeOwned>(op: &str, v: Value) -> Result<T, OpError> {
    let v = if v.is_null() { json!({}) } else { v };
    serde_json::from_value(v).map_err(|e| {
        OpError::new(
            "invalid_args",
            format!("{op}: {e} (see hive_schema for its arguments)"),
        )
    })
}

/// `agent.spawn` and `agent.close` (issue 32).
fn parse_team(name: &str, arguments: Value) -> Result<Verb, OpError> {
    if name == "agent.close" {
        let a: AgentArg = args(name, arguments)?;
        // With the helpers it spawned; its worktree stays.
        return Ok(Verb::Close {
            pane: a.agent,
            team: true,
            discard: false,
        });
    }
    let a: SpawnArgs = args(name, arguments)?;
    if a.template.is_some() == a.provider.is_some() {
        return Err(OpError::new(
            "invalid_args",
            "agent.spawn: give template or provider (one of them)",
        ));
    }
    Ok(Verb::Spawn(a))
}

/// An operation's call (its name and JSON arguments) as the verb it asks
/// for: agents' encoding of the one request (src/protocol/verb.rs).
pub fn parse(name: &str, arguments: Value) -> Result<Verb, OpError> {
    Ok(match name {
        "agents.list" => {
            args::<NoArgs>(name, arguments)?;
            Verb::List
        }
        "agent.read" => {
            let a: ReadArgs = args(name, arguments)?;
            Verb::Read {
                pane: a.agent,
                last: a.last.unwrap_or(20).clamp(1, 200),
                since: a.since,
                full: a.full,
            }
        }
        "agent.send" => {
            let a: SendArgs = args(name, arguments)?;
            if a.text.trim().is_empty() {
                return Err(OpError::new("invalid_args", "agent.send: text is empty"));
            }
            Verb::Send {
                pane: a.agent,
                text: a.text,
                steer: a.steer,
            }
        }
        "agent.wait" => {
            let a: WaitArgs = args(name, arguments)?;
            let target = match (a.message_id, a.agent) {
                (Some(m), _) => WaitFor::Message(m),
                (None, Some(agent)) => WaitFor::Agent(agent),
                (None, None) => {
                    return Err(OpError::new(
                        "invalid_args",
                        "agent.wait: give message_id or agent",
                    ));
                }
            };
            let timeout = a
                .timeout_secs
                .map(Duration::from_secs)
                .unwrap_or(DEFAULT_WAIT)
                .min(MAX_WAIT);
            Verb::Wait {
                target,
                timeout: Some(timeout),
            }
        }
        "agent.interrupt" => {
            let a: AgentArg = args(name, arguments)?;
            Verb::Interrupt { pane: a.agent }
        }
        "agent.approve" => {
            use crate::provider::PermissionDecision::{AllowAlways, AllowOnce};
            let a: ApproveArgs = args(name, arguments)?;
            Verb::Answer {
                pane: a.agent,
                request_id: a.request_id,
                decision: if a.always { AllowAlways } else { AllowOnce },
            }
        }
        "agent.deny" => {
            let a: DenyArgs = args(name, arguments)?;
            let reason = crate::control::protocol::deny_reason(a.reason, "hive's operations");
            Verb::Answer {
                pane: a.agent,
                request_id: a.request_id,
                decision: crate::provider::PermissionDecision::Deny { reason },
            }
        }
        "agent.spawn" | "agent.close" => parse_team(name, arguments)?,
        other => {
            let known: Vec<&str> = OPERATIONS.iter().map(|o| o.name).collect();
            return Err(OpError::new(
                "unknown_op",
                format!("no operation `{other}`; known: {}", known.join(", ")),
            ));
        }
    })
}

/// A request for the app's loop; the answer comes back on `reply`.
#[derive(Debug)]
pub struct HiveRequest {
    pub caller: Caller,
    pub verb: Verb,
    pub reply: oneshot::Sender<Result<Value, OpError>>,
}

/// The sending side, one per caller.
#[derive(Debug, Clone)]
pub(crate) struct HiveClient {
    tx: mpsc::UnboundedSender<HiveRequest>,
    caller: Caller,
}

impl HiveClient {
    pub(crate) fn new(tx: mpsc::UnboundedSender<HiveRequest>, caller: Caller) -> Self {
        Self { tx, caller }
    }

    pub(crate) async fn call(&self, verb: Verb) -> Result<Value, OpError> {
        let timeout = verb.timeout();
        let (reply, rx) = oneshot::channel();
        let req = HiveRequest {
            caller: self.caller.clone(),
            verb,
            reply,
        };
        self.tx.send(req).map_err(|_| gone())?;
        answer(timeout, rx).await
    }

    pub(crate) async fn call_named(&self, name: &str, arguments: Value) -> Result<Value, OpError> {
        self.call(parse(name, arguments)?).await
    }
}

fn gone() -> OpError {
    OpError::new("unavailable", "hive is shutting down")
}

/// The answer to a request, waited for at most `timeout` (an `agent.wait`'s).
pub(crate) async fn answer(
    timeout: Option<std::time::Duration>,
    rx: oneshot::Receiver<Result<Value, OpError>>,
) -> Result<Value, OpError> {
    match timeout {
        None => rx.await.map_err(|_| gone())?,
        Some(t) => match tokio::time::timeout(t, rx).await {
            Ok(r) => r.map_err(|_| gone())?,
            Err(_) => Err(OpError::new(
                "timeout",
                format!("no answer within {} s", t.as_secs()),
            )),
        },
    }
}

/// Something that runs operations by name: the app's channel in-process
/// (`HiveClient`), or the control socket from `hive mcp`
/// (`remote::SocketOps`). The meta-tools run over either.
pub trait Ops: Send + Sync {
    fn call_op(&self, name: &str, arguments: Value) -> BoxFuture<'static, Result<Value, OpError>>;
}

impl Ops for HiveClient {
    fn call_op(&self, name: &str, arguments: Value) -> BoxFuture<'static, Result<Value, OpError>> {
        let client = self.clone();
        let name = name.to_owned();
        Box::pin(async move { client.call_named(&name, arguments).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_checks_names_and_arguments() {
        assert_eq!(parse("agents.list", Value::Null).unwrap(), Verb::List);
        let e = parse("agent.sned", json!({})).unwrap_err();
        assert_eq!(e.code, "unknown_op");
        assert!(e.message.contains("agent.send"));
        let e = parse("agent.send", json!({"agent": "b"})).unwrap_err();
        assert!(e.message.contains("text"), "{e}");
        let e = parse("agent.send", json!({"agent": "b", "text": "x", "bogus": 1})).unwrap_err();
        assert!(e.message.contains("bogus"), "{e}");
        assert_eq!(
            parse("agent.wait", json!({"agent": "b", "timeout_secs": 9999})).unwrap(),
            Verb::Wait {
                target: WaitFor::Agent("b".into()),
                timeout: Some(MAX_WAIT)
            }
        );
        assert!(parse("agent.wait", json!({})).is_err());
    }

    #[test]
    fn every_operation_has_an_object_schema_and_parses() {
        for op in OPERATIONS {
            let s = (op.input_schema)();
            assert_eq!(s["type"], "object", "{}", op.name);
            // An unknown name is the only way parse refuses a known op
            // without looking at arguments.
            assert_ne!(
                parse(op.name, json!({})).err().map(|e| e.code),
                Some("unknown_op")
            );
        }
    }
}
