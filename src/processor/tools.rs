//! Tool calls in the processor: an invocation opens a call, its final
//! arguments replace the streamed ones, and its output completes it
//! (correlated by `call_id`). Kept apart from the text batching, which
//! follows different rules (tools are not batched by the token gradient).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::Processor;
use crate::event::{ErrorInfo, FinalItem, StreamEvent, ToolDisplay};
use crate::upsert::{Output, Upsert, UpsertKind, UpsertStatus};

#[derive(Debug)]
pub(super) struct ToolItem {
    pub(super) name: String,
    pub(super) call_id: String,
    /// Streamed argument JSON, parsed when the call is finalized.
    pub(super) raw_arguments: String,
    pub(super) arguments: Map<String, Value>,
    pub(super) display: Option<Box<ToolDisplay>>,
    pub(super) turn_id: String,
    pub(super) session_id: String,
    pub(super) source_ts: DateTime<Utc>,
}

impl ToolItem {
    pub(super) fn new(name: &str, call_id: &str, raw_arguments: &str, ev: &StreamEvent) -> Self {
        Self {
            name: name.to_owned(),
            call_id: call_id.to_owned(),
            raw_arguments: raw_arguments.to_owned(),
            arguments: Map::new(),
            display: None,
            turn_id: ev.turn_id.clone(),
            session_id: ev.session_id.clone(),
            source_ts: ev.timestamp,
        }
    }
}

impl Processor {
    /// The invocation is final: its arguments are known.
    pub(super) fn tool_invoked(
        &mut self,
        item_id: &str,
        call: &FinalItem,
        ev: &StreamEvent,
        out: &mut Vec<Output>,
    ) {
        let FinalItem::FunctionCall {
            name,
            call_id,
            arguments,
            display,
        } = call
        else {
            return;
        };
        let display = display.clone().map(Box::new);
        let call_id = call_id.as_str();
        if let Some(tool) = self.tools.get_mut(item_id) {
            if !name.is_empty() {
                tool.name = name.to_owned();
            }
            tool.arguments = arguments.clone();
            tool.display = display;
            tool.source_ts = ev.timestamp;
            if tool.call_id != call_id {
                self.calls.shift_remove(&tool.call_id);
                tool.call_id = call_id.to_owned();
                self.calls.insert(call_id.to_owned(), item_id.to_owned());
            }
        } else {
            // Done without a start: the invocation is first seen now.
            let mut tool = ToolItem::new(name, call_id, "", ev);
            tool.arguments = arguments.clone();
            tool.display = display;
            out.push(tool_upsert(item_id, &tool, UpsertStatus::Create, None));
            self.calls.insert(call_id.to_owned(), item_id.to_owned());
            self.tools.insert(item_id.to_owned(), tool);
        }
    }

    /// The tool's output arrived: the call completes (defensively, for an
    /// unknown call id too).
    pub(super) fn tool_finished(
        &mut self,
        item_id: &str,
        call_id: &str,
        output: &str,
        is_error: bool,
        ev: &StreamEvent,
        out: &mut Vec<Output>,
    ) {
        let invocation = self.calls.shift_remove(call_id);
        let tool = invocation
            .as_ref()
            .and_then(|id| self.tools.shift_remove(id).map(|t| (id.clone(), t)));
        let (id, mut tool) = tool.unwrap_or_else(|| {
            (
                item_id.to_owned(),
                ToolItem::new("unknown", call_id, "", ev),
            )
        });
        tool.source_ts = ev.timestamp;
        finalize_arguments(&mut tool);
        let result = Some((output.to_owned(), is_error));
        out.push(tool_output(
            &id,
            &tool,
            UpsertStatus::Complete,
            None,
            result,
        ));
    }
}

pub(super) fn tool_upsert(
    item_id: &str,
    tool: &ToolItem,
    status: UpsertStatus,
    error: Option<&ErrorInfo>,
) -> Output {
    tool_output(item_id, tool, status, error, None)
}

fn tool_output(
    item_id: &str,
    tool: &ToolItem,
    status: UpsertStatus,
    error: Option<&ErrorInfo>,
    result: Option<(String, bool)>,
) -> Output {
    let (output, output_is_error) = match result {
        Some((o, e)) => (Some(o), Some(e)),
        None => (None, None),
    };
    Output::Upsert(Upsert {
        turn_id: tool.turn_id.clone(),
        session_id: tool.session_id.clone(),
        item_id: item_id.to_owned(),
        source_timestamp: tool.source_ts,
        emitted_at: Utc::now(),
        status,
        error_code: error.map(|e| e.code.clone()),
        error_message: error.map(|e| e.message.clone()),
        kind: UpsertKind::ToolCall {
            tool_name: tool.name.clone(),
            arguments: Value::Object(tool.arguments.clone()),
            call_id: tool.call_id.clone(),
            output,
            output_is_error,
            display: tool.display.clone(),
        },
    })
}

/// Streamed argument JSON becomes the arguments unless the final item set them.
pub(super) fn finalize_arguments(tool: &mut ToolItem) {
    if tool.arguments.is_empty() && !tool.raw_arguments.trim().is_empty() {
        match serde_json::from_str::<Value>(&tool.raw_arguments) {
            Ok(Value::Object(map)) => tool.arguments = map,
            Ok(other) => {
                tool.arguments.insert("input".into(), other);
            }
            Err(_) => {
                tool.arguments
                    .insert("raw".into(), Value::String(tool.raw_arguments.clone()));
            }
        }
    }
}
