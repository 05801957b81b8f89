//! One `[[agent]]` table: who the agent is and how its provider starts it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::protocol::snapshot::PaneCard;

/// What Enter does while a turn runs (DESIGN §5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueMode {
    /// Run after the current turn.
    #[default]
    Queue,
    /// Deliver now (steer).
    Interrupt,
}

/// What a pane does when its vendor's usage or rate limit is hit
/// (docs/usage.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnLimit {
    /// Hold the queue until the limit resets (`resend_on_limit`).
    #[default]
    Wait,
    /// Switch to the provider's next `[[account]]` not limited, with the
    /// conversation, and go on at once; wait when every one is.
    NextAccount,
}

// No `deny_unknown_fields`: the keys no field names go to `settings`,
// which the config checks against the providers' own keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentConfig {
    /// Stable id: history, session state and `hive run --agent` use it.
    pub id: String,
    /// Pane title; defaults to the id.
    #[serde(default)]
    pub name: Option<String>,
    /// Provider name from the registry (`script`, `claude`, `codex`, …).
    pub provider: String,
    #[serde(default)]
    pub model: Option<String>,
    /// Working directory of the agent; relative paths resolve against the
    /// directory hive was started in.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Program and leading arguments, replacing the provider's default
    /// executable (e.g. `["npx", "claude-code-acp"]`, or a wrapper script).
    #[serde(default)]
    pub command: Vec<String>,
    /// Extra arguments appended to the provider's command line.
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub queue_mode: QueueMode,
    /// Passed to agents that have one (Claude `--permission-mode`, Codex
    /// approval policy, …).
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// hive's approval preset (docs/policy.md): `read-only`, `edit` or
    /// `yolo`; also picks the vendor's own mode when `permission_mode` is
    /// unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<crate::policy::Preset>,
    /// Rules for this agent's requests, after the config's `[[policy]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy_rules: Vec<super::policy::PolicyRule>,
    /// Thinking / reasoning effort where the agent supports it.
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub system_prompt: Option<String>,
    #[serde(default)]
    pub(crate) allowed_tools: Vec<String>,
    /// Provider-specific transport (`codex`: `app-server` or `exec`).
    #[serde(default)]
    pub transport: Option<String>,
    /// `script` provider: the scenario file.
    #[serde(default)]
    pub script: Option<PathBuf>,
    /// Run in a git worktree of its own: `true` (branch `hive/<id>`) or a
    /// branch name (docs/worktrees.md).
    #[serde(default)]
    pub worktree: Option<WorktreeSetting>,
    /// A new worktree starts with the main checkout's uncommitted changes.
    #[serde(default)]
    pub worktree_copy_uncommitted: bool,
    /// Several repositories in one workspace (issue 52, docs/workspaces.md):
    /// each gets a worktree on the agent's branch under one root, which is
    /// the agent's cwd. Needs `worktree`; relative to the config's directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repos: Vec<PathBuf>,
    /// Set by hive, never by config: a workspace's repositories (under
    /// its cwd), for the agents that take extra roots (Claude Code
    /// `--add-dir`, Gemini `--include-directories`).
    #[serde(skip)]
    pub extra_roots: Vec<PathBuf>,
    /// The model's context window in tokens, for the pane's context gauge
    /// where the agent does not report one (`openai` also compacts by it).
    #[serde(default)]
    pub context_window: Option<u64>,
    /// A turn that failed on the vendor's rate limit or quota goes back to
    /// the front of the queue and is sent again when the limit resets
    /// (docs/usage.md); `false` leaves it to the user.
    #[serde(default = "yes")]
    pub resend_on_limit: bool,
    /// `"wait"` (the default) or `"next-account"`.
    #[serde(default)]
    pub on_limit: OnLimit,
    /// What the pane's turns may spend (USD, tokens of every kind) since
    /// hive started it: past 80 % a notice, at 100 % new turns wait for
    /// the user to raise it or stop (docs/usage.md).
    #[serde(default)]
    pub budget_usd: Option<f64>,
    #[serde(default)]
    pub budget_tokens: Option<u64>,
    /// Flag the pane when its agent's processes use more CPU than this
    /// (percent of one core) or more memory than this (MiB).
    #[serde(default)]
    pub max_cpu_percent: Option<f64>,
    #[serde(default)]
    pub max_rss_mb: Option<u64>,
    /// Run once in a new worktree before the agent starts (`["npm", "ci"]`).
    #[serde(default)]
    pub worktree_setup: Vec<String>,
    /// Provider-specific settings that have no common field.
    #[serde(default)]
    pub options: toml::Table,
    /// Give the agent hive's operations as tools (docs/operations.md).
    #[serde(default)]
    pub hive_tools: bool,
    /// Pane ids this agent may message through hive's operations.
    #[serde(default)]
    pub can_message: Vec<String>,
    /// How many helpers this agent may have running at once through
    /// `agent.spawn` (issue 32; 0: none).
    #[serde(default)]
    pub can_spawn: usize,
    /// What this agent's helpers may spend together (USD): past it,
    /// `agent.spawn` refuses.
    #[serde(default)]
    pub spawn_budget_usd: Option<f64>,
    /// Set by hive when it starts a `hive_tools` agent, never by config:
    /// the `hive mcp` server for this pane, which each provider adds to its
    /// agent's MCP config in the agent's own way.
    #[serde(skip)]
    pub hive_mcp: Option<McpServerConfig>,
    /// Which of the config's `[[mcp_server]]`s this agent gets: all when
    /// unset or `true`, none for `false`, or the ones a list names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<super::McpChoice>,
    /// Set by hive from `[[mcp_server]]` and `mcp`, never by the agent
    /// table: the user's MCP servers, which each provider gives its agent
    /// beside `hive_mcp` (docs/config.md).
    #[serde(skip)]
    pub shared_mcp: Vec<McpServerConfig>,
    /// The `[[host]]` this agent runs on (issue 49, docs/hosts.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `"bwrap"`: the agent in a bubblewrap sandbox (docs/sandbox.md);
    /// `"none"`: not even the `[sandbox]` default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The CPU this agent's processes may use, in cores (`1.5`), and their
    /// memory (`"2G"`): a cgroup or an rlimit (issue 49, docs/sandbox.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// An agent idle this long (`"30m"`) has its process stopped; the next
    /// message starts it again on the same session (docs/sandbox.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_stop_after: Option<String>,
    /// Set by hive from `host`, `sandbox` and `[sandbox]`, never by the
    /// agent table: the transport its processes are started through.
    #[serde(skip)]
    pub exec: Option<crate::exec::ExecHost>,
    /// This agent's instruction file, relative to its cwd; unset: the
    /// config's `instructions`, else what the project has
    /// (`provider::instructions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The `[[account]]` of its provider it runs under (its variables go
    /// into the agent's environment when the config is loaded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// Set by hive from `[limits] max_line_bytes`, never by the agent
    /// table: the longest line its provider reads from the agent.
    #[serde(skip, default = "default_max_line")]
    pub(crate) max_line_bytes: usize,
    /// The keys of the table that no field above names: its provider's own
    /// settings, written directly on the agent table (`openai`'s
    /// `base_url`, …). The provider reads them
    /// (`provider::ProviderDescriptor::settings`); loading the config
    /// rejects a key no provider knows (`Config::check`).
    #[serde(flatten)]
    pub settings: toml::Table,
}

