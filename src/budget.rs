//! What the server's socket holds for all its connections together (issue
//! 53 item 10). Each connection's input is capped (a console frame at
//! `wire::frame::MAX_FRAME`, a request line at `lines::MAX_REQUEST_BYTES`),
//! but ten clients each holding most of an unfinished frame made 611 MB:
//! the bytes of unfinished input are also capped in total ([`MAX_INPUT`]),
//! and so is the number of connections ([`MAX_CONNECTIONS`]). A connection
//! that would pass the total is closed with a reason; one past the count is
//! closed at once.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of unfinished frames and request lines, all connections together.
pub const MAX_INPUT: usize = 128 << 20;

/// Connections the socket serves at once (consoles, `hive ctl`, `hive mcp`).
pub const MAX_CONNECTIONS: usize = 512;

static INPUT: AtomicUsize = AtomicUsize::new(0);
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// Bytes of unfinished input held now, by every connection (the server's
/// own counter, which the tests read).
pub fn input_held() -> usize {
    INPUT.load(Ordering::Acquire)
}

/// Connections open now.
pub fn connections_open() -> usize {
    OPEN.load(Ordering::Acquire)
}

/// Why a connection's input was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the server holds {MAX_INPUT} bytes of unfinished input from all its connections together; this one is closed"
)]
pub struct OverBudget;

/// One connection's share of [`MAX_INPUT`]: what its reader holds of an
/// input not yet complete. Given back when dropped.
#[derive(Debug, Default)]
pub struct Charge {
    held: usize,
}

impl Charge {
    /// The connection now holds `bytes` of unfinished input; refused (and
    /// nothing more held) when the total would pass the cap.
    pub fn hold(&mut self, bytes: usize) -> Result<(), OverBudget> {
        if bytes <= self.held {
            INPUT.fetch_sub(self.held - bytes, Ordering::AcqRel);
            self.held = bytes;
            return Ok(());
        }
        let more = bytes - self.held;
        let before = INPUT.fetch_add(more, Ordering::AcqRel);
        if before + more > MAX_INPUT {
            INPUT.fetch_sub(more, Ordering::AcqRel);
            return Err(OverBudget);
        }
        self.held = bytes;
        Ok(())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        INPUT.fetch_sub(self.held, Ordering::AcqRel);
    }
}

/// One open connection, counted until dropped.
#[derive(Debug)]
pub struct Slot(());

impl Slot {
    /// A slot, unless [`MAX_CONNECTIONS`] are open.
    pub fn take() -> Option<Self> {
        let before = OPEN.fetch_add(1, Ordering::AcqRel);
        if before >= MAX_CONNECTIONS {
            OPEN.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Self(()))
    }

    /// A slot whatever the count: a console handed over by the socket's
    /// dispatcher, whose own slot ends as this one starts.
    pub fn handed_over() -> Self {
        OPEN.fetch_add(1, Ordering::AcqRel);
        Self(())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        OPEN.fetch_sub(1, Ordering::AcqRel);
    }
}
