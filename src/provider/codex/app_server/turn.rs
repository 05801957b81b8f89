//! The pure half of the app-server transport: the notifications of one turn
//! → canonical payloads, one handler per server method. Kept free of I/O so
//! captures and benchmarks can drive it directly.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use crate::event::{Payload, Usage};
use crate::provider::codex::items::{ItemMapper, Out, TextKind, completed, usage};

/// Translates the notifications of one turn.
#[derive(Debug, Default)]
pub struct AppTurn {
    /// The server's id of this turn, once known; notifications of other
    /// turns (a turn abandoned after an ignored interrupt) are dropped.
    pub codex_turn: Option<String>,
    pub(super) items: ItemMapper,
    /// The thread's token total when the turn began, and the latest one.
    base: Option<Usage>,
    total: Option<Usage>,
    /// The context's size after the last model call, and the window.
    context: (Option<u64>, Option<u64>),
    pending_error: Option<String>,
    finished: bool,
}

impl AppTurn {
    pub fn new() -> Self {
        Self::default()
    }

    /// A turn of a thread that has already used `base` tokens.
    pub fn with_base(base: Usage) -> Self {
        Self {
            base: Some(base),
            ..Self::default()
        }
    }

    /// Sets the base once: the thread total when the server named the turn
    /// (a resumed thread reports its total only after the resume answer).
    pub(crate) fn set_base(&mut self, base: &Usage) {
        if self.base.is_none() {
            self.base = Some(base.clone());
        }
    }

    /// The thread's token total as last reported.
    pub fn total(&self) -> Option<&Usage> {
        self.total.as_ref()
    }

    pub fn finished(&self) -> bool {
        self.finished
    }

    pub fn items(&self) -> &ItemMapper {
        &self.items
    }

    /// Whether a notification of `method` about the server's turn
    /// `turn_of` belongs to another turn than this one.
    fn other_turn(&self, method: &str, turn_of: Option<&str>) -> bool {
        match (self.codex_turn.as_deref(), turn_of) {
            (Some(mine), Some(theirs)) => mine != theirs,
            // Until the server names this turn, only its start is ours: a
            // resumed thread replays the usage of its last turn, for one.
            (None, Some(_)) => method != "turn/started",
            _ => false,
        }
    }

    /// One text delta read as a `DeltaNote`: what `notification` makes of
    /// the same line.
    pub fn delta_note(&mut self, note: &DeltaNote<'_>) -> Vec<Out> {
        let p = &note.params;
        if self.other_turn(&note.method, p.turn_of()) {
            return Vec::new();
        }
        let index = p.summary_index.unwrap_or(0);
        let payloads = self.text_delta(&note.method, &p.item_id, &p.delta, || index);
        payloads.into_iter().map(Out::Event).collect()
    }

    /// One server notification; unrelated ones yield nothing.
    pub fn notification(&mut self, method: &str, params: &Value) -> Vec<Out> {
        let mut out = Vec::new();
        let turn_of = params
            .get("turnId")
            .and_then(Value::as_str)
            .or_else(|| params.pointer("/turn/id").and_then(Value::as_str));
        if self.other_turn(method, turn_of) {
            return out;
        }
        let payloads = match method {
            "turn/started" => {
                if self.codex_turn.is_none() {
                    self.codex_turn = turn_of.map(str::to_owned);
                }
                out.push(Out::Started);
                Vec::new()
            }
            "item/started" | "item/completed" => self.item(method, params, &mut out),
            "thread/tokenUsage/updated" => {
                // The server re-sends unchanged counts (e.g. at an interrupt),
                // so the turn's usage is the growth of the thread total, not
                // a sum of `last` values.
                if let Some(total) = params.pointer("/tokenUsage/total") {
                    self.total = Some(usage(total));
                }
                // The last call's prompt and answer fill the context.
                if let Some(last) = params.pointer("/tokenUsage/last") {
                    let last = usage(last);
                    self.context = (
                        Some(last.total_tokens()).filter(|&t| t > 0),
                        params
                            .pointer("/tokenUsage/modelContextWindow")
                            .and_then(Value::as_u64),
                    );
                }
                Vec::new()
            }
            "turn/plan/updated" => self.plan_updated(params),
            "error" => self.error(params, &mut out),
            "model/rerouted" => {
                let model = |k: &str| params.get(k).and_then(Value::as_str).unwrap_or("?");
                let text = format!(
                    "model rerouted from {} to {}",
                    model("fromModel"),
                    model("toModel")
                );
                self.items.notice(&text)
            }
            "turn/completed" => {
                self.turn_completed(params, &mut out);
                Vec::new()
            }
            _ => self.delta(method, params),
        };
        out.extend(payloads.into_iter().map(Out::Event));
        out
    }

    /// An item began or ended.
    fn item(&mut self, method: &str, params: &Value, out: &mut Vec<Out>) -> Vec<Payload> {
        let Some(item) = params.get("item") else {
            return Vec::new();
        };
        self.flush_error(out);
        if method == "item/started" {
            self.items.started(item)
        } else {
            self.items.completed(item)
        }
    }

