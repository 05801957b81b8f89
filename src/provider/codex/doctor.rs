//! `hive doctor` facts for Codex: the `codex` program, its API key
//! variables and `$CODEX_HOME/auth.json`.

use crate::config::AgentConfig;
use crate::provider::doctor::{Auth, Facts, Probe};

pub(crate) fn facts(agent: &AgentConfig, probe: &Probe) -> Facts {
    Facts::cli(agent, "codex", auth(probe))
}

/// Shared with the codex-acp adapter.
pub(crate) fn auth(probe: &Probe) -> Auth {
    Auth {
        env: vec!["OPENAI_API_KEY", "CODEX_API_KEY"],
        files: vec![probe.dir("CODEX_HOME", ".codex").join("auth.json")],
        fix: "run `codex login`, or set OPENAI_API_KEY",
    }
}
