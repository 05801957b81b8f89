//! One step of the agent loop: a streamed Chat Completions request, its
//! chunks turned into canonical items as they arrive (text, reasoning as
//! thinking, tool calls with their argument deltas), and the retry policy
//! around it (429 / 5xx / transport: exponential backoff, at most
//! `MAX_RETRIES`, honouring `Retry-After`, with a visible notice).

use std::collections::BTreeMap;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::Settings;
use super::wire::{ChatMessage, ChatRequest, Chunk, StreamOptions, ToolCall, ToolSpec, WireUsage};
use crate::event::{ErrorInfo, FinalItem, ItemType, Origin, Payload, Usage, new_id};
use crate::provider::display::{self, ToolKeys};
use crate::provider::{DiagnosticLevel, EventSink, Sink};

/// The direct agent's tools are hive's meta-tools (and whatever a test
/// brings): their summary is the operation, query or namespace.
const TOOL_KEYS: ToolKeys = ToolKeys {
    summary: &["op", "q", "namespace", "agent", "command", "path", "query"],
    replace: &[],
    write: &[],
    patch: &[],
};

/// Retries after the first attempt of a step.
pub(crate) const MAX_RETRIES: u32 = 3;
/// Backoff before retry n (0-based) without `Retry-After`: 1 s, 2 s, 4 s.
const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// A `Retry-After` longer than this is cut to it.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// What a finished step produced.
#[derive(Debug, Default)]
pub(super) struct StepOutput {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// The pane item of each call, in `tool_calls` order (a running tool's
    /// live output goes to it).
    pub item_ids: Vec<String>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
}

/// Why a step produced nothing usable.
#[derive(Debug)]
pub(crate) enum StepError {
    Cancelled,
    /// Ends the turn with this error.
    Fatal(ErrorInfo),
}

/// A failed attempt: retried or not.
enum Attempt {
    Retry {
        error: ErrorInfo,
        after: Option<Duration>,
    },
    Fatal(ErrorInfo),
    Cancelled,
}

/// What a step asks: the conversation so far and the tools on offer, sent
/// with the agent's settings.
pub(super) struct StepRequest<'a> {
    pub client: &'a reqwest::Client,
    pub settings: &'a Settings,
    pub messages: &'a [ChatMessage],
    pub tools: &'a [ToolSpec],
}

/// Where a step's events go.
pub(super) struct StepCtx<'a> {
    pub events: &'a EventSink,
    pub turn_id: &'a str,
    pub session_id: &'a str,
    pub cancel: &'a CancellationToken,
}

impl StepCtx<'_> {
    fn emit(&self, payload: Payload) {
        self.events.stream(self.turn_id, self.session_id, payload);
    }
}

/// Runs one step, retrying what may succeed on a second try.
pub(super) async fn run(req: &StepRequest<'_>, ctx: &StepCtx<'_>) -> Result<StepOutput, StepError> {
    let mut retries = 0;
    loop {
        let (error, after) = match attempt(req, ctx).await {
            Ok(out) => return Ok(out),
            Err(Attempt::Cancelled) => return Err(StepError::Cancelled),
            Err(Attempt::Fatal(e)) => return Err(StepError::Fatal(e)),
            Err(Attempt::Retry { error, after }) => (error, after),
        };
        // A limit that lifts later than hive waits within a turn ends the
        // turn saying when it lifts: the runner sends the message again
        // then (`provider::limits`).
        let lifts_late = after.is_some_and(|d| d > MAX_RETRY_AFTER);
        if retries >= MAX_RETRIES || lifts_late {
            let mut message = error.message;
            if retries > 0 {
                message.push_str(&format!(" (gave up after {retries} retries)"));
            }
            if let Some(d) = after {
                message.push_str(&format!(" (retry after {} s)", d.as_secs_f64().ceil()));
            }
            return Err(StepError::Fatal(ErrorInfo::new(error.code, message)));
        }
        let wait = after
            .map(|d| d.min(MAX_RETRY_AFTER))
            .unwrap_or(BACKOFF_BASE * 2u32.pow(retries));
        retries += 1;
        ctx.events.diagnostic(
            DiagnosticLevel::Warn,
            format!(
                "{}; retrying in {} s (retry {retries} of {MAX_RETRIES})",
                error.message,
                wait.as_secs_f64().ceil()
            ),
        );
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = ctx.cancel.cancelled() => return Err(StepError::Cancelled),
        }
    }
}

