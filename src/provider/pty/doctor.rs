//! `hive doctor` facts for a terminal pane: its `command`, or the user's
//! shell (which can be tried with `-c exit`).

use crate::config::AgentConfig;
use crate::provider::doctor::{DryStart, Facts, Probe};

pub(crate) fn facts(agent: &AgentConfig, probe: &Probe) -> Facts {
    let shell = (probe.var)("SHELL")
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "/bin/sh".into());
    Facts {
        program: Some(agent.program(&shell)),
        auth: None,
        start: if agent.command.is_empty() {
            DryStart::Shell
        } else {
            // An interactive program: nothing is safe to try without a terminal.
            DryStart::None
        },
    }
}
