//! Length-prefixed frames: a 4-byte big-endian length, then the payload.
//!
//! The console protocol needs message boundaries on a byte stream, and a
//! length prefix is the cheapest: no escaping, and a reader knows how much
//! to wait for. The hello is JSON (every version reads it, so skew can be
//! reported); everything after is MessagePack with field names, which
//! handles the `#[serde(flatten)]` and internally tagged shapes of
//! `Upsert` and the `serde_json::Value`s inside it. Encoding is pure;
//! [`FrameReader`] is the only I/O here, and is cancel-safe so it can sit
//! in a `tokio::select!` beside the other things a client or server waits
//! on.

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::Hello;

/// The largest payload either side accepts (a snapshot of many long panes
/// fits; a corrupt length does not make us allocate gigabytes).
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// The length prefix's size.
const HEADER: usize = 4;

/// How much a read asks for at least: many small event frames come in one
/// read instead of one syscall each.
const READ_CHUNK: usize = 16 * 1024;

/// A reader buffer grown past this (a snapshot went through) is given back
/// once it is empty again.
const KEEP_CAPACITY: usize = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    // Said in the message, not as a source: callers print it either way.
    #[error("socket: {0}")]
    Io(std::io::Error),
    #[error("a frame of {0} bytes is over the {MAX_FRAME}-byte limit")]
    TooLarge(usize),
    #[error("the connection closed in the middle of a frame ({got} of {want} bytes)")]
    Truncated { got: usize, want: usize },
    #[error("unreadable message: {0}")]
    Decode(String),
    #[error("unsendable message: {0}")]
    Encode(String),
    #[error("{0}")]
    OverBudget(#[from] crate::budget::OverBudget),
}

impl From<std::io::Error> for WireError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

/// The hello frame, prefix included.
pub fn encode_hello(hello: &Hello) -> Vec<u8> {
    // A struct of a number and a string always serialises; an empty frame
    // (never seen) would fail at the peer as an unreadable hello.
    framed(|out| serde_json::to_writer(out, hello).map_err(|e| e.to_string())).unwrap_or_default()
}

/// Reads a hello payload (what [`FrameReader::next`] returned).
pub fn decode_hello(payload: &[u8]) -> Result<Hello, WireError> {
    serde_json::from_slice(payload).map_err(|e| undecodable(&e))
}

/// Any message as one frame, prefix included.
pub fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, WireError> {
    framed(|out| rmp_serde::encode::write_named(out, msg).map_err(|e| e.to_string()))
}

/// Reads a message payload (what [`FrameReader::next`] returned).
pub fn decode<T: DeserializeOwned>(payload: &[u8]) -> Result<T, WireError> {
    rmp_serde::from_slice(payload).map_err(|e| undecodable(&e))
}

/// A decode error names what the peer sent ("unknown variant `…`"): the
/// peer's words, made one visible line before anyone prints them.
fn undecodable(e: &dyn std::fmt::Display) -> WireError {
    WireError::Decode(crate::sanitize::peer_line(&e.to_string()))
}

/// A frame whose payload `write` appends; the prefix's room is made first,
/// so the payload is never moved.
fn framed(write: impl FnOnce(&mut Vec<u8>) -> Result<(), String>) -> Result<Vec<u8>, WireError> {
    let mut out = vec![0; HEADER];
    write(&mut out).map_err(WireError::Encode)?;
    let len = out.len() - HEADER;
    if len > MAX_FRAME {
        return Err(WireError::TooLarge(len));
    }
    let prefix = u32::try_from(len).map_err(|_| WireError::TooLarge(len))?;
    out[..HEADER].copy_from_slice(&prefix.to_be_bytes());
    Ok(out)
}

