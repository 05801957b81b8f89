//! A scripted OpenAI-compatible Chat Completions server for the `openai`
//! provider's tests: each request takes the next reply of the script (a
//! stream of chunks, a stream that never ends, or an HTTP error) and is kept
//! for the test to inspect.
//!
//! The server runs on its own thread and runtime, so a test may pause its
//! own clock (backoff tests) without pausing the server's.
#![allow(dead_code)] // each test binary uses a different subset

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// These chunks as `data:` events, then `data: [DONE]`.
    Chunks(Vec<Value>),
    /// These chunks, then the stream stays open until the client leaves.
    Hang(Vec<Value>),
    /// These chunks, one every `every` (a model streaming at a steady
    /// rate), then `data: [DONE]`; when each left is kept (`Server::sent`).
    Paced(Vec<Value>, std::time::Duration),
    /// This text in `chunk`-byte content deltas (cut at char boundaries),
    /// built as the connection takes them, then a `stop` finish and
    /// `data: [DONE]`: a long answer at the speed the client reads it,
    /// without holding its chunks (the memory benchmark's model).
    Text(Arc<str>, usize),
    /// An HTTP error with this body and optional `Retry-After`.
    Status {
        status: u16,
        body: String,
        retry_after: Option<String>,
    },
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    /// Signalled when a `Hang` stream is dropped (the client went away).
    closed: Notify,
    /// When each chunk of a `Paced` reply was handed to the connection.
    sent: Mutex<Vec<std::time::Instant>>,
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub body: Value,
    pub authorization: Option<String>,
    pub headers: HeaderMap,
}

pub struct Server {
    /// `http://127.0.0.1:PORT/v1`
    pub base_url: String,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub fn start(script: Vec<Reply>) -> Self {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            ..Shared::default()
        });
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("server runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind 127.0.0.1:0");
                addr_tx
                    .send(listener.local_addr().expect("local addr"))
                    .expect("report address");
                let app = Router::new()
                    .route("/v1/chat/completions", post(answer))
                    .with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        let addr = addr_rx.recv().expect("server address");
        Self {
            base_url: format!("http://{addr}/v1"),
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("requests").clone()
    }

    /// The `messages` of request `n`.
    pub fn messages(&self, n: usize) -> Vec<Value> {
        self.requests()[n].body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The tool result the model got back in request `n` (the last tool
    /// message): its JSON, or its text when it is not JSON.
    pub fn tool_result(&self, n: usize) -> Value {
        let m = self.messages(n);
        let tool = m
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .expect("a tool message");
        serde_json::from_str(tool["content"].as_str().expect("the tool message's text"))
            .unwrap_or_else(|_| tool["content"].clone())
    }

    /// When each chunk of the `Paced` replies so far was sent, in order.
    pub fn sent(&self) -> Vec<std::time::Instant> {
        self.shared.sent.lock().expect("sent").clone()
    }

    /// Resolves once a hanging stream has been dropped by the client.
    pub async fn stream_closed(&self) {
        self.shared.closed.notified().await;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // A hanging stream keeps graceful shutdown waiting; don't join it.
        drop(self.thread.take());
    }
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: axum::Json<Value>,
) -> Response {
    shared.requests.lock().expect("requests").push(Recorded {
        body: body.0,
        authorization: headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        headers,
    });
    let reply = shared.script.lock().expect("script").pop_front();
    match reply {
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"error":{"message":"the script has no more replies"}}"#,
        )
            .into_response(),
        Some(Reply::Status {
            status,
            body,
            retry_after,
        }) => {
            let mut r = (
                StatusCode::from_u16(status).expect("status code"),
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response();
            if let Some(v) = retry_after {
                r.headers_mut()
                    .insert(header::RETRY_AFTER, v.parse().expect("header value"));
            }
            r
        }
        Some(Reply::Chunks(chunks)) => {
            let mut events: Vec<Result<Bytes, std::io::Error>> = chunks
                .iter()
                .map(|c| Ok(Bytes::from(format!("data: {c}\n\n"))))
                .collect();
            events.push(Ok(Bytes::from_static(b"data: [DONE]\n\n")));
            sse(Body::from_stream(futures::stream::iter(events)))
        }
        Some(Reply::Hang(chunks)) => {
            let guard = Closed(Arc::clone(&shared));
            let head = futures::stream::iter(
                chunks
                    .into_iter()
                    .map(|c| Ok::<_, std::io::Error>(Bytes::from(format!("data: {c}\n\n")))),
            );
            let tail = futures::stream::unfold(guard, |g| async move {
                std::future::pending::<()>().await;
                Some((Ok(Bytes::new()), g))
            });
            use futures::StreamExt;
            sse(Body::from_stream(head.chain(tail)))
        }
        Some(Reply::Text(whole, chunk)) => {
            let lines = futures::stream::unfold(0, move |at| {
                let whole = Arc::clone(&whole);
                async move {
                    let line = if at < whole.len() {
                        let mut end = (at + chunk.max(1)).min(whole.len());
                        while !whole.is_char_boundary(end) {
                            end += 1;
                        }
                        (format!("data: {}\n\n", text(&whole[at..end])), end)
                    } else if at == whole.len() {
                        (format!("data: {}\n\n", finish("stop")), at + 1)
                    } else if at == whole.len() + 1 {
                        ("data: [DONE]\n\n".to_owned(), at + 1)
                    } else {
                        return None;
                    };
                    Some((Ok::<_, std::io::Error>(Bytes::from(line.0)), line.1))
                }
            });
            sse(Body::from_stream(lines))
        }
        Some(Reply::Paced(chunks, every)) => {
            let lines = chunks
                .into_iter()
                .map(|c| format!("data: {c}\n\n"))
                .chain(std::iter::once("data: [DONE]\n\n".to_owned()));
            let paced = futures::stream::unfold(
                (lines, tokio::time::Instant::now(), shared),
                move |(mut lines, mut at, shared)| async move {
                    let line = lines.next()?;
                    // Deadlines, not sleeps: the rate holds however long a
                    // write took.
                    at += every;
                    tokio::time::sleep_until(at).await;
                    shared
                        .sent
                        .lock()
                        .expect("sent")
                        .push(std::time::Instant::now());
                    Some((
                        Ok::<_, std::io::Error>(Bytes::from(line)),
                        (lines, at, shared),
                    ))
                },
            );
            sse(Body::from_stream(paced))
        }
    }
}

