//! How an agent gets hive's operations (docs/operations.md), as its
//! provider's descriptor declares it: in-process tools handed to the
//! provider's factory, or hive's own MCP server (`hive mcp`) written into
//! the agent's MCP config, or not at all. The MCP config files are written
//! here, so no provider reaches into `ops` (which drives the control
//! socket and so the runners and providers).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::toolbox::ToolboxFactory;
use super::{ProviderError, ProviderFactory};
use crate::config::{AgentConfig, McpServerConfig};

/// How a provider's agent reaches hive's operations.
#[derive(Clone, Copy)]
pub enum Operations {
    /// It cannot call them.
    None,
    /// The agent loop runs in hive and calls a toolbox: this builds the
    /// factory that hands each agent the host's toolbox
    /// (`Registry::with_toolbox`).
    InProcess(fn(ToolboxFactory) -> Arc<dyn ProviderFactory>),
    /// Through `hive mcp`: hive sets `AgentConfig::hive_mcp` on an agent
    /// with `hive_tools`, and the provider hands it to its agent, through
    /// this file when it needs one.
    Mcp(Option<McpFile>),
}

impl std::fmt::Debug for Operations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::InProcess(_) => f.write_str("InProcess"),
            Self::Mcp(file) => f.debug_tuple("Mcp").field(file).finish(),
        }
    }
}

/// The MCP config file an agent is pointed at:
/// `<state dir>/mcp/<agent>.<kind>.<server tag>.json`
/// holding `render(server)`.
#[derive(Clone, Copy)]
pub struct McpFile {
    pub kind: &'static str,
    pub render: fn(&McpServerConfig) -> Value,
}

impl std::fmt::Debug for McpFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpFile").field("kind", &self.kind).finish()
    }
}

impl McpFile {
    /// Where the file of `agent` goes: its id and the server it reaches
    /// name it, so two projects' agents of one id never share one (issue
    /// 46 item 1).
    pub fn path(&self, agent: &AgentConfig) -> PathBuf {
        let server = agent.hive_mcp.as_ref().map(|s| {
            let joined = s.args.join("\0");
            format!("{:08x}", crate::project::fnv1a(joined.as_bytes()) as u32)
        });
        let kind = match server {
            Some(tag) => format!("{}.{tag}", self.kind),
            None => self.kind.to_owned(),
        };
        config_file(&agent.id, &kind)
    }

    /// Writes the file for an agent with `hive_mcp`; nothing for an agent
    /// without. The agent cannot start without it, so a failure is its
    /// `ProviderError::Spawn` of `program`.
    pub fn write(&self, agent: &AgentConfig, program: &str) -> Result<(), ProviderError> {
        let Some(server) = &agent.hive_mcp else {
            return Ok(());
        };
        write_config(&self.path(agent), &(self.render)(server))
            .map_err(|source| ProviderError::spawn(&agent.id, program, source))
    }
}

/// The `hive mcp` server for a pane: this hive binary, this socket, this
/// agent. `None` when hive cannot name its own executable.
pub(crate) fn server_for(agent_id: &str, socket: &Path) -> Option<McpServerConfig> {
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

/// Where a provider writes the MCP config file it points its agent at:
/// `<state dir>/mcp/<agent>.<kind>.json`.
pub(crate) fn config_file(agent_id: &str, kind: &str) -> PathBuf {
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
pub(crate) fn write_config(path: &Path, config: &Value) -> std::io::Result<()> {
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
