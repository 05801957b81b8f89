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
    /// factory that hands each agent the host's toolbox and the project's
    /// history store, where its conversation is (`Registry::with_toolbox`,
    /// `Registry::for_project`; no store: the user's).
    InProcess(fn(ToolboxFactory, Option<crate::history::Store>) -> Arc<dyn ProviderFactory>),
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
/// `<state dir>/mcp/<agent>.<kind>.<servers tag>.json`
/// holding `render(agent)`: hive's own server and the user's
/// `[[mcp_server]]`s (`AgentConfig::mcp_servers`).
#[derive(Clone, Copy)]
pub struct McpFile {
    pub kind: &'static str,
    pub render: fn(&AgentConfig) -> Value,
}

impl std::fmt::Debug for McpFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpFile").field("kind", &self.kind).finish()
    }
}

impl McpFile {
    /// Where the file of `agent` goes: its id and the servers it reaches
    /// name it, so two projects' agents of one id never share one (issue
    /// 46 item 1).
    pub fn path(&self, agent: &AgentConfig) -> PathBuf {
        // hive's server alone keeps the tag it always had.
        let mut joined = agent
            .hive_mcp
            .as_ref()
            .map(|s| s.args.join("\0"))
            .unwrap_or_default();
        for s in &agent.shared_mcp {
            let at = s.url.as_deref().unwrap_or(&s.command);
            joined.push_str(&format!("\u{1}{}\0{at}\0{}", s.name, s.args.join("\0")));
        }
        let kind = if agent.has_mcp() {
            let tag = crate::project::fnv1a(joined.as_bytes()) as u32;
            format!("{}.{tag:08x}", self.kind)
        } else {
            self.kind.to_owned()
        };
        config_file(&agent.id, &kind)
    }

    /// Writes the file for an agent with MCP servers; nothing for an agent
    /// without. The agent cannot start without it, so a failure is its
    /// `ProviderError::Spawn` of `program`.
    pub fn write(&self, agent: &AgentConfig, program: &str) -> Result<(), ProviderError> {
        if !agent.has_mcp() {
            return Ok(());
        }
        write_config(&self.path(agent), &(self.render)(agent))
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
        url: None,
        headers: BTreeMap::new(),
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
/// socket that drives hive), replaced in place: a symlink planted at its
/// path is never written through.
pub(crate) fn write_config(path: &Path, config: &Value) -> std::io::Result<()> {
    crate::private::write_own(path, serde_json::to_string_pretty(config)?.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 53 item 8: the MCP config written for a Claude pane went
    /// through a symlink planted at its path, replacing a file outside.
    /// Now the link itself is replaced; its target is left as it was.
    #[test]
    fn the_mcp_config_is_never_written_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("precious");
        std::fs::write(&outside, "keep me").unwrap();
        let path = dir.path().join("mcp/a.claude.json");
        crate::private::create_dir(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        write_config(&path, &serde_json::json!({"mcpServers": {}})).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me");
        assert!(!path.is_symlink());
        let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(written, serde_json::json!({"mcpServers": {}}));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
