//! Canonical stream events (DESIGN §2, seed 002 "Canonical Stream Event Schema").
//!
//! Every structured provider translates its agent's protocol into these envelopes;
//! nothing downstream of a provider knows any agent's own message shapes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Why an event was rejected. The message always names the offending field.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EventError {
    #[error("invalid stream event at `{path}`: {message}")]
    Schema { path: String, message: String },
    #[error("invalid stream event: field `{field}` {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
    },
}

/// The reason and finish reason of a user's interrupt.
pub(crate) const INTERRUPTED: &str = "interrupted";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEvent {
    pub event_id: String,
    /// Source time of the event (RFC 3339, UTC).
    pub timestamp: DateTime<Utc>,
    pub turn_id: String,
    pub session_id: String,
    pub payload: Payload,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Payload {
    ResponseStart {
        model_id: String,
        provider_id: String,
    },
    ItemStart {
        item_id: String,
        item_type: ItemType,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        initial_content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    ItemDelta {
        item_id: String,
        delta_content: String,
    },
    ItemDone {
        item_id: String,
        final_item: FinalItem,
    },
    ItemError {
        item_id: String,
        error: ErrorInfo,
    },
    ItemCancelled {
        item_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A running tool call's live state (hive's extension of the seed's
    /// schema): how its arguments read so far and what it has printed, for
    /// the pane to show before the call's final arguments and output arrive.
    /// Every field is optional; an absent one leaves that part unchanged.
    ToolProgress {
        item_id: String,
        /// The call's display as far as its arguments have streamed; replaces
        /// the previous one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<ToolDisplay>,
        /// Everything the tool printed so far; replaces the live output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// Output printed since the last event; appended to the live output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_delta: Option<String>,
    },
    ResponseDone {
        status: ResponseStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorInfo>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    ResponseError {
        error: ErrorInfo,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemType {
    Message,
    Reasoning,
    FunctionCall,
    FunctionCallOutput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    Completed,
    Cancelled,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    User,
    Agent,
    System,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    pub code: String,
    pub message: String,
}

impl ErrorInfo {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// Token usage of one turn. Cost only where the agent reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// `cost_usd` is hive's estimate from the configured price table
    /// (`[prices]`), not the agent's own figure; a total is estimated when
    /// any turn in it is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_estimated: bool,
    /// How many tokens the conversation held at the turn's end (the last
    /// model call's prompt and answer), where the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// The model's context window, where the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// The model that did the turn's work, where the agent names it only at
    /// the turn's end (Gemini starts on `auto` and says which model answered
    /// in its stats): the footer's and the price's model, over the one the
    /// turn started with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl Usage {
    /// What was used since `earlier`, for agents that report a running
    /// total (codex exec's `turn.completed` of a resumed thread).
    pub fn since(&self, earlier: &Usage) -> Usage {
        fn sub(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            a.map(|a| a.saturating_sub(b.unwrap_or(0)))
        }
        Usage {
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
            cache_read_input_tokens: sub(
                self.cache_read_input_tokens,
                earlier.cache_read_input_tokens,
            ),
            cache_creation_input_tokens: sub(
                self.cache_creation_input_tokens,
                earlier.cache_creation_input_tokens,
            ),
            cost_usd: match (self.cost_usd, earlier.cost_usd) {
                (Some(a), b) => Some((a - b.unwrap_or(0.0)).max(0.0)),
                (None, _) => None,
            },
            cost_estimated: self.cost_estimated,
            context_tokens: self.context_tokens,
            context_window: self.context_window,
            model: self.model.clone(),
        }
    }

    /// Adds another turn's usage into a running total.
    pub(crate) fn accumulate(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        fn add(a: &mut Option<u64>, b: Option<u64>) {
            if let Some(b) = b {
                *a = Some(a.unwrap_or(0) + b);
            }
        }
        add(
            &mut self.cache_read_input_tokens,
            other.cache_read_input_tokens,
        );
        add(
            &mut self.cache_creation_input_tokens,
            other.cache_creation_input_tokens,
        );
        if let Some(c) = other.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
            self.cost_estimated |= other.cost_estimated;
        }
        // The context is a level, not a sum: the latest report stands.
        if other.context_tokens.is_some() {
            self.context_tokens = other.context_tokens;
        }
        if other.context_window.is_some() {
            self.context_window = other.context_window;
        }
    }

    /// All the tokens the turn read or wrote.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens
            + self.output_tokens
            + self.cache_read_input_tokens.unwrap_or(0)
            + self.cache_creation_input_tokens.unwrap_or(0)
    }

    /// Whether anything at all is known: a turn that reported nothing
    /// shows "—", not zero.
    pub fn is_known(&self) -> bool {
        self.total_tokens() > 0 || self.cost_usd.is_some()
    }
}

/// How a tool call reads on screen, decided by the provider that knows the
/// tool (so the UI never guesses an agent's argument names).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDisplay {
    /// One line that says what the call does: its command, path, pattern…
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// What an editing call changes, as diff lines (`-old`, `+new`, or a
    /// unified patch with its headers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// seed 002 "Finalized Item".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FinalItem {
    Message {
        content: String,
        origin: Origin,
    },
    Reasoning {
        content: String,
        provider_id: String,
    },
    FunctionCall {
        name: String,
        call_id: String,
        arguments: Map<String, Value>,
        /// How to show the call, filled by the provider that knows the tool's
        /// argument names (hive's extension of the seed's finalized item).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<ToolDisplay>,
    },
    FunctionCallOutput {
        call_id: String,
        output: String,
        is_error: bool,
    },
}

/// Constructors for the payloads every provider builds, so that no translator
/// spells out the optional fields it leaves empty.
/// The `item_id` of an item event, borrowed as the payload is (shared or
/// mutable); the one list of which payloads are about an item.
macro_rules! item_id_of {
    ($payload:expr) => {
        match $payload {
            Payload::ItemStart { item_id, .. }
            | Payload::ItemDelta { item_id, .. }
            | Payload::ItemDone { item_id, .. }
            | Payload::ItemError { item_id, .. }
            | Payload::ItemCancelled { item_id, .. }
            | Payload::ToolProgress { item_id, .. } => Some(item_id),
            Payload::ResponseStart { .. }
            | Payload::ResponseDone { .. }
            | Payload::ResponseError { .. } => None,
        }
    };
}

impl Payload {
    /// A message or reasoning item opens with no content yet.
    pub fn item_start(item_id: impl Into<String>, item_type: ItemType) -> Self {
        Payload::ItemStart {
            item_id: item_id.into(),
            item_type,
            initial_content: None,
            name: None,
            call_id: None,
        }
    }

    /// A tool call opens: its tool name and the call id its output will carry.
    pub fn tool_start(
        item_id: impl Into<String>,
        name: impl Into<String>,
        call_id: impl Into<String>,
    ) -> Self {
        Payload::ItemStart {
            item_id: item_id.into(),
            item_type: ItemType::FunctionCall,
            initial_content: None,
            name: Some(name.into()),
            call_id: Some(call_id.into()),
        }
    }

    /// A tool call's result: what the call `call_id` printed, as item
    /// `item_id` of its own.
    pub fn tool_output(
        item_id: impl Into<String>,
        call_id: impl Into<String>,
        output: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Payload::ItemDone {
            item_id: item_id.into(),
            final_item: FinalItem::FunctionCallOutput {
                call_id: call_id.into(),
                output: output.into(),
                is_error,
            },
        }
    }

    /// A notice inside the conversation (a retry, a compaction, a warning):
    /// a message item of origin `system` under a fresh id starting with
    /// `prefix`, opened and done at once.
    pub fn notice(prefix: &str, text: impl Into<String>) -> [Self; 2] {
        let item_id = new_id(prefix);
        [
            Payload::item_start(item_id.clone(), ItemType::Message),
            Payload::ItemDone {
                item_id,
                final_item: FinalItem::Message {
                    content: text.into(),
                    origin: Origin::System,
                },
            },
        ]
    }

    /// The turn ended because the user interrupted it.
    pub fn interrupted(usage: Option<Usage>) -> Self {
        Payload::ResponseDone {
            status: ResponseStatus::Cancelled,
            finish_reason: Some(INTERRUPTED.into()),
            error: None,
            usage,
        }
    }

    /// The item an item event is about.
    pub(crate) fn item_id_mut(&mut self) -> Option<&mut String> {
        item_id_of!(self)
    }

    pub fn item_id(&self) -> Option<&str> {
        item_id_of!(self).map(String::as_str)
    }

    /// An open item was cut short by an interrupt.
    pub fn item_interrupted(item_id: impl Into<String>) -> Self {
        Payload::ItemCancelled {
            item_id: item_id.into(),
            reason: Some(INTERRUPTED.into()),
        }
    }
}

impl StreamEvent {
    /// A new event stamped now with a fresh id.
    pub fn new(turn_id: &str, session_id: &str, payload: Payload) -> Self {
        Self {
            event_id: new_id("ev"),
            timestamp: Utc::now(),
            turn_id: turn_id.to_owned(),
            session_id: session_id.to_owned(),
            payload,
        }
    }

    /// Parses and validates one event; the error names the field at fault.
    pub fn from_json(text: &str) -> Result<Self, EventError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let event: StreamEvent = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let message = e.into_inner().to_string();
            // serde buffers internally tagged enums, which loses the field
            // path; find the field ourselves.
            if path == "payload"
                && let Some((field, expected)) = serde_json::from_str::<Value>(text)
                    .ok()
                    .and_then(|v| mistyped_payload_field(&v["payload"]))
            {
                return EventError::Schema {
                    path: format!("payload.{field}"),
                    message: format!("expected {expected}"),
                };
            }
            EventError::Schema { path, message }
        })?;
        event.validate()?;
        Ok(event)
    }

    /// Checks the rules serde's shape cannot express.
    pub fn validate(&self) -> Result<(), EventError> {
        non_empty("event_id", &self.event_id)?;
        non_empty("turn_id", &self.turn_id)?;
        non_empty("session_id", &self.session_id)?;
        match &self.payload {
            Payload::ResponseStart { model_id, .. } => non_empty("model_id", model_id),
            Payload::ItemStart {
                item_id,
                item_type,
                name,
                call_id,
                ..
            } => {
                non_empty("item_id", item_id)?;
                if *item_type == ItemType::FunctionCall {
                    require("name", name.as_deref())?;
                    require("call_id", call_id.as_deref())?;
                }
                if *item_type == ItemType::FunctionCallOutput {
                    require("call_id", call_id.as_deref())?;
                }
                Ok(())
            }
            Payload::ItemDelta { item_id, .. }
            | Payload::ItemDone { item_id, .. }
            | Payload::ItemCancelled { item_id, .. }
            | Payload::ToolProgress { item_id, .. } => non_empty("item_id", item_id),
            Payload::ItemError { item_id, error } => {
                non_empty("item_id", item_id)?;
                non_empty("error.code", &error.code)
            }
            Payload::ResponseDone { .. } => Ok(()),
            Payload::ResponseError { error } => non_empty("error.code", &error.code),
        }
    }
}