/// How long the server asks to wait: `Retry-After` in seconds or as an
/// HTTP date, else the later of OpenAI's `x-ratelimit-reset-requests` and
/// `-tokens` (`6m0s`, `20ms`).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(v) = header(reqwest::header::RETRY_AFTER.as_str()) {
        let v = v.trim();
        if let Ok(secs) = v.parse::<f64>() {
            return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
        }
        if let Ok(at) = chrono::DateTime::parse_from_rfc2822(v) {
            let wait = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
            return Some(wait.to_std().unwrap_or_default());
        }
    }
    ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]
        .into_iter()
        .filter_map(|h| header(h).and_then(go_duration))
        .max()
}

/// A Go duration as OpenAI writes it: `1s`, `6m0s`, `1h2m3.5s`, `20ms`.
fn go_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += n * scale;
        rest = &rest[unit_len..];
    }
    total.is_finite().then(|| Duration::from_secs_f64(total))
}

fn retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

async fn attempt(req: &StepRequest<'_>, ctx: &StepCtx<'_>) -> Result<StepOutput, Attempt> {
    let response = request(req, ctx).await?;
    read_stream(response, req.settings.max_line_bytes, ctx).await
}

/// Sends the request; a response that is not a success becomes the
/// attempt's error (to retry or not by its status).
async fn request(req: &StepRequest<'_>, ctx: &StepCtx<'_>) -> Result<reqwest::Response, Attempt> {
    let StepRequest {
        client,
        settings,
        messages,
        tools,
    } = *req;
    let body = ChatRequest {
        model: &settings.model,
        messages,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        tools,
        temperature: settings.temperature,
        reasoning_effort: settings.reasoning_effort.as_deref(),
    };
    let request = client
        .post(settings.endpoint())
        .headers(settings.headers.clone())
        .json(&body);
    let response = tokio::select! {
        r = request.send() => r,
        _ = ctx.cancel.cancelled() => return Err(Attempt::Cancelled),
    };
    let response = response.map_err(|e| Attempt::Retry {
        error: ErrorInfo::new(
            "transport",
            format!("cannot reach {}: {e}", settings.base_url),
        ),
        after: None,
    })?;
    let status = response.status();
    if !status.is_success() {
        let after = retry_after(response.headers());
        let text = tokio::select! {
            t = response.text() => t.unwrap_or_default(),
            _ = ctx.cancel.cancelled() => return Err(Attempt::Cancelled),
        };
        let error = ErrorInfo::new(
            format!("http_{}", status.as_u16()),
            format!("HTTP {status}: {}", super::wire::error_message(&text)),
        );
        return Err(if retryable(status) {
            Attempt::Retry { error, after }
        } else {
            Attempt::Fatal(error)
        });
    }
    Ok(response)
}

/// Why the SSE stream stopped being read.
#[derive(Debug, thiserror::Error)]
enum SseError {
    #[error("{0}")]
    Http(reqwest::Error),
    #[error(
        "the server sent an event longer than {0} bytes (the limit, `[limits] max_line_bytes`)"
    )]
    TooLong(usize),
}

/// Bytes since the last event boundary (a blank line): the SSE parser holds
/// a whole event, so that is what a hostile server could make it buffer.
struct SseCap {
    max: usize,
    since: usize,
    newline: bool,
}

impl SseCap {
    fn new(max: usize) -> Self {
        Self {
            max,
            since: 0,
            newline: false,
        }
    }

    /// Counts `chunk`; true once an event is over the cap.
    fn feed(&mut self, chunk: &[u8]) -> bool {
        for &b in chunk {
            match b {
                b'\n' if self.newline => self.since = 0,
                b'\n' => self.newline = true,
                b'\r' => {}
                _ => self.newline = false,
            }
            self.since += 1;
        }
        self.since > self.max
    }
}

/// The response's bytes, ending in [`SseError::TooLong`] once an event
/// passes `[limits] max_line_bytes`.
fn capped(
    response: reqwest::Response,
    max: usize,
) -> impl futures::Stream<Item = Result<impl AsRef<[u8]>, SseError>> {
    let mut cap = SseCap::new(max);
    response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(SseError::Http)?;
        if cap.feed(&chunk) {
            Err(SseError::TooLong(cap.max))
        } else {
            Ok(chunk)
        }
    })
}

