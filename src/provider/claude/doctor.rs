//! `hive doctor` facts for Claude Code: the `claude` program, its API key
//! variables and its login file.

use crate::config::AgentConfig;
use crate::provider::doctor::{Auth, Facts, Probe};

pub(crate) fn facts(agent: &AgentConfig, probe: &Probe) -> Facts {
    Facts::cli(agent, "claude", auth(probe))
}

/// Shared with ACP adapters that drive Claude Code.
pub(crate) fn auth(probe: &Probe) -> Auth {
    Auth {
        env: vec![
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
        ],
        files: vec![
            probe
                .dir("CLAUDE_CONFIG_DIR", ".claude")
                .join(".credentials.json"),
        ],
        fix: "run `claude` once and log in (/login), or set ANTHROPIC_API_KEY",
        custom: None,
    }
}
