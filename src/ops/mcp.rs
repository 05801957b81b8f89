//! `hive mcp`: hive's operations as an MCP server over stdio (rmcp), so
//! Claude Code, Codex, Gemini and ACP agents call the same four meta-tools
//! the direct agent gets (`meta::definitions`). Each call goes to the
//! running console over its control socket (`remote::SocketOps`); the pane
//! the server speaks for (`--agent`, which hive passes when it starts an
//! agent with `hive_tools = true`) decides what it may reach.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{AgentConfig, McpServerConfig};

use super::remote::SocketOps;

/// The MCP server's handler: stateless, every call goes to the hive.
#[derive(Debug, Clone)]
pub struct HiveMcp {
    pub ops: SocketOps,
}

/// The meta-tools as MCP tools.
pub fn tools() -> Vec<Tool> {
    super::meta::definitions()
        .into_iter()
        .map(|d| {
            let schema = match d.parameters {
                Value::Object(o) => o,
                _ => serde_json::Map::new(),
            };
            Tool::new(d.name, d.description, schema)
        })
        .collect()
}

impl ServerHandler for HiveMcp {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder().enable_tools().build();
        let who = match &self.ops.agent {
            Some(a) => format!(" You are the pane `{a}`."),
            None => String::new(),
        };
        ServerConfig::new(caps)
            .with_server_info(Implementation::new("hive", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "hive's operations: list the other agent panes, read them, send them a message, wait for the answer, interrupt them. Start with hive_list, then hive_call.{who}"
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map_or(Value::Null, Value::Object);
        let result = match super::meta::run(&self.ops, &request.name, &args).await {
            Ok(v) => CallToolResult::success(vec![ContentBlock::text(v.to_string())]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        };
        Ok(result.into())
    }
}

/// The `hive mcp` server for a pane: this hive binary, this socket, this
/// agent. `None` when hive cannot name its own executable.
pub fn server_for(agent_id: &str, socket: &Path) -> Option<McpServerConfig> {
    let exe = std::env::current_exe().ok()?;
    Some(McpServerConfig {
        name: "hive".into(),
        command: exe.to_string_lossy().into_owned(),
        args: vec![
            "mcp".into(),
            "--socket".into(),
            socket.to_string_lossy().into_owned(),
            "--agent".into(),
            agent_id.into(),
        ],
        env: BTreeMap::new(),
    })
}

/// The agent as its provider gets it: with `hive_mcp` set when it asks
/// for hive's tools and is not the direct agent (which calls them
/// in-process) and the socket is up.
pub fn with_hive_mcp(agent: &AgentConfig, socket: Option<&Path>) -> AgentConfig {
    let mut agent = agent.clone();
    if wants_hive_mcp(&agent) {
        agent.hive_mcp = socket.and_then(|s| server_for(&agent.id, s));
        if agent.hive_mcp.is_none() {
            tracing::warn!(agent = %agent.id, "hive_tools: no control socket, so no hive mcp");
        }
    }
    agent
}

/// Whether `agent` reaches hive's operations through `hive mcp` (and so
/// needs the control socket); direct agents get them in-process.
pub fn wants_hive_mcp(agent: &AgentConfig) -> bool {
    agent.hive_tools && agent.provider != "openai"
}

/// Where a provider writes the MCP config file it points its agent at:
/// `<state dir>/mcp/<agent>.<kind>.json`.
pub fn config_file(agent_id: &str, kind: &str) -> PathBuf {
    let safe: String = agent_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    crate::paths::state_dir()
        .join("mcp")
        .join(format!("{safe}.{kind}.json"))
}

/// Writes an agent's MCP config: 0600 in a 0700 directory (it names the
/// socket that drives hive).
pub fn write_config(path: &Path, config: &Value) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = path.parent() {
        crate::private::create_dir(dir)?;
    }
    let mut f = crate::private::file_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    f.set_permissions(std::fs::Permissions::from_mode(crate::private::FILE_MODE))?;
    f.write_all(serde_json::to_string_pretty(config)?.as_bytes())
}

/// Serves MCP on stdin/stdout until the client hangs up.
pub async fn serve(ops: SocketOps) -> anyhow::Result<()> {
    // stdin read with a cap: an oversized request gets an error reply.
    let (io, written) = super::mcp_io::capped_stdio();
    let service = HiveMcp { ops }.serve(io).await?;
    service.waiting().await?;
    let _ = written.await;
    Ok(())
}