/// JSON kinds of each payload variant's scalar fields.
const PAYLOAD_FIELDS: &[(&str, &[(&str, &str)])] = &[
    (
        "response_start",
        &[("model_id", "a string"), ("provider_id", "a string")],
    ),
    (
        "item_start",
        &[
            ("item_id", "a string"),
            (
                "item_type",
                "one of `message` `reasoning` `function_call` `function_call_output`",
            ),
            ("initial_content", "a string"),
            ("name", "a string"),
            ("call_id", "a string"),
        ],
    ),
    (
        "item_delta",
        &[("item_id", "a string"), ("delta_content", "a string")],
    ),
    (
        "item_done",
        &[("item_id", "a string"), ("final_item", "an object")],
    ),
    (
        "item_error",
        &[("item_id", "a string"), ("error", "an object")],
    ),
    (
        "item_cancelled",
        &[("item_id", "a string"), ("reason", "a string")],
    ),
    (
        "response_done",
        &[
            ("status", "one of `completed` `cancelled` `error`"),
            ("finish_reason", "a string"),
            ("error", "an object"),
            ("usage", "an object"),
        ],
    ),
    (
        "tool_progress",
        &[
            ("item_id", "a string"),
            ("display", "an object"),
            ("output", "a string"),
            ("output_delta", "a string"),
        ],
    ),
    ("response_error", &[("error", "an object")]),
];