/// Splits a byte stream into frame payloads.
///
/// Cancel-safe: what a cancelled `next` had read stays in `buf`, and the
/// next call goes on from there.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Where the unread bytes of `buf` start (frames before it were handed
    /// out; moved down only before a read, so a burst costs no memmoves).
    start: usize,
    /// The server's side: what `buf` holds counts against the total of all
    /// connections (`budget::MAX_INPUT`).
    charge: Option<crate::budget::Charge>,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            charge: None,
        }
    }

    /// A reader whose unfinished frames count against the server's total.
    pub fn charged(inner: R) -> Self {
        Self {
            charge: Some(crate::budget::Charge::default()),
            ..Self::new(inner)
        }
    }

    /// Counts what `buf` holds unread (the unfinished frame).
    fn hold(&mut self) -> Result<(), WireError> {
        let held = self.buf.len() - self.start;
        match &mut self.charge {
            Some(c) => Ok(c.hold(held)?),
            None => Ok(()),
        }
    }

    /// The next frame's payload; `None` when the peer closed between frames.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, WireError> {
        loop {
            let want = match self.frame_len()? {
                Some(len) => {
                    if let Some(payload) = self.take(len) {
                        self.hold()?;
                        return Ok(Some(payload));
                    }
                    HEADER + len
                }
                None => HEADER,
            };
            self.compact(want);
            if self.inner.read_buf(&mut self.buf).await? == 0 {
                let got = self.buf.len() - self.start;
                return match got {
                    0 => Ok(None),
                    _ => Err(WireError::Truncated { got, want }),
                };
            }
            self.hold()?;
        }
    }

    /// The inner reader (e.g. to shut the socket down).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The payload length of the frame at `start`, once its prefix is in.
    fn frame_len(&self) -> Result<Option<usize>, WireError> {
        let Some(prefix) = self.buf.get(self.start..self.start + HEADER) else {
            return Ok(None);
        };
        let mut be = [0; HEADER];
        be.copy_from_slice(prefix);
        let len = u32::from_be_bytes(be) as usize;
        if len > MAX_FRAME {
            return Err(WireError::TooLarge(len));
        }
        Ok(Some(len))
    }

    /// The frame at `start` with a `len`-byte payload, if all of it is in.
    fn take(&mut self, len: usize) -> Option<Vec<u8>> {
        let from = self.start + HEADER;
        let payload = self.buf.get(from..from + len)?.to_vec();
        self.start = from + len;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            if self.buf.capacity() > KEEP_CAPACITY {
                self.buf.shrink_to(READ_CHUNK);
            }
        }
        Some(payload)
    }

    /// Drops the frames handed out and makes room for the `want` bytes the
    /// frame at `start` needs (checked against `MAX_FRAME` already).
    fn compact(&mut self, want: usize) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let need = want.saturating_sub(self.buf.len()).max(READ_CHUNK);
        self.buf.reserve(need);
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use tokio::io::{AsyncWriteExt, ReadBuf};

    use super::*;
    use crate::protocol::delta::WireEvent;
    use crate::protocol::samples::{sample_commands, sample_events};
    use crate::protocol::snapshot::{Logged, PaneSnapshot, Restored, ServerInfo, Snapshot};
    use crate::protocol::upsert::Upsert;
    use crate::protocol::{ClientMsg, ServerMsg};

    /// Hands out one byte per read, as a slow socket might.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
    }

    impl AsyncRead for Trickle {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if let Some(&b) = self.data.get(self.at) {
                buf.put_slice(&[b]);
                self.at += 1;
            }
            Poll::Ready(Ok(()))
        }
    }

    fn frames_of<T: Serialize>(msgs: &[T]) -> Vec<u8> {
        msgs.iter()
            .flat_map(|m| encode(m).expect("encodes"))
            .collect()
    }

    async fn read_all<T: DeserializeOwned>(bytes: Vec<u8>) -> Vec<T> {
        let mut reader = FrameReader::new(Trickle { data: bytes, at: 0 });
        let mut out = Vec::new();
        while let Some(payload) = reader.next().await.expect("reads") {
            out.push(decode(&payload).expect("decodes"));
        }
        out
    }

    #[tokio::test]
    async fn every_pane_event_crosses_as_a_server_message() {
        let msgs: Vec<ServerMsg> = sample_events()
            .into_iter()
            .enumerate()
            .map(|(pane, e)| {
                ServerMsg::Events(
                    vec![crate::wire::PaneWire {
                        pane,
                        event: WireEvent::Whole(e),
                    }],
                    Some(pane as u64),
                )
            })
            .chain([ServerMsg::Bye {
                reason: "stopping".into(),
            }])
            .collect();
        let back: Vec<ServerMsg> = read_all(frames_of(&msgs)).await;
        assert_eq!(back, msgs);
    }

    #[tokio::test]
    async fn every_runner_command_crosses_as_a_client_message() {
        let msgs: Vec<ClientMsg> = sample_commands()
            .into_iter()
            .map(|cmd| ClientMsg::Command { pane: 1, cmd })
            .chain([
                ClientMsg::Attach,
                ClientMsg::Focus(2),
                ClientMsg::Draft {
                    pane: 0,
                    text: "half".into(),
                },
                ClientMsg::Resync,
                ClientMsg::Detach,
                ClientMsg::Stop,
            ])
            .collect();
        let back: Vec<ClientMsg> = read_all(frames_of(&msgs)).await;
        assert_eq!(back, msgs);
    }

    fn snapshot() -> Snapshot {
        let agent =
            toml::from_str("id = 'a'\nprovider = 'script'\noptions = { x = 1 }").expect("an agent");
        let items: Vec<Upsert> = sample_events()
            .into_iter()
            .filter_map(|e| match e {
                crate::protocol::pane::PaneEvent::Upsert(u) => Some(u),
                _ => None,
            })
            .collect();
        let events = sample_events()
            .into_iter()
            .enumerate()
            .map(|(seq, event)| Logged {
                seq: seq as u64,
                at: None,
                event,
            })
            .collect();
        Snapshot {
            server: ServerInfo {
                pid: 7,
                config: "hive.toml".into(),
                config_path: Some("/work/hive.toml".into()),
                socket: "/run/hive/x.sock".into(),
                started: 1_700_000_000,
            },
            focus: 0,
            away_since: Some(3),
            panes: vec![PaneSnapshot {
                agent,
                worktree: None,
                failed: Some("no".into()),
                restored: Restored {
                    items,
                    queue: vec!["next".into()],
                    session: "s".into(),
                    ..Restored::default()
                },
                events,
                draft: "typing".into(),
                window: 1,
                parent: None,
                host: None,
                seen: None,
                dismissed: Vec::new(),
            }],
        }
    }

    #[tokio::test]
    async fn a_snapshot_crosses_in_its_messages() {
        let snap = snapshot();
        let msgs = snap.clone().into_messages();
        assert!(msgs.len() >= 3, "start, pane, end");
        let back: Vec<ServerMsg> = read_all(frames_of(&msgs)).await;
        let mut parts = crate::protocol::parts::Parts::default();
        let mut whole = None;
        for m in back {
            if let Some(s) = parts.take(m, 0).expect("in order") {
                whole = Some(s);
            }
        }
        assert_eq!(whole, Some(snap));
    }

    #[tokio::test]
    async fn the_hello_is_json() {
        let frame = encode_hello(&Hello::ours());
        assert_eq!(frame[HEADER], b'{');
        let mut reader = FrameReader::new(&frame[..]);
        let payload = reader.next().await.expect("reads").expect("a frame");
        assert_eq!(decode_hello(&payload).expect("decodes"), Hello::ours());
        assert!(reader.next().await.expect("clean end").is_none());
    }

    #[tokio::test]
    async fn an_oversize_length_is_refused_before_allocating() {
        let mut bytes = u32::MAX.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"junk");
        let mut reader = FrameReader::new(&bytes[..]);
        let err = reader.next().await.expect_err("too large");
        assert!(
            matches!(err, WireError::TooLarge(n) if n == u32::MAX as usize),
            "{err}"
        );
        assert!(reader.buf.capacity() < 1024 * 1024);
    }

    #[tokio::test]
    async fn eof_mid_frame_is_an_error_and_between_frames_is_not() {
        let frame = encode(&ClientMsg::Attach).expect("encodes");
        for cut in [1, HEADER, frame.len() - 1] {
            let mut reader = FrameReader::new(&frame[..cut]);
            let err = reader.next().await.expect_err("truncated");
            assert!(
                matches!(err, WireError::Truncated { got, .. } if got == cut),
                "{err}"
            );
        }
        let mut reader = FrameReader::new(&[][..]);
        assert!(reader.next().await.expect("clean").is_none());
    }

    /// `next` in a `select!` that another branch wins loses nothing.
    #[tokio::test]
    async fn a_cancelled_read_keeps_what_it_had() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut reader = FrameReader::new(rx);
        let frame = encode(&ClientMsg::Focus(5)).expect("encodes");
        for byte in &frame {
            tx.write_all(&[*byte]).await.expect("writes");
            let read = tokio::time::timeout(Duration::from_millis(1), reader.next()).await;
            if let Ok(read) = read {
                assert!(std::ptr::eq(byte, frame.last().expect("a byte")));
                let payload = read.expect("reads").expect("a frame");
                assert_eq!(
                    decode::<ClientMsg>(&payload).expect("decodes"),
                    ClientMsg::Focus(5)
                );
                return;
            }
        }
        panic!("the frame never came");
    }

    #[test]
    fn garbage_is_a_decode_error() {
        let err = decode::<ServerMsg>(b"\xc1").expect_err("garbage");
        assert!(matches!(err, WireError::Decode(_)), "{err}");
    }

    /// A peer's variant name is its words: the error that quotes it holds
    /// no escape (#53 item 1).
    #[test]
    fn a_hostile_variant_name_is_quoted_visibly() {
        let payload = rmp_serde::to_vec("\x1b]0;pwned\x07\nhive: forged").expect("encodes");
        let err = decode::<ServerMsg>(&payload).expect_err("no such variant");
        let text = err.to_string();
        assert!(text.contains("␛]0;pwned␇␊hive: forged"), "{text}");
        assert!(!text.contains(['\x1b', '\x07', '\n']), "{text}");
        let hello = decode_hello(b"{\"protocol\":\"\\u001b[2J\"}").expect_err("not a number");
        assert!(!hello.to_string().contains('\x1b'), "{hello}");
    }
}
