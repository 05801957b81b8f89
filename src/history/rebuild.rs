//! Records back to what a pane showed: completed `Upsert`s the UI renders
//! like live ones, and (for a restored pane) how each turn ended — its
//! footer or error banner — so a restart rebuilds the same screen.
//!
//! Tool results are joined to their calls by `toolCallId`. An assistant
//! record with a `layout` (hive's extension) is laid out in the order its
//! pieces were shown; one without it in the seed's order.

use std::time::Duration;

use indexmap::IndexMap;
use serde_json::Value;

use super::assemble::ms_to_time;
use super::record::{Block, Part, Record, Role};
use crate::event::{Origin, Usage};
use crate::protocol::display::{COMMON, describe};
pub use crate::protocol::history::{Outcome, TurnEnd};
use crate::text::SharedText;
use crate::upsert::{Upsert, UpsertKind, UpsertStatus};

/// Records (with their byte offsets) → completed upserts, oldest first.
#[derive(Default)]
pub(crate) struct ItemBuilder {
    items: Vec<Upsert>,
    /// Tool results waiting for the assistant record that holds their call.
    pending: IndexMap<String, (u64, Record)>,
    /// Notices waiting for the assistant record that places them.
    notices: Vec<(u64, Record)>,
    /// Collecting turn ends (a restored pane) rather than notices for them.
    ends: Option<Vec<TurnEnd>>,
    /// Tool calls whose result says how long they ran: item id, ms.
    took: Vec<(String, u64)>,
}

