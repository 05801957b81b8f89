//! Claude's partial-message stream (`stream_event`): content blocks opened, streamed and finalized.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};

use super::*;

impl Translator {
    pub(super) fn stream_event(&mut self, v: &Value, out: &mut Translated) {
        let Some(ev) = v.get("event") else {
            return;
        };
        let message_id = v
            .get("api_message_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| self.current_message.clone())
            .unwrap_or_default();
        match str_of(ev, "type") {
            "message_start" => {
                let msg = ev.get("message");
                let id = msg
                    .and_then(|m| m.get("id"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or(message_id);
                if self.model.is_none()
                    && let Some(m) = msg.and_then(|m| m.get("model")).and_then(Value::as_str)
                {
                    self.model = Some(m.to_owned());
                }
                self.current_message = Some(id);
                self.bind(out);
            }
            "content_block_start" => {
                let Some(block) = ev.get("content_block") else {
                    return;
                };
                let Some(kind) = BlockKind::of(str_of(block, "type")) else {
                    return;
                };
                let index = ev.get("index").and_then(Value::as_u64);
                self.open_block(out, &message_id, index, kind, block);
            }
            "content_block_delta" => {
                let index = ev.get("index").and_then(Value::as_u64);
                if let Some(piece) = ev.get("delta").map(Delta::of_value)
                    && let Some(piece) = piece.piece()
                {
                    self.block_delta(&message_id, index, piece, out);
                }
            }
            "message_delta" => {
                if let Some(r) = ev
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(r.to_owned());
                }
            }
            "message_stop" => self.message_stop(v, &message_id, out),
            // content_block_stop: the `assistant` line before it finalized the block.
            _ => {}
        }
    }

    /// A `content_block_delta` line read by `DeltaLine::read`: what
    /// `message` and `stream_event` make of the same line.
    pub(super) fn delta_line(&mut self, line: &DeltaLine<'_>, out: &mut Translated) {
        // `message` ends draining when a line names a user message of this
        // turn; `read` takes no line that names one.
        let fallback;
        let message_id = match line.message_id() {
            Some(id) => id,
            None => {
                fallback = self.current_message.clone().unwrap_or_default();
                fallback.as_str()
            }
        };
        if let Some(piece) = line.piece() {
            self.block_delta(message_id, line.event.0.index, piece, out);
        }
    }

    /// A piece of a block's text, thinking or tool input.
    fn block_delta(
        &mut self,
        message_id: &str,
        index: Option<u64>,
        piece: &str,
        out: &mut Translated,
    ) {
        let Some(pos) = self.find_block(message_id, index) else {
            tracing::debug!(?index, "claude delta for an unknown block ignored");
            return;
        };
        let block = &mut self.blocks[pos];
        if block.closed {
            return;
        }
        block.content.push_str(piece);
        let item_id = block.item_id.clone();
        self.push(
            out,
            Payload::ItemDelta {
                item_id,
                delta_content: piece.to_owned(),
            },
        );
        if let Some(display) = live_display(&mut self.blocks[pos]) {
            let item_id = self.blocks[pos].item_id.clone();
            self.push(
                out,
                Payload::ToolProgress {
                    item_id,
                    display: Some(display),
                    output: None,
                    output_delta: None,
                },
            );
        }
    }

    pub(super) fn find_block(&self, message_id: &str, index: Option<u64>) -> Option<usize> {
        self.blocks
            .iter()
            .position(|b| b.message_id == message_id && b.index == index && index.is_some())
    }

    pub(super) fn open_block(
        &mut self,
        out: &mut Translated,
        message_id: &str,
        index: Option<u64>,
        kind: BlockKind,
        block: &Value,
    ) -> usize {
        let item_id = new_id("item");
        let (item_type, initial, name, call_id) = match kind {
            BlockKind::Text => (ItemType::Message, str_of(block, "text"), "", ""),
            BlockKind::Thinking => (ItemType::Reasoning, str_of(block, "thinking"), "", ""),
            BlockKind::Tool => (
                ItemType::FunctionCall,
                "",
                str_of(block, "name"),
                str_of(block, "id"),
            ),
        };
        let call_id = if kind == BlockKind::Tool && call_id.is_empty() {
            item_id.clone()
        } else {
            call_id.to_owned()
        };
        let name = if kind == BlockKind::Tool && name.is_empty() {
            "tool".to_owned()
        } else {
            name.to_owned()
        };
        self.push(
            out,
            Payload::ItemStart {
                item_id: item_id.clone(),
                item_type,
                initial_content: (!initial.is_empty()).then(|| initial.to_owned()),
                name: (kind == BlockKind::Tool).then(|| name.clone()),
                call_id: (kind == BlockKind::Tool).then(|| call_id.clone()),
            },
        );
        self.blocks.push(Block {
            message_id: message_id.to_owned(),
            index,
            kind,
            item_id,
            call_id,
            name,
            content: initial.to_owned(),
            closed: false,
            live_len: 0,
            live: None,
        });
        self.blocks.len() - 1
    }

    /// End of an API message: blocks the CLI gave up on (a dropped stream it
    /// retried, an interrupt) become item errors; blocks no `assistant` line
    /// finalized are finalized from what streamed.
    pub(super) fn message_stop(&mut self, v: &Value, message_id: &str, out: &mut Translated) {
        let abandoned_from = v
            .get("abandoned_blocks")
            .filter(|a| {
                str_of(a, "api_message_id").is_empty() || str_of(a, "api_message_id") == message_id
            })
            .and_then(|a| a.get("from_block_index"))
            .and_then(Value::as_u64);
        let cancelling = self.cancel_requested();
        for pos in 0..self.blocks.len() {
            let b = &self.blocks[pos];
            if b.closed || b.message_id != message_id {
                continue;
            }
            let abandoned = matches!((abandoned_from, b.index), (Some(from), Some(i)) if i >= from);
            if abandoned {
                if cancelling {
                    // The cancelled turn drops open items anyway.
                    self.blocks[pos].closed = true;
                    continue;
                }
                let item_id = b.item_id.clone();
                self.blocks[pos].closed = true;
                self.push(
                    out,
                    Payload::ItemError {
                        item_id,
                        error: ErrorInfo::new(
                            "stream_abandoned",
                            "the model's response stream broke off; Claude Code retried",
                        ),
                    },
                );
            } else if !cancelling {
                self.finalize_streamed(pos, out);
            }
        }
    }

    pub(super) fn finalize_streamed(&mut self, pos: usize, out: &mut Translated) {
        let b = &self.blocks[pos];
        let final_item = match b.kind {
            BlockKind::Text => FinalItem::Message {
                content: b.content.clone(),
                origin: Origin::Agent,
            },
            BlockKind::Thinking => FinalItem::Reasoning {
                content: b.content.clone(),
                provider_id: PROVIDER_ID.into(),
            },
            BlockKind::Tool => display::function_call(
                b.name.clone(),
                b.call_id.clone(),
                parse_arguments(&b.content),
                &display::COMMON,
            ),
        };
        self.finish_block(pos, final_item, out);
    }

    /// Block `pos` is done: it closes and its item ends as `final_item`.
    pub(super) fn finish_block(&mut self, pos: usize, final_item: FinalItem, out: &mut Translated) {
        let b = &mut self.blocks[pos];
        b.closed = true;
        let item_id = b.item_id.clone();
        self.push(
            out,
            Payload::ItemDone {
                item_id,
                final_item,
            },
        );
    }

    // ---- complete messages -----------------------------------------------
}

/// The display of a streaming tool input when it reads differently from
/// the last one sent. The input is re-read only after it grew by an eighth
/// (and 16 bytes), so a long input (a file being written) costs linear time.
fn live_display(block: &mut Block) -> Option<ToolDisplay> {
    if block.kind != BlockKind::Tool {
        return None;
    }
    let len = block.content.len();
    if len < block.live_len + (block.live_len / 8).max(16) && block.live_len > 0 {
        return None;
    }
    block.live_len = len;
    let args = json::partial_object(&block.content)?;
    let display = display::describe_map(&args, &display::COMMON);
    if display.summary.is_empty() && display.diff.is_none() {
        return None;
    }
    if block.live.as_ref() == Some(&display) {
        return None;
    }
    block.live = Some(display.clone());
    Some(display)
}

/// A `stream_event` line with a `content_block_delta`, read straight into
/// its fields, borrowing the line's text where it has no escapes: a long
/// answer is thousands of these, and building a JSON tree of each was the
/// largest cost of a stream on the worker thread.
///
/// Only the fields Claude Code writes are accepted, each checked as a JSON
/// tree would check it (a skipped value is not: serde skips a lone surrogate
/// or an out-of-range number that the tree rejects). A line with any other
/// field, a `user_message_uuid` that `message` would look at among them,
/// fails to read and takes the general path.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeltaLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    event: Object<DeltaEvent<'a>>,
    #[serde(borrow, default)]
    api_message_id: Option<Text<'a>>,
    #[serde(rename = "session_id", default)]
    _session_id: Option<Checked>,
    #[serde(rename = "parent_tool_use_id", default)]
    _parent_tool_use_id: Option<Checked>,
    #[serde(rename = "uuid", default)]
    _uuid: Option<Checked>,
    #[serde(rename = "thinking_display", default)]
    _thinking_display: Option<Checked>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeltaEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow)]
    delta: Object<Delta<'a>>,
}

