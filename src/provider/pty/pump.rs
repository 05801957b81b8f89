//! The blocking halves of a PTY pane: one thread reads the master and feeds
//! the emulator, one writes input to it. Neither ever runs on the tokio
//! runtime, so a child that floods output or stops reading input cannot
//! stall the UI.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use tokio::sync::{Notify, oneshot};

use super::scan::{Found, Scanner};
use crate::provider::TerminalScreen;

/// Bytes asked of the PTY per read.
pub const READ_CHUNK: usize = 16 * 1024;
/// Bytes parsed per lock of the emulator (~0.2 ms of vt100 work): the
/// renderer waits at most for one such slice.
pub(crate) const LOCK_SLICE: usize = 4 * 1024;

/// What the reader tells the provider task; the task turns it into at most
/// one `TerminalUpdated` per frame.
#[derive(Debug, Default)]
pub(crate) struct Activity {
    dirty: AtomicBool,
    bell: AtomicBool,
    pub(crate) notify: Notify,
}

impl Activity {
    /// The screen changed (output, or a resize).
    pub(crate) fn touch(&self) {
        self.dirty.store(true, Ordering::Release);
        self.notify.notify_one();
    }

    /// (screen changed, bell rang) since the last call.
    pub(crate) fn take(&self) -> (bool, bool) {
        (
            self.dirty.swap(false, Ordering::AcqRel),
            self.bell.swap(false, Ordering::AcqRel),
        )
    }
}

/// Locks the emulator; a panic elsewhere must not take the pane down with it.
pub fn lock(screen: &TerminalScreen) -> std::sync::MutexGuard<'_, tui_term::vt100::Parser> {
    screen.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts the reader thread. `done` fires when the master reports EOF/EIO,
/// i.e. every holder of the slave side is gone.
pub(crate) fn spawn_reader(
    mut reader: Box<dyn Read + Send>,
    screen: TerminalScreen,
    activity: Arc<Activity>,
    replies: mpsc::Sender<Vec<u8>>,
    done: oneshot::Sender<()>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("hive-pty-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; READ_CHUNK];
            let mut feeder = Feeder::new(screen);
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let out = feeder.feed(&buf[..n]);
                        if out.bell {
                            activity.bell.store(true, Ordering::Release);
                        }
                        for reply in out.replies {
                            let _ = replies.send(reply);
                        }
                        activity.touch();
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // Linux reports a hung-up master as EIO: that is EOF.
                    Err(_) => break,
                }
            }
            activity.touch();
            let _ = done.send(());
        })
        .map(|_| ())
}

/// Starts the writer thread; it ends when every sender is dropped or the
/// child side is gone.
pub(crate) fn spawn_writer(
    mut writer: Box<dyn Write + Send>,
    input: mpsc::Receiver<Vec<u8>>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("hive-pty-write".into())
        .spawn(move || {
            while let Ok(bytes) = input.recv() {
                if writer
                    .write_all(&bytes)
                    .and_then(|_| writer.flush())
                    .is_err()
                {
                    break;
                }
            }
        })
        .map(|_| ())
}

/// What one chunk of output produced besides screen changes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fed {
    pub bell: bool,
    pub replies: Vec<Vec<u8>>,
}

/// Feeds output into the emulator, answering queries with the screen state
/// at the exact point they were sent. Public so tests and the benchmark can
/// drive the same path without a PTY.
pub struct Feeder {
    screen: TerminalScreen,
    scanner: Scanner,
    found: Vec<(usize, Found)>,
}

impl Feeder {
    pub fn new(screen: TerminalScreen) -> Self {
        Self {
            screen,
            scanner: Scanner::default(),
            found: Vec::new(),
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) -> Fed {
        let mut out = Fed::default();
        self.found.clear();
        self.scanner.scan(bytes, &mut self.found);
        let mut start = 0;
        for &(end, what) in &self.found {
            process(&self.screen, &bytes[start..end]);
            start = end;
            match what {
                Found::Bell => out.bell = true,
                Found::Query(q) => out.replies.push(q.answer(lock(&self.screen).screen())),
            }
        }
        process(&self.screen, &bytes[start..]);
        out
    }
}

fn process(screen: &TerminalScreen, bytes: &[u8]) {
    for piece in bytes.chunks(LOCK_SLICE) {
        lock(screen).process(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use tui_term::vt100;

    #[test]
    fn feeder_answers_cursor_query_at_its_position_and_sees_bells() {
        let screen = TerminalScreen(Arc::new(Mutex::new(vt100::Parser::new(24, 80, 0))));
        let mut f = Feeder::new(screen.clone());
        let out = f.feed(b"hello\x1b[6n world\x07\r\nnext\x1b[6n");
        assert!(out.bell);
        assert_eq!(
            out.replies,
            vec![b"\x1b[1;6R".to_vec(), b"\x1b[2;5R".to_vec()]
        );
        assert!(lock(&screen).screen().contents().contains("hello world"));
    }
}
