//! Tool calls in the processor: an invocation opens a call, its final
//! arguments replace the streamed ones, and its output completes it
//! (correlated by `call_id`). Kept apart from the text batching, which
//! follows different rules (tools are not batched by the token gradient).
//!
//! A call the provider reports live (`tool_progress`: arguments as they
//! stream, output as the tool prints it) is re-emitted as an `update`
//! carrying that state, and so is a call announced again with a new name or
//! arguments (claude-code-acp names a command `Terminal` first); a call
//! without such news still emits exactly twice (TC-5.1c).

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
    /// What the tool printed while it runs (a tail, see `LIVE_OUTPUT_MAX`).
    pub(super) live_output: String,
    /// An `update` showed the call's live state, so later news of the
    /// running call (its final arguments) is shown too.
    pub(super) live: bool,
    /// Its invocation was final once already: a second one that says more
    /// (claude-code-acp announces `Terminal`, then the command) is shown.
    pub(super) invoked: bool,
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
            live_output: String::new(),
            live: false,
            invoked: false,
            turn_id: ev.turn_id.clone(),
            session_id: ev.session_id.clone(),
            source_ts: ev.timestamp,
        }
    }
}

/// The live output a running call keeps: its last bytes, cut at a line
/// start. The pane shows only the last lines of a running tool, and the
/// bound keeps each `update` cheap however long the tool prints.
pub const LIVE_OUTPUT_MAX: usize = 16 * 1024;

/// Error code of a call its turn completed without a result.
pub const UNFINISHED: &str = "tool_unfinished";

/// The fields of a `tool_progress`, borrowed.
#[derive(Clone, Copy)]
pub(super) struct Progress<'a> {
    pub(super) display: Option<&'a ToolDisplay>,
    pub(super) output: Option<&'a str>,
    pub(super) output_delta: Option<&'a str>,
}

impl Processor {
    /// A running call's live state changed: show it (an `update`).
    pub(super) fn tool_progress(
        &mut self,
        item_id: &str,
        progress: Progress<'_>,
        ev: &StreamEvent,
        out: &mut Vec<Output>,
    ) {
        let Some(tool) = self.tools.get_mut(item_id) else {
            tracing::debug!(item_id, "progress of an unknown tool call ignored");
            return;
        };
        let mut changed = false;
        if let Some(d) = progress.display
            && tool.display.as_deref() != Some(d)
        {
            tool.display = Some(Box::new(d.clone()));
            changed = true;
        }
        if let Some(o) = progress.output
            && tool.live_output != o
        {
            tool.live_output.clear();
            tool.live_output.push_str(o);
            changed = true;
        }
        if let Some(d) = progress.output_delta.filter(|d| !d.is_empty()) {
            tool.live_output.push_str(d);
            changed = true;
        }
        if !changed {
            return;
        }
        keep_tail(&mut tool.live_output, LIVE_OUTPUT_MAX);
        tool.live = true;
        tool.source_ts = ev.timestamp;
        out.push(tool_upsert(item_id, tool, UpsertStatus::Update, None));
    }

    /// A call is about to appear: text the agent sent before it, still
    /// below its first batch, is shown first so the pane keeps the agent's
    /// order (issue 13 item 9: pi's text came out after its tool call).
    pub(super) fn place_open_text(&mut self, out: &mut Vec<Output>) {
        for (id, item) in &mut self.text {
            if !item.emitted && !item.buf.is_empty() {
                out.push(super::emit_progress(id, item));
            }
        }
    }

    /// The turn ended with calls still open: each ends with `status`, but a
    /// call the turn completed without its result (refused, abandoned by the
    /// agent) ends as failed, never as done (issue 13 item 7).
    pub(super) fn close_tools(
        &mut self,
        status: UpsertStatus,
        error: Option<&ErrorInfo>,
        out: &mut Vec<Output>,
    ) {
        let unfinished =
            ErrorInfo::new(UNFINISHED, "the turn ended before this tool call finished");
        let (status, error) = match status {
            UpsertStatus::Complete => (UpsertStatus::Error, Some(error.unwrap_or(&unfinished))),
            other => (other, error),
        };
        for (id, mut tool) in std::mem::take(&mut self.tools) {
            finalize_arguments(&mut tool);
            out.push(tool_upsert(&id, &tool, status, error));
        }
        self.calls.clear();
    }

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
            let news = tool.invoked
                && ((!name.is_empty() && tool.name != *name) || tool.arguments != *arguments);
            tool.live |= news;
            tool.invoked = true;
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
            if tool.live {
                out.push(tool_upsert(item_id, tool, UpsertStatus::Update, None));
            }
        } else {
            // Done without a start: the invocation is first seen now.
            self.place_open_text(out);
            let mut tool = ToolItem::new(name, call_id, "", ev);
            tool.arguments = arguments.clone();
            tool.display = display;
            tool.invoked = true;
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
        // A call without its result shows what it printed so far.
        None if !tool.live_output.is_empty() => (Some(tool.live_output.clone()), None),
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

/// Drops whole leading lines until `text` is at most `max` bytes (a single
/// longer line is cut at a character boundary).
fn keep_tail(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let from = text.ceil_char_boundary(text.len() - max);
    let start = match text[from..].find('\n') {
        Some(i) if from + i + 1 < text.len() => from + i + 1,
        _ => from,
    };
    text.drain(..start);
}
