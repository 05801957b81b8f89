//! A console's connection to its server (issue 29), on this machine or on
//! another one over ssh (issue 30): the handshake ([`session`]), then a link
//! task ([`link`]) between the console's loop and the connection — it
//! writes what the console says ([`Sender`]) and hands on what the server
//! says as [`FromServer`] messages, reconnecting a broken ssh link.

mod link;
mod mux;
mod session;
pub mod transport;

use tokio::sync::mpsc;

pub use transport::Endpoint;

use crate::runner::{PaneUpdate, RunnerCommand, RunnerSink};
use crate::wire::frame::WireError;
use crate::wire::snapshot::{PaneSnapshot, Snapshot};
use crate::wire::{ClientMsg, Hello};

/// What the server sent, ready for the console.
#[allow(
    clippy::large_enum_variant,
    reason = "updates are nearly all of them; boxing each would allocate once more per event"
)]
#[derive(Debug)]
pub enum FromServer {
    Update(PaneUpdate),
    Snapshot(Box<Snapshot>),
    Reset {
        pane: usize,
        snapshot: Box<PaneSnapshot>,
    },
    /// The server is stopping, and why.
    Bye(String),
    /// The connection broke for good.
    Lost(String),
    /// The link to a remote server went down or came back.
    Link(LinkState),
    /// A command the console sent could not go out.
    NotSent(String),
}

/// A remote server's link, as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// Down; trying again (`attempt` so far).
    Reconnecting {
        host: String,
        attempt: u32,
        why: String,
    },
    /// Back; a fresh snapshot follows.
    Up { host: String },
}

/// Why a console could not attach.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot reach the hive server at {path}: {source}")]
    Connect {
        path: String,
        source: std::io::Error,
    },
    /// The server speaks another protocol version.
    #[error("{why}")]
    Skew { server: Hello, why: String },
    #[error("the hive server broke off")]
    Wire(#[from] WireError),
    #[error("the hive server closed the connection before its snapshot")]
    Closed,
    #[error("the hive server broke the protocol: {0}")]
    Protocol(String),
    /// It said goodbye instead (it is stopping).
    #[error("{0}")]
    Refused(String),
    /// The ssh link failed, in ssh's (or the relay's) words.
    #[error("cannot reach hive on {name}: {why}")]
    Link { name: String, why: String },
}

/// The console's way to the server; cheap to clone.
#[derive(Clone, Debug)]
pub struct Sender {
    tx: mpsc::UnboundedSender<ClientMsg>,
}

impl Sender {
    pub fn send(&self, msg: &ClientMsg) {
        let _ = self.tx.send(msg.clone());
    }
}

impl RunnerSink for Sender {
    fn send_to(&self, pane: usize, cmd: RunnerCommand) {
        let _ = self.tx.send(ClientMsg::Command { pane, cmd });
    }
}

/// An attached console's connection.
pub struct Connection {
    pub sender: Sender,
    pub incoming: mpsc::UnboundedReceiver<FromServer>,
    /// Ends when everything sent before the `Sender`s were dropped is
    /// written (a detach's last words reach the server).
    pub writer: tokio::task::JoinHandle<()>,
}

/// Connects to `endpoint`, says hello, attaches and waits for the first
/// snapshot. Must run inside a tokio runtime. The first connection to an
/// ssh host may prompt (before the console takes the terminal); the
/// reconnections never do.
pub async fn attach(endpoint: &Endpoint) -> Result<(Connection, Snapshot), AttachError> {
    let mut endpoint = endpoint.clone();
    let (session, snapshot) = session::open(&mut endpoint, false).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    let (in_tx, incoming) = mpsc::unbounded_channel();
    let writer = tokio::spawn(link::run(endpoint, Some(session), rx, in_tx));
    Ok((
        Connection {
            sender: Sender { tx },
            incoming,
            writer,
        },
        snapshot,
    ))
}

/// How long a console waits for a remote server before it shows the
/// others without it.
const FIRST_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Attaches to several servers at once, their panes in one layout
/// (`mux`). Local servers must answer now; remote ones join when they
/// connect (at most `FIRST_WAIT` is spent waiting for them).
pub async fn attach_many(endpoints: Vec<Endpoint>) -> Result<(Connection, Snapshot), AttachError> {
    let (tagged_tx, mut tagged_rx) = mpsc::unbounded_channel();
    let mut members = Vec::new();
    let mut got = Vec::new();
    let mut links = Vec::new();
    for (i, mut endpoint) in endpoints.into_iter().enumerate() {
        let (tx, rx) = mpsc::unbounded_channel();
        let (out_tx, mut out_rx) = mpsc::unbounded_channel();
        let session = if endpoint.reconnects() {
            got.push(None);
            None
        } else {
            let (session, snap) = session::open(&mut endpoint, false).await?;
            got.push(Some(snap));
            Some(session)
        };
        members.push(mux::Member::new(
            endpoint.name(),
            tx,
            endpoint.reconnects(),
            session.is_some(),
        ));
        links.push(tokio::spawn(link::run(endpoint, session, rx, out_tx)));
        let tagged = tagged_tx.clone();
        tokio::spawn(async move {
            while let Some(m) = out_rx.recv().await {
                if tagged.send((i, m)).is_err() {
                    break;
                }
            }
        });
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let (in_tx, incoming) = mpsc::unbounded_channel();
    let mut mux = mux::Mux::new(members, in_tx);
    let deadline = tokio::time::Instant::now() + FIRST_WAIT;
    let snapshot = mux.first(got, &mut tagged_rx, deadline).await;
    let writer = tokio::spawn(async move {
        mux.run(rx, tagged_rx).await;
        for l in links {
            let _ = l.await;
        }
    });
    Ok((
        Connection {
            sender: Sender { tx },
            incoming,
            writer,
        },
        snapshot,
    ))
}
