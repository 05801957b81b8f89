//! One line of the canonical history store (seed 000 "Canonical History Store").
//!
//! Every line is a JSON object with `type: "history"`, the agent and session it
//! belongs to, a millisecond timestamp and a `role`: `user`, `assistant` (content
//! blocks thinking → toolCall → text, plus `meta`), `toolResult` (its own record,
//! never nested in the assistant) and hive's `system` notices. The struct is flat
//! with optional fields rather than a serde-tagged enum so parsing a large file
//! stays a single pass without buffering, and unknown fields from newer writers
//! are ignored.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{ToolDisplay, Usage};

/// Who wrote a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    #[serde(rename = "user")]
    User,
    #[serde(rename = "assistant")]
    Assistant,
    #[serde(rename = "toolResult")]
    ToolResult,
    /// Conversation notices from hive or the agent (rate-limit retries, …).
    #[serde(rename = "system")]
    System,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// Always `"history"`.
    #[serde(rename = "type")]
    pub kind: String,
    pub agent_id: String,
    pub session_id: String,
    /// Milliseconds since the Unix epoch.
    pub timestamp: i64,
    /// hive's turn id: groups a turn's user, toolResult and assistant records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub role: Role,
    #[serde(default)]
    pub content: Vec<Block>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// hive's extension, on a tool result: how long the call ran, from its
    /// first sight to its result (a delegation's wait, shown again after a
    /// restart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// One content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Block {
    #[serde(rename = "text")]
    Text { text: String },
    #[serde(rename = "thinking")]
    Thinking { thinking: String },
    #[serde(rename = "toolCall")]
    ToolCall {
        id: String,
        name: String,
        #[serde(default)]
        arguments: Value,
        /// hive's extension: how the call reads on screen (provider-made).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<ToolDisplay>,
    },
    /// Block types hive does not know (images, …): kept out of the way.
    #[serde(other)]
    Unknown,
}

/// Attached to the assistant record of a turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageMeta>,
    /// `stop`/`end_turn`/… as the agent said, else `completed`, `cancelled`,
    /// `error` or `interrupted` (hive stopped before the turn ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// hive's extension: how long the turn ran, as its footer showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// hive's extension: the turn's pieces in the order they were shown.
    /// The seed groups the blocks by kind (thinking, tool calls, one text);
    /// this puts them back where they were. Absent when the seed's order is
    /// already the shown one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layout: Vec<Part>,
}

/// One shown piece of a turn (`Meta::layout`). Text and thinking parts name
/// their length in bytes within the block that joins them (parts are joined
/// by a blank line); tool calls and notices are taken in record order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Part {
    Thinking(usize),
    Text(usize),
    Tool,
    Notice,
}

/// Token usage in the seed's shape (`input`, `output`, `totalTokens`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageMeta {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cache_write: Option<u64>,
    #[serde(default)]
    pub total_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// `cost_usd` is hive's estimate from `[prices]`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_estimated: bool,
    /// The conversation's size and the model's window at the turn's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
}

impl From<&Usage> for UsageMeta {
    fn from(u: &Usage) -> Self {
        let cache_read = u.cache_read_input_tokens;
        let cache_write = u.cache_creation_input_tokens;
        Self {
            input: u.input_tokens,
            output: u.output_tokens,
            cache_read,
            cache_write,
            total_tokens: u.input_tokens
                + u.output_tokens
                + cache_read.unwrap_or(0)
                + cache_write.unwrap_or(0),
            cost_usd: u.cost_usd,
            cost_estimated: u.cost_estimated,
            context_tokens: u.context_tokens,
            context_window: u.context_window,
        }
    }
}

impl From<&UsageMeta> for Usage {
    fn from(u: &UsageMeta) -> Self {
        Self {
            input_tokens: u.input,
            output_tokens: u.output,
            cache_read_input_tokens: u.cache_read,
            cache_creation_input_tokens: u.cache_write,
            cost_usd: u.cost_usd,
            cost_estimated: u.cost_estimated,
            context_tokens: u.context_tokens,
            context_window: u.context_window,
            model: None,
        }
    }
}

impl UsageMeta {
    /// Usage as an agent's own transcript reports one model call or turn:
    /// zero cache counts and cost left out, the agent's own total where it
    /// has one (its input may already count the cached tokens).
    pub fn reported(u: &Usage, total_tokens: Option<u64>) -> Self {
        Self {
            input: u.input_tokens,
            output: u.output_tokens,
            cache_read: u.cache_read_input_tokens.filter(|&c| c > 0),
            cache_write: u.cache_creation_input_tokens.filter(|&c| c > 0),
            total_tokens: total_tokens.unwrap_or(u.input_tokens + u.output_tokens),
            cost_usd: u.cost_usd.filter(|&c| c > 0.0),
            cost_estimated: false,
            context_tokens: None,
            context_window: None,
        }
    }

    /// Adds another model call's usage into a running total.
    pub(crate) fn accumulate(&mut self, other: &UsageMeta) {
        fn add<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            }
        }
        self.input += other.input;
        self.output += other.output;
        self.total_tokens += other.total_tokens;
        self.cache_read = add(self.cache_read, other.cache_read);
        self.cache_write = add(self.cache_write, other.cache_write);
        self.cost_usd = add(self.cost_usd, other.cost_usd);
        self.cost_estimated |= other.cost_estimated && other.cost_usd.is_some();
        self.context_tokens = other.context_tokens.or(self.context_tokens);
        self.context_window = other.context_window.or(self.context_window);
    }
}

impl Record {
    /// A record with no content yet.
    pub fn new(agent_id: &str, session_id: &str, timestamp: i64, role: Role) -> Self {
        Self {
            kind: "history".into(),
            agent_id: agent_id.to_owned(),
            session_id: session_id.to_owned(),
            timestamp,
            turn_id: None,
            role,
            content: Vec::new(),
            meta: None,
            tool_call_id: None,
            tool_name: None,
            is_error: None,
            details: None,
            duration_ms: None,
        }
    }

    /// All text blocks joined (user and system records, tool results).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for b in &self.content {
            if let Block::Text { text } = b {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }

    /// The record as one JSONL line, newline included.
    pub fn to_line(&self) -> String {
        // Serialising plain data (strings, numbers, `Value`s) cannot fail.
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }
}

/// Current time in the store's unit.
pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
