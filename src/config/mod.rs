//! Configuration (DESIGN §7): TOML, found by `--config PATH`, `hive.toml` here
//! or in the nearest directory above (as git finds a repository),
//! `$XDG_CONFIG_HOME/hive/config.toml`, else the built-in default.

pub mod account;
mod agent;
pub mod cron;
mod forge;
mod host;
pub(crate) mod mcp;
mod notify;
mod pace;
pub(crate) mod policy;
mod prices;
mod repos;
mod trigger;
mod web;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use account::AccountConfig;
pub use agent::{AgentConfig, McpServerConfig, OnLimit, QueueMode, WorktreeSetting};
pub use forge::{ForgeSettings, MergeMethod};
pub use host::{HostConfig, SandboxSettings};
pub use mcp::McpChoice;
pub(crate) use notify::NotifyOn;
pub use notify::ReasonKind;
pub use pace::{background_every, live_every};
pub use policy::{ApprovalSettings, PolicyRule};
pub use prices::{Price, price_of};
pub use trigger::{TriggerConfig, TriggerOn};
pub use web::WebSettings;

use crate::processor::{DEFAULT_GRADIENT, ProcessorConfig};

/// The built-in default: demo agents and a shell, no API key needed.
pub(crate) const DEFAULT_CONFIG: &str = include_str!("../../config/default.toml");

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// What the providers read of an agent table beyond the common fields
/// (`AgentConfig::settings`). The provider registry answers, so that the
/// config names no provider.
pub trait ProviderSettings {
    /// Checks `agent.settings`: a key no provider reads, or a value its
    /// provider cannot use, is an error naming the key.
    fn check(&self, agent: &AgentConfig) -> Result<(), SettingsError>;
}

/// A setting of an agent table that cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The key (dotted below the agent table: `headers.X-Title`).
    pub key: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Theme name from `themes/` (`dark`, `light`).
    #[serde(default = "default_theme")]
    pub theme: String,
    #[serde(default)]
    pub processor: ProcessorSettings,
    #[serde(default)]
    pub ui: UiSettings,
    #[serde(default)]
    pub limits: Limits,
    /// Action name → key(s), e.g. `focus_next = "alt+right"`.
    #[serde(default)]
    pub keys: BTreeMap<String, KeyBinding>,
    #[serde(default, rename = "agent")]
    pub agents: Vec<AgentConfig>,
    /// MCP servers every agent gets unless its `mcp` narrows them
    /// (docs/config.md).
    #[serde(default, rename = "mcp_server")]
    pub mcp_servers: Vec<McpServerConfig>,
    /// The project's instruction file every agent is given, relative to
    /// its working directory (`"AGENTS.md"`; unset: the first of
    /// `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` the project has), each vendor
    /// through its own channel (docs/config.md).
    #[serde(default)]
    pub instructions: Option<String>,
    /// Vendor accounts agents may run under (`account = "name"`).
    #[serde(default, rename = "account")]
    pub accounts: Vec<account::AccountConfig>,
    /// Where agents' worktrees live (docs/worktrees.md).
    #[serde(default)]
    pub worktrees: WorktreeSettings,
    /// Other machines whose hive servers this console shows too
    /// (docs/remote.md).
    #[serde(default, rename = "host")]
    pub hosts: Vec<HostConfig>,
    /// The bubblewrap box of `sandbox = "bwrap"`, and whether every agent
    /// gets it (docs/sandbox.md).
    #[serde(default)]
    pub sandbox: SandboxSettings,
    /// What every pane together may spend (docs/usage.md).
    #[serde(default)]
    pub budget: BudgetSettings,
    /// Model name → its prices (docs/usage.md): how hive estimates the
    /// cost of agents that report tokens but no cost.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// The forge's CLI and the pull request watcher (docs/forge.md).
    #[serde(default)]
    pub forge: ForgeSettings,
    /// `[[trigger]]`: events that start panes by themselves (docs/forge.md).
    #[serde(default, rename = "trigger", skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<TriggerConfig>,
    /// Approval rules for every agent (docs/policy.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy: Vec<PolicyRule>,
    /// `[approvals]`: how long a card waits.
    #[serde(default)]
    pub approvals: ApprovalSettings,
    /// The web client (docs/web.md); off unless `listen` is set.
    #[serde(default)]
    pub web: WebSettings,
    /// Where this config came from (not part of the file).
    #[serde(skip)]
    pub source: ConfigSource,
}