/// The first payload field whose JSON kind is wrong, with what was expected.
fn mistyped_payload_field(payload: &Value) -> Option<(&'static str, &'static str)> {
    let tag = payload.get("type")?.as_str()?;
    let (_, fields) = PAYLOAD_FIELDS.iter().find(|(t, _)| *t == tag)?;
    fields.iter().copied().find(|(field, expected)| {
        payload.get(*field).is_some_and(|v| {
            !v.is_null()
                && match *expected {
                    "a string" => !v.is_string(),
                    "an object" => !v.is_object(),
                    one_of => !v
                        .as_str()
                        .is_some_and(|s| one_of.contains(&format!("`{s}`"))),
                }
        })
    })
}

fn non_empty(field: &'static str, value: &str) -> Result<(), EventError> {
    if value.is_empty() {
        return Err(EventError::Invalid {
            field,
            problem: "must not be empty".into(),
        });
    }
    Ok(())
}

fn require(field: &'static str, value: Option<&str>) -> Result<(), EventError> {
    match value {
        Some(v) => non_empty(field, v),
        None => Err(EventError::Invalid {
            field,
            problem: "is required for this item type".into(),
        }),
    }
}

/// A fresh unique id with a readable prefix (`turn_…`, `item_…`): 32 hex
/// digits, as a UUID's simple form. Every stream event gets one, so no
/// system call per id: the process draws 128 random bits once, keeps the
/// high half and counts up from the low half. Ids of one process never
/// repeat; another process's share them only if it drew the same 64 bits.
pub(crate) fn new_id(prefix: &str) -> String {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static BASE: OnceLock<(u64, u64)> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let (high, low) = *BASE.get_or_init(|| {
        let bits = uuid::Uuid::new_v4().as_u128();
        ((bits >> 64) as u64, bits as u64)
    });
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}_{high:016x}{:016x}", low.wrapping_add(n))
}

