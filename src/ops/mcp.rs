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

use super::remote::SocketOps;

/// The MCP server's handler: stateless, every call goes to the hive.
#[derive(Debug, Clone)]
pub(crate) struct HiveMcp {
    pub ops: SocketOps,
}

/// The meta-tools as MCP tools.
pub(crate) fn tools() -> Vec<Tool> {
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

/// Serves MCP on stdin/stdout until the client hangs up.
pub(crate) async fn serve(ops: SocketOps) -> anyhow::Result<()> {
    // stdin read with a cap: an oversized request gets an error reply.
    let (io, written) = super::mcp_io::capped_stdio();
    let service = HiveMcp { ops }.serve(io).await?;
    service.waiting().await?;
    let _ = written.await;
    Ok(())
}