/// One key or several for one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KeyBinding {
    One(String),
    Many(Vec<String>),
}

impl KeyBinding {
    pub fn keys(&self) -> Vec<&str> {
        match self {
            KeyBinding::One(k) => vec![k.as_str()],
            KeyBinding::Many(ks) => ks.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ConfigSource {
    #[default]
    Builtin,
    File(PathBuf),
}

impl ConfigSource {
    pub fn describe(&self) -> String {
        match self {
            ConfigSource::Builtin => "<built-in default>".into(),
            ConfigSource::File(p) => p.display().to_string(),
        }
    }

    /// The config file's path with symlinks and `.`/`..` resolved (`None`
    /// for the built-in config): how a server and a console agree on it.
    pub fn canonical_path(&self) -> Option<PathBuf> {
        match self {
            ConfigSource::Builtin => None,
            ConfigSource::File(p) => Some(
                std::fs::canonicalize(p)
                    .or_else(|_| std::path::absolute(p))
                    .unwrap_or_else(|_| p.clone()),
            ),
        }
    }

    /// Directory that relative paths in the config resolve against.
    pub(crate) fn base_dir(&self) -> Option<&Path> {
        match self {
            ConfigSource::Builtin => None,
            ConfigSource::File(p) => p.parent(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessorSettings {
    #[serde(default = "default_gradient")]
    pub batch_gradient: Vec<u64>,
    #[serde(default = "default_timeout_ms")]
    pub batch_timeout_ms: u64,
    /// First content of an item shows at most this long after its first
    /// delta (0 disables: the seed's pure gradient).
    #[serde(default = "default_first_token_ms")]
    pub(crate) first_token_ms: u64,
}

impl Default for ProcessorSettings {
    fn default() -> Self {
        Self {
            batch_gradient: default_gradient(),
            batch_timeout_ms: default_timeout_ms(),
            first_token_ms: default_first_token_ms(),
        }
    }
}

impl ProcessorSettings {
    pub(crate) fn to_config(&self) -> ProcessorConfig {
        ProcessorConfig {
            batch_gradient: self.batch_gradient.clone(),
            batch_timeout: Duration::from_millis(self.batch_timeout_ms),
            first_emit: (self.first_token_ms > 0)
                .then(|| Duration::from_millis(self.first_token_ms)),
        }
    }
}

/// `[worktrees]`: settings shared by every agent with `worktree` set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorktreeSettings {
    /// Directory for the worktrees, relative to the repository's top level
    /// (default `.hive/worktrees`); absolute paths are used as they are.
    #[serde(default)]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiSettings {
    /// Ring the terminal bell when something enters the attention inbox
    /// (`true`, or a list of reasons).
    #[serde(default)]
    pub bell: NotifyOn,
    /// Send an OSC 9 desktop notification for the same.
    #[serde(default)]
    pub(crate) osc9: NotifyOn,
    /// The same as OSC 777 (`notify;title;body`: rxvt, foot, WezTerm,
    /// Ghostty, VS Code's terminal).
    #[serde(default)]
    pub(crate) osc777: NotifyOn,
    /// A command run for each notification, `{title}`, `{body}`, `{pane}`
    /// and `{type}` replaced in its arguments (no shell):
    /// `["notify-send", "{title}", "{body}"]`, or a phone bridge (ntfy).
    #[serde(default)]
    pub notify_command: Vec<String>,
    /// The reasons `notify_command` runs for.
    #[serde(default = "notify::command_default")]
    pub notify_on: NotifyOn,
    /// At most this many commands a minute; the rest are counted into the
    /// next one's body.
    #[serde(default = "notify::per_minute_default")]
    pub notify_per_minute: u32,
    /// Start in full view (thinking and tool calls shown).
    #[serde(default = "yes")]
    pub full_view: bool,
    /// Redraw cap.
    #[serde(default = "default_fps")]
    pub(crate) max_fps: u32,
    /// How long an interrupt may take before hive ends the agent itself.
    #[serde(default = "default_interrupt_ms")]
    pub interrupt_timeout_ms: u64,
    /// How far a visible pane's text may lag what the agent sent, between
    /// the processor's gradient batches.
    #[serde(default = "default_display_latency_ms")]
    pub display_latency_ms: u64,
    /// A running turn without output this long shows "no output for N s"
    /// with the keys to interrupt or restart.
    #[serde(default = "default_stall_s")]
    pub stall_after_s: u64,
}

impl Default for UiSettings {
    fn default() -> Self {
        Self {
            bell: NotifyOn::default(),
            osc9: NotifyOn::default(),
            osc777: NotifyOn::default(),
            notify_command: Vec::new(),
            notify_on: notify::command_default(),
            notify_per_minute: notify::per_minute_default(),
            full_view: true,
            max_fps: default_fps(),
            interrupt_timeout_ms: default_interrupt_ms(),
            display_latency_ms: default_display_latency_ms(),
            stall_after_s: default_stall_s(),
        }
    }
}

/// `[budget]`: what the whole hive's turns may spend since the server
/// started (each agent's own is `budget_usd` / `budget_tokens`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSettings {
    #[serde(default)]
    pub usd: Option<f64>,
    #[serde(default)]
    pub tokens: Option<u64>,
}

/// Bounds on what an agent can make hive hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Longest protocol line read from an agent; a longer one is dropped
    /// with a notice in the pane.
    #[serde(default = "default_max_line")]
    pub(crate) max_line_bytes: usize,
    /// The most helpers one team (a pane of the user's and every helper
    /// below it) runs at once, whatever each member's `can_spawn`: each
    /// helper is an agent process (#53 item 12).
    #[serde(default = "default_max_helpers")]
    pub max_helpers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_line_bytes: default_max_line(),
            max_helpers: default_max_helpers(),
        }
    }
}

/// Default team-wide cap on helpers (`[limits] max_helpers`).
pub(crate) const DEFAULT_MAX_HELPERS: usize = 8;

fn default_max_helpers() -> usize {
    DEFAULT_MAX_HELPERS
}

/// Default cap on one protocol line (`[limits] max_line_bytes`).
pub(crate) const DEFAULT_MAX_LINE: usize = 64 << 20;

fn default_max_line() -> usize {
    DEFAULT_MAX_LINE
}

fn default_theme() -> String {
    "dark".into()
}
fn default_gradient() -> Vec<u64> {
    DEFAULT_GRADIENT.to_vec()
}
fn default_timeout_ms() -> u64 {
    1000
}
fn default_first_token_ms() -> u64 {
    100
}
fn default_fps() -> u32 {
    60
}
fn default_interrupt_ms() -> u64 {
    900
}
fn default_display_latency_ms() -> u64 {
    50
}
fn default_stall_s() -> u64 {
    60
}
fn yes() -> bool {
    true
}

impl Config {
    /// Parses config text; errors carry `path:line:column`.
    pub fn parse(text: &str, source: ConfigSource) -> Result<Self, ConfigError> {
        let path = source.describe();
        let mut config: Config = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
            // A provider's own keys are read without their spans: an
            // integer too large for them was reported at 1:1 with no key
            // (#53 item 14). Say which it is and where.
            if (line, column) == (1, 1)
                && let Some((key, line, column)) = too_large_integer(text)
            {
                return ConfigError::Parse {
                    path: path.clone(),
                    line,
                    column,
                    message: format!(
                        "`{key}`: the number is larger than a TOML integer holds ({})",
                        i64::MAX
                    ),
                };
            }
            ConfigError::Parse {
                path: path.clone(),
                line,
                column,
                message: e.message().to_owned(),
            }
        })?;
        config.source = source;
        config.validate(text)?;
        Ok(config)
    }