    /// A piece of a running item: text, reasoning, or a tool's output.
    fn delta(&mut self, method: &str, params: &Value) -> Vec<Payload> {
        let item_id = params
            .get("itemId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let delta = params
            .get("delta")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let summary_index = || {
            params
                .get("summaryIndex")
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        self.text_delta(method, item_id, delta, summary_index)
    }

    /// A delta by method, whichever way its line was read.
    fn text_delta(
        &mut self,
        method: &str,
        item_id: &str,
        delta: &str,
        summary_index: impl Fn() -> i64,
    ) -> Vec<Payload> {
        match method {
            "item/agentMessage/delta" | "item/plan/delta" => {
                self.items.delta(item_id, TextKind::Message, delta)
            }
            "item/reasoning/summaryTextDelta" => {
                self.items.summary_delta(item_id, summary_index(), delta)
            }
            "item/reasoning/summaryPartAdded" => self.items.summary_part(item_id, summary_index()),
            "item/reasoning/textDelta" => self.items.raw_reasoning_delta(item_id, delta),
            "item/commandExecution/outputDelta" | "item/fileChange/outputDelta" => {
                self.items.output_delta(item_id, delta)
            }
            _ => Vec::new(),
        }
    }

    fn plan_updated(&mut self, params: &Value) -> Vec<Payload> {
        let explanation = params.get("explanation").and_then(Value::as_str);
        let steps: Vec<(String, String)> = params
            .get("plan")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|s| {
                        let text = s.get("step").and_then(Value::as_str).unwrap_or("");
                        let st = s.get("status").and_then(Value::as_str).unwrap_or("");
                        (text.to_owned(), st.to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.items.plan_update(explanation, &steps)
    }

    /// A retried error is a notice now; a final one waits for the turn's end.
    fn error(&mut self, params: &Value, out: &mut Vec<Out>) -> Vec<Payload> {
        let message = params
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error")
            .to_owned();
        let will_retry = params
            .get("willRetry")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.flush_error(out);
        if will_retry {
            self.items.notice(&message)
        } else {
            self.pending_error = Some(message);
            Vec::new()
        }
    }

    fn turn_completed(&mut self, params: &Value, out: &mut Vec<Out>) {
        self.finished = true;
        let status = params
            .pointer("/turn/status")
            .and_then(Value::as_str)
            .unwrap_or("completed");
        let base = self.base.clone().unwrap_or_default();
        // No growth (an interrupt before any answer): no usage to show.
        let usage = self
            .total
            .as_ref()
            .map(|t| Usage {
                context_tokens: self.context.0,
                context_window: self.context.1,
                ..growth(&base, t)
            })
            .filter(|u| u.input_tokens + u.output_tokens > 0);
        match status {
            "interrupted" => {
                self.pending_error = None;
                out.push(Out::Finished(Payload::interrupted(usage)));
            }
            "failed" => {
                let reported = params
                    .pointer("/turn/error/message")
                    .and_then(Value::as_str);
                self.items
                    .turn_failed(&mut self.pending_error, reported, usage, out);
            }
            _ => {
                self.flush_error(out);
                out.push(Out::Finished(completed(usage)));
            }
        }
    }

    fn flush_error(&mut self, out: &mut Vec<Out>) {
        self.items.flush_error(&mut self.pending_error, out);
    }
}

/// The notifications that carry a piece of text, the bulk of a turn's lines.
const DELTA_METHODS: [&str; 6] = [
    "item/agentMessage/delta",
    "item/plan/delta",
    "item/reasoning/summaryTextDelta",
    "item/reasoning/textDelta",
    "item/commandExecution/outputDelta",
    "item/fileChange/outputDelta",
];

/// A text delta notification read straight into its fields, borrowing the
/// line's text where it has no escapes: deltas arrive by the thousand, and
/// building a JSON tree of each cost more than the rest of its way to the
/// pane.
#[derive(Debug, Deserialize)]
pub struct DeltaNote<'a> {
    #[serde(borrow)]
    pub method: Cow<'a, str>,
    pub params: DeltaParams<'a>,
    /// A request carries an id; a notification does not.
    #[serde(default)]
    id: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaParams<'a> {
    #[serde(borrow, default)]
    pub thread_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub turn_id: Option<Cow<'a, str>>,
    /// Where a notification names its turn as an object instead.
    #[serde(borrow, default)]
    pub turn: Option<TurnRef<'a>>,
    #[serde(borrow)]
    pub item_id: Cow<'a, str>,
    #[serde(borrow)]
    pub delta: Cow<'a, str>,
    #[serde(default)]
    pub(crate) summary_index: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct TurnRef<'a> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
}

impl DeltaParams<'_> {
    /// The server's turn this delta belongs to, read as `notification` reads it.
    pub fn turn_of(&self) -> Option<&str> {
        self.turn_id
            .as_deref()
            .or_else(|| self.turn.as_ref().and_then(|t| t.id.as_deref()))
    }
}

impl<'a> DeltaNote<'a> {
    /// `line` when it is a text delta notification; anything else (or a
    /// delta of an unexpected shape) is `None`, for the general reader.
    pub fn read(line: &'a str) -> Option<Self> {
        // Cheap test first: most other lines are not tried at all.
        if !line.contains("elta\"") {
            return None;
        }
        let note: Self = serde_json::from_str(line).ok()?;
        (note.id.is_none() && DELTA_METHODS.contains(&note.method.as_ref())).then_some(note)
    }
}

/// Token use between two thread totals.
fn growth(base: &Usage, now: &Usage) -> Usage {
    let opt = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (a, Some(b)) => Some(b.saturating_sub(a.unwrap_or(0))),
        (_, None) => None,
    };
    Usage {
        input_tokens: now.input_tokens.saturating_sub(base.input_tokens),
        output_tokens: now.output_tokens.saturating_sub(base.output_tokens),
        cache_read_input_tokens: opt(base.cache_read_input_tokens, now.cache_read_input_tokens),
        cache_creation_input_tokens: opt(
            base.cache_creation_input_tokens,
            now.cache_creation_input_tokens,
        ),
        cost_usd: None,
        cost_estimated: false,
        context_tokens: None,
        context_window: None,
        model: None,
    }
}
