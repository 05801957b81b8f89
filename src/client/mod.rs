//! A console's connection to its server (issue 29): the handshake, then two
//! tasks beside the console's loop — one reads frames and turns them into
//! [`FromServer`] messages (rebuilding appended text into whole upserts, so
//! the app applies them exactly as it applied a runner's), one writes what
//! the console says ([`Sender`]).
//!
//! A delta that does not fit what this client holds (it should not happen)
//! is not guessed at: the reader asks for a fresh snapshot and drops events
//! until it comes.

use std::path::Path;

use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use crate::runner::{PaneUpdate, RunnerCommand, RunnerSink};
use crate::wire::delta::DeltaDecoder;
use crate::wire::frame::{self, FrameReader, WireError};
use crate::wire::snapshot::{PaneSnapshot, Parts, Snapshot};
use crate::wire::{ClientMsg, Hello, MAGIC, ServerMsg};

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
    /// The connection broke.
    Lost(String),
}

/// Why a console could not attach.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot reach the hive server at {path}")]
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
}

/// The console's way to the server; cheap to clone.
#[derive(Clone, Debug)]
pub struct Sender {
    tx: mpsc::UnboundedSender<Vec<u8>>,
}

impl Sender {
    pub fn send(&self, msg: &ClientMsg) {
        match frame::encode(msg) {
            Ok(bytes) => {
                let _ = self.tx.send(bytes);
            }
            Err(e) => tracing::warn!("cannot encode a message for the server: {e}"),
        }
    }
}

impl RunnerSink for Sender {
    fn send_to(&self, pane: usize, cmd: RunnerCommand) {
        self.send(&ClientMsg::Command { pane, cmd });
    }
}

/// An attached console's connection.
pub struct Connection {
    pub sender: Sender,
    pub incoming: mpsc::UnboundedReceiver<FromServer>,
    /// Ends when the writer has written everything sent before the
    /// `Sender`s were dropped (a detach's last words reach the server).
    pub writer: tokio::task::JoinHandle<()>,
}

/// Connects to the server on `socket`, says hello, attaches and waits for
/// the first snapshot. Must run inside a tokio runtime.
pub async fn attach(socket: &Path) -> Result<(Connection, Snapshot), AttachError> {
    let stream = UnixStream::connect(socket)
        .await
        .map_err(|source| AttachError::Connect {
            path: socket.display().to_string(),
            source,
        })?;
    let (read, mut write) = stream.into_split();
    write.write_all(MAGIC).await.map_err(WireError::from)?;
    write
        .write_all(&frame::encode_hello(&Hello::ours()))
        .await
        .map_err(WireError::from)?;
    write
        .write_all(&frame::encode(&ClientMsg::Attach)?)
        .await
        .map_err(WireError::from)?;
    let mut reader = FrameReader::new(read);
    let hello = frame::decode_hello(&reader.next().await?.ok_or(AttachError::Closed)?)?;
    if let Some(why) = hello.mismatch("server") {
        return Err(AttachError::Skew { server: hello, why });
    }
    let mut parts = Parts::default();
    let snapshot = loop {
        let payload = reader.next().await?.ok_or(AttachError::Closed)?;
        match frame::decode::<ServerMsg>(&payload)? {
            ServerMsg::Bye { reason } => return Err(AttachError::Refused(reason)),
            msg if msg.is_snapshot() => {
                if let Some(s) = parts
                    .take(msg)
                    .map_err(|e| AttachError::Protocol(e.to_string()))?
                {
                    break s;
                }
            }
            _ => {}
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(bytes) = rx.recv().await {
            if write.write_all(&bytes).await.is_err() {
                break;
            }
        }
        let _ = write.shutdown().await;
    });
    let sender = Sender { tx };
    let (in_tx, incoming) = mpsc::unbounded_channel();
    tokio::spawn(read_loop(reader, in_tx, sender.clone()));
    Ok((
        Connection {
            sender,
            incoming,
            writer,
        },
        snapshot,
    ))
}

/// Frames in, `FromServer` out, until the connection ends.
async fn read_loop(
    mut reader: FrameReader<tokio::net::unix::OwnedReadHalf>,
    out: mpsc::UnboundedSender<FromServer>,
    sender: Sender,
) {
    let mut decoder = DeltaDecoder::default();
    let mut parts = Parts::default();
    let mut resyncing = false;
    let why = loop {
        let payload = match reader.next().await {
            Ok(Some(p)) => p,
            Ok(None) => break "the hive server closed the connection".to_owned(),
            Err(e) => break e.to_string(),
        };
        let msg = match frame::decode::<ServerMsg>(&payload) {
            Ok(m) => m,
            Err(e) => break format!("unreadable message from the server: {e}"),
        };
        let next = match msg {
            ServerMsg::Event { pane, event } => {
                if resyncing {
                    continue;
                }
                match decoder.decode(pane, event) {
                    Ok(event) => FromServer::Update(PaneUpdate { pane, event }),
                    Err(e) => {
                        tracing::warn!("{e}: asking for a fresh snapshot");
                        resyncing = true;
                        sender.send(&ClientMsg::Resync);
                        continue;
                    }
                }
            }
            msg @ (ServerMsg::SnapshotStart { .. }
            | ServerMsg::SnapshotPane(_)
            | ServerMsg::SnapshotEvents(_)
            | ServerMsg::SnapshotEnd) => match parts.take(msg) {
                Ok(Some(s)) => {
                    decoder.reset();
                    resyncing = false;
                    FromServer::Snapshot(Box::new(s))
                }
                Ok(None) => continue,
                Err(e) => break e.to_string(),
            },
            ServerMsg::Reset { pane, snapshot } => FromServer::Reset { pane, snapshot },
            // The connection's end follows (as `Lost`): a stopping
            // console waits for it.
            ServerMsg::Bye { reason } => FromServer::Bye(reason),
        };
        if out.send(next).is_err() {
            return;
        }
    };
    let _ = out.send(FromServer::Lost(why));
}