    #[expect(
        clippy::expect_used,
        reason = "the default is compiled in and covered by a test; failing here is a bug"
    )]
    pub fn builtin() -> Self {
        Self::parse(DEFAULT_CONFIG, ConfigSource::Builtin).expect("built-in config is valid")
    }

    pub fn from_file(path: &Path, providers: &dyn ProviderSettings) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        // Absolute, so that what the config's paths are relative to does
        // not depend on where hive runs (issue 46 item 21).
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        Self::parse_checked(&text, ConfigSource::File(path), providers)
    }

    /// Loads by the search order: `explicit`, `./hive.toml`,
    /// `$XDG_CONFIG_HOME/hive/config.toml`, the built-in default; each
    /// agent's own settings checked by `providers` (`parse_checked`).
    pub fn load(
        explicit: Option<&Path>,
        providers: &dyn ProviderSettings,
    ) -> Result<Self, ConfigError> {
        Self::find(explicit, providers)
    }

    fn find(
        explicit: Option<&Path>,
        providers: &dyn ProviderSettings,
    ) -> Result<Self, ConfigError> {
        if let Some(p) = explicit {
            return Self::from_file(p, providers);
        }
        // A project's `hive.toml` here or in a directory above, as git
        // finds its repository (issue 46 item 21).
        if let Some(local) = std::env::current_dir()
            .ok()
            .and_then(|here| find_upward(&here, "hive.toml"))
        {
            return Self::from_file(&local, providers);
        }
        if let Some(p) = crate::paths::user_config_file()
            && p.is_file()
        {
            return Self::from_file(&p, providers);
        }
        Ok(Self::builtin())
    }

    /// `parse`, then each agent's own settings checked by its provider
    /// (`providers`, the provider registry): a key no provider reads is
    /// an error at its line, as a misspelt common key is.
    pub fn parse_checked(
        text: &str,
        source: ConfigSource,
        providers: &dyn ProviderSettings,
    ) -> Result<Self, ConfigError> {
        let config = Self::parse(text, source)?;
        for (i, agent) in config.agents.iter().enumerate() {
            let Err(e) = providers.check(agent) else {
                continue;
            };
            let path = config.source.describe();
            let message = format!("agent `{}`: {}", agent.id, e.message);
            let top = e.key.split('.').next().unwrap_or_default();
            return Err(match agent_key_at(text, i, top) {
                Some((line, column)) => ConfigError::Parse {
                    path,
                    line,
                    column,
                    message,
                },
                None => ConfigError::Invalid { path, message },
            });
        }
        Ok(config)
    }

    pub fn agent(&self, id: &str) -> Option<&AgentConfig> {
        self.agents.iter().find(|a| a.id == id)
    }

    pub fn processor_config(&self) -> ProcessorConfig {
        self.processor.to_config()
    }

    /// `text` is the file's text, for positions in errors.
    fn validate(&mut self, text: &str) -> Result<(), ConfigError> {
        let path = self.source.describe();
        let invalid = |message: String| ConfigError::Invalid {
            path: path.clone(),
            message,
        };
        if self.processor.batch_gradient.is_empty() || self.processor.batch_gradient.contains(&0) {
            return Err(invalid(
                "processor.batch_gradient must be a non-empty list of positive token counts".into(),
            ));
        }
        self.check_durations().map_err(invalid)?;
        for (model, price) in &self.prices {
            price
                .check()
                .map_err(|e| invalid(format!("prices.\"{model}\": {e}")))?;
        }
        let mut seen = std::collections::HashSet::new();
        for (i, a) in self.agents.iter().enumerate() {
            let message = if !valid_id(&a.id) {
                format!(
                    "agent id `{}` must be 1 to 64 letters, digits, `-` and `_`",
                    a.id
                )
            } else if !seen.insert(a.id.clone()) {
                format!("agent id `{}` is used twice", a.id)
            } else {
                continue;
            };
            return Err(match agent_id_at(text, i) {
                Some((line, column)) => ConfigError::Parse {
                    path: path.clone(),
                    line,
                    column,
                    message,
                },
                None => invalid(message),
            });
        }
        self.check_hosts().map_err(invalid)?;
        self.resolve_repos().map_err(invalid)?;
        trigger::check_all(&self.triggers, &self.agents).map_err(invalid)?;
        self.check_policy().map_err(invalid)?;
        self.resolve_hosts().map_err(invalid)?;
        self.resolve_mcp().map_err(invalid)?;
        self.resolve_instructions().map_err(invalid)?;
        self.resolve_accounts().map_err(invalid)?;
        // Each agent's provider reads its lines with this cap (1 KiB at least).
        for a in &mut self.agents {
            a.max_line_bytes = self.limits.max_line_bytes.max(1024);
        }
        // Relative paths are relative to the config file, not the shell.
        if let Some(base) = self.source.base_dir().map(Path::to_owned) {
            for a in &mut self.agents {
                // `demo:<name>` is built in, not a file beside the config.
                if let Some(s) = &a.script
                    && s.is_relative()
                    && !s.to_string_lossy().starts_with("demo:")
                {
                    a.script = Some(base.join(s));
                }
                // `cwd = "."` is the config's directory, wherever hive starts.
                if let Some(c) = &a.cwd
                    && c.is_relative()
                {
                    a.cwd = Some(base.join(c).components().collect());
                }
            }
        }
        Ok(())
    }
}

