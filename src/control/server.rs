//! The server's socket: binds `<dir>/<label>.sock` (0600 in a 0700 dir),
//! lets in only connections from hive's own user (SO_PEERCRED), and tells
//! its two dialects apart by the first byte: a console client starts with
//! NUL (`wire::MAGIC`) and is handed over whole ([`Accepted::Console`]);
//! anything else is `hive ctl` / `hive mcp`, whose request lines go to the
//! server loop as [`ControlRequest`]s, the replies and `watch` streams back.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::hub::ControlRequest;
use super::protocol::{Call, CtlError, ErrorCode, Reply, Request};
use crate::lines::{CappedLines, Line, MAX_REQUEST_BYTES};

/// A bound socket and its accept loop; dropping it stops both and removes
/// the socket file.
pub struct Server {
    path: PathBuf,
    task: JoinHandle<()>,
}

impl Server {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Binds `<label>.sock` in `dir` and starts serving; control requests
    /// arrive on the first receiver, console clients on the second.
    /// Must run inside a tokio runtime.
    pub fn start(
        dir: &Path,
        label: &str,
    ) -> io::Result<(
        Self,
        mpsc::Receiver<ControlRequest>,
        mpsc::Receiver<UnixStream>,
    )> {
        super::prepare_dir(dir)?;
        let (listener, path) = bind(dir, label)?;
        let (tx, rx) = mpsc::channel(64);
        let (ctx, crx) = mpsc::channel(8);
        let own_uid = super::current_uid();
        let task = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        // Past the cap a connection is closed at once.
                        let Some(slot) = crate::budget::Slot::take() else {
                            tracing::warn!("control socket: too many connections; one refused");
                            continue;
                        };
                        let (tx, ctx) = (tx.clone(), ctx.clone());
                        tokio::spawn(async move {
                            connection(stream, tx, ctx, own_uid).await;
                            drop(slot);
                        });
                    }
                    Err(e) => {
                        tracing::warn!("control socket: accept: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                }
            }
        });
        Ok((Self { path, task }, rx, crx))
    }
}

impl Server {
    /// Stops accepting and removes the socket file (again on drop: harmless).
    pub fn close(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.close();
    }
}

/// `label.sock`: a stale one (nothing answers) is taken over; a live one
/// is another server of the same config, which the caller should attach to.
fn bind(dir: &Path, label: &str) -> io::Result<(UnixListener, PathBuf)> {
    let path = dir.join(format!("{label}.sock"));
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(&path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "a hive server already runs on {}: `hive attach {label}`",
                    path.display()
                ),
            ));
        }
        std::fs::remove_file(&path)?;
    }
    let listener = UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok((listener, path))
}

async fn write_line(w: &mut (impl AsyncWriteExt + Unpin), line: &str) -> io::Result<()> {
    w.write_all(line.as_bytes()).await?;
    w.write_all(b"\n").await?;
    w.flush().await
}

async fn write_reply(
    w: &mut (impl AsyncWriteExt + Unpin),
    id: Option<u64>,
    outcome: Result<Value, CtlError>,
) -> io::Result<()> {
    let line = serde_json::to_string(&Reply::new(id, outcome)).map_err(io::Error::other)?;
    write_line(w, &line).await
}

async fn connection(
    stream: UnixStream,
    tx: mpsc::Sender<ControlRequest>,
    consoles: mpsc::Sender<UnixStream>,
    own_uid: u32,
) {
    if let Err(e) = serve(stream, tx, consoles, own_uid).await {
        tracing::debug!("control connection ended: {e}");
    }
}

