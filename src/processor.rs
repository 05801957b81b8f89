//! The upsert processor (DESIGN §3, seed 002 §5): canonical stream events in,
//! progressively updated items (`Upsert`) and turn lifecycle events out.
//!
//! Text and thinking items are batched by a token gradient so a fast stream does
//! not cost one redraw per delta; tool calls emit exactly twice (invocation and
//! result). Time is passed in, never read, so the idle flush is testable on
//! tokio's paused clock and the struct itself stays synchronous.

mod ids;
mod tools;

use std::time::Duration;

use chrono::{DateTime, Utc};
use indexmap::IndexMap;
use tokio::time::Instant;

use crate::event::{
    ErrorInfo, FinalItem, INTERRUPTED, ItemType, Origin, Payload, ResponseStatus, StreamEvent,
    Usage,
};
use crate::text::TextBuffer;
use crate::upsert::{Output, TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};
pub use tools::{LIVE_OUTPUT_MAX, UNFINISHED};
use tools::{Progress, ToolItem, finalize_arguments, tool_upsert};

/// seed 002 TC-5.2f.
pub(crate) const DEFAULT_GRADIENT: [u64; 5] = [10, 20, 40, 80, 120];
/// seed 002 TC-5.4b.
pub(crate) const DEFAULT_BATCH_TIMEOUT: Duration = Duration::from_millis(1000);

#[derive(Debug, Clone, PartialEq)]
pub struct ProcessorConfig {
    /// Per-emission token batches; the last entry repeats once exhausted.
    pub batch_gradient: Vec<u64>,
    /// Buffered content with no new delta for this long is emitted.
    pub batch_timeout: Duration,
    /// An item's first content is emitted at most this long after its first
    /// delta, even below the first threshold, so a slow start still shows
    /// its first token promptly. `None` (the seed's behaviour) disables it.
    pub first_emit: Option<Duration>,
}

impl Default for ProcessorConfig {
    fn default() -> Self {
        Self {
            batch_gradient: DEFAULT_GRADIENT.to_vec(),
            batch_timeout: DEFAULT_BATCH_TIMEOUT,
            first_emit: None,
        }
    }
}

/// Token estimate of one delta: `max(1, ceil(chars / 4))`, zero for an empty one.
pub fn estimate_tokens(delta: &str) -> u64 {
    if delta.is_empty() {
        return 0;
    }
    (delta.chars().count() as u64).div_ceil(4).max(1)
}

#[derive(Debug)]
enum TextKind {
    Message(Origin),
    Thinking(String),
}

#[derive(Debug)]
struct TextItem {
    kind: TextKind,
    buf: TextBuffer,
    tokens: u64,
    /// Cumulative threshold the token count must strictly exceed to emit.
    threshold: u64,
    gradient_index: usize,
    emitted: bool,
    dirty: bool,
    /// Bytes the display has seen through a live tail.
    shown: usize,
    first_delta: Option<Instant>,
    last_delta: Instant,
    turn_id: String,
    session_id: String,
    source_ts: DateTime<Utc>,
}

/// The fields of an `item_start`, borrowed.
#[derive(Clone, Copy)]
struct ItemStartRef<'a> {
    item_id: &'a str,
    item_type: ItemType,
    initial_content: Option<&'a str>,
    name: Option<&'a str>,
    call_id: Option<&'a str>,
}

#[derive(Debug, Default)]
pub struct Processor {
    config: ProcessorConfig,
    text: IndexMap<String, TextItem>,
    tools: IndexMap<String, ToolItem>,
    /// call_id → item_id of the invocation.
    calls: IndexMap<String, String>,
    provider_id: String,
    turn: Option<(String, String)>,
    ids: ids::ItemIds,
}

impl Processor {
    pub fn new(config: ProcessorConfig) -> Self {
        let mut config = config;
        if config.batch_gradient.is_empty() {
            config.batch_gradient = DEFAULT_GRADIENT.to_vec();
        }
        Self {
            config,
            ..Self::default()
        }
    }

    pub fn config(&self) -> &ProcessorConfig {
        &self.config
    }

    pub fn has_open_items(&self) -> bool {
        !self.text.is_empty() || !self.tools.is_empty()
    }

