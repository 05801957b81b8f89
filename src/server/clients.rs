//! The console clients of a server: one task per connection that does the
//! handshake, then reads the client's messages into the server loop and
//! writes the frames the loop queued for it.
//!
//! Each client's queue is bounded in bytes, not messages (one frame may be a
//! whole snapshot, the next a single appended word). A client that reads
//! too slowly to keep up is not queued for without bound: past
//! [`MAX_BACKLOG`] its events are dropped, and once its queue has drained
//! it gets a fresh snapshot instead of the events it missed. Growing text
//! is encoded per client ([`DeltaEncoder`]), since each client has seen a
//! different prefix.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use crate::backlog::{Admit, Backlog};
use crate::protocol::verb::Role;
use crate::runner::PaneUpdate;
use crate::wire::delta::DeltaEncoder;
use crate::wire::frame::{self, FrameReader};
use crate::wire::snapshot::Snapshot;
use crate::wire::{ClientMsg, Hello, MAGIC, PaneWire, ServerMsg};

/// Bytes a client may leave unread before it is behind (the one rule of
/// every live stream, src/backlog.rs).
#[cfg(test)]
const MAX_BACKLOG: usize = crate::backlog::MAX_BYTES;

/// Frames gathered into one write, at most about this many bytes.
const WRITE_BATCH: usize = 256 << 10;

pub(crate) type ClientId = u64;

/// What the connections tell the server loop.
pub(crate) enum ClientEvent {
    /// A client said hello in our protocol.
    Joined(Link),
    Said(ClientId, ClientMsg),
    /// The connection ended (a detach, a closed terminal, a killed client).
    Left(ClientId, String),
    /// A client that fell behind has read everything queued.
    Drained(ClientId),
}

/// The server loop's end of one client.
pub(crate) struct Link {
    pub(crate) id: ClientId,
    out: mpsc::UnboundedSender<Vec<u8>>,
    backlog: Arc<Backlog>,
    encoder: DeltaEncoder,
    /// It asked for the panes (`ClientMsg::Attach`); until then it gets no
    /// events.
    pub(crate) attached: bool,
    /// The pane it looks at.
    pub(crate) focus: Option<usize>,
    /// Who it says it is (`ClientMsg::Identify`; src/server/seen.rs).
    pub(crate) who: Option<String>,
    /// What it was sent of the runners' events, for the log line of its
    /// leaving (how many events share a batch; issue 45 item 2).
    pub(crate) sent: Sent,
    /// What it may do: `ReadOnly` once it said so (`ClientMsg::ReadOnly`,
    /// `hive attach --read-only`), for the rest of the connection.
    pub(crate) role: Role,
}

/// Runner events sent to one client: in how many batches (one a turn of
/// the server's loop that had any for it), and from how many panes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) batches: u64,
    pub(crate) events: u64,
    /// The panes of each batch, summed: over `batches`, how many panes a
    /// batch carried on average.
    pub(crate) pane_batches: u64,
}

impl Link {
    /// Queues a frame unless the client is behind (or would be with it).
    fn queue(&mut self, bytes: Vec<u8>) {
        match self.backlog.admit(bytes.len()) {
            Admit::Queue => self.send_counted(bytes),
            Admit::Skip { fell_behind: true } => tracing::info!(
                client = self.id,
                "a client fell behind; it gets a snapshot once it drains"
            ),
            Admit::Skip { fell_behind: false } => {}
        }
    }

    /// Queues a frame whatever the backlog (a snapshot, a goodbye).
    fn force(&mut self, bytes: Vec<u8>) {
        self.backlog.force(bytes.len());
        let _ = self.out.send(bytes);
    }

    /// Sends a frame `admit` has counted already.
    fn send_counted(&mut self, bytes: Vec<u8>) {
        let _ = self.out.send(bytes);
    }
}

/// Every client of the server.
pub(crate) struct Clients {
    links: BTreeMap<ClientId, Link>,
    events: mpsc::UnboundedSender<ClientEvent>,
    incoming: mpsc::UnboundedReceiver<ClientEvent>,
    next_id: ClientId,
}

impl Clients {
    pub(crate) fn new() -> Self {
        let (events, incoming) = mpsc::unbounded_channel();
        Self {
            links: BTreeMap::new(),
            events,
            incoming,
            next_id: 1,
        }
    }

    /// Takes a new connection (its first byte, NUL, already read).
    pub(crate) fn accept(&mut self, stream: UnixStream) {
        let id = self.next_id;
        self.next_id += 1;
        tokio::spawn(connection(id, stream, self.events.clone()));
    }