/// `name` in `dir` or the nearest directory above it that has one.
pub(crate) fn find_upward(dir: &Path, name: &str) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join(name)).find(|p| p.is_file())
}

/// Whether `id` can name a pane: non-empty, letters, digits, `-` and `_`
/// (it names files of the history and crosses in `host:agent` addresses).
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// An id for a new pane made from `base`: its letters, digits, `-` and `_`
/// (`pane` when none), then `base-2`, `base-3`… the first one `taken` does
/// not hold.
pub fn free_id(base: &str, taken: impl Fn(&str) -> bool) -> String {
    let base: String = base
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(56)
        .collect();
    let base = if base.is_empty() {
        "pane".to_owned()
    } else {
        base
    };
    if !taken(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|id| !taken(id))
        .unwrap_or(base)
}

/// The first key whose integer does not fit an i64, with where it is.
fn too_large_integer(text: &str) -> Option<(String, usize, usize)> {
    use toml::de::DeValue;
    fn walk<'a>(
        v: &'a toml::Spanned<DeValue<'a>>,
        key: &str,
        text: &str,
    ) -> Option<(String, usize, usize)> {
        match v.get_ref() {
            DeValue::Integer(i) if i64::from_str_radix(i.as_str(), i.radix()).is_err() => {
                let (line, column) = line_col(text, v.span().start);
                Some((key.to_owned(), line, column))
            }
            DeValue::Table(t) => t.iter().find_map(|(k, v)| walk(v, k.get_ref(), text)),
            DeValue::Array(a) => a.iter().find_map(|v| walk(v, key, text)),
            _ => None,
        }
    }
    let root = toml::de::DeTable::parse(text).ok()?;
    root.get_ref()
        .iter()
        .find_map(|(k, v)| walk(v, k.get_ref(), text))
}