    pub fn process(&mut self, ev: &StreamEvent, now: Instant) -> Vec<Output> {
        let renamed = ev
            .payload
            .item_id()
            .and_then(|id| self.ids.resolve(&ev.turn_id, id));
        if let Some(new) = renamed {
            let mut ev = ev.clone();
            if let Some(id) = ev.payload.item_id_mut() {
                *id = new;
            }
            return self.process_unique(&ev, now);
        }
        self.process_unique(ev, now)
    }

    /// `process`, once the event's item id is unique in the pane.
    fn process_unique(&mut self, ev: &StreamEvent, now: Instant) -> Vec<Output> {
        let mut out = Vec::new();
        match &ev.payload {
            Payload::ResponseStart {
                model_id,
                provider_id,
            } => self.response_start(ev, model_id, provider_id, &mut out),
            Payload::ItemStart {
                item_id,
                item_type,
                initial_content,
                name,
                call_id,
            } => {
                let start = ItemStartRef {
                    item_id,
                    item_type: *item_type,
                    initial_content: initial_content.as_deref(),
                    name: name.as_deref(),
                    call_id: call_id.as_deref(),
                };
                self.item_start(ev, start, now, &mut out);
            }
            Payload::ItemDelta {
                item_id,
                delta_content,
            } => self.item_delta(ev, item_id, delta_content, now, &mut out),
            Payload::ItemDone {
                item_id,
                final_item,
            } => self.item_done(item_id, final_item, ev, now, &mut out),
            Payload::ItemError { item_id, error } => self.item_error(item_id, error, &mut out),
            Payload::ItemCancelled { item_id, reason } => {
                self.item_cancelled(item_id, reason.as_deref(), &mut out)
            }
            Payload::ResponseDone {
                status,
                finish_reason,
                error,
                usage,
            } => self.response_done(ev, *status, finish_reason, error, usage, &mut out),
            Payload::ToolProgress {
                item_id,
                display,
                output,
                output_delta,
            } => {
                let progress = Progress {
                    display: display.as_ref(),
                    output: output.as_deref(),
                    output_delta: output_delta.as_deref(),
                };
                self.tool_progress(item_id, progress, ev, &mut out);
            }
            Payload::ResponseError { error } => {
                let (turn_id, session_id) = self.take_turn(ev);
                self.fail(turn_id, session_id, error.clone(), &mut out);
            }
        }
        out
    }

    fn response_start(
        &mut self,
        ev: &StreamEvent,
        model_id: &str,
        provider_id: &str,
        out: &mut Vec<Output>,
    ) {
        self.provider_id = provider_id.to_owned();
        self.turn = Some((ev.turn_id.clone(), ev.session_id.clone()));
        out.push(Output::Turn(TurnEvent::TurnStarted {
            turn_id: ev.turn_id.clone(),
            session_id: ev.session_id.clone(),
            model_id: model_id.to_owned(),
            provider_id: provider_id.to_owned(),
        }));
    }

    fn item_start(
        &mut self,
        ev: &StreamEvent,
        start: ItemStartRef<'_>,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        let item_id = start.item_id;
        match start.item_type {
            ItemType::Message | ItemType::Reasoning => {
                let kind = if start.item_type == ItemType::Message {
                    TextKind::Message(Origin::Agent)
                } else {
                    TextKind::Thinking(self.provider_id.clone())
                };
                let item = self.new_text(ev, kind, now);
                let (index, _) = self.text.insert_full(item_id.to_owned(), item);
                if let Some(initial) = start.initial_content {
                    self.append(index, initial, ev, now, out);
                }
            }
            ItemType::FunctionCall => {
                let call_id = start.call_id.unwrap_or(item_id).to_owned();
                let tool = ToolItem::new(
                    start.name.unwrap_or_default(),
                    &call_id,
                    start.initial_content.unwrap_or_default(),
                    ev,
                );
                self.place_open_text(out);
                out.push(tool_upsert(item_id, &tool, UpsertStatus::Create, None));
                self.calls.insert(call_id, item_id.to_owned());
                self.tools.insert(item_id.to_owned(), tool);
            }
            // Outputs are correlated on `item_done`; nothing to show before.
            ItemType::FunctionCallOutput => {}
        }
    }

