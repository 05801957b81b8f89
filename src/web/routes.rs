//! The page's routes: its files, pairing, and a small JSON API whose every
//! call is one verb through the server's front door, asked as the paired
//! device. The door decides what the device may do (`Caller::may`); an
//! answer here is the door's, turned into an HTTP status.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::guard::Authed;
use super::{Shared, ask};
use crate::control::protocol::{CtlError, ErrorCode, deny_reason};
use crate::protocol::agent::PermissionDecision;
use crate::protocol::verb::Verb;

/// How long `send` waits to hear the message went in before it answers
/// that it is queued (the door answers a queued message when the queue
/// reaches it).
const SEND_WAIT: Duration = Duration::from_secs(2);
/// The transcript items a page loads of a pane.
const TRANSCRIPT_ITEMS: usize = 400;
/// The longest message the page may send.
const MAX_MESSAGE: usize = 64 << 10;

pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(super::assets::index))
        .route("/pair", get(super::assets::pair_page))
        .route("/assets/{file}", get(super::assets::asset))
        .route("/api/pair", post(pair))
        .route("/api/me", get(me))
        .route("/api/panes", get(panes))
        .route("/api/panes/{pane}/transcript", get(transcript))
        .route("/api/panes/{pane}/screen", get(screen))
        .route("/api/panes/{pane}/send", post(send))
        .route("/api/panes/{pane}/interrupt", post(interrupt))
        .route("/api/panes/{pane}/approve", post(approve))
        .route("/api/panes/{pane}/deny", post(deny))
        .route("/api/live", get(super::live::live))
        .route("/api/push", get(push_state).post(subscribe))
        .route("/api/push/off", post(unsubscribe))
        .route("/sw.js", get(super::assets::service_worker))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            super::guard::guard,
        ))
        .with_state(shared)
}

/// A door's error as the page gets it.
fn error(e: &CtlError) -> Response {
    let status = match e.code {
        ErrorCode::BadRequest => StatusCode::BAD_REQUEST,
        ErrorCode::SessionNotFound | ErrorCode::TurnNotFound => StatusCode::NOT_FOUND,
        ErrorCode::PermissionDenied => StatusCode::FORBIDDEN,
        ErrorCode::InvalidState | ErrorCode::UnsupportedCliType | ErrorCode::ProcessCrash => {
            StatusCode::CONFLICT
        }
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    };
    (status, Json(json!({ "error": e }))).into_response()
}

async fn answered(shared: &Shared, who: &Authed, verb: Verb) -> Response {
    match ask(shared, who, verb, None).await {
        Ok(v) => Json(v).into_response(),
        Err(e) => error(&e),
    }
}

#[derive(Deserialize)]
struct PairBody {
    code: String,
}

