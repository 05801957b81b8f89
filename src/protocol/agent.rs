//! What a pane's agent tells a console about itself, and a console answers:
//! what it can do, its session, its permission requests and the answers,
//! and how loud a notice is. The providers (src/provider/) make these; they
//! cross the socket inside `PaneEvent`s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::event::ToolDisplay;

/// The providers a hive of this protocol version knows, as `provider = "…"`
/// names them: a console offers them in its new-pane picker without asking
/// the server (the provider registry checks it makes exactly these).
pub const PROVIDER_NAMES: &[&str] = &[
    "acp", "claude", "codex", "gemini", "openai", "pi", "pty", "script",
];

/// What an agent can do; the runner's queue/interrupt matrix reads these
/// (seed 000 "Queue / Interrupt Fallback Matrix").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Accepts a message while a turn runs (steer).
    pub queue_while_streaming: bool,
    /// Can stop a running turn and stay usable.
    pub interrupt: bool,
    pub tool_events: bool,
    pub thinking: bool,
    /// Can continue an earlier session after a restart.
    pub resume: bool,
    /// Asks the host before running tools.
    pub permissions: bool,
    /// Takes `ProviderCommand::SetModel` (live, or from the next turn on).
    #[serde(default)]
    pub set_model: bool,
    /// Takes `ProviderCommand::SetEffort` (thinking / reasoning effort).
    #[serde(default)]
    pub set_effort: bool,
    /// The provider itself tells whether a `SetEffort` took (ACP: only the
    /// agent's config options know), so the runner adds no note of its own:
    /// one true note, not "set" then "ignored" (issue 34 item 3), and keeps
    /// the effort only on `ProviderEvent::EffortTaken`.
    #[serde(default)]
    pub confirms_effort: bool,
    /// Takes `ProviderCommand::Attach` (images with the next message).
    #[serde(default)]
    pub images: bool,
    /// A turn that failed on the vendor's error is still in the agent's own
    /// session, its prompt included (Claude Code, Codex): a message resent
    /// after a limit asks the agent to go on instead of repeating it, so
    /// the vendor's conversation holds it once (issue 46 item 4). The
    /// runner's alone: it does not cross the wire.
    #[serde(skip)]
    pub keeps_failed_prompt: bool,
}

impl Capabilities {
    /// What a structured agent (a JSON protocol, not a terminal) offers by
    /// default: it can be interrupted, reports tools and thinking, resumes
    /// its session and takes `/model` and `/effort`. Mid-turn messages and
    /// permission prompts are the exceptions, turned on with struct update
    /// syntax (`Capabilities { permissions: true, ..Capabilities::structured() }`).
    pub const fn structured() -> Self {
        Self {
            queue_while_streaming: false,
            interrupt: true,
            tool_events: true,
            thinking: true,
            resume: true,
            permissions: false,
            set_model: true,
            set_effort: true,
            confirms_effort: false,
            images: false,
            keeps_failed_prompt: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum PermissionDecision {
    AllowOnce,
    AllowAlways,
    Deny {
        reason: String,
    },
    /// One of the options the agent offered (ACP `optionId`).
    Option {
        option_id: String,
    },
}

impl PermissionDecision {
    /// An allow: once, or (`always`) for the rest of the session.
    pub fn allow(always: bool) -> Self {
        if always {
            Self::AllowAlways
        } else {
            Self::AllowOnce
        }
    }
}

/// A choice offered by the agent with a permission request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionOption {
    pub option_id: String,
    pub label: String,
    /// ACP kind: allow_once | allow_always | reject_once | reject_always.
    pub kind: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub request_id: String,
    pub tool_name: String,
    pub input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Empty: the host offers allow once / allow always / deny.
    #[serde(default)]
    pub options: Vec<PermissionOption>,
    /// How the tool's input reads on the card (the provider knows its names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<ToolDisplay>,
    /// What the tool does, where the agent says so in its request (ACP's
    /// `kind`: read, edit, delete, move, search, execute, fetch, …): the
    /// policy reads it (`policy::subject`) when the tool's name does not tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The paths the agent says the tool touches (ACP's `locations`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<String>,
}

/// What the provider learned about its session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The agent's own handle for resuming (Claude session id, Codex thread id…).
    pub resume_handle: Option<String>,
    pub model: Option<String>,
    /// Slash commands the agent offers (ACP `available_commands_update`).
    #[serde(default)]
    pub commands: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticLevel {
    Info,
    Warn,
    Error,
}
