//! One connection's life: the handshake and first snapshot, then frames in
//! as [`FromServer`] messages (appended text rebuilt into whole upserts, so
//! the app applies them exactly as it applied a runner's).
//!
//! A delta that does not fit what this client holds (it should not happen)
//! is not guessed at: the reader asks for a fresh snapshot and drops events
//! until it comes.
//!
//! Each message is handed on with a permit for its frames' bytes from the
//! link's budget (src/client/inflight.rs); the reader waits for it before
//! it reads on, so a console that does not keep up stops the reading.

use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::host::OnHost;
use super::inflight::{InFlight, Permit};
use super::transport::{Endpoint, Stream};
use super::{AttachError, FromServer};
use crate::protocol::delta::DeltaDecoder;
use crate::protocol::frame::{self, FrameReader, WireError};
use crate::protocol::pane::PaneUpdate;
use crate::protocol::parts::Parts;
use crate::protocol::snapshot::Snapshot;
use crate::protocol::{ClientMsg, Hello, MAGIC, PaneWire, ServerMsg};

/// How long a server may take to answer and send its snapshot.
const HANDSHAKE: std::time::Duration = std::time::Duration::from_secs(30);

type Reader = FrameReader<Pin<Box<dyn AsyncRead + Send>>>;

/// A live connection, handshake done.
pub(super) struct Session {
    pub(super) write: Pin<Box<dyn AsyncWrite + Send>>,
    /// What the reader task turns frames into; `Lost` last.
    pub(super) incoming: mpsc::Receiver<Incoming>,
    /// Held so the ssh process lives as long as the session (and dies with it).
    pub(super) _child: Option<tokio::process::Child>,
}

/// What the reader hands the link.
#[allow(
    clippy::large_enum_variant,
    reason = "messages are nearly all of them; a resync is rare"
)]
pub(super) enum Incoming {
    /// With the bytes it holds of the link's budget.
    Msg(FromServer, Permit),
    /// A delta did not fit: ask for a snapshot.
    Resync,
}

/// Opens `endpoint`, says hello, attaches, waits for the first snapshot
/// (returned with its size in bytes); what follows is read within the
/// link's budget `budget`.
pub(super) async fn open(
    endpoint: &mut Endpoint,
    batch: bool,
    budget: &InFlight,
) -> Result<(Session, Snapshot, usize), AttachError> {
    let stream = endpoint
        .open(batch)
        .await
        .map_err(|source| AttachError::Connect {
            path: endpoint.name(),
            source,
        })?;
    let Stream {
        read,
        mut write,
        child,
        stderr,
    } = stream;
    let mut reader = FrameReader::new(read);
    let shook = tokio::time::timeout(HANDSHAKE, handshake(&mut write, &mut reader))
        .await
        .map_err(|_| AttachError::Link {
            name: endpoint.name(),
            why: format!("no snapshot within {}s", HANDSHAKE.as_secs()),
        })?;
    let (mut snapshot, size) = match shook {
        Ok(s) => s,
        // Over ssh, ssh's words say why better than an end of file.
        Err(e) if endpoint.reconnects() => {
            let why = stderr.why("").await;
            return Err(if why.is_empty() {
                e
            } else {
                AttachError::Link {
                    name: endpoint.name(),
                    why,
                }
            });
        }
        Err(e) => return Err(e),
    };
    let host = endpoint.host().map(str::to_owned);
    if let Some(h) = &host {
        snapshot.set_host(h);
    }
    let (tx, incoming) = mpsc::channel(super::QUEUE);
    tokio::spawn(read_loop(reader, tx, stderr, host, budget.clone()));
    Ok((
        Session {
            write,
            incoming,
            _child: child,
        },
        snapshot,
        size,
    ))
}