    pub(crate) async fn next(&mut self) -> Option<ClientEvent> {
        self.incoming.recv().await
    }

    pub(crate) fn join(&mut self, link: Link) {
        self.links.insert(link.id, link);
    }

    pub(crate) fn remove(&mut self, id: ClientId) -> Option<Link> {
        self.links.remove(&id)
    }

    pub(crate) fn get_mut(&mut self, id: ClientId) -> Option<&mut Link> {
        self.links.get_mut(&id)
    }

    /// The slot the client `id` looks at.
    pub(crate) fn focus_of(&self, id: ClientId) -> Option<usize> {
        self.links.get(&id).and_then(|l| l.focus)
    }

    /// Who client `id` said it is.
    pub(crate) fn who_of(&self, id: ClientId) -> Option<&str> {
        self.links.get(&id).and_then(|l| l.who.as_deref())
    }

    pub(crate) fn attached(&self) -> impl Iterator<Item = &Link> {
        self.links.values().filter(|l| l.attached)
    }

    pub(crate) fn count(&self) -> usize {
        self.attached().count()
    }

    /// Runner events to every attached client (or only to `only`): one
    /// frame each (a few when they are many MB), not one per event.
    /// `seq`: every event up to it has been sent once these are.
    pub(crate) fn events(&mut self, updates: &[PaneUpdate], seq: u64, only: Option<ClientId>) {
        self.events_to(updates, seq, |id, _| only.is_none_or(|o| o == id));
    }

    /// Runner events to the attached clients, each getting those `to`
    /// takes (`to(client, index)`: a terminal screen goes to those whose
    /// view it is, src/server/views.rs), in one frame.
    pub(crate) fn events_to(
        &mut self,
        updates: &[PaneUpdate],
        seq: u64,
        to: impl Fn(ClientId, usize) -> bool,
    ) {
        if updates.is_empty() {
            return;
        }
        for link in self.links.values_mut().filter(|l| l.attached) {
            if link.backlog.is_behind() {
                continue;
            }
            let id = link.id;
            let events: Vec<PaneWire> = updates
                .iter()
                .enumerate()
                .filter(|&(i, _)| to(id, i))
                .map(|(_, u)| PaneWire {
                    pane: u.pane,
                    event: link.encoder.encode(u.pane, &u.event),
                })
                .collect();
            if events.is_empty() {
                continue;
            }
            link.sent.batches += 1;
            link.sent.events += events.len() as u64;
            link.sent.pane_batches += panes_in(&events);
            for bytes in frames_of(events, Some(seq)) {
                link.queue(bytes);
            }
        }
    }

    /// A message to one client, whatever its backlog.
    pub(crate) fn send(&mut self, id: ClientId, msg: &ServerMsg) {
        let Some(link) = self.links.get_mut(&id) else {
            return;
        };
        match frame::encode(msg) {
            Ok(bytes) => link.force(bytes),
            Err(e) => tracing::warn!("cannot encode a message: {e}"),
        }
    }

    /// A snapshot to one client, in its several messages; it restarts the
    /// client's deltas and ends its being behind. Snapshots obey the
    /// backlog bound too (issue 53 item 7): a client with anything still
    /// unread is marked behind instead, and gets one fresh snapshot once it
    /// has read it all (`Drained`), so twenty unread `Resync`s queue one
    /// snapshot, not twenty. False: deferred so.
    pub(crate) fn send_snapshot(&mut self, id: ClientId, snap: Snapshot) -> bool {
        let Some(link) = self.links.get_mut(&id) else {
            return false;
        };
        if !link.backlog.hold() {
            return false;
        }
        link.encoder.reset();
        link.backlog.caught_up();
        for msg in snap.into_messages() {
            self.send(id, &msg);
        }
        true
    }

    /// The panes after an edit to client `id`: its deltas restart with the
    /// new numbering. A client behind gets a fresh snapshot once it has
    /// drained, with the new panes in it: false, nothing sent.
    pub(crate) fn send_layout(&mut self, id: ClientId, msg: &ServerMsg) -> bool {
        let Some(link) = self.links.get_mut(&id) else {
            return false;
        };
        if link.backlog.is_behind() {
            return false;
        }
        link.encoder.reset();
        self.send(id, msg);
        true
    }

    /// A message to every attached client but `except`.
    pub(crate) fn broadcast(&mut self, msg: &ServerMsg, except: Option<ClientId>) {
        let ids: Vec<ClientId> = self
            .attached()
            .map(|l| l.id)
            .filter(|id| Some(*id) != except)
            .collect();
        for id in ids {
            self.send(id, msg);
        }
    }

