//! Processor output: upserts keyed by `item_id` and turn lifecycle events
//! (seed 002 "Upsert Object" and "Turn Lifecycle Events"). The UI and the history
//! store consume only these.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::event::{Origin, ToolDisplay, Usage};
use crate::protocol::text::SharedText;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpsertStatus {
    Create,
    Update,
    Complete,
    Error,
    /// The turn was interrupted: the item keeps what the agent had sent,
    /// and nothing more comes for it. Not final (it did not finish).
    Interrupted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Upsert {
    pub turn_id: String,
    pub session_id: String,
    pub item_id: String,
    pub source_timestamp: DateTime<Utc>,
    pub emitted_at: DateTime<Utc>,
    pub status: UpsertStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(flatten)]
    pub kind: UpsertKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UpsertKind {
    Message {
        content: SharedText,
        origin: Origin,
    },
    Thinking {
        content: SharedText,
        provider_id: String,
    },
    ToolCall {
        tool_name: String,
        /// May be partial or empty on `create`; authoritative on `complete`.
        arguments: Value,
        call_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_is_error: Option<bool>,
        /// Summary line and edit diff, as the provider describes the call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<Box<ToolDisplay>>,
    },
}

impl Upsert {
    /// An agent message item in turn `t` of session `s` (tests build their
    /// upserts from this).
    #[cfg(test)]
    pub(crate) fn test_message(item: &str, status: UpsertStatus, content: SharedText) -> Self {
        Self {
            turn_id: "t".into(),
            session_id: "s".into(),
            item_id: item.into(),
            source_timestamp: DateTime::UNIX_EPOCH,
            emitted_at: DateTime::UNIX_EPOCH,
            status,
            error_code: None,
            error_message: None,
            kind: UpsertKind::Message {
                content,
                origin: Origin::Agent,
            },
        }
    }

    /// Text content of a message or thinking item.
    pub fn text(&self) -> Option<&SharedText> {
        match &self.kind {
            UpsertKind::Message { content, .. } | UpsertKind::Thinking { content, .. } => {
                Some(content)
            }
            UpsertKind::ToolCall { .. } => None,
        }
    }

    pub fn is_final(&self) -> bool {
        matches!(self.status, UpsertStatus::Complete | UpsertStatus::Error)
    }

    /// No further upsert comes for this item (final, or cut by an interrupt).
    pub(crate) fn is_closed(&self) -> bool {
        self.is_final() || self.status == UpsertStatus::Interrupted
    }
}

/// Times tool calls over their upserts: from the first one seen running to
/// the one that closes the call (a call that arrives closed has no time).
/// The console's transcript and the history recorder each keep one, so a
/// delegation's wait reads the same live and after a restart.
#[derive(Debug, Default)]
pub struct ToolClock {
    running: std::collections::HashMap<String, std::time::Instant>,
}

impl ToolClock {
    /// `u`, seen at `now`: how long its call ran, when `u` closes a call
    /// seen running.
    pub fn time(&mut self, u: &Upsert, now: std::time::Instant) -> Option<std::time::Duration> {
        if !matches!(u.kind, UpsertKind::ToolCall { .. }) {
            return None;
        }
        if !u.is_closed() {
            self.running.entry(u.item_id.clone()).or_insert(now);
            return None;
        }
        let since = self.running.remove(&u.item_id)?;
        Some(now.saturating_duration_since(since))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    Completed,
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEvent {
    TurnStarted {
        turn_id: String,
        session_id: String,
        model_id: String,
        provider_id: String,
    },
    TurnComplete {
        turn_id: String,
        session_id: String,
        status: TurnStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
    },
    TurnError {
        turn_id: String,
        session_id: String,
        error_code: String,
        error_message: String,
    },
}

impl TurnEvent {
    pub fn turn_id(&self) -> &str {
        match self {
            TurnEvent::TurnStarted { turn_id, .. }
            | TurnEvent::TurnComplete { turn_id, .. }
            | TurnEvent::TurnError { turn_id, .. } => turn_id,
        }
    }

    /// True for the events that end a turn.
    pub fn is_terminal(&self) -> bool {
        !matches!(self, TurnEvent::TurnStarted { .. })
    }
}

/// One processor emission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Output {
    Upsert(Upsert),
    Turn(TurnEvent),
}