async fn handshake(
    write: &mut Pin<Box<dyn AsyncWrite + Send>>,
    reader: &mut Reader,
) -> Result<(Snapshot, usize), AttachError> {
    write.write_all(MAGIC).await.map_err(WireError::from)?;
    write
        .write_all(&frame::encode_hello(&Hello::ours()))
        .await
        .map_err(WireError::from)?;
    // Who this console is, before it asks for the panes (#46 item 8).
    if let Some(who) = super::identity::console_identity() {
        write
            .write_all(&frame::encode(&ClientMsg::Identify(who))?)
            .await
            .map_err(WireError::from)?;
    }
    // Before the panes too: no request of it is ever taken as the user's.
    if super::identity::read_only() {
        write
            .write_all(&frame::encode(&ClientMsg::ReadOnly)?)
            .await
            .map_err(WireError::from)?;
    }
    write
        .write_all(&frame::encode(&ClientMsg::Attach)?)
        .await
        .map_err(WireError::from)?;
    write.flush().await.map_err(WireError::from)?;
    let hello = frame::decode_hello(&reader.next().await?.ok_or(AttachError::Closed)?)?;
    if let Some(why) = hello.mismatch("server", "console") {
        return Err(AttachError::Skew { server: hello, why });
    }
    let mut parts = Parts::default();
    let mut size = 0;
    loop {
        let payload = reader.next().await?.ok_or(AttachError::Closed)?;
        size += payload.len();
        match frame::decode::<ServerMsg>(&payload)? {
            ServerMsg::Bye { reason } => {
                return Err(AttachError::Refused(crate::sanitize::peer_line(&reason)));
            }
            msg if msg.is_snapshot() => {
                if let Some(s) = parts.take(msg, payload.len()).map_err(|e| {
                    AttachError::Protocol(crate::sanitize::peer_line(&e.to_string()))
                })? {
                    return Ok((s, size));
                }
            }
            _ => {}
        }
    }
}

/// An answer to one of this client's requests, or the git state.
fn answer(msg: ServerMsg) -> Option<FromServer> {
    Some(match msg {
        ServerMsg::Worktree(ev) => FromServer::Worktree(ev),
        ServerMsg::Files {
            pane,
            paths,
            complete,
        } => FromServer::Files {
            pane,
            paths,
            complete,
        },
        ServerMsg::Sessions { pane, list } => FromServer::Sessions { pane, list },
        ServerMsg::Mutes(mutes) => FromServer::Mutes { mutes, panes: None },
        ServerMsg::Forge { pane, news } => FromServer::Forge { pane, news },
        _ => return None,
    })
}

/// What a message from the server means to the console.
#[allow(
    clippy::large_enum_variant,
    reason = "one at a time, passed on at once, as FromServer itself"
)]
enum Step {
    Pass(FromServer),
    /// A batch of events, in order.
    Many(Vec<FromServer>),
    /// Nothing yet (a snapshot's part, an event while resyncing).
    Skip,
    /// This copy went wrong, or cannot take the message: a fresh snapshot.
    Resync,
    End(String),
}

/// The read side's state: deltas, snapshot parts, whether a fresh
/// snapshot is awaited, the host a remote server runs on.
struct Reading {
    decoder: DeltaDecoder,
    parts: Parts,
    resyncing: bool,
    host: Option<String>,
    /// The frames of the snapshot being put together, in bytes: what it
    /// holds of the budget once whole.
    snapshot_bytes: usize,
}

impl Reading {
    /// What a message of `len` frame bytes holds of the budget if handed
    /// on: its own bytes, or a whole snapshot's.
    fn weigh(&mut self, msg: &ServerMsg, len: usize) -> usize {
        match msg {
            ServerMsg::SnapshotStart { .. } => {
                self.snapshot_bytes = len;
                len
            }
            m if m.is_snapshot() => {
                self.snapshot_bytes = self.snapshot_bytes.saturating_add(len);
                self.snapshot_bytes
            }
            _ => len,
        }
    }

