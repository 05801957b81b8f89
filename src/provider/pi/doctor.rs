//! `hive doctor` facts for pi: the `pi` program, the API key variables of
//! the model providers it can use, and its login file.

use crate::config::AgentConfig;
use crate::provider::doctor::{Auth, Facts, Probe};

pub(crate) fn facts(agent: &AgentConfig, probe: &Probe) -> Facts {
    Facts::cli(
        agent,
        "pi",
        Auth {
            env: vec![
                "ANTHROPIC_API_KEY",
                "OPENAI_API_KEY",
                "GEMINI_API_KEY",
                "OPENROUTER_API_KEY",
                "GROQ_API_KEY",
                "XAI_API_KEY",
            ],
            files: vec![
                probe
                    .dir("PI_CODING_AGENT_DIR", ".pi/agent")
                    .join("auth.json"),
            ],
            fix: "run `pi` once and /login, or set the API key of the model's provider",
            custom: None,
        },
    )
}
