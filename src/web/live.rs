//! The page's live socket: a WebSocket that is the control hub's `watch`
//! of every pane (upserts, deltas of growing text, turn events, approvals
//! asked and settled), one JSON line per text frame, exactly as `hive ctl
//! watch --json` gets them. It ends when the device is revoked (at once:
//! the device list tells every socket), when the watch ends (hive stops,
//! or the page fell too far behind: it reconnects and reloads), or when
//! the page goes.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use tokio::sync::{broadcast, mpsc};

use super::Shared;
use super::guard::Authed;
use crate::protocol::verb::Verb;

/// The close code a revoked device's page gets (the private range).
pub(super) const REVOKED: u16 = 4001;

pub(super) async fn live(
    State(shared): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    ws: WebSocketUpgrade,
) -> Response {
    // Heard before the upgrade: a revocation meanwhile is not missed.
    let revoked = shared.devices().revoked();
    // The one backpressure rule (src/backlog.rs): a page behind gets a
    // `lagged` line once it has read everything, and loads what is true now.
    let (tx, rx) = mpsc::unbounded_channel();
    let backlog = Arc::new(crate::backlog::Backlog::default());
    let stream = crate::control::hub::Watch {
        tx,
        backlog: Arc::clone(&backlog),
    };
    let watch = Verb::Watch { pane: None };
    if let Err(e) = super::ask(&shared, &who, watch, Some(stream)).await {
        return (axum::http::StatusCode::SERVICE_UNAVAILABLE, Json(e)).into_response();
    }
    let id = who.0.id.clone();
    ws.on_upgrade(move |socket| serve(socket, rx, backlog, revoked, id))
}

async fn serve(
    mut socket: WebSocket,
    mut lines: mpsc::UnboundedReceiver<Arc<str>>,
    backlog: Arc<crate::backlog::Backlog>,
    mut revoked: broadcast::Receiver<String>,
    device: String,
) {
    loop {
        tokio::select! {
            line = lines.recv() => {
                let Some(line) = line else { break };
                let sent = socket.send(Message::Text(line.as_ref().into())).await;
                backlog.written(line.len());
                if sent.is_err() {
                    return;
                }
            }
            gone = revoked.recv() => match gone {
                Ok(id) if id == device => {
                    let frame = CloseFrame { code: REVOKED, reason: "this device was revoked".into() };
                    let _ = socket.send(Message::Close(Some(frame))).await;
                    return;
                }
                Ok(_) => {}
                // Missed some: the device may be among them; ask again.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            incoming = socket.recv() => match incoming {
                // The page sends nothing but pings and its close.
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}
