//! An MCP server over streamable HTTP for the built-in agent (issue 51):
//! rmcp's own streamable-HTTP client transport (its session, SSE streams,
//! reconnection and the protocol's lifecycle), carried by the project's
//! reqwest 0.12. rmcp's bundled HTTP carrier wants reqwest 0.13, which
//! would put a second HTTP stack and TLS setup in the build, so this file
//! is the one piece between them: each of rmcp's three HTTP exchanges
//! (POST a message, GET the server's stream, DELETE the session) as one
//! request, with the answers' bounds rmcp asks for (a JSON body, an SSE
//! event) enforced as the bytes arrive.

use std::borrow::Cow;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    HttpStatusError, SseError, StreamableHttpClient, StreamableHttpClientTransportConfig,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use crate::config::McpServerConfig;

const SESSION: &str = "mcp-session-id";
const LAST_EVENT: &str = "last-event-id";
const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

type Error = StreamableHttpError<reqwest::Error>;
type Events = futures::stream::BoxStream<'static, Result<Sse, SseError>>;

/// The HTTP carrier: a reqwest client (its pool shared by the clones rmcp
/// makes).
#[derive(Clone)]
pub(super) struct Carrier(reqwest::Client);

/// rmcp's transport for `server` (its `url` and `headers`).
pub(super) fn transport(
    server: &McpServerConfig,
    url: &str,
) -> Result<StreamableHttpClientTransport<Carrier>, String> {
    let mut headers = HashMap::new();
    for (name, value) in &server.headers {
        let name = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("header `{name}` is not a valid header name"))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("header `{name}` has a value a header cannot carry"))?;
        headers.insert(name, value);
    }
    let client = reqwest::Client::builder()
        // An address in the config is where the headers (tokens) go; a
        // redirect elsewhere would take them along.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    Ok(StreamableHttpClientTransport::with_client(
        Carrier(client),
        config,
    ))
}

impl Carrier {
    fn request(
        &self,
        method: reqwest::Method,
        uri: &str,
        session: Option<&str>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut req = self.0.request(method, uri);
        for (name, value) in headers {
            req = req.header(name, value);
        }
        if let Some(token) = auth {
            req = req.bearer_auth(token);
        }
        if let Some(session) = session {
            req = req.header(SESSION, session);
        }
        req
    }
}

fn content_type(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or(v).trim().to_ascii_lowercase())
}

/// A failed status as rmcp reads it: rate limits and server errors keep
/// their status (and `Retry-After`), a lost session is said as one.
fn status_error(resp: &reqwest::Response, session: bool) -> Option<Error> {
    let status = resp.status();
    if status == reqwest::StatusCode::NOT_FOUND && session {
        return Some(StreamableHttpError::SessionExpired);
    }
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        let retry = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        return Some(HttpStatusError::new(status.as_u16(), retry).into());
    }
    (!status.is_success()).then(|| {
        StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!("HTTP {status}")))
    })
}