/// Reads the streamed answer into items, shown as they grow.
async fn read_stream(
    response: reqwest::Response,
    max_line: usize,
    ctx: &StepCtx<'_>,
) -> Result<StepOutput, Attempt> {
    let mut items = Items::default();
    let mut events = capped(response, max_line).eventsource();
    loop {
        let next = tokio::select! {
            // Read on only while the runner keeps up (`channel::EventSink::room`).
            n = async {
                ctx.events.room().await;
                events.next().await
            } => n,
            _ = ctx.cancel.cancelled() => {
                items.cancel(ctx, "interrupted");
                return Err(Attempt::Cancelled);
            }
        };
        let event = match next {
            Some(Ok(ev)) => ev,
            Some(Err(eventsource_stream::EventStreamError::Transport(
                e @ SseError::TooLong(_),
            ))) => {
                // The same server would send it again: no retry.
                items.cancel(ctx, "refused");
                return Err(Attempt::Fatal(ErrorInfo::new("transport", e.to_string())));
            }
            Some(Err(e)) => {
                items.cancel(ctx, "retrying");
                return Err(Attempt::Retry {
                    error: ErrorInfo::new("transport", format!("the stream broke: {e}")),
                    after: None,
                });
            }
            None if items.finish_reason.is_some() => break,
            None => {
                items.cancel(ctx, "retrying");
                return Err(Attempt::Retry {
                    error: ErrorInfo::new("transport", "the stream ended before the answer did"),
                    after: None,
                });
            }
        };
        if event.data.trim() == "[DONE]" {
            break;
        }
        let chunk: Chunk = match serde_json::from_str(&event.data) {
            Ok(c) => c,
            Err(e) => {
                ctx.events.diagnostic(
                    DiagnosticLevel::Warn,
                    format!(
                        "unreadable chunk skipped ({e}): {}",
                        crate::provider::json::excerpt(&event.data)
                    ),
                );
                continue;
            }
        };
        if let Some(err) = &chunk.error {
            items.cancel(ctx, "error");
            let text = serde_json::json!({ "error": err }).to_string();
            return Err(Attempt::Fatal(ErrorInfo::new(
                "stream_error",
                super::wire::error_message(&text),
            )));
        }
        items.push(chunk, ctx);
    }
    Ok(items.finish(ctx))
}

/// A tool call being streamed.
#[derive(Debug, Default)]
struct PendingCall {
    item_id: String,
    id: Option<String>,
    name: String,
    arguments: String,
    /// The item is open (its name is known).
    started: bool,
}

/// The open items of one step.
#[derive(Debug, Default)]
struct Items {
    text: Option<(String, String)>,
    reasoning: Option<(String, String)>,
    calls: BTreeMap<usize, PendingCall>,
    finish_reason: Option<String>,
    usage: Option<WireUsage>,
}

impl Items {
    fn push(&mut self, chunk: Chunk, ctx: &StepCtx<'_>) {
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        for choice in chunk.choices {
            let d = choice.delta;
            if let Some(r) = d.reasoning_content.filter(|r| !r.is_empty()) {
                append(&mut self.reasoning, ItemType::Reasoning, "think", &r, ctx);
            }
            if let Some(t) = d.content.filter(|t| !t.is_empty()) {
                append(&mut self.text, ItemType::Message, "msg", &t, ctx);
            }
            for tc in d.tool_calls {
                let call = self.calls.entry(tc.index).or_insert_with(|| PendingCall {
                    item_id: new_id("call"),
                    ..PendingCall::default()
                });
                if let Some(id) = tc.id.filter(|i| !i.is_empty()) {
                    call.id.get_or_insert(id);
                }
                let (name, args) = tc
                    .function
                    .map(|f| (f.name, f.arguments))
                    .unwrap_or_default();
                if let Some(n) = name {
                    call.name.push_str(&n);
                }
                let args = args.unwrap_or_default();
                call.arguments.push_str(&args);
                if !call.started && !call.name.is_empty() {
                    call.started = true;
                    let call_id = call.id.get_or_insert_with(|| new_id("call")).clone();
                    ctx.emit(Payload::tool_start(&call.item_id, &call.name, call_id));
                    // Fragments that came before the name.
                    if !call.arguments.is_empty() {
                        ctx.emit(Payload::ItemDelta {
                            item_id: call.item_id.clone(),
                            delta_content: call.arguments.clone(),
                        });
                    }
                } else if call.started && !args.is_empty() {
                    ctx.emit(Payload::ItemDelta {
                        item_id: call.item_id.clone(),
                        delta_content: args,
                    });
                }
            }
            if let Some(r) = choice.finish_reason {
                self.finish_reason = Some(r);
            }
        }
    }

