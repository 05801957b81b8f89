//! What an agent may do without asking the user, and so what it may
//! approve for a helper it spawned (#53 item 3). An approval card is the
//! user's decision; a lead that answers its helper's card makes that
//! decision for the user, so it may approve only what it could itself run
//! without a card: a lead whose commands wait for the user cannot launder
//! a command through a helper, of its own vendor or another. Denying is
//! always allowed (it never does more than asking would).

use crate::config::AgentConfig;
use crate::provider::PermissionRequest;
use crate::provider::openai::{OpenAiSettings, PermissionMode};

/// How much an agent runs without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Autonomy {
    /// Its edits and commands ask (or it has no tools at all).
    Asks,
    /// Its file edits run; its commands ask.
    Edits,
    /// Nothing asks.
    Everything,
}

impl Autonomy {
    /// `agent`'s, read from its `permission_mode` the way its provider
    /// reads it. Unknown modes ask: a name hive does not know grants
    /// nothing.
    pub(crate) fn of(agent: &AgentConfig) -> Self {
        if agent.provider == "openai" {
            let own = OpenAiSettings::from_agent(agent).unwrap_or_default();
            if own.tools == Some(false) {
                return Self::Asks;
            }
            return match own.permission_mode.or_else(|| {
                let mode = agent.permission_mode.as_deref()?;
                serde_json::from_value(serde_json::Value::String(mode.to_owned())).ok()
            }) {
                Some(PermissionMode::Yolo) => Self::Everything,
                Some(PermissionMode::AutoEdit) => Self::Edits,
                Some(PermissionMode::Ask) | None => Self::Asks,
            };
        }
        match agent.permission_mode.as_deref() {
            // Claude, Codex, Gemini and ACP agents' names for "never ask".
            Some("bypassPermissions" | "bypass" | "yolo" | "never" | "danger-full-access") => {
                Self::Everything
            }
            // Their names for "edits run, commands ask" (Codex's
            // `full-auto` still asks outside its sandbox).
            Some("acceptEdits" | "auto_edit" | "autoEdit" | "auto-edit" | "full-auto" | "auto") => {
                Self::Edits
            }
            _ => Self::Asks,
        }
    }

    /// Whether an agent of this autonomy may approve `req` for a helper.
    pub(crate) fn may_approve(self, req: &PermissionRequest) -> bool {
        match self {
            Self::Everything => true,
            Self::Edits => is_edit(req),
            Self::Asks => false,
        }
    }
}

/// File-editing tools by the names the providers give them; anything else
/// (a command, a fetch, an MCP tool) counts as more than an edit.
const EDIT_TOOLS: &[&str] = &[
    "edit",
    "write",
    "multiedit",
    "notebookedit",
    "replace",
    "write_file",
    "apply_patch",
];

/// Whether the card is for a file edit: its tool is an editing one and it
/// shows no command.
fn is_edit(req: &PermissionRequest) -> bool {
    let name = req.tool_name.to_ascii_lowercase();
    EDIT_TOOLS.contains(&name.as_str()) && req.input.get("command").is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(provider: &str, mode: Option<&str>) -> AgentConfig {
        let mut a = AgentConfig::new("a", provider);
        a.permission_mode = mode.map(str::to_owned);
        a
    }

    fn card(tool: &str, input: serde_json::Value) -> PermissionRequest {
        PermissionRequest {
            request_id: "r".into(),
            tool_name: tool.into(),
            input,
            description: None,
            options: Vec::new(),
            display: None,
            ..Default::default()
        }
    }

    #[test]
    fn a_lead_approves_only_what_it_runs_unasked() {
        let bash = card("bash", serde_json::json!({"command": "rm -rf ~"}));
        let claude_bash = card("Bash", serde_json::json!({"command": "rm -rf ~"}));
        let edit = card("Edit", serde_json::json!({"file_path": "a.rs"}));
        let asks = Autonomy::of(&agent("openai", None));
        assert_eq!(asks, Autonomy::Asks);
        assert!(!asks.may_approve(&bash) && !asks.may_approve(&claude_bash));
        assert!(!asks.may_approve(&edit));
        let mut edits = agent("openai", None);
        edits.set("permission_mode", "auto-edit").expect("set");
        let edits = Autonomy::of(&edits);
        assert!(edits.may_approve(&edit) && !edits.may_approve(&claude_bash));
        let mut yolo = agent("openai", None);
        yolo.set("permission_mode", "yolo").expect("set");
        assert!(Autonomy::of(&yolo).may_approve(&claude_bash));
        let mut no_tools = agent("openai", None);
        no_tools.set("permission_mode", "yolo").expect("set");
        no_tools.set("tools", false).expect("set");
        assert_eq!(Autonomy::of(&no_tools), Autonomy::Asks);
        assert_eq!(
            Autonomy::of(&agent("claude", Some("bypassPermissions"))),
            Autonomy::Everything
        );
        assert_eq!(
            Autonomy::of(&agent("claude", Some("acceptEdits"))),
            Autonomy::Edits
        );
        assert_eq!(Autonomy::of(&agent("claude", Some("plan"))), Autonomy::Asks);
        assert_eq!(
            Autonomy::of(&agent("codex", Some("whatever"))),
            Autonomy::Asks
        );
    }
}