    fn item_delta(
        &mut self,
        ev: &StreamEvent,
        item_id: &str,
        delta: &str,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        // Text deltas are the hot path: one lookup, no tool check first.
        if let Some(index) = self.text.get_index_of(item_id) {
            self.append(index, delta, ev, now, out);
        } else if let Some(tool) = self.tools.get_mut(item_id) {
            tool.raw_arguments.push_str(delta);
            tool.source_ts = ev.timestamp;
        } else {
            tracing::debug!(item_id, "delta for unknown item ignored");
        }
    }

    fn item_error(&mut self, item_id: &str, error: &ErrorInfo, out: &mut Vec<Output>) {
        if let Some(item) = self.text.shift_remove(item_id) {
            out.push(text_upsert(
                item_id,
                &item,
                UpsertStatus::Error,
                Some(error),
            ));
        } else if let Some(tool) = self.tools.shift_remove(item_id) {
            self.calls.shift_remove(&tool.call_id);
            out.push(tool_upsert(
                item_id,
                &tool,
                UpsertStatus::Error,
                Some(error),
            ));
        }
    }

    /// An item the agent cancels itself vanishes (TC-5.4d); one cut by the
    /// user's interrupt keeps what it received (issue 13 item 5).
    fn item_cancelled(&mut self, item_id: &str, reason: Option<&str>, out: &mut Vec<Output>) {
        let text = self.text.shift_remove(item_id);
        let tool = self.tools.shift_remove(item_id);
        if let Some(tool) = &tool {
            self.calls.shift_remove(&tool.call_id);
        }
        if reason != Some(INTERRUPTED) {
            return;
        }
        if let Some(item) = text {
            interrupted_text(item_id, &item, out);
        }
        if let Some(mut tool) = tool {
            finalize_arguments(&mut tool);
            out.push(tool_upsert(item_id, &tool, UpsertStatus::Interrupted, None));
        }
    }

    fn response_done(
        &mut self,
        ev: &StreamEvent,
        status: ResponseStatus,
        finish_reason: &Option<String>,
        error: &Option<ErrorInfo>,
        usage: &Option<Usage>,
        out: &mut Vec<Output>,
    ) {
        let (turn_id, session_id) = self.take_turn(ev);
        let status = match status {
            ResponseStatus::Completed => {
                self.flush_all(UpsertStatus::Complete, None, out);
                TurnStatus::Completed
            }
            ResponseStatus::Cancelled => {
                self.interrupt_all(out);
                TurnStatus::Cancelled
            }
            ResponseStatus::Error => {
                // seed 002: response_done.error, then finish_reason.
                let error = error.clone().unwrap_or_else(|| {
                    ErrorInfo::new(
                        finish_reason.as_deref().unwrap_or("error"),
                        finish_reason
                            .as_deref()
                            .map(|r| format!("turn ended with {r}"))
                            .unwrap_or_else(|| "turn failed".into()),
                    )
                });
                self.fail(turn_id, session_id, error, out);
                return;
            }
        };
        out.push(Output::Turn(TurnEvent::TurnComplete {
            turn_id,
            session_id,
            status,
            usage: usage.clone(),
            finish_reason: finish_reason.clone(),
        }));
    }