/// Spends a pairing code: this browser becomes a device.
async fn pair(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<PairBody>,
) -> Response {
    let role = shared
        .pairing()
        .redeem(&body.code, std::time::Instant::now());
    let role = match role {
        Ok(role) => role,
        Err(why @ super::pairing::Refusal::Locked(_)) => {
            return (StatusCode::TOO_MANY_REQUESTS, why.to_string()).into_response();
        }
        Err(why) => return (StatusCode::FORBIDDEN, why.to_string()).into_response(),
    };
    let agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("a browser");
    let paired = shared.devices().pair(role, agent);
    match paired {
        Ok((device, token)) => {
            let cookie = super::guard::set_cookie(&token, shared.secure);
            let body = Json(json!({ "id": device.id, "role": device.role }));
            ([(header::SET_COOKIE, cookie)], body).into_response()
        }
        Err(e) => {
            tracing::warn!("web client: {e}");
            (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response()
        }
    }
}

async fn me(Extension(who): Extension<Authed>) -> Json<Value> {
    Json(json!({
        "id": who.0.id,
        "role": who.0.role,
        "acts": super::acts(who.0.role),
    }))
}

async fn panes(State(s): State<Arc<Shared>>, Extension(who): Extension<Authed>) -> Response {
    answered(&s, &who, Verb::List).await
}

async fn transcript(
    State(s): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    Path(pane): Path<String>,
) -> Response {
    let verb = Verb::Read {
        pane,
        last: TRANSCRIPT_ITEMS,
        since: None,
        full: true,
    };
    answered(&s, &who, verb).await
}

/// A terminal pane's screen as text (`Verb::Screen`).
async fn screen(
    State(s): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    Path(pane): Path<String>,
) -> Response {
    answered(&s, &who, Verb::Screen { pane }).await
}

#[derive(Deserialize)]
struct SendBody {
    text: String,
    #[serde(default)]
    steer: bool,
}

/// A message for the pane: queued behind its turn, or (`steer`) now.
async fn send(
    State(s): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    Path(pane): Path<String>,
    Json(body): Json<SendBody>,
) -> Response {
    if body.text.len() > MAX_MESSAGE {
        let e = CtlError::new(ErrorCode::BadRequest, "that message is too long");
        return error(&e);
    }
    let verb = Verb::Send {
        pane,
        text: body.text,
        steer: body.steer,
    };
    match tokio::time::timeout(SEND_WAIT, ask(&s, &who, verb, None)).await {
        Ok(Ok(v)) => Json(v).into_response(),
        Ok(Err(e)) => error(&e),
        // Still in the pane's queue: it goes when the queue reaches it.
        Err(_) => (StatusCode::ACCEPTED, Json(json!({ "queued": true }))).into_response(),
    }
}

async fn interrupt(
    State(s): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    Path(pane): Path<String>,
) -> Response {
    answered(&s, &who, Verb::Interrupt { pane }).await
}

#[derive(Deserialize)]
struct ApproveBody {
    request_id: String,
    #[serde(default)]
    always: bool,
    /// A destructive request's second card: its confirm option.
    #[serde(default)]
    confirm: bool,
}

async fn approve(
    State(s): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    Path(pane): Path<String>,
    Json(body): Json<ApproveBody>,
) -> Response {
    let verb = Verb::Answer {
        pane,
        request_id: Some(body.request_id),
        decision: if body.confirm {
            PermissionDecision::Option {
                option_id: crate::runner::CONFIRM_OPTION.into(),
            }
        } else {
            PermissionDecision::allow(body.always)
        },
    };
    answered(&s, &who, verb).await
}

#[derive(Deserialize)]
struct DenyBody {
    request_id: String,
    #[serde(default)]
    reason: Option<String>,
}

async fn deny(
    State(s): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    Path(pane): Path<String>,
    Json(body): Json<DenyBody>,
) -> Response {
    let by = format!("hive's web page, device {}", who.0.id);
    let verb = Verb::Answer {
        pane,
        request_id: Some(body.request_id),
        decision: PermissionDecision::Deny {
            reason: deny_reason(body.reason, &by),
        },
    };
    answered(&s, &who, verb).await
}

/// The VAPID key the page subscribes with, and whether this device has.
async fn push_state(State(s): State<Arc<Shared>>, Extension(who): Extension<Authed>) -> Response {
    let subscribed = s
        .devices()
        .list()
        .iter()
        .any(|d| d.id == who.0.id && d.push.is_some());
    Json(json!({ "key": s.vapid.public_key(), "subscribed": subscribed })).into_response()
}

/// Keeps this device's push subscription (the browser's `toJSON()`).
async fn subscribe(
    State(s): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    Json(sub): Json<super::push::Subscription>,
) -> Response {
    let sub = match sub.checked() {
        Ok(sub) => sub,
        Err(e) => return error(&CtlError::new(ErrorCode::BadRequest, e.to_string())),
    };
    match s.devices().set_push(&who.0.id, Some(sub)) {
        Ok(()) => Json(json!({ "subscribed": true })).into_response(),
        Err(e) => error(&CtlError::new(ErrorCode::Unavailable, e.to_string())),
    }
}

async fn unsubscribe(State(s): State<Arc<Shared>>, Extension(who): Extension<Authed>) -> Response {
    match s.devices().set_push(&who.0.id, None) {
        Ok(()) => Json(json!({ "subscribed": false })).into_response(),
        Err(e) => error(&CtlError::new(ErrorCode::Unavailable, e.to_string())),
    }
}