fn yes() -> bool {
    true
}

fn default_max_line() -> usize {
    super::DEFAULT_MAX_LINE
}

/// One MCP server: stdio (`{ name, command, args, env }`) or HTTP
/// (`{ name, url, headers }`). Its `Debug` names the keys of `env` and
/// `headers` but never their values, which are where tokens go.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// An HTTP (streamable) server's address, instead of `command`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent to an HTTP server (`Authorization`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl McpServerConfig {
    /// A stdio server.
    pub fn stdio(name: &str, command: &str, args: &[&str]) -> Self {
        Self {
            name: name.to_owned(),
            command: command.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
            url: None,
            headers: BTreeMap::new(),
        }
    }
}

impl std::fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
        f.debug_struct("McpServerConfig")
            .field("name", &self.name)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &keys(&self.env))
            .field("url", &self.url)
            .field("headers", &keys(&self.headers))
            .finish()
    }
}

/// `worktree = true | false | "branch-name"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WorktreeSetting {
    Enabled(bool),
    Branch(String),
}

impl AgentConfig {
    /// What a console is told of this agent (issue 44): its title, provider,
    /// model and limits; nothing of how it starts (env, command line,
    /// system prompt, settings), which is where secrets are.
    pub fn card(&self) -> PaneCard {
        PaneCard {
            id: self.id.clone(),
            name: self.name.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            effort: self.thinking.clone(),
            cwd: self.cwd.clone(),
            context_window: self.context_window,
            max_cpu_percent: self.max_cpu_percent,
            max_rss_mb: self.max_rss_mb,
            try_words: Vec::new(),
        }
    }

    /// A console's model of a pane's agent, from its card: only what the
    /// card says, the rest as an unconfigured agent has it.
    pub fn from_card(card: &PaneCard) -> Self {
        Self {
            name: card.name.clone(),
            model: card.model.clone(),
            thinking: card.effort.clone(),
            cwd: card.cwd.clone(),
            context_window: card.context_window,
            max_cpu_percent: card.max_cpu_percent,
            max_rss_mb: card.max_rss_mb,
            ..Self::new(&card.id, &card.provider)
        }
    }