/// Where `key` of the `index`th `[[agent]]` is written (1-based line and
/// column), read again with spans.
fn agent_key_at(text: &str, index: usize, key: &str) -> Option<(usize, usize)> {
    let root = toml::de::DeTable::parse(text).ok()?;
    let (_, agents) = root
        .get_ref()
        .iter()
        .find(|(k, _)| k.get_ref() == "agent")?;
    let toml::de::DeValue::Array(agents) = agents.get_ref() else {
        return None;
    };
    let toml::de::DeValue::Table(agent) = agents.get(index)?.get_ref() else {
        return None;
    };
    let (k, _) = agent.iter().find(|(k, _)| k.get_ref() == key)?;
    Some(line_col(text, k.span().start))
}

/// The longest duration a setting may name: a week. Longer ones are
/// mistakes, and the largest overflow a clock ("overflow when adding
/// duration to instant").
const MAX_DURATION_S: u64 = 7 * 24 * 3600;

impl Config {
    /// Every `[[host]]` a name of its own (no agent's either: `host:agent`
    /// addresses must be unambiguous) and an ssh address.
    fn check_hosts(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for h in &self.hosts {
            let ok_name = !h.name.is_empty()
                && h.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !ok_name {
                return Err(format!(
                    "host name `{}` must be non-empty and use only letters, digits, `-`, `_` and `.`",
                    h.name
                ));
            }
            if !seen.insert(h.name.as_str()) {
                return Err(format!("host name `{}` is used twice", h.name));
            }
            h.exec().map_err(|e| format!("host `{}`: {e}", h.name))?;
        }
        Ok(())
    }