impl ItemBuilder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A builder for a pane: turn ends become `TurnEnd`s (footers and error
    /// banners), not notices.
    pub(crate) fn restoring() -> Self {
        Self {
            ends: Some(Vec::new()),
            ..Self::default()
        }
    }

    pub(crate) fn push(&mut self, offset: u64, rec: &Record) {
        match rec.role {
            Role::User => {
                self.flush_orphans();
                self.message(offset, 0, rec, rec.text(), Origin::User);
            }
            Role::System => self.notices.push((offset, rec.clone())),
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

    pub(crate) fn finish(self) -> Vec<Upsert> {
        self.finish_with_ends().0
    }

    /// The items and, for a `restoring` builder, the turn ends.
    pub(crate) fn finish_with_ends(mut self) -> (Vec<Upsert>, Vec<TurnEnd>) {
        self.flush_orphans();
        (self.items, self.ends.unwrap_or_default())
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

    fn thinking(&mut self, offset: u64, n: usize, rec: &Record, text: &str) {
        let provider_id = rec
            .meta
            .as_ref()
            .and_then(|m| m.provider.clone())
            .unwrap_or_default();
        let kind = UpsertKind::Thinking {
            content: SharedText::from(text),
            provider_id,
        };
        self.items.push(Self::base(offset, n, rec, kind));
    }

    fn tool(&mut self, offset: u64, n: usize, rec: &Record, block: &Block) {
        let Block::ToolCall {
            id,
            name,
            arguments,
            display,
        } = block
        else {
            return;
        };
        let result = self.pending.shift_remove(id);
        let took = result.as_ref().and_then(|(_, r)| r.duration_ms);
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
        let item = Self::base(offset, n, rec, kind);
        if let Some(ms) = took {
            self.took.push((item.item_id.clone(), ms));
        }
        self.items.push(item);
    }

    fn flush_notices(&mut self) {
        for (offset, rec) in std::mem::take(&mut self.notices) {
            self.message(offset, 0, &rec, rec.text(), Origin::System);
        }
    }

    fn assistant(&mut self, offset: u64, rec: &Record) {
        if !self.laid_out(offset, rec) {
            self.flush_notices();
            for (n, block) in rec.content.iter().enumerate() {
                match block {
                    Block::Thinking { thinking } => self.thinking(offset, n, rec, thinking),
                    Block::ToolCall { .. } => self.tool(offset, n, rec, block),
                    Block::Text { text } => {
                        self.message(offset, n, rec, text.clone(), Origin::Agent);
                    }
                    Block::Unknown => {}
                }
            }
        }
        self.flush_orphans();
        self.turn_end(offset, rec);
    }

    /// Lays the record out in its shown order (`Meta::layout`); false (and
    /// nothing done) when it has none or it does not fit the content.
    fn laid_out(&mut self, offset: u64, rec: &Record) -> bool {
        let Some(layout) = rec.meta.as_ref().map(|m| &m.layout) else {
            return false;
        };
        if layout.is_empty() {
            return false;
        }
        let mut thinking = String::new();
        let mut text = String::new();
        let mut tools = Vec::new();
        for b in &rec.content {
            match b {
                Block::Thinking { thinking: t } => thinking.push_str(t),
                Block::Text { text: t } => text.push_str(t),
                Block::ToolCall { .. } => tools.push(b),
                Block::Unknown => {}
            }
        }
        let lens = |want: fn(&Part) -> Option<usize>| layout.iter().filter_map(want);
        let (Some(thinking), Some(text)) = (
            split(
                &thinking,
                lens(|p| match p {
                    Part::Thinking(n) => Some(*n),
                    _ => None,
                }),
            ),
            split(
                &text,
                lens(|p| match p {
                    Part::Text(n) => Some(*n),
                    _ => None,
                }),
            ),
        ) else {
            return false;
        };
        let count = |want: Part| layout.iter().filter(|p| **p == want).count();
        if count(Part::Tool) != tools.len() || count(Part::Notice) > self.notices.len() {
            return false;
        }
        // Notices the layout does not place (older writers) come first.
        let placed = self.notices.len() - count(Part::Notice);
        let mut notices = self.notices.split_off(placed).into_iter();
        self.flush_notices();
        let (mut thinking, mut text, mut tools) =
            (thinking.into_iter(), text.into_iter(), tools.into_iter());
        for (n, part) in layout.iter().enumerate() {
            match part {
                Part::Thinking(_) => {
                    if let Some(t) = thinking.next() {
                        self.thinking(offset, n, rec, t);
                    }
                }
                Part::Text(_) => {
                    if let Some(t) = text.next() {
                        self.message(offset, n, rec, t.to_owned(), Origin::Agent);
                    }
                }
                Part::Tool => {
                    if let Some(b) = tools.next() {
                        self.tool(offset, n, rec, b);
                    }
                }
                Part::Notice => {
                    if let Some((o, r)) = notices.next() {
                        self.message(o, 0, &r, r.text(), Origin::System);
                    }
                }
            }
        }
        true
    }

    /// The end of the record's turn: a footer or banner for a pane, a
    /// notice in a transcript.
    fn turn_end(&mut self, offset: u64, rec: &Record) {
        let Some(meta) = &rec.meta else {
            return;
        };
        let end = rec.content.len().max(meta.layout.len());
        let outcome = match (meta.stop_reason.as_deref(), &meta.error_message) {
            (_, Some(msg)) => Outcome::Failed {
                code: meta.error_code.clone().unwrap_or_else(|| "error".into()),
                message: msg.clone(),
            },
            (Some("cancelled"), None) => Outcome::Cancelled,
            (Some("interrupted"), None) => {
                let text = "turn interrupted: hive stopped before it ended".into();
                self.message(offset, end, rec, text, Origin::System);
                return;
            }
            (Some(super::cut::STOP_CUT), None) => {
                let text = super::cut::CUT_NOTE.into();
                self.message(offset, end, rec, text, Origin::System);
                return;
            }
            _ => Outcome::Completed,
        };
        let after = self.items.len();
        match (&mut self.ends, outcome) {
            (Some(ends), outcome) => ends.push(TurnEnd {
                after,
                turn_id: rec.turn_id.clone().unwrap_or_default(),
                model: meta.model.clone(),
                duration: meta.duration_ms.map(Duration::from_millis),
                usage: meta.usage.as_ref().map(Usage::from),
                outcome,
            }),
            (None, Outcome::Failed { code, message }) => {
                let text = format!("turn failed [{code}]: {message}");
                self.message(offset, end, rec, text, Origin::System);
            }
            (None, Outcome::Cancelled) => {
                self.message(offset, end, rec, "turn cancelled".into(), Origin::System);
            }
            (None, Outcome::Completed) => {}
        }
    }

    /// Tool results whose call never made it into an assistant record still
    /// show, as a tool item of their own.
    fn flush_orphans(&mut self) {
        self.flush_notices();
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

/// `joined` cut back into the parts of `lens` bytes it was joined from (by a
/// blank line); `None` when they do not add up.
fn split(joined: &str, lens: impl Iterator<Item = usize>) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = joined;
    for len in lens {
        if !out.is_empty() {
            rest = rest.strip_prefix("\n\n")?;
        }
        if !rest.is_char_boundary(len) {
            return None;
        }
        let (part, tail) = rest.split_at(len);
        out.push(part);
        rest = tail;
    }
    rest.is_empty().then_some(out)
}

/// Convenience: records of a loaded window → items (turn ends as notices).
pub fn items_from(records: &[(u64, Record)]) -> Vec<Upsert> {
    let mut b = ItemBuilder::new();
    for (offset, rec) in records {
        b.push(*offset, rec);
    }
    b.finish()
}

/// Records of a loaded window → a pane's items, turn ends and tool
/// calls' times.
pub(crate) fn restore_into(records: &[(u64, Record)], out: &mut super::PaneHistory) {
    let mut b = ItemBuilder::restoring();
    for (offset, rec) in records {
        b.push(*offset, rec);
    }
    out.took = std::mem::take(&mut b.took);
    (out.items, out.ends) = b.finish_with_ends();
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_cuts_joined_parts_back_and_refuses_what_does_not_add_up() {
        assert_eq!(
            split("ab\n\ncd", [2, 2].into_iter()),
            Some(vec!["ab", "cd"])
        );
        assert_eq!(split("", std::iter::empty()), Some(vec![]));
        assert_eq!(split("ab\n\ncd", [2, 1].into_iter()), None);
        assert_eq!(split("ab cd", [2, 2].into_iter()), None);
        assert_eq!(split("é", [1].into_iter()), None);
    }
}
