//! A console's connection to its server (issue 29), on this machine or on
//! another one over ssh (issue 30): the handshake ([`session`]), then a link
//! task ([`link`]) between the console's loop and the connection — it
//! writes what the console says ([`Sender`]) and hands on what the server
//! says as [`FromServer`] messages, reconnecting a broken ssh link.

mod host;
pub mod identity;
mod link;
mod mux;
mod mux_git;
mod mux_windows;
mod session;
pub mod transport;

use tokio::sync::mpsc;

pub use transport::Endpoint;

use crate::protocol::frame::WireError;
use crate::protocol::pane::{PaneUpdate, RunnerCommand, RunnerSink};
use crate::protocol::snapshot::{PaneSnapshot, Snapshot};
use crate::protocol::{ClientMsg, Hello};

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
    /// How an edit of the panes went, and the pane to look at now.
    Notice {
        text: String,
        focus: Option<usize>,
    },
    /// The server's git service answered, or its worktrees' state changed.
    Worktree(crate::protocol::git::WorktreeEvent),
    /// The panes after an edit (`ServerMsg::Layout`).
    Layout(Vec<crate::protocol::snapshot::LayoutPane>),
    /// What is muted, for `panes` (`None`: every pane; a console of
    /// several servers names the panes of the server that said it).
    Mutes {
        mutes: crate::protocol::mutes::Mutes,
        panes: Option<Vec<usize>>,
    },
    /// A pane's files, listed by its server (`ClientMsg::Files`).
    Files {
        pane: usize,
        paths: Vec<String>,
        complete: bool,
    },
    /// A pane's history sessions, listed by its server (`ClientMsg::Sessions`).
    Sessions {
        pane: usize,
        list: Vec<crate::protocol::history::SessionSummary>,
    },
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

/// Messages a connection holds for a console that has not taken them: past
/// that, reading stops and the server sees a slow client (it sends a fresh
/// snapshot once the client drains), so a flooding or fast server never
/// grows the console's memory without bound.
const QUEUE: usize = 1024;

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

    fn edit_panes(&self, edit: crate::protocol::edit::PaneEdit) {
        let _ = self.tx.send(ClientMsg::Edit(edit));
    }
}

/// An attached console's connection.
pub struct Connection {
    pub sender: Sender,
    pub incoming: mpsc::Receiver<FromServer>,
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
    let (in_tx, incoming) = mpsc::channel(QUEUE);
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
    let (tagged_tx, mut tagged_rx) = mpsc::channel(QUEUE);
    let mut members = Vec::new();
    let mut got = Vec::new();
    let mut links = Vec::new();
    for (i, mut endpoint) in endpoints.into_iter().enumerate() {
        let (tx, rx) = mpsc::unbounded_channel();
        let (out_tx, mut out_rx) = mpsc::channel(QUEUE);
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
                if tagged.send((i, m)).await.is_err() {
                    break;
                }
            }
        });
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let (in_tx, incoming) = mpsc::channel(QUEUE);
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::protocol::snapshot::{PaneSnapshot, ServerInfo};
    use crate::protocol::{MAGIC, ServerMsg, frame};

    fn pane() -> PaneSnapshot {
        PaneSnapshot::empty(crate::protocol::snapshot::PaneCard::new("a", "script"))
    }

    /// A server that sends far more than the console takes: the client
    /// stops reading once its queue is full, so the server's writes block
    /// (and the server's own slow-client rule takes over) instead of the
    /// console's memory growing with all of it.
    #[tokio::test]
    async fn a_console_that_does_not_keep_up_stops_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        const SENT: usize = 50_000;
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut magic = [0u8; 5];
            tokio::io::AsyncReadExt::read_exact(&mut s, &mut magic)
                .await
                .unwrap();
            assert_eq!(&magic, MAGIC);
            s.write_all(&frame::encode_hello(&Hello::ours()))
                .await
                .unwrap();
            let snap = Snapshot {
                server: ServerInfo {
                    pid: 1,
                    config: "t".into(),
                    config_path: None,
                    socket: path.clone(),
                    started: 0,
                },
                focus: 0,
                away_since: None,
                panes: vec![pane()],
            };
            for m in snap.into_messages() {
                s.write_all(&frame::encode(&m).unwrap()).await.unwrap();
            }
            let reset = frame::encode(&ServerMsg::Reset {
                pane: 0,
                snapshot: Box::new(pane()),
            })
            .unwrap();
            let mut written = 0;
            for _ in 0..SENT {
                let w = tokio::time::timeout(Duration::from_secs(2), s.write_all(&reset)).await;
                if w.is_err() {
                    break;
                }
                written += 1;
            }
            (written, s)
        });
        let (conn, _snapshot) = attach(&Endpoint::Local(dir.path().join("s.sock")))
            .await
            .unwrap();
        // The console takes nothing.
        let (written, _s) = server.await.unwrap();
        assert!(
            written < SENT / 4,
            "the client read {written} of {SENT} messages it had no room for"
        );
        drop(conn);
    }
}
