//! Seed 000 "Canonical History Assembly Semantics", both ways.
//!
//! `TurnAssembler` collects one turn's pieces and composes its records: tool
//! results as records of their own, then a single assistant record whose
//! content is thinking → tool calls (in order) → text, with `meta` attached.
//! The live recorder and every importer use it, so all histories share one shape.
//!
//! `ItemBuilder` (src/history/rebuild.rs) goes back: records to completed
//! `Upsert`s the UI renders like live ones.

use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;

use super::record::{Block, Meta, Part, Record, Role};
use crate::event::ToolDisplay;

/// One turn being assembled.
#[derive(Debug, Clone)]
pub struct TurnAssembler {
    agent_id: String,
    session_id: String,
    turn_id: Option<String>,
    thinking: Vec<String>,
    tool_calls: Vec<Block>,
    texts: Vec<String>,
    /// toolResult and system records, in arrival order.
    side: Vec<Record>,
    /// What was shown, in order (`Meta::layout`).
    layout: Vec<Part>,
    pub meta: Meta,
    /// Time of the newest piece.
    pub timestamp: i64,
}

impl TurnAssembler {
    pub fn new(agent_id: &str, session_id: &str, turn_id: Option<String>, timestamp: i64) -> Self {
        Self {
            agent_id: agent_id.to_owned(),
            session_id: session_id.to_owned(),
            turn_id,
            thinking: Vec::new(),
            tool_calls: Vec::new(),
            texts: Vec::new(),
            side: Vec::new(),
            layout: Vec::new(),
            meta: Meta::default(),
            timestamp,
        }
    }

    fn record(&self, role: Role, timestamp: i64) -> Record {
        let mut r = Record::new(&self.agent_id, &self.session_id, timestamp, role);
        r.turn_id = self.turn_id.clone();
        r
    }

    fn touch(&mut self, ts: i64) {
        self.timestamp = self.timestamp.max(ts);
    }

    pub fn thinking(&mut self, text: &str, ts: i64) {
        if !text.trim().is_empty() {
            self.thinking.push(text.to_owned());
            self.layout.push(Part::Thinking(text.len()));
        }
        self.touch(ts);
    }

    pub fn text(&mut self, text: &str, ts: i64) {
        if !text.trim().is_empty() {
            self.texts.push(text.to_owned());
            self.layout.push(Part::Text(text.len()));
        }
        self.touch(ts);
    }

    pub fn tool_call(
        &mut self,
        id: &str,
        name: &str,
        arguments: Value,
        display: Option<ToolDisplay>,
        ts: i64,
    ) {
        self.tool_calls.push(Block::ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments,
            display,
        });
        self.layout.push(Part::Tool);
        self.touch(ts);
    }

    /// A call's result; `duration_ms`: how long it ran, as the pane
    /// timed it.
    pub fn tool_result(
        &mut self,
        call_id: &str,
        name: &str,
        (output, is_error): (&str, bool),
        duration_ms: Option<u64>,
        ts: i64,
    ) {
        let mut r = self.record(Role::ToolResult, ts);
        r.tool_call_id = Some(call_id.to_owned());
        r.tool_name = Some(name.to_owned());
        r.content = vec![Block::Text {
            text: output.to_owned(),
        }];
        r.is_error = Some(is_error);
        r.duration_ms = duration_ms;
        self.side.push(r);
        self.touch(ts);
    }

    pub fn system(&mut self, text: &str, ts: i64) {
        let mut r = self.record(Role::System, ts);
        r.content = vec![Block::Text {
            text: text.to_owned(),
        }];
        self.side.push(r);
        self.layout.push(Part::Notice);
        self.touch(ts);
    }

    /// True when the agent produced nothing at all.
    pub fn is_empty(&self) -> bool {
        self.thinking.is_empty()
            && self.tool_calls.is_empty()
            && self.texts.is_empty()
            && self.side.is_empty()
    }

    /// The turn's records: tool results and notices, then one assistant
    /// record (thinking, tool calls, text; `meta`, with the shown order when
    /// the seed's differs). No assistant record when the turn produced
    /// nothing and ended normally, unless it has a footer to restore.
    pub fn finish(mut self) -> Vec<Record> {
        if self.meta.layout.is_empty() && !in_seed_order(&self.layout) {
            self.meta.layout = std::mem::take(&mut self.layout);
        }
        let mut out = Vec::with_capacity(self.side.len() + 1);
        let mut assistant = self.record(Role::Assistant, self.timestamp);
        if !self.thinking.is_empty() {
            assistant.content.push(Block::Thinking {
                thinking: self.thinking.join("\n\n"),
            });
        }
        assistant.content.extend(self.tool_calls);
        if !self.texts.is_empty() {
            assistant.content.push(Block::Text {
                text: self.texts.join("\n\n"),
            });
        }
        let noteworthy_end = self.meta.error_message.is_some()
            || matches!(
                self.meta.stop_reason.as_deref(),
                Some("cancelled" | "interrupted" | "error" | super::cut::STOP_CUT)
            );
        out.extend(self.side);
        let footer = self.meta.duration_ms.is_some();
        if !assistant.content.is_empty() || noteworthy_end || footer {
            assistant.meta = Some(self.meta);
            out.push(assistant);
        }
        out
    }
}

/// True when the seed's composition (notices first, then one thinking
/// block, the tool calls, one text block) shows the parts as they came.
fn in_seed_order(layout: &[Part]) -> bool {
    let rank = |p: &Part| match p {
        Part::Notice => 0,
        Part::Thinking(_) => 1,
        Part::Tool => 2,
        Part::Text(_) => 3,
    };
    let once = |want: fn(&Part) -> bool| layout.iter().filter(|p| want(p)).count() <= 1;
    layout.windows(2).all(|w| rank(&w[0]) <= rank(&w[1]))
        && once(|p| matches!(p, Part::Thinking(_)))
        && once(|p| matches!(p, Part::Text(_)))
}

/// Milliseconds to a UTC time (the epoch for nonsense values).
pub(crate) fn ms_to_time(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

pub use super::rebuild::items_from;
pub(crate) use super::rebuild::{TurnEnd, restore_into};