    /// Whether every client has been handed everything queued for it.
    pub(crate) fn flushed(&self) -> bool {
        self.links.values().all(|l| l.backlog.queued() == 0)
    }
}

/// A batch's frame is split when it passes this many bytes (far below
/// `MAX_FRAME`: a burst of long tool outputs must still fit).
const BATCH_FRAME: usize = 4 << 20;

/// How many panes a batch of events is from.
fn panes_in(events: &[PaneWire]) -> u64 {
    let mut panes: Vec<usize> = events.iter().map(|e| e.pane).collect();
    panes.sort_unstable();
    panes.dedup();
    panes.len() as u64
}

/// `events` as `ServerMsg::Events` frames: one, unless it would pass
/// [`BATCH_FRAME`], then halves of it (rare: only bursts of large events
/// are encoded twice); only the last says up to which event (`seq`).
fn frames_of(events: Vec<PaneWire>, seq: Option<u64>) -> Vec<Vec<u8>> {
    let n = events.len();
    let msg = ServerMsg::Events(events, seq);
    match frame::encode(&msg) {
        Ok(bytes) if bytes.len() <= BATCH_FRAME || n < 2 => vec![bytes],
        Ok(_) => {
            let ServerMsg::Events(mut first, _) = msg else {
                return Vec::new();
            };
            let second = first.split_off(n / 2);
            let mut out = frames_of(first, None);
            out.extend(frames_of(second, seq));
            out
        }
        Err(e) => {
            tracing::warn!("cannot encode events: {e}");
            Vec::new()
        }
    }
}

/// One client from its hello to its end.
async fn connection(id: ClientId, stream: UnixStream, events: mpsc::UnboundedSender<ClientEvent>) {
    let _slot = crate::budget::Slot::handed_over();
    let why = match serve(id, stream, &events).await {
        Ok(why) => why,
        Err(e) => e.to_string(),
    };
    let _ = events.send(ClientEvent::Left(id, why));
}

