//! `hive doctor` facts for Codex: the `codex` program, its API key
//! variables and `$CODEX_HOME/auth.json`.

use crate::config::AgentConfig;
use crate::provider::doctor::{Auth, Facts, Probe};

pub(crate) fn facts(agent: &AgentConfig, probe: &Probe) -> Facts {
    Facts::cli(agent, "codex", auth(probe))
}

/// Shared with the codex-acp adapter.
pub(crate) fn auth(probe: &Probe) -> Auth {
    let home = probe.dir("CODEX_HOME", ".codex");
    Auth {
        env: vec!["OPENAI_API_KEY", "CODEX_API_KEY"],
        files: vec![home.join("auth.json")],
        fix: "run `codex login`, or set OPENAI_API_KEY",
        custom: custom_provider(&home.join("config.toml"), probe),
    }
}

/// A `model_provider` of Codex's own config other than OpenAI's (issue 46
/// item 21): Codex authenticates with it (its `env_key`, or no key at
/// all), not with `codex login`. `None` when it names OpenAI, none, or
/// its key is not set.
fn custom_provider(config: &std::path::Path, probe: &Probe) -> Option<String> {
    let text = std::fs::read_to_string(config).ok()?;
    let table: toml::Table = text.parse().ok()?;
    let name = table.get("model_provider")?.as_str()?;
    if name == "openai" {
        return None;
    }
    let key = table
        .get("model_providers")
        .and_then(|p| p.get(name))
        .and_then(|p| p.get("env_key"))
        .and_then(toml::Value::as_str);
    match key {
        None => Some(format!("Codex's model_provider `{name}` (no login needed)")),
        Some(k) if (probe.var)(k).is_some_and(|v| !v.is_empty()) => {
            Some(format!("Codex's model_provider `{name}`: {k} is set"))
        }
        Some(_) => None,
    }
}
