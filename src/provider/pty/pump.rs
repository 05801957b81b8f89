//! The blocking halves of a PTY pane: one thread reads the master and feeds
//! the emulator, one writes input to it. Neither ever runs on the tokio
//! runtime, so a child that floods output or stops reading input cannot
//! stall the UI.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

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
    /// The emulator panicked on the child's output: why. The reader has
    /// stopped; the pane ends, the other panes run on.
    failed: Mutex<Option<String>>,
    pub(crate) notify: Notify,
}

impl Activity {
    /// The screen changed (output, or a resize).
    pub(crate) fn touch(&self) {
        self.dirty.store(true, Ordering::Release);
        self.notify.notify_one();
    }

    /// Why the emulator failed, once it has.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// (screen changed, bell rang) since the last call.
    pub(crate) fn take(&self) -> (bool, bool) {
        (
            self.dirty.swap(false, Ordering::AcqRel),
            self.bell.swap(false, Ordering::AcqRel),
        )
    }
}

pub use crate::contain::{contained, panicking_contained};

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
                        if let Some(why) = out.failed {
                            tracing::error!("a terminal pane's emulator failed: {why}");
                            *activity.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                            break;
                        }
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
    /// The emulator panicked (its message): the screen now says so and
    /// nothing more may be fed.
    pub failed: Option<String>,
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
            let fed = process(&self.screen, &bytes[start..end]).and_then(|()| match what {
                Found::Bell => {
                    out.bell = true;
                    Ok(())
                }
                Found::Query(q) => {
                    let mut parser = lock(&self.screen);
                    let answer = contained(|| q.answer(parser.screen()));
                    answer
                        .map(|a| out.replies.push(a))
                        .inspect_err(|why| died(&mut parser, why))
                }
            });
            if let Err(why) = fed {
                out.failed = Some(why);
                return out;
            }
            start = end;
        }
        if let Err(why) = process(&self.screen, &bytes[start..]) {
            out.failed = Some(why);
        }
        out
    }
}

/// Feeds `bytes` a slice per lock. A panic is caught with the lock held,
/// so no reader ever sees the emulator it broke.
fn process(screen: &TerminalScreen, bytes: &[u8]) -> Result<(), String> {
    for piece in bytes.chunks(LOCK_SLICE) {
        let mut parser = lock(screen);
        if let Err(why) = contained(|| parser.process(piece)) {
            died(&mut parser, &why);
            return Err(why);
        }
    }
    Ok(())
}

/// A panicked emulator's state is not to be trusted (nor read): a fresh
/// one of a size it survives says what happened.
fn died(parser: &mut tui_term::vt100::Parser, why: &str) {
    let (rows, cols) = contained(|| parser.screen().size()).unwrap_or((24, 80));
    let (cols, rows) = super::fit(cols, rows);
    *parser = tui_term::vt100::Parser::new(rows, cols, 0);
    let why = crate::sanitize::neutralize(why);
    let text = format!("[hive] this terminal's emulator failed and the pane was stopped: {why}");
    let _ = contained(|| parser.process(text.as_bytes()));
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

    /// A one-row emulator (what vt100 0.16 panics on at the first wrapped
    /// line) fed through the feeder: the panic stays in the pane, whose
    /// screen says the emulator failed; nothing is left poisoned.
    #[test]
    fn a_panicking_emulator_is_contained_to_its_pane() {
        let screen = TerminalScreen(Arc::new(Mutex::new(vt100::Parser::new(1, 80, 0))));
        let mut f = Feeder::new(screen.clone());
        let mut line = "x".repeat(100).into_bytes();
        line.extend_from_slice(b"\x1b[6n");
        let out = f.feed(&line);
        let why = out.failed.expect("the emulator failed");
        assert!(!why.is_empty());
        assert!(out.replies.is_empty());
        assert!(!screen.0.is_poisoned());
        let parser = lock(&screen);
        assert!(parser.screen().size().0 >= super::super::MIN_ROWS);
        assert!(
            parser.screen().contents().contains("emulator failed"),
            "{}",
            parser.screen().contents()
        );
        assert!(!panicking_contained());
    }
}