    /// What `msg`, which came in `len` frame bytes, means to the console.
    fn step(&mut self, msg: ServerMsg, len: usize) -> Step {
        Step::Pass(match msg {
            ServerMsg::Events(..) if self.resyncing => return Step::Skip,
            ServerMsg::Events(events, seq) => return self.events(events, seq),
            msg @ (ServerMsg::SnapshotStart { .. }
            | ServerMsg::SnapshotPane(_)
            | ServerMsg::SnapshotEvents(_)
            | ServerMsg::SnapshotEnd) => match self.parts.take(msg, len) {
                Ok(Some(mut s)) => {
                    self.decoder.reset();
                    self.resyncing = false;
                    if let Some(h) = &self.host {
                        s.set_host(h);
                    }
                    FromServer::Snapshot(Box::new(s))
                }
                Ok(None) => return Step::Skip,
                Err(e) => return Step::End(crate::sanitize::peer_line(&e.to_string())),
            },
            ServerMsg::Reset { pane, mut snapshot } => {
                if let Some(h) = &self.host {
                    snapshot.set_host(h);
                }
                FromServer::Reset { pane, snapshot }
            }
            // Deltas restart with the new numbering. A server on another
            // machine's panes are titled and relabelled (`set_host`) as its
            // snapshot's were.
            ServerMsg::Layout(mut panes) => {
                self.decoder.reset();
                if let Some(h) = &self.host {
                    for p in &mut panes {
                        p.set_host(h);
                    }
                }
                FromServer::Layout(panes)
            }
            ServerMsg::Notice { text, focus } => FromServer::Notice {
                text: crate::sanitize::neutralize(&text).into_owned(),
                focus,
            },
            // The connection's end follows (as `Lost`): a stopping
            // console waits for it.
            ServerMsg::Bye { reason } => FromServer::Bye(crate::sanitize::peer_line(&reason)),
            answer => match self::answer(answer) {
                Some(m) => m,
                None => return Step::Skip,
            },
        })
    }

    /// A batch of runner events, texts whole again; one that does not fit
    /// drops it and the rest until a fresh snapshot.
    fn events(&mut self, events: Vec<PaneWire>, seq: Option<u64>) -> Step {
        let mut out = Vec::with_capacity(events.len() + 1);
        for PaneWire { pane, event } in events {
            match self.decoder.decode(pane, event) {
                Ok(event) => out.push(FromServer::Update(PaneUpdate { pane, event })),
                Err(e) => {
                    tracing::warn!("{e}: asking for a fresh snapshot");
                    return self.resync();
                }
            }
        }
        if let Some(seq) = seq {
            out.push(FromServer::Heard { seq, panes: None });
        }
        Step::Many(out)
    }

    /// Events are dropped until the fresh snapshot comes.
    fn resync(&mut self) -> Step {
        self.resyncing = true;
        Step::Resync
    }
}

/// A batch's messages, in order, the frame's permit shared among them.
async fn send_all(
    out: &mpsc::Sender<Incoming>,
    all: Vec<FromServer>,
    permit: Permit,
) -> Result<(), mpsc::error::SendError<Incoming>> {
    let permits = permit.split(all.len());
    for (msg, permit) in all.into_iter().zip(permits) {
        out.send(Incoming::Msg(msg, permit)).await?;
    }
    Ok(())
}