    /// Each agent's host: its `host`, else its `sandbox`, else the
    /// `[sandbox]` default (issue 49); its limits and idle stop checked.
    fn resolve_hosts(&mut self) -> Result<(), String> {
        let mut resolved = Vec::with_capacity(self.agents.len());
        for a in &self.agents {
            let host = a.resources().and(a.idle_stop()).and(self.exec_for(a));
            resolved.push(host.map_err(|e| format!("agent `{}`: {e}", a.id))?);
        }
        for (a, exec) in self.agents.iter_mut().zip(resolved) {
            a.exec = exec;
        }
        Ok(())
    }

    /// The host `agent` runs on, by its `host` and `sandbox` and the
    /// `[sandbox]` default; `None`: this machine, unboxed.
    pub fn exec_for(&self, agent: &AgentConfig) -> Result<Option<crate::exec::ExecHost>, String> {
        let default = match self.sandbox.kind.as_deref() {
            None | Some("none") => None,
            Some("bwrap") => Some("bwrap"),
            Some(k) => return Err(format!("[sandbox] kind = \"{k}\" is not `bwrap` or `none`")),
        };
        match (agent.host.as_deref(), agent.sandbox.as_deref()) {
            (Some(_), Some("bwrap")) => Err(
                "give `host` or `sandbox = \"bwrap\"`, not both (a bwrap `[[host]]` is a sandbox)"
                    .into(),
            ),
            (Some(name), _) => {
                let h = self.hosts.iter().find(|h| h.name == name).ok_or_else(|| {
                    let names: Vec<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
                    format!(
                        "host = \"{name}\" names no [[host]] (there are: {})",
                        names.join(", ")
                    )
                })?;
                h.exec().map(Some)
            }
            (None, Some("none")) => Ok(None),
            (None, Some("bwrap")) => self.sandbox.host().map(Some),
            (None, Some(other)) => Err(format!("sandbox = \"{other}\" is not `bwrap` or `none`")),
            (None, None) => match default {
                Some(_) => self.sandbox.host().map(Some),
                None => Ok(None),
            },
        }
    }

    /// Every duration setting within [`MAX_DURATION_S`], or the key that is not.
    fn check_durations(&self) -> Result<(), String> {
        let ms = MAX_DURATION_S * 1000;
        let keys = [
            (
                "processor.batch_timeout_ms",
                self.processor.batch_timeout_ms,
                ms,
            ),
            (
                "processor.first_token_ms",
                self.processor.first_token_ms,
                ms,
            ),
            ("ui.interrupt_timeout_ms", self.ui.interrupt_timeout_ms, ms),
            ("ui.display_latency_ms", self.ui.display_latency_ms, ms),
            ("ui.stall_after_s", self.ui.stall_after_s, MAX_DURATION_S),
        ];
        match keys.iter().find(|(_, v, max)| v > max) {
            Some((key, v, max)) => Err(format!("{key} = {v} is too long: at most {max} (a week)")),
            None => Ok(()),
        }
    }
}

/// Where the `id` of the `index`th `[[agent]]` is written (1-based line
/// and column), read again with spans.
fn agent_id_at(text: &str, index: usize) -> Option<(usize, usize)> {
    #[derive(Deserialize)]
    struct Ids {
        #[serde(default)]
        agent: Vec<IdOnly>,
    }
    #[derive(Deserialize)]
    struct IdOnly {
        id: toml::Spanned<String>,
    }
    let ids: Ids = toml::from_str(text).ok()?;
    let span = ids.agent.get(index)?.id.span();
    Some(line_col(text, span.start))
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
