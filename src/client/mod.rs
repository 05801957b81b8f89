//! A console's connection to its server (issue 29), on this machine or on
//! another one over ssh (issue 30): the handshake ([`session`]), then a link
//! task ([`link`]) between the console's loop and the connection — it
//! writes what the console says ([`Sender`]) and hands on what the server
//! says as [`FromServer`] messages, reconnecting a broken ssh link.

mod host;
pub mod identity;
pub mod inflight;
mod link;
mod mux;
mod mux_git;
mod mux_windows;
mod session;
pub mod transport;

use tokio::sync::mpsc;

pub use inflight::Inbox;
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
    /// The forge's answer for a pane (`ClientMsg::Forge`, issue 48).
    Forge {
        pane: usize,
        news: crate::protocol::forge::ForgeNews,
    },
    /// Every event of the server up to `seq` has come (`ServerMsg::Events`'
    /// seq), for `panes` (`None`: every pane; a console of several servers
    /// names the panes of the server that said it): what a dismissal counts
    /// up to (#46).
    Heard {
        seq: u64,
        panes: Option<std::ops::Range<usize>>,
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

/// Messages a connection holds for a console that has not taken them, at
/// each hop; their bytes are bounded end to end by the link's budget
/// (src/client/inflight.rs). Past either, reading stops and the server
/// sees a slow client (it sends a fresh snapshot once the client drains),
/// so a flooding or fast server never grows the console's memory without
/// bound.
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
    pub incoming: Inbox,
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
    let budget = inflight::InFlight::default();
    let (session, snapshot, _) = session::open(&mut endpoint, false, &budget).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    let (in_tx, incoming) = mpsc::channel(QUEUE);
    let link = link::run(endpoint, Some(session), rx, in_tx, budget.clone());
    let writer = tokio::spawn(link);
    Ok((
        Connection {
            sender: Sender { tx },
            incoming: Inbox::new(incoming, vec![budget]),
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
    let mut budgets = Vec::new();
    for (i, mut endpoint) in endpoints.into_iter().enumerate() {
        let (tx, rx) = mpsc::unbounded_channel();
        let (out_tx, mut out_rx) = mpsc::channel(QUEUE);
        let budget = inflight::InFlight::default();
        budgets.push(budget.clone());
        let session = if endpoint.reconnects() {
            got.push(None);
            None
        } else {
            let (session, snap, _) = session::open(&mut endpoint, false, &budget).await?;
            got.push(Some(snap));
            Some(session)
        };
        members.push(mux::Member::new(
            endpoint.name(),
            tx,
            endpoint.reconnects(),
            session.is_some(),
        ));
        links.push(tokio::spawn(link::run(
            endpoint, session, rx, out_tx, budget,
        )));
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
            incoming: Inbox::new(incoming, budgets),
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

    fn snapshot(socket: std::path::PathBuf) -> Snapshot {
        Snapshot {
            server: ServerInfo {
                pid: 1,
                config: "t".into(),
                config_path: None,
                socket,
                started: 0,
            },
            focus: 0,
            away_since: None,
            panes: vec![pane()],
        }
    }

    /// A fake server's first words: the console's magic read, a hello and
    /// a snapshot of one pane written.
    async fn greet(listener: tokio::net::UnixListener) -> tokio::net::UnixStream {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut magic = [0u8; 5];
        tokio::io::AsyncReadExt::read_exact(&mut s, &mut magic)
            .await
            .unwrap();
        assert_eq!(&magic, MAGIC);
        s.write_all(&frame::encode_hello(&Hello::ours()))
            .await
            .unwrap();
        let socket = listener.local_addr().unwrap().as_pathname().unwrap().into();
        for m in snapshot(socket).into_messages() {
            s.write_all(&frame::encode(&m).unwrap()).await.unwrap();
        }
        s
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
            let mut s = greet(listener).await;
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

    /// What a flooding server has written, whole chunks only.
    type Written = std::sync::Arc<std::sync::atomic::AtomicUsize>;

    /// Writes `frame` in 64 KiB chunks, counting each once it is written.
    async fn write_counted(s: &mut tokio::net::UnixStream, frame: &[u8], written: &Written) {
        for chunk in frame.chunks(64 << 10) {
            s.write_all(chunk).await.unwrap();
            written.fetch_add(chunk.len(), std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// One flood frame: a file list of pane 0 whose first path is `i`.
    fn flood_frame(i: usize, filler: &str) -> Vec<u8> {
        frame::encode(&ServerMsg::Files {
            pane: 0,
            paths: vec![i.to_string(), filler.to_owned()],
            complete: true,
        })
        .unwrap()
    }

    /// Issue 53: a hostile server writes 512 MiB of frames (then one of
    /// 48 MiB, three times the budget) to a console that takes nothing.
    /// What the console holds in flight stays within its link's byte
    /// budget, so the server can write little more than that before its
    /// writes block (the socket's backpressure); once the console drains,
    /// every message comes, in order, the big one too. Before the budget,
    /// 1,024 messages of up to 64 MiB each were held per hop: all 512 MiB
    /// went in. Through one link, and through the mux of a console of
    /// several servers (the permit travels on through it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flooding_server_fills_at_most_the_byte_budget_and_loses_nothing() {
        flood(false).await;
        flood(true).await;
    }

    async fn flood(many: bool) {
        use std::sync::atomic::Ordering::SeqCst;
        const FRAMES: usize = 512;
        const BIG: usize = 3 * inflight::MAX_BYTES;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let written = Written::default();
        let server = tokio::spawn({
            let written = written.clone();
            async move {
                let mut s = greet(listener).await;
                let filler = "x".repeat(1 << 20);
                for i in 0..FRAMES {
                    write_counted(&mut s, &flood_frame(i, &filler), &written).await;
                }
                let big = flood_frame(FRAMES, &"y".repeat(BIG));
                write_counted(&mut s, &big, &written).await;
            }
        });
        let endpoint = Endpoint::Local(path);
        let (mut conn, _snapshot) = match many {
            false => attach(&endpoint).await.unwrap(),
            true => attach_many(vec![endpoint]).await.unwrap(),
        };
        let bound = conn.incoming.bound();
        assert_eq!(bound, inflight::MAX_BYTES);
        // The console takes nothing: wait until the server's writes stop.
        let mut last = (0, 0);
        for _ in 0..600 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = written.load(SeqCst);
            last = if now == last.0 {
                (now, last.1 + 1)
            } else {
                (now, 0)
            };
            if last.1 >= 20 {
                break;
            }
            assert!(conn.incoming.in_flight() <= bound);
        }
        let in_flight = conn.incoming.in_flight();
        let stalled = written.load(SeqCst);
        // What it could write: the budget, the reader's frame buffer and
        // the message waiting for room (a frame each), the socket's buffers.
        let slack = 8 << 20;
        assert!(
            stalled <= bound + slack,
            "the server wrote {} MiB into a console that read nothing ({} MiB in flight, mux: {many})",
            stalled >> 20,
            in_flight >> 20
        );
        assert!(
            in_flight > bound / 2 && in_flight <= bound,
            "{in_flight} bytes in flight"
        );
        // It drains: all of it comes, in order, then the end.
        let mut next = 0;
        loop {
            let msg = conn.incoming.recv().await.expect("the link ends with Lost");
            assert!(conn.incoming.in_flight() <= bound);
            match msg {
                FromServer::Files { paths, .. } => {
                    assert_eq!(paths[0], next.to_string(), "out of order or lost");
                    let want = if next == FRAMES { BIG } else { 1 << 20 };
                    assert_eq!(paths[1].len(), want);
                    next += 1;
                }
                FromServer::Lost(_) => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(next, FRAMES + 1, "every message, the big one too");
        server.await.unwrap();
    }
}