/// The whole body, refused past `max` bytes (counted as they arrive).
async fn bounded_body(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    let mut chunks = resp.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(StreamableHttpError::Client)?;
        if body.len() + chunk.len() > max {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The server's events, each refused past `max` bytes.
fn events(resp: reqwest::Response, max: usize) -> Events {
    SseStream::from_bytes_stream(Bounded::new(resp.bytes_stream().boxed(), max)).boxed()
}

impl StreamableHttpClient for Carrier {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let had_session = session_id.is_some();
        let resp = self
            .request(
                reqwest::Method::POST,
                &uri,
                session_id.as_deref(),
                auth_header,
                custom_headers,
            )
            .header(reqwest::header::ACCEPT, format!("{JSON}, {EVENT_STREAM}"))
            .json(&message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = resp.status();
        if matches!(
            status,
            reqwest::StatusCode::ACCEPTED | reqwest::StatusCode::NO_CONTENT
        ) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        let session = resp
            .headers()
            .get(SESSION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let kind = content_type(&resp);
        if let Some(e) = status_error(&resp, had_session) {
            // A JSON-RPC error in a failed answer is the server's word.
            if kind.as_deref() == Some(JSON)
                && let Ok(body) = bounded_body(resp, limits.max_error_response_size).await
                && let Ok(msg @ ServerJsonRpcMessage::Error(_)) =
                    serde_json::from_slice::<ServerJsonRpcMessage>(&body)
            {
                return Ok(StreamableHttpPostResponse::Json(msg, session));
            }
            return Err(e);
        }
        let answers = matches!(message, ClientJsonRpcMessage::Request(_));
        match kind.as_deref() {
            Some(EVENT_STREAM) => Ok(StreamableHttpPostResponse::Sse(
                events(resp, limits.max_sse_event_size),
                session,
            )),
            Some(JSON) => {
                let body = bounded_body(resp, limits.max_json_response_size).await?;
                if body.is_empty() && !answers {
                    return Ok(StreamableHttpPostResponse::Accepted);
                }
                let msg = serde_json::from_slice(&body)?;
                Ok(StreamableHttpPostResponse::Json(msg, session))
            }
            // Some servers answer a notification with an empty 200.
            _ if !answers => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_owned),
            )),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let resp = self
            .request(
                reqwest::Method::DELETE,
                &uri,
                Some(&session_id),
                auth_header,
                custom_headers,
            )
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        // A server that keeps no sessions to end says so; nothing is wrong.
        if resp.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        match status_error(&resp, false) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Error> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, Error> {
        let mut req = self
            .request(
                reqwest::Method::GET,
                &uri,
                session_id.as_deref(),
                auth_header,
                custom_headers,
            )
            .header(reqwest::header::ACCEPT, EVENT_STREAM);
        if let Some(id) = last_event_id {
            req = req.header(LAST_EVENT, id);
        }
        let resp = req.send().await.map_err(StreamableHttpError::Client)?;
        if resp.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(e) = status_error(&resp, session_id.is_some()) {
            return Err(e);
        }
        match content_type(&resp).as_deref() {
            Some(EVENT_STREAM) => Ok(events(resp, max_sse_event_size)),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_owned),
            )),
        }
    }
}

/// An event larger than the bound (no blank line within `max` bytes).
#[derive(Debug, thiserror::Error)]
enum StreamError {
    #[error("an MCP server's event passed {0} bytes")]
    TooLarge(usize),
    #[error(transparent)]
    Http(#[from] reqwest::Error),
}

/// The body's bytes, ended with an error once `max` pass without the
/// blank line that ends an SSE event.
struct Bounded {
    inner: futures::stream::BoxStream<'static, Result<Bytes, reqwest::Error>>,
    max: usize,
    /// Bytes since the last event's end.
    since: usize,
    /// Whether the last byte (ignoring `\r`) was a line end.
    at_line_end: bool,
    failed: bool,
}

impl Bounded {
    fn new(
        inner: futures::stream::BoxStream<'static, Result<Bytes, reqwest::Error>>,
        max: usize,
    ) -> Self {
        Self {
            inner,
            max,
            since: 0,
            at_line_end: false,
            failed: false,
        }
    }

    /// Counts `chunk`; false once an event is over the bound.
    fn fits(&mut self, chunk: &[u8]) -> bool {
        for &b in chunk {
            match b {
                b'\r' => continue,
                b'\n' if self.at_line_end => {
                    self.since = 0;
                    self.at_line_end = false;
                    continue;
                }
                b'\n' => self.at_line_end = true,
                _ => self.at_line_end = false,
            }
            self.since += 1;
            if self.since > self.max {
                return false;
            }
        }
        true
    }
}

impl Stream for Bounded {
    type Item = Result<Bytes, StreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.failed {
            return Poll::Ready(None);
        }
        match self.inner.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                if self.fits(&chunk) {
                    Poll::Ready(Some(Ok(chunk)))
                } else {
                    self.failed = true;
                    Poll::Ready(Some(Err(StreamError::TooLarge(self.max))))
                }
            }
            Poll::Ready(Some(Err(e))) => {
                self.failed = true;
                Poll::Ready(Some(Err(e.into())))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_bounded_and_a_blank_line_starts_the_count_again() {
        let mut b = Bounded::new(futures::stream::empty().boxed(), 8);
        assert!(b.fits(b"data: 1\n\n"));
        assert!(b.fits(b"data: 2\r\n\r\n"));
        // Split across chunks, the blank line still ends the event.
        assert!(b.fits(b"data: 3\n"));
        assert!(b.fits(b"\ndata: 4\n\n"));
        assert!(!b.fits(b"data: 12345\n"), "nine bytes without an end");
    }
}