async fn serve(
    mut stream: UnixStream,
    tx: mpsc::Sender<ControlRequest>,
    consoles: mpsc::Sender<UnixStream>,
    own_uid: u32,
) -> io::Result<()> {
    use tokio::io::AsyncReadExt;
    let peer = stream.peer_cred()?;
    if !super::peer_allowed(peer.uid(), own_uid) {
        let (_, mut write) = stream.into_split();
        tracing::warn!(
            uid = peer.uid(),
            "control socket: refused a connection from another user"
        );
        let e = CtlError::new(
            ErrorCode::PermissionDenied,
            format!(
                "this hive belongs to uid {own_uid}; uid {} may not drive it",
                peer.uid()
            ),
        );
        return write_reply(&mut write, None, Err(e)).await;
    }
    let mut first = [0u8; 1];
    if stream.read(&mut first).await? == 0 {
        return Ok(());
    }
    if first[0] == crate::wire::MAGIC[0] {
        // A console: the server loop takes the connection from here.
        let _ = consoles.send(stream).await;
        return Ok(());
    }
    let (read, mut write) = stream.into_split();
    let read = std::io::Cursor::new(first).chain(read);
    let mut lines = CappedLines::charged(read, MAX_REQUEST_BYTES);
    while let Some(line) = lines.next().await? {
        let line = match line {
            Line::Text(t) => t,
            Line::TooLong { .. } => return refuse_long_line(&mut write).await,
        };
        if line.trim().is_empty() {
            continue;
        }
        let request: Request = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                let id = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(Value::as_u64));
                let e = CtlError::new(ErrorCode::BadRequest, format!("bad request: {e}"));
                write_reply(&mut write, id, Err(e)).await?;
                continue;
            }
        };
        let id = Some(request.id);
        if matches!(request.call, Call::Watch { .. }) {
            // Unbounded in count, bounded in bytes by the hub (the one
            // backpressure rule, src/backlog.rs).
            let (etx, erx) = mpsc::unbounded_channel();
            let backlog = std::sync::Arc::new(crate::backlog::Backlog::default());
            let stream = super::hub::Watch {
                tx: etx,
                backlog: std::sync::Arc::clone(&backlog),
            };
            let outcome = ask(&tx, request.call, Some(stream)).await;
            let ok = outcome.is_ok();
            write_reply(&mut write, id, outcome).await?;
            if !ok {
                continue;
            }
            // From here the connection only streams, until either side ends.
            return watch(&mut write, erx, &backlog, &mut lines, id).await;
        }
        let history = matches!(request.call, Call::History { .. });
        let mut outcome = ask(&tx, request.call, None).await;
        if history && let Ok(v) = &outcome {
            outcome = history_of(v).await;
        }
        write_reply(&mut write, id, outcome).await?;
    }
    Ok(())
}

/// A `watch` after its reply: events until either side ends, then why.
async fn watch<R: tokio::io::AsyncRead + Unpin>(
    write: &mut (impl AsyncWriteExt + Unpin),
    mut erx: mpsc::UnboundedReceiver<Arc<str>>,
    backlog: &crate::backlog::Backlog,
    lines: &mut CappedLines<R>,
    id: Option<u64>,
) -> io::Result<()> {
    let why = match stream_events(write, &mut erx, backlog, lines).await? {
        StreamEnd::Hangup => return Ok(()),
        StreamEnd::TooLong => return refuse_long_line(write).await,
        StreamEnd::Ended => "the event stream ended: hive is quitting",
    };
    // Dropping the events' receiver here tells the hub this watcher is gone.
    drop(erx);
    let e = CtlError::new(ErrorCode::Unavailable, why);
    // A line may have been cut mid-write: start the reason on a line
    // of its own, and give up on a client that reads nothing.
    let said = async {
        write.write_all(b"\n").await?;
        write_reply(write, id, Err(e)).await
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), said).await;
    Ok(())
}

/// Why a `watch` stream stopped.
enum StreamEnd {
    /// The client hung up.
    Hangup,
    /// The client sent an over-long line.
    TooLong,
    /// The hub ended the stream (hive is quitting).
    Ended,
}

/// Streams event lines to a watcher as the hub queued them (it counted
/// their bytes and skips a watcher that falls behind, src/backlog.rs);
/// each line written is counted out. Reading goes on beside the writing,
/// in the same task, to notice a hangup or a hostile line.
async fn stream_events<R: tokio::io::AsyncRead + Unpin>(
    write: &mut (impl AsyncWriteExt + Unpin),
    erx: &mut mpsc::UnboundedReceiver<Arc<str>>,
    backlog: &crate::backlog::Backlog,
    lines: &mut CappedLines<R>,
) -> io::Result<StreamEnd> {
    loop {
        tokio::select! {
            ev = erx.recv() => match ev {
                Some(line) => {
                    let written = write_line(write, &line).await;
                    backlog.written(line.len());
                    written?;
                }
                None => return Ok(StreamEnd::Ended),
            },
            more = lines.next() => match more? {
                None => return Ok(StreamEnd::Hangup),
                Some(Line::TooLong { .. }) => return Ok(StreamEnd::TooLong),
                Some(Line::Text(_)) => {}
            }
        }
    }
}

