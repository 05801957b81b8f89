//! What `hive doctor` knows about the built-in `openai` agent: no program
//! to start (the pane's task speaks HTTP itself), a required `model`, and
//! the key variable when the endpoint needs one.

use crate::config::AgentConfig;
use crate::provider::doctor::{Auth, DryStart, Facts, Probe};

/// Key variables doctor can name (`Auth` holds static names).
const KNOWN_KEYS: &[&str] = &["OPENAI_API_KEY", "OPENROUTER_API_KEY"];

pub(crate) fn facts(agent: &AgentConfig, _probe: &Probe) -> Result<Facts, String> {
    let own = super::OpenAiSettings::from_agent(agent).map_err(|e| e.message)?;
    if agent.model.is_none() {
        return Err("`model` is required for provider `openai`".into());
    }
    let base_url = own.base_url.as_deref().unwrap_or(super::DEFAULT_BASE_URL);
    let key_env = own
        .api_key_env
        .as_deref()
        .or_else(|| (base_url == super::DEFAULT_BASE_URL).then_some(super::DEFAULT_KEY_ENV));
    let auth = key_env
        .and_then(|v| KNOWN_KEYS.iter().find(|k| **k == v))
        .map(|k| Auth {
            env: vec![*k],
            files: Vec::new(),
            fix: "export the key variable (api_key_env) before starting hive",
            custom: None,
        });
    Ok(Facts {
        program: None,
        auth,
        start: DryStart::None,
    })
}
