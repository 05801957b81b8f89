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

/// Lines the hub may hand the socket before it has sent them; a page
/// further behind loses its watch and reloads.
const BACKLOG: usize = 4096;
/// The close code a revoked device's page gets (the private range).
pub(super) const REVOKED: u16 = 4001;

pub(super) async fn live(
    State(shared): State<Arc<Shared>>,
    Extension(who): Extension<Authed>,
    ws: WebSocketUpgrade,
) -> Response {
    // Heard before the upgrade: a revocation meanwhile is not missed.
    let revoked = shared.devices().revoked();
    let (tx, rx) = mpsc::channel(BACKLOG);
    let watch = Verb::Watch { pane: None };
    if let Err(e) = super::ask(&shared, &who, watch, Some(tx)).await {
        return (axum::http::StatusCode::SERVICE_UNAVAILABLE, Json(e)).into_response();
    }
    let id = who.0.id.clone();
    ws.on_upgrade(move |socket| serve(socket, rx, revoked, id))
}

async fn serve(
    mut socket: WebSocket,
    mut lines: mpsc::Receiver<Arc<str>>,
    mut revoked: broadcast::Receiver<String>,
    device: String,
) {
    loop {
        tokio::select! {
            line = lines.recv() => {
                let Some(line) = line else { break };
                if socket.send(Message::Text(line.as_ref().into())).await.is_err() {
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
