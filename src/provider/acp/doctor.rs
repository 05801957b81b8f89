//! `hive doctor` facts for an ACP agent: the configured `command`, and the
//! login of the agent behind the adapter when hive knows the adapter.

use std::path::Path;

use crate::config::AgentConfig;
use crate::provider::doctor::{DryStart, Facts, Probe};

pub(crate) fn facts(agent: &AgentConfig, probe: &Probe) -> Result<Facts, String> {
    let (program, lead) = super::program(agent)?;
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let auth = match name.as_str() {
        "claude-code-acp" => Some(crate::provider::claude::doctor::auth(probe)),
        "codex-acp" => Some(crate::provider::codex::doctor::auth(probe)),
        "gemini" => Some(crate::provider::gemini::doctor::auth(probe)),
        _ => None,
    };
    Ok(Facts {
        program: Some((program.clone(), lead.to_vec())),
        auth,
        start: DryStart::VersionOrServe,
    })
}