/// The `delta` of a `content_block_delta`, however its line was read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Text<'a>>,
    #[serde(borrow, default)]
    thinking: Option<Text<'a>>,
    #[serde(borrow, default)]
    partial_json: Option<Text<'a>>,
    #[serde(rename = "signature", default)]
    _signature: Option<Checked>,
}

/// A JSON string, borrowed unless it had escapes. (serde borrows a `Cow`
/// field only when it is not inside an `Option`.)
#[derive(Debug, Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

/// A string the translator does not use, checked all the same.
#[derive(Debug)]
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Text::deserialize(d).map(|_| Checked)
    }
}

/// `T` read from a JSON object only: a derived struct also reads an array
/// of its fields in order, which the general path sees as no object at all.
#[derive(Debug)]
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Fields(PhantomData)).map(Object)
    }
}

impl<'a> DeltaLine<'a> {
    /// `line` when it is a block delta of the expected shape; `None` sends
    /// it to the general reader.
    pub(super) fn read(line: &'a str) -> Option<Self> {
        // Cheap test first: other lines are not tried at all.
        if !line.contains("content_block_delta") {
            return None;
        }
        let Object(d) = serde_json::from_str::<Object<Self>>(line).ok()?;
        (d.kind == "stream_event" && d.event.0.kind == "content_block_delta").then_some(d)
    }

    fn message_id(&self) -> Option<&str> {
        self.api_message_id.as_ref().map(|t| t.0.as_ref())
    }

    /// The text the line adds, if it adds any.
    pub(super) fn piece(&self) -> Option<&str> {
        self.event.0.delta.0.piece()
    }
}

impl<'a> Delta<'a> {
    /// The delta of a line read as a JSON tree; a field that is not a
    /// string counts as missing, as `str_of` reads it.
    fn of_value(v: &'a Value) -> Self {
        let field = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .map(|s| Text(Cow::Borrowed(s)))
        };
        Self {
            kind: Cow::Borrowed(str_of(v, "type")),
            text: field("text"),
            thinking: field("thinking"),
            partial_json: field("partial_json"),
            _signature: None,
        }
    }

    /// The text the delta adds, if it adds any.
    fn piece(&self) -> Option<&str> {
        let piece = match self.kind.as_ref() {
            "text_delta" => &self.text,
            "thinking_delta" => &self.thinking,
            "input_json_delta" => &self.partial_json,
            // signature_delta, citations_delta: nothing to show.
            _ => return None,
        };
        piece
            .as_ref()
            .map(|t| t.0.as_ref())
            .filter(|p| !p.is_empty())
    }
}
