//! `hive doctor` facts for Gemini CLI: the `gemini` program, its API key
//! variables and its OAuth login file.

use crate::config::AgentConfig;
use crate::provider::doctor::{Auth, Facts, Probe};

pub(crate) fn facts(agent: &AgentConfig, probe: &Probe) -> Facts {
    Facts::cli(agent, "gemini", auth(probe))
}

/// Shared with `gemini --experimental-acp`.
pub(crate) fn auth(probe: &Probe) -> Auth {
    Auth {
        env: vec![
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "GOOGLE_GENAI_USE_VERTEXAI",
        ],
        files: vec![probe.home.join(".gemini/oauth_creds.json")],
        fix: "run `gemini` once and sign in, or set GEMINI_API_KEY",
        custom: None,
    }
}