    /// Closes every open item (in the order thinking, text, tool calls).
    fn finish(self, ctx: &StepCtx<'_>) -> StepOutput {
        if let Some((item_id, content)) = self.reasoning {
            ctx.emit(Payload::ItemDone {
                item_id,
                final_item: FinalItem::Reasoning {
                    content,
                    provider_id: super::PROVIDER_ID.into(),
                },
            });
        }
        let mut content = String::new();
        if let Some((item_id, mut text)) = self.text {
            // The conversation keeps the text for the session: without the
            // spare room it grew with (up to as much again).
            text.shrink_to_fit();
            content = text.clone();
            ctx.emit(Payload::ItemDone {
                item_id,
                final_item: FinalItem::Message {
                    content: text,
                    origin: Origin::Agent,
                },
            });
        }
        let mut tool_calls = Vec::new();
        let mut item_ids = Vec::new();
        for (_, call) in self.calls {
            if !call.started {
                continue;
            }
            let call_id = call.id.unwrap_or_default();
            let arguments = parse_arguments(&call.arguments);
            item_ids.push(call.item_id.clone());
            let mut final_item =
                display::function_call(call.name.clone(), call_id.clone(), arguments, &TOOL_KEYS);
            // The coding tools' own names (`edits`, `content`) show as a diff.
            if let FinalItem::FunctionCall {
                name,
                arguments,
                display,
                ..
            } = &mut final_item
                && let Some(d) = super::coding::display(name, arguments)
            {
                *display = Some(d);
            }
            ctx.emit(Payload::ItemDone {
                item_id: call.item_id,
                final_item,
            });
            tool_calls.push(ToolCall::function(call_id, call.name, call.arguments));
        }
        StepOutput {
            content,
            tool_calls,
            item_ids,
            finish_reason: self.finish_reason,
            usage: self.usage.map(|u| usage(&u)),
        }
    }

    /// Drops the open items (interrupted, or about to be streamed again).
    fn cancel(&mut self, ctx: &StepCtx<'_>, reason: &str) {
        let open = [self.reasoning.take(), self.text.take()]
            .into_iter()
            .flatten()
            .map(|(id, _)| id)
            .chain(
                std::mem::take(&mut self.calls)
                    .into_values()
                    .filter(|c| c.started)
                    .map(|c| c.item_id),
            );
        for item_id in open {
            ctx.emit(Payload::ItemCancelled {
                item_id,
                reason: Some(reason.into()),
            });
        }
    }
}

/// Opens a text item on its first delta, then streams into it.
fn append(
    slot: &mut Option<(String, String)>,
    item_type: ItemType,
    prefix: &str,
    delta: &str,
    ctx: &StepCtx<'_>,
) {
    let (item_id, content) = slot.get_or_insert_with(|| {
        let id = new_id(prefix);
        ctx.emit(Payload::item_start(&id, item_type));
        (id, String::new())
    });
    content.push_str(delta);
    ctx.emit(Payload::ItemDelta {
        item_id: item_id.clone(),
        delta_content: delta.to_owned(),
    });
}

/// The arguments object of a call; anything else is kept under `_raw` so
/// the transcript shows what the model wrote.
pub(super) fn parse_arguments(text: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => m,
        _ if text.trim().is_empty() => Map::new(),
        _ => Map::from_iter([("_raw".to_owned(), Value::String(text.to_owned()))]),
    }
}

/// Chat Completions counts cached tokens inside `prompt_tokens`; the
/// canonical usage keeps them apart.
fn usage(u: &WireUsage) -> Usage {
    let cached = u
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens);
    Usage {
        input_tokens: u.prompt_tokens.saturating_sub(cached.unwrap_or(0)),
        output_tokens: u.completion_tokens,
        cache_read_input_tokens: cached.filter(|c| *c > 0),
        ..Usage::default()
    }
}

#[cfg(test)]
mod limit_tests {
    use std::time::Duration;

    use reqwest::header::{HeaderMap, HeaderValue};

    use super::{go_duration, retry_after};

    #[test]
    fn openai_reset_headers_read_as_durations() {
        assert_eq!(go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(go_duration("1h2m3s"), Some(Duration::from_secs(3723)));
        assert_eq!(go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(go_duration("soon"), None);
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-reset-requests", HeaderValue::from_static("1s"));
        h.insert("x-ratelimit-reset-tokens", HeaderValue::from_static("6m0s"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(360)));
        h.insert("retry-after", HeaderValue::from_static("30"));
        assert_eq!(
            retry_after(&h),
            Some(Duration::from_secs(30)),
            "Retry-After first"
        );
    }
}
