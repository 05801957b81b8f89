//! What the live recorder keeps of each item of a turn it has not written
//! yet (issue 45 item 3). An open item keeps its latest upsert, since the
//! next one replaces it; a tool call that is closed keeps only what its
//! records take (the call, its result, its time), not the whole upsert
//! with its turn, session and item ids, two timestamps and status: a turn
//! of 10,000 tool calls held 10,000 full upserts in flight, a second copy
//! beside the pane log's, and a server of 9 such panes kept the RSS of
//! both long after the turns ended.

use serde_json::Value;

use super::assemble::TurnAssembler;
use crate::event::{Origin, ToolDisplay};
use crate::upsert::{Upsert, UpsertKind, UpsertStatus};

/// One item of a live turn.
pub(super) enum Held {
    /// Not closed yet (or a text item, whose text is shared anyway).
    Open(Box<Upsert>),
    /// A closed tool call, folded to its records' fields.
    Call(Call),
}

/// A closed tool call as its records need it.
pub(super) struct Call {
    ts: i64,
    call_id: String,
    tool_name: String,
    arguments: Value,
    display: Option<Box<ToolDisplay>>,
    /// Its output (or the error that ended it) and whether it failed.
    result: Option<(String, bool)>,
    /// How long it ran, when the pane saw it start.
    took: Option<u64>,
}

impl Held {
    /// What to keep of `u`; `took` is the call's time when `u` closed it.
    pub(super) fn of(u: &Upsert, took: Option<u64>) -> Self {
        match call(u, took) {
            Some(c) if u.is_closed() => Self::Call(c),
            _ => Self::Open(Box::new(u.clone())),
        }
    }

    /// Adds the item to its turn's records.
    pub(super) fn add_to(&self, a: &mut TurnAssembler) {
        let u = match self {
            Self::Call(c) => return c.add_to(a),
            Self::Open(u) => u,
        };
        let ts = u.source_timestamp.timestamp_millis();
        match &u.kind {
            UpsertKind::Thinking { content, .. } => content.with_str(|s| a.thinking(s, ts)),
            UpsertKind::Message {
                content,
                origin: Origin::Agent,
            } => content.with_str(|s| a.text(s, ts)),
            UpsertKind::Message { content, .. } => content.with_str(|s| a.system(s, ts)),
            // A call still open has no time yet.
            UpsertKind::ToolCall { .. } => {
                if let Some(c) = call(u, None) {
                    c.add_to(a);
                }
            }
        }
    }
}

/// A tool call's upsert as its records need it.
fn call(u: &Upsert, took: Option<u64>) -> Option<Call> {
    let UpsertKind::ToolCall {
        tool_name,
        arguments,
        call_id,
        output,
        output_is_error,
        display,
    } = &u.kind
    else {
        return None;
    };
    // A call that ended without its result (refused, cut by its turn's
    // end) is restored as failed, with its reason.
    let unfinished = u.status != UpsertStatus::Complete;
    let result = output.as_deref().or(u
        .error_message
        .as_deref()
        .filter(|_| u.status == UpsertStatus::Error));
    Some(Call {
        ts: u.source_timestamp.timestamp_millis(),
        call_id: call_id.clone(),
        tool_name: tool_name.clone(),
        arguments: arguments.clone(),
        display: display.clone(),
        result: result.map(|out| (out.to_owned(), output_is_error.unwrap_or(unfinished))),
        took,
    })
}

impl Call {
    fn add_to(&self, a: &mut TurnAssembler) {
        let display = self.display.as_deref().cloned();
        a.tool_call(
            &self.call_id,
            &self.tool_name,
            self.arguments.clone(),
            display,
            self.ts,
        );
        if let Some((out, is_error)) = &self.result {
            let result = (out.as_str(), *is_error);
            a.tool_result(&self.call_id, &self.tool_name, result, self.took, self.ts);
        }
    }
}
