//! `hive mcp`: the MCP server an agent starts (docs/operations.md). hive
//! writes this command into the agent's MCP config when `hive_tools = true`,
//! naming the socket and the agent's pane.

use std::process::ExitCode;

use clap::Args;

use crate::ops::remote::SocketOps;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The hive to talk to: a socket path, or a name in the socket dir.
    /// Default: the only one running.
    #[arg(long, env = "HIVE_SOCKET", value_name = "NAME|PATH")]
    pub socket: Option<String>,
    /// The pane this server speaks for: its `can_message` decides which
    /// panes it may reach. Without it, calls come from outside any pane.
    #[arg(long, env = "HIVE_AGENT", value_name = "ID")]
    pub agent: Option<String>,
}

pub(super) fn mcp(args: &McpArgs) -> anyhow::Result<ExitCode> {
    let ops = SocketOps {
        socket: args.socket.clone(),
        agent: args.agent.clone(),
    };
    super::runtime()?.block_on(crate::ops::mcp::serve(ops))?;
    Ok(ExitCode::SUCCESS)
}