    /// A minimal agent, for tests and `hive run` defaults.
    pub fn new(id: &str, provider: &str) -> Self {
        Self {
            id: id.to_owned(),
            name: None,
            provider: provider.to_owned(),
            model: None,
            cwd: None,
            command: Vec::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            queue_mode: QueueMode::Queue,
            permission_mode: None,
            policy: None,
            policy_rules: Vec::new(),
            thinking: None,
            system_prompt: None,
            allowed_tools: Vec::new(),
            transport: None,
            script: None,
            worktree: None,
            worktree_copy_uncommitted: false,
            repos: Vec::new(),
            extra_roots: Vec::new(),
            context_window: None,
            resend_on_limit: true,
            on_limit: OnLimit::Wait,
            budget_usd: None,
            budget_tokens: None,
            max_cpu_percent: None,
            max_rss_mb: None,
            worktree_setup: Vec::new(),
            options: toml::Table::new(),
            hive_tools: false,
            can_message: Vec::new(),
            can_spawn: 0,
            spawn_budget_usd: None,
            hive_mcp: None,
            mcp: None,
            shared_mcp: Vec::new(),
            instructions: None,
            account: None,
            max_line_bytes: super::DEFAULT_MAX_LINE,
            host: None,
            sandbox: None,
            cpu: None,
            memory: None,
            idle_stop_after: None,
            exec: None,
            settings: toml::Table::new(),
        }
    }

    /// A missing working directory, named as such (spawning in it would
    /// report the *program* as not found).
    pub(crate) fn check_cwd(&self) -> Result<(), String> {
        match &self.cwd {
            Some(cwd) if !cwd.exists() => Err(format!(
                "working directory `{}` (cwd) does not exist",
                cwd.display()
            )),
            Some(cwd) if !cwd.is_dir() => Err(format!(
                "working directory `{}` (cwd) is not a directory",
                cwd.display()
            )),
            _ => Ok(()),
        }
    }

    /// The agent table's keys named in `keys`, common fields and the
    /// provider's own alike: a provider key that shares its name with a
    /// common field (`openai`'s `permission_mode`) is parsed into that
    /// field, never into `settings`, and must still reach the provider.
    pub(crate) fn table_of(&self, keys: &[&str]) -> toml::Table {
        let whole = toml::Table::try_from(self).unwrap_or_else(|_| self.settings.clone());
        whole
            .into_iter()
            .filter(|(k, _)| keys.contains(&k.as_str()))
            .collect()
    }

    /// Sets one of the provider's own keys (`settings`) as the agent table
    /// would (`a.set("base_url", "http://…")`).
    pub fn set(&mut self, key: &str, value: impl Serialize) -> Result<(), toml::ser::Error> {
        self.settings
            .insert(key.to_owned(), toml::Value::try_from(value)?);
        Ok(())
    }

    /// Every MCP server the agent is given: hive's own first (when it has
    /// `hive_tools`), then the user's.
    pub fn mcp_servers(&self) -> impl Iterator<Item = &McpServerConfig> {
        self.hive_mcp.iter().chain(&self.shared_mcp)
    }

    /// Whether the agent is given any MCP server.
    pub fn has_mcp(&self) -> bool {
        self.mcp_servers().next().is_some()
    }

    /// Its `cpu` and `memory` (checked when the config is loaded).
    pub fn resources(&self) -> Result<crate::exec::Resources, String> {
        use crate::exec::limits::{parse_cpu, parse_memory};
        Ok(crate::exec::Resources {
            cpu: self.cpu.map(parse_cpu).transpose()?,
            memory: self.memory.as_deref().map(parse_memory).transpose()?,
        })
    }

    /// Its `idle_stop_after`: at least a second, at most a week.
    pub fn idle_stop(&self) -> Result<Option<std::time::Duration>, String> {
        let Some(text) = self.idle_stop_after.as_deref() else {
            return Ok(None);
        };
        let d = humantime::parse_duration(text.trim()).map_err(|e| {
            format!("idle_stop_after = \"{text}\": {e} (write it as \"30m\" or \"2h\")")
        })?;
        if d < std::time::Duration::from_secs(1) || d.as_secs() > 7 * 24 * 3600 {
            return Err(format!(
                "idle_stop_after = \"{text}\": give between a second and a week"
            ));
        }
        Ok(Some(d))
    }

    pub(crate) fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }

    /// The program to run and its leading arguments: `command` if set,
    /// otherwise the provider's default executable.
    pub fn program(&self, default: &str) -> (String, Vec<String>) {
        match self.command.split_first() {
            Some((p, rest)) => (p.clone(), rest.to_vec()),
            None => (default.to_owned(), Vec::new()),
        }
    }
}
