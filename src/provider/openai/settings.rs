//! The keys an `openai` agent writes directly on its `[[agent]]` table
//! (`base_url`, `api_key_env`, …): read from the table's provider settings
//! (`AgentConfig::settings`), so the common agent config knows none of
//! them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::{AgentConfig, McpServerConfig, SettingsError};

/// The keys `OpenAiSettings` reads.
pub(crate) const KEYS: &[&str] = &[
    "base_url",
    "api_key_env",
    "headers",
    "max_steps",
    "temperature",
    "reasoning_effort",
    "mcp_servers",
    "tools",
    "permission_mode",
    "context_window",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiSettings {
    /// The Chat Completions endpoint (`…/v1`).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (its value is never
    /// logged).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Extra HTTP headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Model calls per turn before it ends with `max-steps`.
    #[serde(default)]
    pub max_steps: Option<u32>,
    #[serde(default)]
    pub temperature: Option<f64>,
    /// `reasoning_effort` (falls back to `thinking`).
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// MCP servers whose tools the agent gets (stdio).
    #[serde(default)]
    pub mcp_servers: Vec<McpServerConfig>,
    /// The coding tools (`read`, `write`, `edit`, `glob`, `grep`, `bash`);
    /// on unless `false` (a model that cannot call tools).
    #[serde(default)]
    pub tools: Option<bool>,
    /// Which coding-tool calls wait for the user's approval.
    #[serde(default)]
    pub permission_mode: Option<super::coding::PermissionMode>,
    /// The model's context window in tokens; past 3/4 of it older tool
    /// outputs are cleared.
    #[serde(default)]
    pub context_window: Option<u64>,
}

impl OpenAiSettings {
    /// The agent's `openai` keys; a bad value names its key
    /// (`headers.X-Title`, `mcp_servers[0].command`).
    pub fn from_agent(agent: &AgentConfig) -> Result<Self, SettingsError> {
        let own = agent.table_of(KEYS);
        serde_path_to_error::deserialize(toml::Value::Table(own)).map_err(|e| SettingsError {
            key: e.path().to_string(),
            message: format!("`{}`: {}", e.path(), e.inner().message()),
        })
    }

    /// The config check (`ProviderDescriptor::settings`).
    pub(super) fn check(agent: &AgentConfig) -> Result<(), SettingsError> {
        Self::from_agent(agent).map(drop)
    }
}
