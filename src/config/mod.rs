//! Configuration (DESIGN §7): TOML, found by `--config PATH`, `./hive.toml`,
//! `$XDG_CONFIG_HOME/hive/config.toml`, else the built-in default.

mod agent;
mod notify;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use agent::{AgentConfig, QueueMode};
pub use notify::{NotifyOn, ReasonKind};

use crate::processor::{DEFAULT_GRADIENT, ProcessorConfig};

/// The built-in default: demo agents and a shell, no API key needed.
pub const DEFAULT_CONFIG: &str = include_str!("../../config/default.toml");

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
    /// Action name → key(s), e.g. `focus_next = "alt+right"`.
    #[serde(default)]
    pub keys: BTreeMap<String, KeyBinding>,
    #[serde(default, rename = "agent")]
    pub agents: Vec<AgentConfig>,
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

    /// Directory that relative paths in the config resolve against.
    pub fn base_dir(&self) -> Option<&Path> {
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
    pub first_token_ms: u64,
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
    pub fn to_config(&self) -> ProcessorConfig {
        ProcessorConfig {
            batch_gradient: self.batch_gradient.clone(),
            batch_timeout: Duration::from_millis(self.batch_timeout_ms),
            first_emit: (self.first_token_ms > 0)
                .then(|| Duration::from_millis(self.first_token_ms)),
        }
    }
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
    pub osc9: NotifyOn,
    /// Start in full view (thinking and tool calls shown).
    #[serde(default = "yes")]
    pub full_view: bool,
    /// Redraw cap.
    #[serde(default = "default_fps")]
    pub max_fps: u32,
    /// How long an interrupt may take before hive ends the agent itself.
    #[serde(default = "default_interrupt_ms")]
    pub interrupt_timeout_ms: u64,
}

impl Default for UiSettings {
    fn default() -> Self {
        Self {
            bell: NotifyOn::default(),
            osc9: NotifyOn::default(),
            full_view: true,
            max_fps: default_fps(),
            interrupt_timeout_ms: default_interrupt_ms(),
        }
    }
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
fn yes() -> bool {
    true
}

impl Config {
    /// Parses config text; errors carry `path:line:column`.
    pub fn parse(text: &str, source: ConfigSource) -> Result<Self, ConfigError> {
        let path = source.describe();
        let mut config: Config = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
            ConfigError::Parse {
                path: path.clone(),
                line,
                column,
                message: e.message().to_owned(),
            }
        })?;
        config.source = source;
        config.validate()?;
        Ok(config)
    }

    pub fn builtin() -> Self {
        // The default is compiled in and covered by a test; failing here is a bug.
        Self::parse(DEFAULT_CONFIG, ConfigSource::Builtin).expect("built-in config is valid")
    }

    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, ConfigSource::File(path.to_owned()))
    }

    /// Loads by the search order: `explicit`, `./hive.toml`,
    /// `$XDG_CONFIG_HOME/hive/config.toml`, the built-in default.
    pub fn load(explicit: Option<&Path>) -> Result<Self, ConfigError> {
        if let Some(p) = explicit {
            return Self::from_file(p);
        }
        let local = PathBuf::from("hive.toml");
        if local.is_file() {
            return Self::from_file(&local);
        }
        if let Some(p) = crate::paths::user_config_file()
            && p.is_file()
        {
            return Self::from_file(&p);
        }
        Ok(Self::builtin())
    }

    pub fn agent(&self, id: &str) -> Option<&AgentConfig> {
        self.agents.iter().find(|a| a.id == id)
    }

    pub fn processor_config(&self) -> ProcessorConfig {
        self.processor.to_config()
    }

    fn validate(&mut self) -> Result<(), ConfigError> {
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
        let mut seen = std::collections::HashSet::new();
        for a in &self.agents {
            if a.id.is_empty()
                || !a
                    .id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(invalid(format!(
                    "agent id `{}` must be non-empty and use only letters, digits, `-` and `_`",
                    a.id
                )));
            }
            if !seen.insert(a.id.clone()) {
                return Err(invalid(format!("agent id `{}` is used twice", a.id)));
            }
        }
        // Relative paths are relative to the config file, not the shell.
        if let Some(base) = self.source.base_dir().map(Path::to_owned) {
            for a in &mut self.agents {
                if let Some(s) = &a.script
                    && s.is_relative()
                {
                    a.script = Some(base.join(s));
                }
            }
        }
        Ok(())
    }
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