    /// When the idle flush must next run, if anything is buffered.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.text
            .values()
            .filter(|i| i.dirty)
            .map(|i| self.flush_at(i))
            .min()
    }

    /// When a buffered item is due: idle timeout, or the first-emit deadline.
    fn flush_at(&self, item: &TextItem) -> Instant {
        let idle = item.last_delta + self.config.batch_timeout;
        match (self.config.first_emit, item.first_delta) {
            (Some(first), Some(at)) if !item.emitted => idle.min(at + first),
            _ => idle,
        }
    }

    /// Whether some open item holds text the display has not seen.
    pub(crate) fn has_unshown(&self) -> bool {
        self.text.values().any(|i| i.buf.len() > i.shown)
    }

    /// The display's live tail: an in-progress snapshot of every open item
    /// whose text grew since it was last shown this way. It leaves the
    /// gradient (the upsert contract that history and `hive run` read)
    /// untouched; the console shows these between batches so a visible
    /// pane is never more than its display latency behind the agent. A
    /// gradient batch does not count as shown: the console draws streaming
    /// text on this tail's cadence only (`app::pace`), so a batch in
    /// between costs no frame of its own.
    pub(crate) fn live_tail(&mut self) -> Vec<Upsert> {
        let mut out = Vec::new();
        for (id, item) in &mut self.text {
            if item.buf.len() <= item.shown {
                continue;
            }
            item.shown = item.buf.len();
            let status = if item.emitted {
                UpsertStatus::Update
            } else {
                UpsertStatus::Create
            };
            if let Output::Upsert(u) = text_upsert(id, item, status, None) {
                out.push(u);
            }
        }
        out
    }

    /// Emits buffered content of items idle for the batch timeout (TC-5.4b).
    pub fn flush_idle(&mut self, now: Instant) -> Vec<Output> {
        let due: Vec<String> = self
            .text
            .iter()
            .filter(|(_, i)| i.dirty && self.flush_at(i) <= now)
            .map(|(id, _)| id.clone())
            .collect();
        let mut out = Vec::new();
        for id in due {
            if let Some(item) = self.text.get_mut(&id) {
                out.push(emit_progress(&id, item));
            }
        }
        out
    }

    /// Ends the turn in flight as failed (a crash, a broken stream): every
    /// buffered item is flushed with status `error` (TC-5.4a), then `turn_error`.
    /// `fallback` names the turn when no `response_start` bound one yet.
    pub fn fail_turn(&mut self, fallback: (&str, &str), code: &str, message: &str) -> Vec<Output> {
        let mut out = Vec::new();
        let (turn_id, session_id) = self
            .turn
            .take()
            .unwrap_or_else(|| (fallback.0.to_owned(), fallback.1.to_owned()));
        self.fail(turn_id, session_id, ErrorInfo::new(code, message), &mut out);
        out
    }

    /// Ends the turn in flight as cancelled when the agent did not (it ignored an
    /// interrupt): open items keep what they received, marked interrupted,
    /// never labelled complete (TC-5.4e).
    pub fn cancel_turn(&mut self, fallback: (&str, &str)) -> Vec<Output> {
        let mut out = Vec::new();
        self.interrupt_all(&mut out);
        let (turn_id, session_id) = self
            .turn
            .take()
            .unwrap_or_else(|| (fallback.0.to_owned(), fallback.1.to_owned()));
        out.push(Output::Turn(TurnEvent::TurnComplete {
            turn_id,
            session_id,
            status: TurnStatus::Cancelled,
            usage: None,
            finish_reason: Some(INTERRUPTED.into()),
        }));
        out
    }

    fn new_text(&self, ev: &StreamEvent, kind: TextKind, now: Instant) -> TextItem {
        TextItem {
            kind,
            buf: TextBuffer::new(),
            tokens: 0,
            threshold: self.config.batch_gradient[0],
            gradient_index: 0,
            emitted: false,
            dirty: false,
            shown: 0,
            first_delta: None,
            last_delta: now,
            turn_id: ev.turn_id.clone(),
            session_id: ev.session_id.clone(),
            source_ts: ev.timestamp,
        }
    }

    fn append(
        &mut self,
        index: usize,
        delta: &str,
        ev: &StreamEvent,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        let gradient = &self.config.batch_gradient;
        let Some((item_id, item)) = self.text.get_index_mut(index) else {
            return;
        };
        if delta.is_empty() {
            return;
        }
        item.buf.push_str(delta);
        item.tokens += estimate_tokens(delta);
        item.dirty = true;
        item.first_delta.get_or_insert(now);
        item.last_delta = now;
        item.source_ts = ev.timestamp;
        if item.tokens > item.threshold {
            // One delta may cross several thresholds: emit once, skip past all.
            while item.tokens > item.threshold {
                item.gradient_index += 1;
                let step = gradient[item.gradient_index.min(gradient.len() - 1)];
                item.threshold += step;
            }
            out.push(emit_progress(item_id, item));
        }
    }

    fn item_done(
        &mut self,
        item_id: &str,
        final_item: &FinalItem,
        ev: &StreamEvent,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        match final_item {
            FinalItem::Message { content, origin } => {
                let kind = TextKind::Message(*origin);
                self.finish_text(item_id, kind, content, ev, now, out);
            }
            FinalItem::Reasoning {
                content,
                provider_id,
            } => {
                let kind = TextKind::Thinking(provider_id.clone());
                self.finish_text(item_id, kind, content, ev, now, out);
            }
            FinalItem::FunctionCall { .. } => self.tool_invoked(item_id, final_item, ev, out),
            FinalItem::FunctionCallOutput {
                call_id,
                output,
                is_error,
            } => self.tool_finished(item_id, call_id, output, *is_error, ev, out),
        }
    }

    fn finish_text(
        &mut self,
        item_id: &str,
        kind: TextKind,
        content: &str,
        ev: &StreamEvent,
        now: Instant,
        out: &mut Vec<Output>,
    ) {
        let mut item = match self.text.shift_remove(item_id) {
            Some(item) => item,
            None => self.new_text(ev, TextKind::Message(Origin::Agent), now),
        };
        item.kind = match (item.kind, kind) {
            // The start did not know the provider; the final item does.
            (TextKind::Thinking(p), TextKind::Thinking(q)) if q.is_empty() => TextKind::Thinking(p),
            (_, k) => k,
        };
        // The final item is authoritative; replace only when it differs, so the
        // common case costs one comparison and no copy.
        let differs = item.buf.with_str(|s| s != content);
        if differs && !content.is_empty() {
            item.buf.replace(content.to_owned());
        }
        item.source_ts = ev.timestamp;
        out.push(text_upsert(item_id, &item, UpsertStatus::Complete, None));
    }

    fn take_turn(&mut self, ev: &StreamEvent) -> (String, String) {
        self.turn
            .take()
            .unwrap_or_else(|| (ev.turn_id.clone(), ev.session_id.clone()))
    }

    fn flush_all(
        &mut self,
        status: UpsertStatus,
        error: Option<&ErrorInfo>,
        out: &mut Vec<Output>,
    ) {
        for (id, item) in std::mem::take(&mut self.text) {
            out.push(text_upsert(&id, &item, status, error));
        }
        self.close_tools(status, error, out);
    }

    /// The turn was interrupted: every open item shows what it received so
    /// far (the batched, not yet emitted part too), as the agents' own TUIs
    /// keep it; a text item that received nothing stays unseen.
    fn interrupt_all(&mut self, out: &mut Vec<Output>) {
        for (id, item) in std::mem::take(&mut self.text) {
            interrupted_text(&id, &item, out);
        }
        self.close_tools(UpsertStatus::Interrupted, None, out);
    }

    fn fail(
        &mut self,
        turn_id: String,
        session_id: String,
        error: ErrorInfo,
        out: &mut Vec<Output>,
    ) {
        self.flush_all(UpsertStatus::Error, Some(&error), out);
        out.push(Output::Turn(TurnEvent::TurnError {
            turn_id,
            session_id,
            error_code: error.code,
            error_message: error.message,
        }));
    }
}