async fn serve(
    id: ClientId,
    stream: UnixStream,
    events: &mpsc::UnboundedSender<ClientEvent>,
) -> Result<String, frame::WireError> {
    let (mut read, mut write) = stream.into_split();
    let mut magic = [0u8; MAGIC.len() - 1];
    read.read_exact(&mut magic).await?;
    if magic != MAGIC[1..] {
        return Ok("not a hive console".into());
    }
    let mut reader = FrameReader::charged(read);
    let Some(payload) = reader.next().await? else {
        return Ok("hung up before its hello".into());
    };
    let hello = frame::decode_hello(&payload)?;
    // Our hello goes first either way: the client explains a mismatch.
    write
        .write_all(&frame::encode_hello(&Hello::ours()))
        .await?;
    if let Some(why) = hello.mismatch("client", "server") {
        return Ok(why);
    }
    let (out, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let backlog = Arc::new(Backlog::default());
    let link = Link {
        id,
        out,
        backlog: Arc::clone(&backlog),
        encoder: DeltaEncoder::default(),
        attached: false,
        focus: None,
        who: None,
        sent: Sent::default(),
        role: Role::Full,
    };
    if events.send(ClientEvent::Joined(link)).is_err() {
        return Ok("the server is stopping".into());
    }
    let writer = write_frames(id, write, rx, &backlog, events);
    let reader = async {
        loop {
            let Some(payload) = reader.next().await? else {
                return Ok::<_, frame::WireError>("hung up".to_owned());
            };
            let msg: ClientMsg = frame::decode(&payload)?;
            let detach = matches!(msg, ClientMsg::Detach);
            if events.send(ClientEvent::Said(id, msg)).is_err() || detach {
                return Ok("detached".to_owned());
            }
        }
    };
    tokio::select! {
        r = writer => r,
        r = reader => r,
    }
}

/// Writes what the loop queued for client `id` until the loop drops it,
/// and tells the loop when a client that fell behind has caught up.
async fn write_frames(
    id: ClientId,
    mut write: tokio::net::unix::OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    backlog: &Backlog,
    events: &mpsc::UnboundedSender<ClientEvent>,
) -> Result<String, frame::WireError> {
    let mut batch = Vec::new();
    while let Some(first) = rx.recv().await {
        // Frames queued together leave in one write (a burst of events is
        // one wake-up of the client, not one per frame).
        batch.clear();
        batch.extend_from_slice(&first);
        while batch.len() < WRITE_BATCH {
            match rx.try_recv() {
                Ok(more) => batch.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        write.write_all(&batch).await?;
        let drained = backlog.written(batch.len());
        if batch.capacity() > WRITE_BATCH * 4 {
            // A snapshot went through: give its memory back.
            batch = Vec::new();
        }
        if drained {
            let _ = events.send(ClientEvent::Drained(id));
        }
    }
    // The server dropped this client (or is stopping): say no more.
    let _ = write.shutdown().await;
    Ok("dropped by the server".to_owned())
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::runner::PaneEvent;
    use crate::upsert::UpsertKind;

    /// A message item of `bytes` bytes, new each time (sent whole).
    fn big(n: usize, bytes: usize) -> PaneUpdate {
        let Some(PaneEvent::Upsert(mut u)) =
            crate::protocol::samples::sample_events().into_iter().next()
        else {
            panic!("the first sample is an upsert");
        };
        u.item_id = format!("item-{n}");
        if let UpsertKind::Message { content, .. } = &mut u.kind {
            *content = "x".repeat(bytes).into();
        }
        PaneUpdate {
            pane: 0,
            event: PaneEvent::Upsert(u),
        }
    }

    /// An attached client, and the test's end of its socket (hello read).
    async fn attached() -> (Clients, ClientId, UnixStream) {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let mut clients = Clients::new();
        theirs.write_all(&MAGIC[1..]).await.unwrap();
        theirs
            .write_all(&frame::encode_hello(&Hello::ours()))
            .await
            .unwrap();
        clients.accept(ours);
        let Some(ClientEvent::Joined(mut link)) = clients.next().await else {
            panic!("joined");
        };
        link.attached = true;
        let id = link.id;
        clients.join(link);
        let mut reader = FrameReader::new(&mut theirs);
        frame::decode_hello(&reader.next().await.unwrap().unwrap()).unwrap();
        (clients, id, theirs)
    }

    /// Issue 45 item 2: the events the loop took in at once cross as one
    /// frame (they were a frame each), in order, and read back whole.
    #[tokio::test]
    async fn a_burst_of_events_is_one_frame() {
        let (mut clients, _, mut theirs) = attached().await;
        let burst: Vec<PaneUpdate> = (0..50)
            .map(|n| PaneUpdate {
                pane: n % 3,
                ..big(n, 10)
            })
            .collect();
        clients.events(&burst, 7, None);
        clients.events(&[], 7, None);
        drop(clients);
        let mut reader = FrameReader::new(&mut theirs);
        let mut frames = Vec::new();
        while let Ok(Some(payload)) = reader.next().await {
            frames.push(frame::decode::<ServerMsg>(&payload).unwrap());
        }
        assert_eq!(frames.len(), 1, "{} frames", frames.len());
        let Some(ServerMsg::Events(events, _)) = frames.pop() else {
            panic!("not events");
        };
        let panes: Vec<usize> = events.iter().map(|e| e.pane).collect();
        let sent: Vec<usize> = burst.iter().map(|u| u.pane).collect();
        assert_eq!(panes, sent);
    }

    /// A burst too large for one frame is split, in order, each part far
    /// under the frame limit.
    #[test]
    fn a_burst_of_large_events_is_split() {
        let events: Vec<PaneWire> = (0..12)
            .map(|n| PaneWire {
                pane: n,
                event: crate::wire::delta::WireEvent::Whole(big(n, 1 << 20).event),
            })
            .collect();
        let frames = frames_of(events, Some(9));
        assert!(frames.len() >= 3, "{} frames", frames.len());
        let mut panes = Vec::new();
        let mut said = Vec::new();
        for f in &frames {
            assert!(f.len() <= BATCH_FRAME, "{} bytes", f.len());
            let Ok(ServerMsg::Events(part, seq)) = frame::decode(&f[4..]) else {
                panic!("not events");
            };
            panes.extend(part.iter().map(|e| e.pane));
            said.push(seq);
        }
        assert_eq!(panes, (0..12).collect::<Vec<_>>());
        // Only the last part says the batch was sent whole.
        assert_eq!(said.pop(), Some(Some(9)));
        assert!(said.iter().all(Option::is_none), "{said:?}");
    }

    /// A client that reads nothing is not queued for without bound: past
    /// the backlog its events are dropped, and once it has read what was
    /// queued the loop hears `Drained` (and sends it a snapshot).
    #[tokio::test]
    async fn a_client_that_reads_nothing_falls_behind_then_drains() {
        let (mut clients, id, mut theirs) = attached().await;
        let mut reader = FrameReader::new(&mut theirs);

        let sent = 40;
        for n in 0..sent {
            clients.events(&[big(n, 1 << 20)], 7, None);
        }
        let link = clients.get_mut(id).unwrap();
        assert!(link.backlog.is_behind(), "never fell behind");
        assert!(link.backlog.queued() <= MAX_BACKLOG);

        // It reads everything that was queued, then the loop hears of it.
        let mut got = 0;
        let drained = async {
            loop {
                match clients.next().await {
                    Some(ClientEvent::Drained(d)) => return d,
                    Some(_) => {}
                    None => panic!("events ended"),
                }
            }
        };
        let read = async {
            while let Ok(Some(_)) = reader.next().await {
                got += 1;
            }
        };
        tokio::select! {
            d = drained => assert_eq!(d, id),
            () = read => panic!("the connection ended"),
        }
        assert!(got < sent, "read {got} of {sent}: nothing was dropped");
        assert!(got >= (MAX_BACKLOG >> 20) - 2, "read only {got}");
    }

    fn snapshot() -> Snapshot {
        Snapshot {
            server: crate::wire::snapshot::ServerInfo {
                pid: 1,
                config: "x".repeat(1 << 20),
                config_path: None,
                socket: "/tmp/x.sock".into(),
                started: 0,
            },
            focus: 0,
            away_since: None,
            panes: Vec::new(),
        }
    }

    /// Issue 53 item 7: twenty `Resync`s with nothing read took a server
    /// from 67 MB to 1,135 MB, each snapshot queued whatever the backlog.
    /// Now one waits unread; the rest become one fresh snapshot once the
    /// client has read it (the server's own queue counter says so).
    #[tokio::test]
    async fn unread_snapshots_obey_the_backlog_bound() {
        let (mut clients, id, mut theirs) = attached().await;

        assert!(clients.send_snapshot(id, snapshot()), "the first is sent");
        let one = clients.get_mut(id).unwrap().backlog.queued();
        assert!(one > 1 << 20, "{one}");
        for _ in 0..19 {
            assert!(!clients.send_snapshot(id, snapshot()), "deferred");
        }
        let link = clients.get_mut(id).unwrap();
        let queued = link.backlog.queued();
        // The writer may have handed some to the socket meanwhile.
        assert!(
            queued <= one,
            "{queued} queued after 20 snapshots, {one} after one"
        );
        assert!(link.backlog.is_behind());

        // Reading it all brings `Drained`: the loop's cue for one fresh one.
        let mut reader = FrameReader::new(&mut theirs);
        let drained = async {
            loop {
                match clients.next().await {
                    Some(ClientEvent::Drained(d)) => return d,
                    Some(_) => {}
                    None => panic!("events ended"),
                }
            }
        };
        let read = async { while let Ok(Some(_)) = reader.next().await {} };
        tokio::select! {
            d = drained => assert_eq!(d, id),
            () = read => panic!("the connection ended"),
        }
    }

    /// Issue 53 item 10: ten clients each holding 59 MB of an unfinished
    /// frame made 611 MB, every one under its own cap. Three holding 50 MiB
    /// each pass the total (`budget::MAX_INPUT`, the server's own counter):
    /// one is closed, saying why, and what it held is given back.
    #[tokio::test]
    async fn unfinished_frames_are_capped_in_total() {
        const EACH: usize = 50 << 20;
        let mut clients = Clients::new();
        let mut writers = Vec::new();
        for _ in 0..3 {
            let (ours, mut theirs) = UnixStream::pair().unwrap();
            clients.accept(ours);
            writers.push(tokio::spawn(async move {
                theirs.write_all(&MAGIC[1..]).await?;
                theirs
                    .write_all(&frame::encode_hello(&Hello::ours()))
                    .await?;
                let len = u32::try_from(frame::MAX_FRAME - 1).unwrap();
                theirs.write_all(&len.to_be_bytes()).await?;
                theirs.write_all(&vec![0u8; EACH]).await?;
                // Holds the frame unfinished until the test ends.
                std::future::pending::<()>().await;
                Ok::<_, std::io::Error>(theirs)
            }));
        }
        let left = async {
            loop {
                match clients.next().await {
                    Some(ClientEvent::Left(_, why)) => break why,
                    Some(ClientEvent::Joined(link)) => clients.join(link),
                    Some(_) => {}
                    None => panic!("events ended"),
                }
            }
        };
        let why = tokio::time::timeout(std::time::Duration::from_secs(60), left)
            .await
            .expect("no connection was closed: the total is not capped");
        assert!(why.contains("unfinished input"), "{why}");
        assert!(
            crate::budget::input_held() <= crate::budget::MAX_INPUT,
            "{} held",
            crate::budget::input_held()
        );
        for w in writers {
            w.abort();
        }
    }
}