/// Frames in, `Incoming` out, until the connection ends (then `Lost`, with
/// ssh's reason when it gave one).
async fn read_loop(
    mut reader: Reader,
    out: mpsc::Sender<Incoming>,
    stderr: super::transport::Stderr,
    host: Option<String>,
    budget: InFlight,
) {
    let mut reading = Reading {
        decoder: DeltaDecoder::default(),
        parts: Parts::default(),
        resyncing: false,
        host,
        snapshot_bytes: 0,
    };
    let why = loop {
        let payload = match reader.next().await {
            Ok(Some(p)) => p,
            // Over ssh an end is the link's, whoever ended it: ssh's
            // words (below) say more when it has any.
            Ok(None) => match &reading.host {
                Some(h) => break format!("the ssh link to {h} ended"),
                None => break "the hive server closed the connection".to_owned(),
            },
            Err(e) => break e.to_string(),
        };
        let msg = match frame::decode::<ServerMsg>(&payload) {
            Ok(m) => m,
            Err(e) => break format!("unreadable message from the server: {e}"),
        };
        let len = payload.len();
        let bytes = reading.weigh(&msg, len);
        drop(payload);
        // Nothing more is read until the console has room for this.
        let sent = match reading.step(msg, len) {
            Step::Pass(next) => {
                let permit = budget.take(bytes).await;
                out.send(Incoming::Msg(next, permit)).await
            }
            Step::Many(all) => send_all(&out, all, budget.take(bytes).await).await,
            Step::Skip => continue,
            Step::Resync => out.send(Incoming::Resync).await,
            Step::End(why) => break why,
        };
        if sent.is_err() {
            return;
        }
    };
    // ssh says why a link broke better than an end of file does. Either
    // is the far side's words.
    let why = crate::sanitize::peer_line(&stderr.why(&why).await);
    let _ = out
        .send(Incoming::Msg(FromServer::Lost(why), Permit::none()))
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::snapshot::LayoutPane;

    fn reading(host: Option<&str>) -> Reading {
        Reading {
            decoder: DeltaDecoder::default(),
            parts: Parts::default(),
            resyncing: false,
            host: host.map(str::to_owned),
            snapshot_bytes: 0,
        }
    }

    /// Issue 44: a layout change on a server on another machine moves the
    /// panes as a local one does (it took a fresh snapshot of every pane).
    #[test]
    fn a_layout_from_another_machine_passes_relabelled_not_as_a_resync() {
        let layout = vec![LayoutPane::Kept {
            id: "demo".into(),
            name: None,
            window: 1,
            parent: None,
        }];
        let step = reading(Some("box")).step(ServerMsg::Layout(layout.clone()), 0);
        let Step::Pass(FromServer::Layout(got)) = step else {
            panic!("not passed on as a layout");
        };
        assert!(
            matches!(&got[..], [LayoutPane::Kept { name: Some(n), .. }] if n == "demo@box"),
            "{got:?}"
        );
        let Step::Pass(FromServer::Layout(local)) =
            reading(None).step(ServerMsg::Layout(layout.clone()), 0)
        else {
            panic!("a local layout not passed on");
        };
        assert_eq!(local, layout);
    }

    /// Issue 53: a snapshot past the parts' bounds (src/protocol/parts.rs)
    /// ends the link with the reason, instead of being held.
    #[test]
    fn a_snapshot_past_the_bounds_ends_the_link_saying_why() {
        use crate::protocol::parts::MAX_PANE_BYTES;
        use crate::protocol::snapshot::{PaneCard, PaneSnapshot, ServerInfo};
        let mut r = reading(Some("box"));
        let start = ServerMsg::SnapshotStart {
            server: ServerInfo {
                pid: 1,
                config: "hive.toml".into(),
                config_path: None,
                socket: "/tmp/x.sock".into(),
                started: 0,
            },
            focus: 0,
            away_since: None,
            panes: 1,
        };
        assert!(matches!(r.step(start, 100), Step::Skip));
        let pane = PaneSnapshot {
            agent: PaneCard::default(),
            worktree: None,
            failed: None,
            restored: Default::default(),
            events: Vec::new(),
            draft: String::new(),
            window: 1,
            parent: None,
            host: None,
            seen: None,
            dismissed: Vec::new(),
        };
        assert!(matches!(
            r.step(ServerMsg::SnapshotPane(Box::new(pane)), 100),
            Step::Skip
        ));
        let Step::End(why) = r.step(ServerMsg::SnapshotEvents(Vec::new()), MAX_PANE_BYTES) else {
            panic!("a pane past the bound was taken");
        };
        assert!(why.contains("more than a hive server sends"), "{why}");
        assert!(!r.parts.started(), "what it held is dropped");
    }

    /// Why a link over ssh broke, as the reader ends: `words` are what ssh
    /// writes to its stderr after the channel's end (none: it was killed).
    async fn lost_with(words: Option<&str>) -> String {
        let (stderr, done) = super::super::transport::Stderr::of_ssh();
        let (tx, mut rx) = mpsc::channel(4);
        let reader: Reader = FrameReader::new(Box::pin(tokio::io::empty()));
        let task = tokio::spawn(read_loop(
            reader,
            tx,
            stderr.clone(),
            Some("far".into()),
            InFlight::default(),
        ));
        // The reader has met the end before ssh says anything.
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
        if let Some(w) = words {
            stderr.text.lock().unwrap().push_str(w);
        }
        let _ = done.send(true);
        task.await.unwrap();
        match rx.recv().await {
            Some(Incoming::Msg(FromServer::Lost(why), _)) => why,
            _ => panic!("no Lost"),
        }
    }

    /// #46 item 16: a link whose ssh died says so in ssh's words (they come
    /// after the end of the channel; read at once, they were not there and
    /// the reason blamed the server), and without them names the link,
    /// not the server.
    #[tokio::test(flavor = "current_thread")]
    async fn a_broken_ssh_link_is_told_in_ssh_words_not_blamed_on_the_server() {
        let why = lost_with(Some("Connection to far closed by remote host.")).await;
        assert_eq!(why, "Connection to far closed by remote host.");
        let why = lost_with(None).await;
        assert_eq!(why, "the ssh link to far ended");
    }
}
