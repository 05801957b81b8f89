//! Replay of real captures: whatever a provider's translator makes of a
//! capture's lines goes through the upsert processor here, the way the
//! runner would feed it, and the test reads both sides (the provider events
//! and the processor's outputs). Each test binary drives its own translator
//! and adds the queries only it needs in an `impl Replay` of its own.

use std::path::Path;

use hive::event::{Origin, StreamEvent};
use hive::processor::{Processor, ProcessorConfig};
use hive::provider::{PermissionRequest, ProviderEvent};
use hive::upsert::{Output, TurnEvent, Upsert, UpsertKind, UpsertStatus};
use serde_json::Value;
use tokio::time::Instant;

/// A tool call upsert: (status, name, call id, arguments, output, is_error).
pub type ToolRow = (
    UpsertStatus,
    String,
    String,
    Value,
    Option<String>,
    Option<bool>,
);

/// Everything one replay produced.
pub struct Replay {
    /// Every provider event the translator emitted, in order.
    pub events: Vec<ProviderEvent>,
    /// The processor's outputs for the stream events among them.
    pub outputs: Vec<Output>,
    processor: Processor,
    now: Instant,
}

impl Default for Replay {
    fn default() -> Self {
        Self {
            events: Vec::new(),
            outputs: Vec::new(),
            processor: Processor::new(ProcessorConfig::default()),
            now: Instant::now(),
        }
    }
}

impl Replay {
    /// Replays `text` line by line through `translate`.
    pub fn lines(text: &str, mut translate: impl FnMut(&str) -> Vec<ProviderEvent>) -> Self {
        let mut r = Self::default();
        for line in text.lines() {
            r.feed_all(translate(line));
        }
        r
    }

    /// One translator output: a stream event must validate and goes to the
    /// processor; every event is kept.
    pub fn feed(&mut self, ev: ProviderEvent) {
        if let ProviderEvent::Stream(s) = &ev {
            s.validate()
                .unwrap_or_else(|e| panic!("invalid event {s:?}: {e}"));
            self.outputs.extend(self.processor.process(s, self.now));
        }
        self.events.push(ev);
    }

    pub fn feed_all(&mut self, events: impl IntoIterator<Item = ProviderEvent>) {
        for ev in events {
            self.feed(ev);
        }
    }

    pub fn stream(&self) -> Vec<&StreamEvent> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Stream(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    /// The provider events other than stream events.
    pub fn other(&self) -> Vec<&ProviderEvent> {
        self.events
            .iter()
            .filter(|e| !matches!(e, ProviderEvent::Stream(_)))
            .collect()
    }

    pub fn upserts(&self) -> Vec<&Upsert> {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Upsert(u) => Some(u),
                Output::Turn(_) => None,
            })
            .collect()
    }

    pub fn turn_events(&self) -> Vec<&TurnEvent> {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Turn(t) => Some(t),
                Output::Upsert(_) => None,
            })
            .collect()
    }

    pub fn turn_ends(&self) -> Vec<&TurnEvent> {
        self.turn_events()
            .into_iter()
            .filter(|t| t.is_terminal())
            .collect()
    }

    pub fn last_turn(&self) -> &TurnEvent {
        self.turn_events()
            .last()
            .copied()
            .unwrap_or_else(|| panic!("no turn event in {:#?}", self.outputs))
    }

    /// Final (complete/error) upserts.
    pub fn finals(&self) -> Vec<&Upsert> {
        self.upserts()
            .into_iter()
            .filter(|u| u.is_final())
            .collect()
    }

    /// Final text of every completed message item from `origin`.
    pub fn messages(&self, origin: Origin) -> Vec<String> {
        self.upserts()
            .into_iter()
            .filter(|u| u.status == UpsertStatus::Complete)
            .filter_map(|u| match &u.kind {
                UpsertKind::Message { content, origin: o } if *o == origin => {
                    Some(content.to_string())
                }
                _ => None,
            })
            .collect()
    }

    /// Final text of every completed thinking item.
    pub fn thinking(&self) -> Vec<String> {
        self.upserts()
            .into_iter()
            .filter(|u| u.status == UpsertStatus::Complete)
            .filter_map(|u| match &u.kind {
                UpsertKind::Thinking { content, .. } => Some(content.to_string()),
                _ => None,
            })
            .collect()
    }

    /// Every tool call upsert in order: (status, name, call id, arguments,
    /// output, is_error).
    pub fn tool_rows(&self) -> Vec<ToolRow> {
        self.upserts()
            .into_iter()
            .filter_map(|u| match &u.kind {
                UpsertKind::ToolCall {
                    tool_name,
                    arguments,
                    call_id,
                    output,
                    output_is_error,
                    ..
                } => Some((
                    u.status,
                    tool_name.clone(),
                    call_id.clone(),
                    arguments.clone(),
                    output.clone(),
                    *output_is_error,
                )),
                _ => None,
            })
            .collect()
    }

    pub fn permissions(&self) -> Vec<&PermissionRequest> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Permission(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    pub fn diagnostics(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Diagnostic { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    /// (resume handle, model) of every session report.
    pub fn sessions(&self) -> Vec<(Option<String>, Option<String>)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Session(s) => Some((s.resume_handle.clone(), s.model.clone())),
                _ => None,
            })
            .collect()
    }
}

/// A capture timeline (`{"dir": "in"|"out", "line": ...}` per line, both
/// directions in order) as (direction, line) pairs.
pub fn timeline(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap_or_else(|e| panic!("{}: timeline line {l}: {e}", path.display()))
        })
        .filter_map(|v| {
            Some((
                v["dir"].as_str()?.to_owned(),
                v["line"].as_str()?.to_owned(),
            ))
        })
        .collect()
}
