//! The one backpressure rule (issue 44) for every reader of the server's
//! live streams: a console's connection and a `hive ctl watch`.
//!
//! A reader may leave [`MAX_BYTES`] unread (plus one message: a reader
//! with nothing unread takes any one). Past that it is behind: it is
//! queued nothing more (what it misses is counted, not buffered) until it
//! has read everything queued, and then it starts again from what is true
//! now — a console from a fresh snapshot, a watcher from a `lagged` line
//! after which every text goes whole. So a slow reader costs the server a
//! bounded queue, is never cut off, and never applies a delta to a text it
//! did not get.
//!
//! The loop's side counts what it queues ([`Backlog::admit`]); the
//! reader's writer counts what left ([`Backlog::written`]). Both sides use
//! sequentially consistent order on the two counters: the writer empties
//! the queue then reads `behind`; the loop sets `behind` then reads the
//! queue, so one of the two always sees the other.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Bytes a reader may leave unread before it is behind.
pub const MAX_BYTES: usize = 16 << 20;

/// What [`Backlog::admit`] decided for one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Queue it.
    Queue,
    /// Do not: the reader is behind (and was already, or is from now).
    Skip { fell_behind: bool },
}

/// One reader's unread bytes and whether it is behind.
#[derive(Debug, Default)]
pub struct Backlog {
    queued: AtomicUsize,
    behind: AtomicBool,
}

impl Backlog {
    /// Whether a message of `len` bytes may be queued; counted if so.
    pub fn admit(&self, len: usize) -> Admit {
        if self.behind.load(Ordering::SeqCst) {
            return Admit::Skip { fell_behind: false };
        }
        // A reader with nothing unread takes any one message (else a text
        // longer than the bound could never reach it): the bound is
        // `MAX_BYTES` plus one message.
        let queued = self.queued.load(Ordering::SeqCst);
        if queued > 0 && queued + len > MAX_BYTES {
            self.behind.store(true, Ordering::SeqCst);
            return Admit::Skip { fell_behind: true };
        }
        self.force(len);
        Admit::Queue
    }

    /// Counts a message queued whatever the backlog (a snapshot, a goodbye).
    pub fn force(&self, len: usize) {
        self.queued.fetch_add(len, Ordering::SeqCst);
    }

    /// The writer sent `len` bytes; true when that emptied the queue of a
    /// reader that is behind (its cue to start again).
    pub fn written(&self, len: usize) -> bool {
        let left = self
            .queued
            .fetch_sub(len, Ordering::SeqCst)
            .saturating_sub(len);
        left == 0 && self.behind.load(Ordering::SeqCst)
    }

    /// Bytes queued and not yet written.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    pub fn is_behind(&self) -> bool {
        self.behind.load(Ordering::SeqCst)
    }

    /// Marks the reader behind (a snapshot that must wait for an empty
    /// queue); true when the queue is empty already, so it may go now.
    pub fn hold(&self) -> bool {
        self.behind.store(true, Ordering::SeqCst);
        self.queued.load(Ordering::SeqCst) == 0
    }

    /// A reader that is behind and has read everything queued.
    pub fn drained(&self) -> bool {
        self.is_behind() && self.queued() == 0
    }

    /// It starts again from what is true now.
    pub fn caught_up(&self) {
        self.behind.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_past_the_bound_skips_until_it_has_read_everything() {
        let b = Backlog::default();
        assert_eq!(b.admit(MAX_BYTES + 1), Admit::Queue, "nothing unread");
        assert!(!b.written(MAX_BYTES + 1));
        assert_eq!(b.admit(MAX_BYTES - 10), Admit::Queue);
        assert_eq!(b.admit(11), Admit::Skip { fell_behind: true });
        assert_eq!(b.admit(1), Admit::Skip { fell_behind: false });
        assert!(!b.drained(), "still unread");
        assert!(!b.written(MAX_BYTES - 20));
        assert!(b.written(10), "the last bytes out: its cue");
        assert!(b.drained());
        b.caught_up();
        assert_eq!(b.admit(1), Admit::Queue);
        assert!(!b.written(1), "not behind: no cue");
    }
}
