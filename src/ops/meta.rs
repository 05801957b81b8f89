//! The seed's four discovery + call meta-tools over hive's operations:
//! `hive_list`, `hive_search`, `hive_schema`, `hive_call`. A model always
//! sees these four small, fixed schemas, never one tool per operation, and
//! finds operations the way an MCP client does. The MCP server (`hive mcp`)
//! offers the same four through `definitions` and `call`.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{Caller, HiveClient, HiveRequest, OPERATIONS, OpError, Ops, find};
use crate::config::AgentConfig;
use crate::provider::toolbox::{ToolDef, ToolResult, Toolbox, ToolboxFactory};

/// At most this many operations in one `hive_call`.
const MAX_BATCH: usize = 16;

pub fn definitions() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "hive_list".into(),
            description: "List hive's operations (other agent panes you can list, read, message, wait for and interrupt). Optional namespace filter, e.g. \"agent\".".into(),
            parameters: json!({"type": "object", "additionalProperties": false,
                "properties": {"namespace": {"type": "string"}}}),
        },
        ToolDef {
            name: "hive_search".into(),
            description: "Search hive's operations by words in their name or description.".into(),
            parameters: json!({"type": "object", "required": ["q"], "additionalProperties": false,
                "properties": {"q": {"type": "string"}}}),
        },
        ToolDef {
            name: "hive_schema".into(),
            description: "The input schema and output of one hive operation.".into(),
            parameters: json!({"type": "object", "required": ["op"], "additionalProperties": false,
                "properties": {"op": {"type": "string", "description": "e.g. agent.send"}}}),
        },
        ToolDef {
            name: "hive_call".into(),
            description: "Run hive operations in order, e.g. {\"calls\": [{\"op\": \"agent.send\", \"args\": {\"agent\": \"backend\", \"text\": \"…\"}}, {\"op\": \"agent.wait\", \"args\": {\"agent\": \"backend\"}}]}. Returns one result per call.".into(),
            parameters: json!({"type": "object", "required": ["calls"], "additionalProperties": false,
                "properties": {"calls": {"type": "array", "minItems": 1, "maxItems": MAX_BATCH,
                    "items": {"type": "object", "required": ["op"], "additionalProperties": false,
                        "properties": {"op": {"type": "string"}, "args": {"type": "object"}}}}}}),
        },
    ]
}

fn list(args: &Value) -> Value {
    let ns = args.get("namespace").and_then(Value::as_str).unwrap_or("");
    let ops: Vec<Value> = OPERATIONS
        .iter()
        .filter(|o| o.name.starts_with(ns))
        .map(|o| o.summary())
        .collect();
    Value::Array(ops)
}

fn search(args: &Value) -> Value {
    let q = args
        .get("q")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_lowercase();
    let words: Vec<&str> = q.split_whitespace().collect();
    let ops: Vec<Value> = OPERATIONS
        .iter()
        .filter(|o| {
            let hay = format!("{} {}", o.name, o.description).to_lowercase();
            words.is_empty() || words.iter().any(|w| hay.contains(w))
        })
        .map(|o| o.summary())
        .collect();
    Value::Array(ops)
}

fn schema(args: &Value) -> Result<Value, OpError> {
    let name = args.get("op").and_then(Value::as_str).unwrap_or("");
    find(name).map(|o| o.schema()).ok_or_else(|| {
        OpError::new(
            "unknown_op",
            format!("no operation `{name}`; hive_list shows them"),
        )
    })
}

/// Runs a `hive_call` batch in order: each result is `{op, ok, result}` or
/// `{op, ok: false, error}`; one failure does not stop the others.
pub(crate) async fn call_batch(client: &dyn Ops, args: &Value) -> Result<Value, OpError> {
    let calls = args
        .get("calls")
        .and_then(Value::as_array)
        .ok_or_else(|| OpError::new("invalid_args", "hive_call needs {\"calls\": [...]}"))?;
    if calls.len() > MAX_BATCH {
        return Err(OpError::new(
            "invalid_args",
            format!("at most {MAX_BATCH} calls at once"),
        ));
    }
    let mut results = Vec::new();
    for c in calls {
        let op = c.get("op").and_then(Value::as_str).unwrap_or("");
        let a = c.get("args").cloned().unwrap_or(Value::Null);
        results.push(match client.call_op(op, a).await {
            Ok(r) => json!({"op": op, "ok": true, "result": r}),
            Err(e) => json!({"op": op, "ok": false, "error": e.to_json()}),
        });
    }
    Ok(Value::Array(results))
}

/// Runs one meta-tool call.
pub async fn run(client: &dyn Ops, name: &str, args: &Value) -> Result<Value, OpError> {
    match name {
        "hive_list" => Ok(list(args)),
        "hive_search" => Ok(search(args)),
        "hive_schema" => schema(args),
        "hive_call" => call_batch(client, args).await,
        other => Err(OpError::new(
            "unknown_tool",
            format!(
                "no tool `{other}`; the hive tools are hive_list, hive_search, hive_schema, hive_call"
            ),
        )),
    }
}

/// Toolboxes for the direct agents: the meta-tools for every agent with
/// `hive_tools = true`, calling as that agent.
pub fn toolbox_factory(tx: mpsc::UnboundedSender<HiveRequest>) -> ToolboxFactory {
    Arc::new(move |agent: &AgentConfig| {
        agent.hive_tools.then(|| {
            Arc::new(MetaTools {
                client: HiveClient::new(tx.clone(), Caller::Agent(agent.id.clone())),
            }) as Arc<dyn Toolbox>
        })
    })
}

/// The meta-tools as the direct agent's toolbox.
pub(crate) struct MetaTools {
    pub client: HiveClient,
}

impl Toolbox for MetaTools {
    fn definitions(&self) -> Vec<ToolDef> {
        definitions()
    }

    fn call(&self, name: &str, arguments: Value) -> BoxFuture<'static, ToolResult> {
        let client = self.client.clone();
        let name = name.to_owned();
        Box::pin(async move {
            run(&client, &name, &arguments)
                .await
                .map(|v| v.to_string())
                .map_err(|e| e.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_finds_operations() {
        let all = list(&json!({}));
        assert_eq!(all.as_array().unwrap().len(), OPERATIONS.len());
        let agent_ops = list(&json!({"namespace": "agents"}));
        assert_eq!(agent_ops[0]["op"], "agents.list");
        let found = search(&json!({"q": "interrupt"}));
        assert!(
            found
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o["op"] == "agent.interrupt")
        );
        let s = schema(&json!({"op": "agent.send"})).unwrap();
        assert_eq!(s["inputSchema"]["required"], json!(["agent", "text"]));
        assert_eq!(schema(&json!({"op": "x"})).unwrap_err().code, "unknown_op");
        // Function names cannot contain dots.
        assert!(definitions().iter().all(|d| !d.name.contains('.')));
    }
}
