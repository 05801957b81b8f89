//! Keeps a console attached: forwards what the console says to the current
//! connection and what the server says to the console, and, for a server
//! behind ssh, reconnects when the link breaks — with backoff (at most a
//! second apart, so panes are live again soon after the network is), saying
//! so to the console, and catching up from the fresh snapshot the server
//! sends each new connection. The remote server never noticed more than a
//! client leaving.
//!
//! While the link is down the console's focus and drafts are kept (and
//! told to the server once it is back); a command cannot wait for a link
//! that may not return, so it is refused, visibly.
//!
//! What the server sent goes on with the bytes it holds of the link's
//! budget (src/client/inflight.rs), which outlives the connections: a
//! fresh snapshot after a reconnection waits for room like any message.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::inflight::{Delivery, InFlight};
use super::session::{self, Incoming, Session};
use super::transport::Endpoint;
use super::{AttachError, FromServer, LinkState};
use crate::protocol::ClientMsg;
use crate::protocol::frame;

/// The first retry's delay, doubled up to `MAX_BACKOFF`; a host still
/// unreachable after `PATIENT_TRIES` is tried every `SLOW_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
const PATIENT_TRIES: u32 = 30;
const SLOW_BACKOFF: Duration = Duration::from_secs(5);

/// The link's state between messages.
struct Link {
    endpoint: Endpoint,
    session: Option<Session>,
    out: mpsc::Sender<Delivery>,
    budget: InFlight,
    /// Detach or Stop sent, or the server said goodbye: a lost connection
    /// is then the end, not a broken link.
    leaving: bool,
    focus: Option<usize>,
    /// Drafts typed while the link was down.
    drafts: BTreeMap<usize, String>,
    attempt: u32,
    retry_at: Option<Instant>,
}

/// Runs until the console drops its senders (after its last words) or the
/// connection ends for good. Without a `session`, it connects first (a
/// `[[host]]` the console did not wait for), saying so as a reconnection.
pub(super) async fn run(
    endpoint: Endpoint,
    session: Option<Session>,
    mut from_console: mpsc::UnboundedReceiver<ClientMsg>,
    out: mpsc::Sender<Delivery>,
    budget: InFlight,
) {
    let retry_at = session.is_none().then(Instant::now);
    let mut link = Link {
        endpoint,
        session,
        out,
        budget,
        leaving: false,
        focus: None,
        drafts: BTreeMap::new(),
        attempt: 0,
        retry_at,
    };
    loop {
        let incoming = async {
            match link.session.as_mut() {
                Some(s) => s.incoming.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            msg = from_console.recv() => match msg {
                Some(msg) => link.on_console(msg).await,
                None => break,
            },
            inc = incoming => {
                if !link.on_server(inc).await {
                    return;
                }
            }
            _ = crate::timer::sleep_until(link.retry_at) => link.reconnect().await,
        }
    }
    // The console is done: the server hears the end of this client.
    if let Some(mut s) = link.session.take() {
        let _ = s.write.shutdown().await;
    }
}

impl Link {
    async fn on_console(&mut self, msg: ClientMsg) {
        match &msg {
            ClientMsg::Focus(p) => self.focus = Some(*p),
            ClientMsg::Detach | ClientMsg::Stop => self.leaving = true,
            _ => {}
        }
        if self.session.is_some() {
            self.write(&msg).await;
            return;
        }
        match msg {
            // The server hears it once the link is back.
            ClientMsg::Draft { pane, text } => {
                self.drafts.insert(pane, text);
            }
            ClientMsg::Command { .. } | ClientMsg::Worktree(_) if msg_is_asked(&msg) => {
                let why = format!("not sent: reconnecting to {}", self.endpoint.name());
                self.say(FromServer::NotSent(why)).await;
            }
            ClientMsg::Stop => {
                let why = format!(
                    "not connected to {}: it was not stopped",
                    self.endpoint.name()
                );
                self.say(FromServer::Lost(why)).await;
            }
            _ => {}
        }
    }

    /// Tells the console something of the link's own (`&mut`: the link
    /// is not `Sync`, its writer is not).
    async fn say(&mut self, msg: FromServer) {
        let _ = self.out.send(Delivery::local(msg)).await;
    }

    async fn write(&mut self, msg: &ClientMsg) {
        let bytes = match frame::encode(msg) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!("cannot encode a message for the server: {e}");
                return;
            }
        };
        if let Some(s) = self.session.as_mut()
            && s.write.write_all(&bytes).await.is_err()
        {
            // The reader reports the loss (with ssh's reason).
            tracing::debug!("write to {} failed", self.endpoint.name());
        }
    }

    /// False when the link is over.
    async fn on_server(&mut self, inc: Option<Incoming>) -> bool {
        let (msg, permit) = match inc {
            Some(Incoming::Resync) => {
                self.write(&ClientMsg::Resync).await;
                return true;
            }
            Some(Incoming::Msg(m, p)) => (m, p),
            None => (
                FromServer::Lost("the connection ended".to_owned()),
                Default::default(),
            ),
        };
        match msg {
            FromServer::Bye(_) => self.leaving = true,
            FromServer::Lost(why) if !self.leaving && self.endpoint.reconnects() => {
                self.session = None;
                self.attempt = 0;
                self.schedule(why).await;
                return true;
            }
            FromServer::Lost(_) => {
                self.say(msg).await;
                return false;
            }
            _ => {}
        }
        self.out.send(Delivery { msg, permit }).await.is_ok()
    }

    /// Says the link is down and when the next try is.
    async fn schedule(&mut self, why: String) {
        let delay = if self.attempt >= PATIENT_TRIES {
            SLOW_BACKOFF
        } else {
            FIRST_BACKOFF
                .saturating_mul(1u32 << self.attempt.min(8))
                .min(MAX_BACKOFF)
        };
        self.attempt += 1;
        self.retry_at = Some(Instant::now() + delay);
        self.say(FromServer::Link(LinkState::Reconnecting {
            host: self.endpoint.name(),
            attempt: self.attempt,
            why,
        }))
        .await;
    }

    async fn reconnect(&mut self) {
        self.retry_at = None;
        match session::open(&mut self.endpoint, true, &self.budget).await {
            Ok((session, snapshot, size)) => {
                self.session = Some(session);
                tracing::info!(
                    attempt = self.attempt,
                    "reconnected to {}",
                    self.endpoint.name()
                );
                self.say(FromServer::Link(LinkState::Up {
                    host: self.endpoint.name(),
                }))
                .await;
                let msg = FromServer::Snapshot(Box::new(snapshot));
                let permit = self.budget.take(size).await;
                let _ = self.out.send(Delivery { msg, permit }).await;
                if let Some(f) = self.focus {
                    self.write(&ClientMsg::Focus(f)).await;
                }
                for (pane, text) in std::mem::take(&mut self.drafts) {
                    self.write(&ClientMsg::Draft { pane, text }).await;
                }
            }
            // A server of another version, or one stopping: retrying
            // cannot help.
            Err(e @ (AttachError::Skew { .. } | AttachError::Refused(_))) => {
                self.say(FromServer::Lost(e.to_string())).await;
            }
            Err(e) => self.schedule(e.to_string()).await,
        }
    }
}

/// A message whose sender waits for its effect (a runner command, a git
/// request that is answered): said to be not sent, rather than lost.
fn msg_is_asked(msg: &ClientMsg) -> bool {
    match msg {
        ClientMsg::Worktree(req) => req.is_answered(),
        _ => true,
    }
}