/// Past this a figure is shown in scientific notation (no turn costs it).
const MAX_SHOWN_USD: f64 = 1e6;

/// `$0.0123` (`places` decimals), or past a million dollars (only a sum of
/// many turns gets there) in scientific notation, never hundreds of digits.
pub fn usd(v: f64, places: usize) -> String {
    if !v.is_finite() || v.abs() >= MAX_SHOWN_USD {
        format!("${v:.2e}")
    } else {
        format!("${v:.places$}")
    }
}

/// The share of the context window past which a pane warns.
pub const CONTEXT_WARN: f64 = 0.8;

/// How full the context is: the tokens in it and the window, the agent's
/// own figures first, else the configured window.
pub fn context_fill(usage: &Usage, configured: Option<u64>) -> Option<(u64, u64)> {
    let used = usage.context_tokens?;
    let window = usage.context_window.or(configured).filter(|&w| w > 0)?;
    Some((used, window))
}

#[cfg(test)]
mod id_tests {
    use std::collections::HashSet;

    use super::new_id;

    #[test]
    fn ids_never_repeat_across_threads_and_look_like_a_simple_uuid() {
        let threads: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| (0..2000).map(|_| new_id("ev")).collect::<Vec<_>>()))
            .collect();
        let ids: Vec<String> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let unique: HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        for id in &ids {
            let hex = id.strip_prefix("ev_").unwrap();
            assert_eq!(hex.len(), 32, "{id}");
            assert!(hex.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        }
    }
}
