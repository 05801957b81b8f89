//! What `hive doctor` needs to know about an agent's provider: the program
//! hive would start, how the agent authenticates, and how to try starting
//! it without running a turn. Each provider answers in its own
//! `doctor.rs`, named by its descriptor (`ProviderDescriptor::doctor`);
//! this file holds the shape of the answer.

use std::path::{Path, PathBuf};

use crate::config::AgentConfig;

/// The environment doctor looks at (tests pass a fake one).
pub struct Probe<'a> {
    /// An environment variable of hive's own environment.
    pub var: &'a dyn Fn(&str) -> Option<String>,
    pub home: &'a Path,
}

impl Probe<'_> {
    /// `$NAME` if set and non-empty, else `home/default`.
    pub fn dir(&self, name: &str, default: &str) -> PathBuf {
        (self.var)(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| self.home.join(default))
    }
}

/// How the agent proves who it is: any one of these suffices.
#[derive(Debug, Clone, PartialEq)]
pub struct Auth {
    /// Environment variables (their values are never read out).
    pub env: Vec<&'static str>,
    /// The agent's own login files.
    pub files: Vec<PathBuf>,
    /// What to do when none is there.
    pub fix: &'static str,
    /// The agent is set up to authenticate another way, which hive cannot
    /// check (e.g. Codex's own `model_provider`): said, never "not logged
    /// in".
    pub custom: Option<String>,
}

/// How to try the agent without a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DryStart {
    /// `program --version` must exit 0.
    Version,
    /// Like `Version`, but an agent that keeps running (a server on stdio
    /// that ignores the flag) started fine too.
    VersionOrServe,
    /// A shell: `program -c exit`.
    Shell,
    /// Nothing to start (scripted agents) or nothing safe to try.
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// The program and its leading arguments (`None`: no process).
    pub program: Option<(String, Vec<String>)>,
    pub auth: Option<Auth>,
    pub start: DryStart,
}

impl Facts {
    /// An agent CLI: its program (`command`, else `default`), tried with
    /// `--version`, authenticated as `auth` says.
    pub fn cli(agent: &AgentConfig, default: &str, auth: Auth) -> Self {
        Self {
            program: Some(agent.program(default)),
            auth: Some(auth),
            start: DryStart::Version,
        }
    }
}