fn text_upsert(
    item_id: &str,
    item: &TextItem,
    status: UpsertStatus,
    error: Option<&ErrorInfo>,
) -> Output {
    let content = item.buf.snapshot();
    let kind = match &item.kind {
        TextKind::Message(origin) => UpsertKind::Message {
            content,
            origin: *origin,
        },
        TextKind::Thinking(provider_id) => UpsertKind::Thinking {
            content,
            provider_id: provider_id.clone(),
        },
    };
    Output::Upsert(Upsert {
        turn_id: item.turn_id.clone(),
        session_id: item.session_id.clone(),
        item_id: item_id.to_owned(),
        source_timestamp: item.source_ts,
        emitted_at: Utc::now(),
        status,
        error_code: error.map(|e| e.code.clone()),
        error_message: error.map(|e| e.message.clone()),
        kind,
    })
}

/// A text item cut by an interrupt, unless it never had content to show.
fn interrupted_text(item_id: &str, item: &TextItem, out: &mut Vec<Output>) {
    if item.emitted || !item.buf.is_empty() {
        out.push(text_upsert(item_id, item, UpsertStatus::Interrupted, None));
    }
}

/// A progress emission: `create` the first time, `update` after.
fn emit_progress(item_id: &str, item: &mut TextItem) -> Output {
    let status = if item.emitted {
        UpsertStatus::Update
    } else {
        UpsertStatus::Create
    };
    item.emitted = true;
    item.dirty = false;
    // Not `shown`: the live tail still follows it (see `live_tail`).
    text_upsert(item_id, item, status, None)
}
