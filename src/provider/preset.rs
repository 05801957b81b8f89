//! An agent's approval preset (`policy = "read-only" | "edit" | "yolo"`,
//! docs/policy.md) mapped onto its vendor's own mode, where it has one.
//!
//! hive's gate decides what reaches it, so the vendor is put in the mode
//! that sends hive every request the preset must see (a vendor left to
//! approve by itself would run `rm -rf` without the destructive list ever
//! seeing it); where the vendor has a sandbox, it follows the preset.
//! An explicit `permission_mode` (or Codex's `options.approval_policy` /
//! `options.sandbox`) wins: the user's own words stay theirs.
//!
//! | provider | read-only | edit | yolo |
//! |---|---|---|---|
//! | claude | `default` | `default` | `default` (hive allows; not `bypassPermissions`, which would ask hive nothing) |
//! | codex app-server | `untrusted` + sandbox `read-only` | `untrusted` + `workspace-write` | `untrusted` + `danger-full-access` |
//! | codex exec | sandbox `read-only` | `workspace-write` | `danger-full-access` (exec never asks: no gate) |
//! | gemini (headless) | its `default` | `auto_edit` | `yolo` (no approval channel: no gate) |
//! | openai (built-in) | its default `ask` for all three: every write and command asks hive |
//! | acp | none (the adapter's modes are its own; the gate answers every request) |
//! | pi, pty | none (no approval channel) |
//! | script | none (its scenario asks; the gate answers) |

use crate::config::AgentConfig;
use crate::policy::Preset;

/// `agent` with its preset applied to its vendor's mode (unchanged without
/// a preset, or where the user set the mode).
pub fn apply(agent: &mut AgentConfig) {
    let Some(preset) = agent.policy else {
        return;
    };
    match agent.provider.as_str() {
        "claude" => set_mode(agent, "default"),
        "codex" => codex(agent, preset),
        "gemini" => set_mode(
            agent,
            match preset {
                Preset::ReadOnly => "default",
                Preset::Edit => "auto_edit",
                Preset::Yolo => "yolo",
            },
        ),
        _ => {}
    }
}

fn set_mode(agent: &mut AgentConfig, mode: &str) {
    if agent.permission_mode.is_none() {
        agent.permission_mode = Some(mode.to_owned());
    }
}

fn codex(agent: &mut AgentConfig, preset: Preset) {
    let sandbox = match preset {
        Preset::ReadOnly => "read-only",
        Preset::Edit => "workspace-write",
        Preset::Yolo => "danger-full-access",
    };
    let exec = agent.transport.as_deref() == Some("exec");
    let own_approval = agent.options.contains_key("approval_policy");
    if !exec && !own_approval {
        set_mode(agent, "untrusted");
    }
    // A bypass named in `permission_mode` has no sandbox to set.
    if agent
        .permission_mode
        .as_deref()
        .is_none_or(|m| m == "untrusted")
    {
        agent
            .options
            .entry("sandbox")
            .or_insert_with(|| toml::Value::String(sandbox.into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, ConfigSource};

    fn agent(table: &str) -> AgentConfig {
        let text = format!("[[agent]]\nid = \"a\"\n{table}\n");
        let c = Config::parse(&text, ConfigSource::Builtin).expect("parses");
        let mut a = c.agents[0].clone();
        apply(&mut a);
        a
    }

    #[test]
    fn presets_pick_each_vendors_mode() {
        let a = agent("provider = \"claude\"\npolicy = \"yolo\"");
        assert_eq!(a.permission_mode.as_deref(), Some("default"));
        let a = agent("provider = \"codex\"\npolicy = \"read-only\"");
        assert_eq!(a.permission_mode.as_deref(), Some("untrusted"));
        assert_eq!(a.options["sandbox"].as_str(), Some("read-only"));
        let a = agent("provider = \"codex\"\ntransport = \"exec\"\npolicy = \"edit\"");
        assert_eq!(a.permission_mode, None);
        assert_eq!(a.options["sandbox"].as_str(), Some("workspace-write"));
        let a = agent("provider = \"gemini\"\npolicy = \"edit\"");
        assert_eq!(a.permission_mode.as_deref(), Some("auto_edit"));
        let a = agent("provider = \"acp\"\npolicy = \"yolo\"");
        assert_eq!(a.permission_mode, None);
    }

    #[test]
    fn the_users_own_mode_wins() {
        let a = agent("provider = \"claude\"\npolicy = \"read-only\"\npermission_mode = \"plan\"");
        assert_eq!(a.permission_mode.as_deref(), Some("plan"));
        let a = agent(
            "provider = \"codex\"\npolicy = \"yolo\"\n[agent.options]\nsandbox = \"read-only\"\napproval_policy = \"on-request\"",
        );
        assert_eq!(a.permission_mode, None);
        assert_eq!(a.options["sandbox"].as_str(), Some("read-only"));
        let a = agent("provider = \"claude\"");
        assert_eq!(a.permission_mode, None);
    }
}