/// A request line over the cap: said, then the connection is closed (what
/// follows it cannot be trusted to be a request boundary).
async fn refuse_long_line(w: &mut (impl AsyncWriteExt + Unpin)) -> io::Result<()> {
    let e = CtlError::new(
        ErrorCode::BadRequest,
        format!("request line longer than {MAX_REQUEST_BYTES} bytes; closing the connection"),
    );
    write_reply(w, None, Err(e)).await
}

/// The app named the pane and its agent (`v`); the history itself is read
/// here, off the server's loop.
async fn history_of(v: &Value) -> Result<Value, CtlError> {
    let agent = v
        .get("agent")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let pane = v.get("pane").cloned().unwrap_or(Value::Null);
    tokio::task::spawn_blocking(move || load_history(pane, &agent))
        .await
        .unwrap_or_else(|e| Err(CtlError::new(ErrorCode::Unavailable, e.to_string())))
}

/// Hands a call to the server's loop and waits for its answer.
async fn ask(
    tx: &mpsc::Sender<ControlRequest>,
    call: Call,
    events: Option<crate::control::hub::Watch>,
) -> Result<Value, CtlError> {
    let gone = || CtlError::new(ErrorCode::Unavailable, "hive is shutting down");
    let (reply, answer) = oneshot::channel();
    tx.send(ControlRequest {
        call,
        reply,
        events,
    })
    .await
    .map_err(|_| gone())?;
    answer.await.map_err(|_| gone())?
}

/// The pane's current conversation from the history store, as upserts.
fn load_history(pane: Value, agent: &str) -> Result<Value, CtlError> {
    use crate::history::{assemble, store};
    let store = crate::project::served().store();
    let Some(entry) = crate::history::agent_session(&store, agent) else {
        return Ok(json!({ "pane": pane, "agent": agent, "session": null, "items": [] }));
    };
    let loaded = store::read_all(&entry.path)
        .map_err(|e| CtlError::new(ErrorCode::Unavailable, format!("reading history: {e}")))?;
    let items = assemble::items_from(&loaded.records);
    Ok(json!({
        "pane": pane,
        "agent": agent,
        "session": entry.session,
        "items": items,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The credential the check reads is the real peer's: a socket pair in
    /// this process reports our own uid, which is let in.
    #[tokio::test]
    async fn peer_credentials_are_those_of_the_connecting_process() {
        let (a, _b) = UnixStream::pair().unwrap();
        let cred = a.peer_cred().unwrap();
        assert_eq!(cred.uid(), super::super::current_uid());
        assert!(super::super::peer_allowed(
            cred.uid(),
            super::super::current_uid()
        ));
    }

    #[tokio::test]
    async fn a_live_socket_is_refused_and_a_stale_one_reused() {
        let tmp = tempfile::tempdir().unwrap();
        let (first, p1) = bind(tmp.path(), "x").unwrap();
        assert!(p1.ends_with("x.sock"));
        let err = bind(tmp.path(), "x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
        assert!(err.to_string().contains("hive attach x"), "{err}");
        drop(first); // the file stays, nobody answers: stale
        let (_again, p2) = bind(tmp.path(), "x").unwrap();
        assert_eq!(p2, p1);
    }

    /// Issue 53 item 10: the socket served any number of connections.
    /// Past `budget::MAX_CONNECTIONS` open at once, a new one is closed
    /// at once (other tests of this binary may hold a few slots: some of
    /// the extra ones are closed, never none).
    #[tokio::test]
    async fn connections_past_the_cap_are_closed() {
        use tokio::io::AsyncReadExt;
        // Both ends of every connection live in this process.
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit(2) on a local struct.
        unsafe {
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            limit.rlim_cur = limit.rlim_max.max(limit.rlim_cur);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
        let tmp = tempfile::tempdir().unwrap();
        let (server, _requests, _consoles) = Server::start(tmp.path(), "cap").unwrap();
        let mut open = Vec::new();
        for _ in 0..crate::budget::MAX_CONNECTIONS + 8 {
            open.push(UnixStream::connect(server.path()).await.unwrap());
        }
        // Accepted in order: the last ones found the socket full.
        for s in open.iter_mut().rev().take(8) {
            let mut b = [0u8; 1];
            let read = tokio::time::timeout(std::time::Duration::from_secs(5), s.read(&mut b));
            assert!(
                matches!(read.await, Ok(Ok(0))),
                "a connection past the cap stayed open"
            );
        }
    }
}