fn sse(body: Body) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Dropped with the response body of a `Hang` reply.
struct Closed(Arc<Shared>);

impl Drop for Closed {
    fn drop(&mut self) {
        self.0.closed.notify_one();
    }
}

// Chunk builders, in the shapes the OpenAI reference streams.

fn delta(d: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
           "choices": [{"index": 0, "delta": d, "finish_reason": null}]})
}

pub fn text(t: &str) -> Value {
    delta(json!({"role": "assistant", "content": t}))
}

pub fn reasoning(t: &str) -> Value {
    delta(json!({"reasoning_content": t}))
}

/// The first fragment of tool call `index`: its id, name and first arguments.
pub fn tool_call(index: usize, id: &str, name: &str, args: &str) -> Value {
    delta(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                 "function": {"name": name, "arguments": args}}]}),
    )
}

/// A later arguments fragment of tool call `index`.
pub fn tool_args(index: usize, args: &str) -> Value {
    delta(json!({"tool_calls": [{"index": index, "function": {"arguments": args}}]}))
}

pub fn finish(reason: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
           "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// The usage chunk `stream_options.include_usage` asks for (no choices).
pub fn usage(prompt: u64, completion: u64, cached: u64) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
           "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
           "total_tokens": prompt + completion, "prompt_tokens_details": {"cached_tokens": cached}}})
}

/// A whole text answer with its usage.
pub fn answer_text(t: &str, prompt: u64, completion: u64) -> Reply {
    Reply::Chunks(vec![text(t), finish("stop"), usage(prompt, completion, 0)])
}

pub fn status(status: u16, message: &str, retry_after: Option<&str>) -> Reply {
    Reply::Status {
        status,
        body: json!({"error": {"message": message, "type": "test"}}).to_string(),
        retry_after: retry_after.map(str::to_owned),
    }
}
