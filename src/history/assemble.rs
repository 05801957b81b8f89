//! Seed 000 "Canonical History Assembly Semantics", both ways.
//!
//! `TurnAssembler` collects one turn's pieces and composes its records: tool
//! results as records of their own, then a single assistant record whose
//! content is thinking → tool calls (in order) → text, with `meta` attached.
//! The live recorder and every importer use it, so all histories share one shape.
//!
//! `ItemBuilder` goes back: records to completed `Upsert`s the UI renders like
//! live ones (tool results are joined to their calls by `toolCallId`).

use chrono::{DateTime, TimeZone, Utc};
use indexmap::IndexMap;
use serde_json::Value;

use super::record::{Block, Meta, Record, Role};
use crate::event::{Origin, ToolDisplay};
use crate::provider::display::{COMMON, describe};
use crate::text::SharedText;
use crate::upsert::{Upsert, UpsertKind, UpsertStatus};

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
        }
        self.touch(ts);
    }

    pub fn text(&mut self, text: &str, ts: i64) {
        if !text.trim().is_empty() {
            self.texts.push(text.to_owned());
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
        self.touch(ts);
    }

    pub fn tool_result(
        &mut self,
        call_id: &str,
        name: &str,
        output: &str,
        is_error: bool,
        ts: i64,
    ) {
        let mut r = self.record(Role::ToolResult, ts);
        r.tool_call_id = Some(call_id.to_owned());
        r.tool_name = Some(name.to_owned());
        r.content = vec![Block::Text {
            text: output.to_owned(),
        }];
        r.is_error = Some(is_error);
        self.side.push(r);
        self.touch(ts);
    }

    pub fn system(&mut self, text: &str, ts: i64) {
        let mut r = self.record(Role::System, ts);
        r.content = vec![Block::Text {
            text: text.to_owned(),
        }];
        self.side.push(r);
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
    /// record (thinking, tool calls, text; `meta`). No assistant record when
    /// the turn produced nothing and ended normally.
    pub fn finish(self) -> Vec<Record> {
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
                Some("cancelled" | "interrupted" | "error")
            );
        out.extend(self.side);
        if !assistant.content.is_empty() || noteworthy_end {
            assistant.meta = Some(self.meta);
            out.push(assistant);
        }
        out
    }
}

/// Milliseconds to a UTC time (the epoch for nonsense values).
pub fn ms_to_time(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

/// Records (with their byte offsets) → completed upserts, oldest first.
#[derive(Default)]
pub struct ItemBuilder {
    items: Vec<Upsert>,
    /// Tool results waiting for the assistant record that holds their call.
    pending: IndexMap<String, (u64, Record)>,
}

impl ItemBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, offset: u64, rec: &Record) {
        match rec.role {
            Role::User => {
                self.flush_orphans();
                self.message(offset, 0, rec, rec.text(), Origin::User);
            }
            Role::System => self.message(offset, 0, rec, rec.text(), Origin::System),
            Role::ToolResult => {
                let key = rec
                    .tool_call_id
                    .clone()
                    .unwrap_or_else(|| format!("orphan-{offset}"));
                self.pending.insert(key, (offset, rec.clone()));
            }
            Role::Assistant => self.assistant(offset, rec),
        }
    }

    pub fn finish(mut self) -> Vec<Upsert> {
        self.flush_orphans();
        self.items
    }

    fn base(offset: u64, n: usize, rec: &Record, kind: UpsertKind) -> Upsert {
        let ts = ms_to_time(rec.timestamp);
        Upsert {
            turn_id: rec
                .turn_id
                .clone()
                .unwrap_or_else(|| format!("hturn_{offset}")),
            session_id: rec.session_id.clone(),
            item_id: format!("h{offset}_{n}"),
            source_timestamp: ts,
            emitted_at: ts,
            status: UpsertStatus::Complete,
            error_code: None,
            error_message: None,
            kind,
        }
    }

    fn message(&mut self, offset: u64, n: usize, rec: &Record, text: String, origin: Origin) {
        if text.is_empty() {
            return;
        }
        let kind = UpsertKind::Message {
            content: SharedText::from(text),
            origin,
        };
        self.items.push(Self::base(offset, n, rec, kind));
    }

    fn assistant(&mut self, offset: u64, rec: &Record) {
        for (n, block) in rec.content.iter().enumerate() {
            match block {
                Block::Thinking { thinking } => {
                    let provider_id = rec
                        .meta
                        .as_ref()
                        .and_then(|m| m.provider.clone())
                        .unwrap_or_default();
                    let kind = UpsertKind::Thinking {
                        content: SharedText::from(thinking.as_str()),
                        provider_id,
                    };
                    self.items.push(Self::base(offset, n, rec, kind));
                }
                Block::ToolCall {
                    id,
                    name,
                    arguments,
                    display,
                } => {
                    let result = self.pending.shift_remove(id);
                    let kind = UpsertKind::ToolCall {
                        // Records written before hints existed: the common names.
                        display: Some(Box::new(
                            display
                                .clone()
                                .unwrap_or_else(|| describe(arguments, &COMMON)),
                        )),
                        tool_name: name.clone(),
                        arguments: arguments.clone(),
                        call_id: id.clone(),
                        output: result.as_ref().map(|(_, r)| r.text()),
                        output_is_error: result.as_ref().map(|(_, r)| r.is_error == Some(true)),
                    };
                    self.items.push(Self::base(offset, n, rec, kind));
                }
                Block::Text { text } => {
                    self.message(offset, n, rec, text.clone(), Origin::Agent);
                }
                Block::Unknown => {}
            }
        }
        self.flush_orphans();
        if let Some(meta) = &rec.meta {
            let end = rec.content.len();
            match (meta.stop_reason.as_deref(), &meta.error_message) {
                (_, Some(msg)) => {
                    let code = meta.error_code.as_deref().unwrap_or("error");
                    let text = format!("turn failed [{code}]: {msg}");
                    self.message(offset, end, rec, text, Origin::System);
                }
                (Some("cancelled"), None) => {
                    self.message(offset, end, rec, "turn cancelled".into(), Origin::System);
                }
                (Some("interrupted"), None) => {
                    let text = "turn interrupted: hive stopped before it ended".into();
                    self.message(offset, end, rec, text, Origin::System);
                }
                _ => {}
            }
        }
    }

    /// Tool results whose call never made it into an assistant record still
    /// show, as a tool item of their own.
    fn flush_orphans(&mut self) {
        for (_, (offset, rec)) in std::mem::take(&mut self.pending) {
            let kind = UpsertKind::ToolCall {
                display: None,
                tool_name: rec.tool_name.clone().unwrap_or_else(|| "tool".into()),
                arguments: Value::Object(Default::default()),
                call_id: rec.tool_call_id.clone().unwrap_or_default(),
                output: Some(rec.text()),
                output_is_error: Some(rec.is_error == Some(true)),
            };
            self.items.push(Self::base(offset, 0, &rec, kind));
        }
    }
}

/// Convenience: records of a loaded window → items.
pub fn items_from(records: &[(u64, Record)]) -> Vec<Upsert> {
    let mut b = ItemBuilder::new();
    for (offset, rec) in records {
        b.push(*offset, rec);
    }
    b.finish()
}
