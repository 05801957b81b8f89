//! An agent's output, read at the console's pace.
//!
//! An agent streams a line per token or so: Claude Code and Codex wrote the
//! peer benchmark's answer as 4,000 lines 5 ms apart. Read as they come,
//! each line woke hive's worker out of `epoll_wait` (the pipe stays in the
//! epoll set while hive waits on it, and every write to it is an event),
//! ran the provider's and the runner's tasks for one delta and parked the
//! worker again: on this kind of VM that sleep and wake was about a third of
//! hive's CPU for the stream, and curl reading the same bytes the same way
//! spends 0.43 s.
//!
//! The console shows a pane's text at most a live tick behind the agent
//! (`RunnerOptions::live_every`), so reading faster than that buys nothing.
//! [`AgentStdout`] reads what there is, and after a read that drained the
//! pipe it leaves the pipe alone (out of the epoll set, so the agent's
//! writes wake nobody) until the next tick of a grid every pane's reader
//! shares (`timer::next_tick`), at least a quarter tick after that read;
//! then it reads everything written meanwhile in one go. A pipe that is
//! empty at that point goes back into the epoll set and the next line is
//! read the moment it comes. So a line waits at most a tick and a quarter
//! in the pipe, a quiet agent's first line not at all, and a streaming
//! agent costs one wake-up per tick instead of one per line; panes
//! streaming at once are read in the same wake-up, so the server sends
//! each console one frame a tick for all of them (issue 45 item 2). A read
//! that fills the whole buffer is not paced, and the pipe is grown to hold
//! 1 MiB during a rest: an agent writing a fast answer or a long tool
//! output is read as fast as it writes. The runner shows each such burst
//! at once (`EventReceiver::paced`).
//!
//! An HTTP body of server-sent events (the `openai` provider) is not paced:
//! hyper decodes one HTTP chunk per turn of its connection task, so a
//! paced reader still woke once per chunk and drew more frames (757
//! against 577 in `console stream`, p99 latency 35 → 55 ms, no less CPU).
//!
//! Unpaced (`hive run`, tests), it reads every line as it comes.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};
use tokio::process::ChildStdout;
use tokio::time::{Instant, Sleep};

use super::channel::ReadPace;

/// The read end of an agent's stdout.
#[derive(Debug)]
pub(crate) struct AgentStdout {
    pipe: Pipe,
    /// `None`: read as lines come.
    pace: Option<ReadPace>,
    /// No read before this (the last read drained the pipe).
    rest_until: Option<Instant>,
    sleep: Pin<Box<Sleep>>,
}

#[derive(Debug)]
enum Pipe {
    /// Not in the epoll set: read directly, nothing wakes on a write.
    Resting(File),
    /// In the epoll set, waiting for the next write.
    Watched(AsyncFd<File>),
    /// Only while moving from one to the other.
    Gone,
}

impl AgentStdout {
    /// Takes over a child's stdout; `pace` is the longest a line may wait
    /// in the pipe (`None`: read every line at once).
    pub(crate) fn new(stdout: ChildStdout, pace: Option<ReadPace>) -> io::Result<Self> {
        Self::from_fd(stdout.into_owned_fd()?, pace)
    }

    /// `new` for any pipe's read end.
    pub(crate) fn from_fd(fd: OwnedFd, pace: Option<ReadPace>) -> io::Result<Self> {
        set_nonblocking(&fd)?;
        if pace.is_some() {
            grow(&fd);
        }
        let file = File::from(fd);
        let mut this = Self {
            pipe: Pipe::Resting(file),
            pace,
            rest_until: None,
            sleep: Box::pin(tokio::time::sleep_until(Instant::now())),
        };
        if this.pace.is_none() {
            this.watch()?;
        }
        Ok(this)
    }

    /// One read into `buf`: `Ready` with the bytes read (0 at EOF).
    fn poll_fill(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        loop {
            match &mut self.pipe {
                Pipe::Resting(file) => match file.read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.watch()?,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => return Poll::Ready(other),
                },
                Pipe::Watched(fd) => {
                    let mut ready = ready!(fd.poll_read_ready(cx))?;
                    match ready.try_io(|fd| fd.get_ref().read(buf)) {
                        Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                        Ok(read) => {
                            if self.pace.is_some() {
                                self.rest();
                            }
                            return Poll::Ready(read);
                        }
                        Err(_would_block) => {}
                    }
                }
                Pipe::Gone => return Poll::Ready(Err(io::Error::other("the pipe was lost"))),
            }
        }
    }

    /// Empty pipe: into the epoll set until the next write.
    fn watch(&mut self) -> io::Result<()> {
        match std::mem::replace(&mut self.pipe, Pipe::Gone) {
            // SAFETY: the `File` owns its descriptor, and the `AsyncFd` owns
            // the `File` until `rest` takes it back out.
            Pipe::Resting(file) => {
                match unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) } {
                    Ok(fd) => self.pipe = Pipe::Watched(fd),
                    Err(e) => {
                        let (file, cause) = e.into_parts();
                        self.pipe = Pipe::Resting(file);
                        return Err(cause);
                    }
                }
            }
            other => self.pipe = other,
        }
        Ok(())
    }

    /// Out of the epoll set: writes until the next paced read wake nobody.
    fn rest(&mut self) {
        self.pipe = match std::mem::replace(&mut self.pipe, Pipe::Gone) {
            Pipe::Watched(fd) => Pipe::Resting(fd.into_inner()),
            other => other,
        };
    }
}

impl AsyncRead for AgentStdout {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(at) = this.rest_until {
            if Instant::now() < at {
                if this.sleep.deadline() != at {
                    this.sleep.as_mut().reset(at);
                }
                ready!(this.sleep.as_mut().poll(cx));
            }
            this.rest_until = None;
        }
        let room = buf.remaining();
        let n = ready!(this.poll_fill(cx, buf.initialize_unfilled()))?;
        buf.advance(n);
        if let Some(pace) = this.pace.as_ref().map(ReadPace::get)
            && !pace.is_zero()
            && n > 0
            && n < room
        {
            // Drained: what the agent writes next waits for the next read,
            // on the tick every pane's reader shares (`timer::next_tick`):
            // panes streaming at once are read, and shown, together. The
            // rest is at least a quarter tick, at most a tick and a quarter.
            this.rest_until = Some(crate::timer::next_tick(Instant::now() + pace / 4, pace));
        }
        Poll::Ready(Ok(()))
    }
}

/// What an agent may write during one rest before it blocks: the pipe's
/// default 64 KiB, read once a tick, held codex app-server's fast answer
/// (1.6 MB of JSON lines) to ~2 MB/s, 0.35 → 0.7 s for the whole answer.
#[cfg(target_os = "linux")]
const PIPE_SIZE: libc::c_int = 1 << 20;

/// Grows the pipe to `PIPE_SIZE` where the system allows (the default
/// `fs.pipe-max-size` does; past `fs.pipe-user-pages-soft` it stays as it
/// is, which only slows a flood).
#[cfg(target_os = "linux")]
fn grow(fd: &OwnedFd) {
    // SAFETY: fcntl on a descriptor this function borrows; no memory involved.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE) } < 0 {
        tracing::debug!("pipe not grown: {}", io::Error::last_os_error());
    }
}

/// Pipes elsewhere keep their size.
#[cfg(not(target_os = "linux"))]
fn grow(_fd: &OwnedFd) {}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function borrows; no memory involved.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
#[path = "paced_tests.rs"]
mod tests;
