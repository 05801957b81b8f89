//! The direct agent's MCP servers (`mcp_servers = [{ name, command, args,
//! env }]`, or `{ name, url, headers }`): started over stdio, or reached
//! over streamable HTTP (mcp_http.rs), with rmcp's client when the agent starts,
//! their tools offered to the model next to hive's meta-tools as
//! `<server>__<tool>`, each call sent to its server. A server that cannot
//! start is reported (the caller shows it in the pane) and left out; the
//! agent works on without it.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use super::tools::{ToolDef, ToolResult, Toolbox};
use crate::config::McpServerConfig;

/// How long a server may take to start and list its tools.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Function names: `^[a-zA-Z0-9_-]{1,64}$`.
const MAX_NAME: usize = 64;

/// The tools of every server that started. Dropping it stops the servers.
pub(super) struct McpToolbox {
    defs: Vec<ToolDef>,
    /// Function name → (server, the server's own tool name).
    routes: HashMap<String, (Peer<RoleClient>, String)>,
    _services: Vec<RunningService<RoleClient, ()>>,
}

/// Starts `servers` (all at once) in `cwd`; returns the toolbox of those
/// that came up and one message per server that did not.
pub(super) async fn start(
    servers: &[McpServerConfig],
    cwd: Option<&std::path::Path>,
) -> (Option<McpToolbox>, Vec<String>) {
    let started = futures::future::join_all(servers.iter().map(|s| start_one(s, cwd))).await;
    let mut failures = Vec::new();
    let mut toolbox = McpToolbox {
        defs: Vec::new(),
        routes: HashMap::new(),
        _services: Vec::new(),
    };
    for (server, outcome) in servers.iter().zip(started) {
        match outcome {
            Ok((service, tools)) => {
                for t in tools {
                    let name = function_name(&server.name, &t.name);
                    if toolbox.routes.contains_key(&name) {
                        continue;
                    }
                    toolbox.defs.push(ToolDef {
                        name: name.clone(),
                        description: t.description.as_deref().unwrap_or_default().to_owned(),
                        parameters: Value::Object((*t.input_schema).clone()),
                    });
                    toolbox
                        .routes
                        .insert(name, (service.peer().clone(), t.name.to_string()));
                }
                toolbox._services.push(service);
            }
            Err(e) => failures.push(format!("MCP server `{}` did not start: {e}", server.name)),
        }
    }
    let any = !toolbox._services.is_empty();
    (any.then_some(toolbox), failures)
}

/// The agent's own `mcp_servers`, then the config's `[[mcp_server]]`s it
/// is given (issue 51) whose names its own do not take.
pub(super) fn with_shared(
    mut own: Vec<McpServerConfig>,
    agent: &crate::config::AgentConfig,
) -> Vec<McpServerConfig> {
    for s in &agent.shared_mcp {
        if !own.iter().any(|o| o.name == s.name) {
            own.push(s.clone());
        }
    }
    own
}

type Started = (RunningService<RoleClient, ()>, Vec<rmcp::model::Tool>);

async fn start_one(
    server: &McpServerConfig,
    cwd: Option<&std::path::Path>,
) -> Result<Started, String> {
    match &server.url {
        Some(url) => start_http(server, url).await,
        None => start_stdio(server, cwd).await,
    }
}

/// An HTTP server: its session opened and its tools listed.
async fn start_http(server: &McpServerConfig, url: &str) -> Result<Started, String> {
    // The address, for messages: without a user part or query (tokens).
    let shown = crate::sanitize::neutralize(&crate::config::mcp::public_url(url)).into_owned();
    let transport = super::mcp_http::transport(server, url).map_err(|e| format!("{shown}: {e}"))?;
    let handshake = async {
        let service = ().serve(transport).await.map_err(|e| e.to_string())?;
        let tools = service.list_all_tools().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((service, tools))
    };
    match tokio::time::timeout(START_TIMEOUT, handshake).await {
        Ok(Ok(started)) => Ok(started),
        Ok(Err(e)) => Err(format!("{shown}: {e}")),
        Err(_) => Err(format!(
            "{shown}: no answer within {} s",
            START_TIMEOUT.as_secs()
        )),
    }
}

/// A stdio server: started, its handshake made and its tools listed.
async fn start_stdio(
    server: &McpServerConfig,
    cwd: Option<&std::path::Path>,
) -> Result<Started, String> {
    let mut cmd = tokio::process::Command::new(&server.command);
    cmd.args(&server.args).envs(&server.env).kill_on_drop(true);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    crate::provider::process::die_with_parent(&mut cmd);
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", server.command))?;
    // Its stderr never reaches hive's terminal; the last line explains a
    // failed start.
    let last_err = Arc::new(std::sync::Mutex::new(String::new()));
    if let Some(stderr) = stderr {
        let last = Arc::clone(&last_err);
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if !line.trim().is_empty()
                    && let Ok(mut l) = last.lock()
                {
                    *l = crate::sanitize::neutralize(&line).into_owned();
                }
            }
        });
    }
    let handshake = async {
        let service = ().serve(transport).await.map_err(|e| e.to_string())?;
        let tools = service.list_all_tools().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((service, tools))
    };
    match tokio::time::timeout(START_TIMEOUT, handshake).await {
        Ok(Ok(started)) => Ok(started),
        Ok(Err(e)) => {
            let last = last_err.lock().map(|l| l.clone()).unwrap_or_default();
            Err(if last.is_empty() {
                e
            } else {
                format!("{e} ({last})")
            })
        }
        Err(_) => Err(format!("no answer within {} s", START_TIMEOUT.as_secs())),
    }
}

/// `<server>__<tool>`, reduced to the characters and length function
/// names allow.
fn function_name(server: &str, tool: &str) -> String {
    let raw = format!("{server}__{tool}");
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME)
        .collect()
}

fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Toolbox for McpToolbox {
    fn definitions(&self) -> Vec<ToolDef> {
        self.defs.clone()
    }

    fn call(&self, name: &str, arguments: Value) -> BoxFuture<'static, ToolResult> {
        let route = self.routes.get(name).cloned();
        let name = name.to_owned();
        Box::pin(async move {
            let (peer, tool) = route.ok_or_else(|| format!("no tool `{name}`"))?;
            let mut params = CallToolRequestParams::new(tool);
            if let Value::Object(args) = arguments {
                params = params.with_arguments(args);
            }
            let result = peer.call_tool(params).await.map_err(|e| e.to_string())?;
            let text = text_of(&result.content);
            if result.is_error == Some(true) {
                Err(text)
            } else {
                Ok(text)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names_are_valid() {
        assert_eq!(function_name("fs", "read_file"), "fs__read_file");
        assert_eq!(function_name("my fs", "a.b"), "my_fs__a_b");
        assert_eq!(function_name("x", &"y".repeat(100)).len(), MAX_NAME);
    }
}
