//! The console's side of the one backpressure rule (src/backlog.rs): what a
//! connection has read from its server and the console's loop has not yet
//! taken is bounded in bytes, [`MAX_BYTES`] per link, plus one message (a
//! console with nothing in flight takes any one, else a snapshot or a text
//! longer than the bound could never reach it).
//!
//! Each message read gets a [`Permit`] for its frames' bytes before it is
//! handed on, and the permit travels inside the message ([`Delivery`])
//! from the reader (src/client/session.rs) through the link, the mux and a
//! merge that holds it, to the console's loop, which gives it back as it
//! takes the message ([`Inbox`]). A reader that cannot get its permit
//! stops reading the socket: the server's writes block and its own rule
//! takes over (it queues a slow client 16 MiB, skips it, then sends it a
//! fresh snapshot once it has drained). So a flooding server cannot grow
//! the console's memory past the bound, and nothing is dropped on the
//! console's side. The permits are a tokio semaphore's, one per link.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use super::FromServer;

/// Bytes a link may have in flight to the console: the server's bound for
/// what a reader leaves unread, the same rule on both sides.
pub const MAX_BYTES: usize = crate::backlog::MAX_BYTES;

/// One link's budget; clones share it.
#[derive(Debug, Clone)]
pub struct InFlight {
    sem: Arc<Semaphore>,
}

impl Default for InFlight {
    fn default() -> Self {
        Self {
            sem: Arc::new(Semaphore::new(MAX_BYTES)),
        }
    }
}

impl InFlight {
    /// Waits until `len` more bytes fit, then holds them. A message of
    /// more than the whole budget holds all of it: it waits for nothing
    /// else to be in flight, then goes alone.
    pub async fn take(&self, len: usize) -> Permit {
        // MAX_BYTES is 16 MiB: the clamped count fits a u32.
        let n = u32::try_from(len.min(MAX_BYTES)).unwrap_or(u32::MAX);
        if n == 0 {
            return Permit::none();
        }
        match self.sem.clone().acquire_many_owned(n).await {
            Ok(p) => Permit::of(p),
            // Never closed; a closed budget would bound nothing anyway.
            Err(_) => Permit::none(),
        }
    }

    /// Bytes held by messages not yet taken by the console.
    pub fn bytes(&self) -> usize {
        MAX_BYTES - self.sem.available_permits()
    }
}

/// Bytes of one or more links' budgets, given back when dropped.
#[derive(Debug, Default)]
pub struct Permit {
    one: Option<OwnedSemaphorePermit>,
    /// Others merged in (a merged snapshot holds each server's share).
    more: Vec<Permit>,
}

impl Permit {
    /// For what the client makes itself (a link's state, "not sent").
    pub fn none() -> Self {
        Self::default()
    }

    fn of(p: OwnedSemaphorePermit) -> Self {
        Self {
            one: Some(p),
            more: Vec::new(),
        }
    }

    /// Holds `other`'s bytes too.
    pub fn merge(&mut self, other: Permit) {
        if other.one.is_some() || !other.more.is_empty() {
            self.more.push(other);
        }
    }

    /// Split into `n` permits (a batch of events from one frame, each
    /// handed on by itself), as evenly as the bytes go.
    pub fn split(mut self, n: usize) -> Vec<Permit> {
        let mut out = Vec::with_capacity(n);
        let Some(mut whole) = self.one.take() else {
            out.resize_with(n, Permit::none);
            if let Some(first) = out.first_mut() {
                *first = self;
            }
            return out;
        };
        let share = whole.num_permits() / n.max(1);
        for _ in 1..n {
            out.push(match whole.split(share) {
                Some(p) if share > 0 => Permit::of(p),
                _ => Permit::none(),
            });
        }
        // The first message takes the remainder (and anything merged).
        self.one = Some(whole);
        out.insert(0, self);
        out.truncate(n.max(1));
        out
    }
}

/// A message from the server and the budget it holds until the console
/// takes it.
#[derive(Debug)]
pub struct Delivery {
    pub msg: FromServer,
    pub permit: Permit,
}

impl Delivery {
    /// Something the client says itself: it holds no server bytes.
    pub fn local(msg: FromServer) -> Self {
        Self {
            msg,
            permit: Permit::none(),
        }
    }
}

/// The console's end: messages out, their bytes given back as they go.
#[derive(Debug)]
pub struct Inbox {
    rx: mpsc::Receiver<Delivery>,
    links: Vec<InFlight>,
}

impl Inbox {
    pub(super) fn new(rx: mpsc::Receiver<Delivery>, links: Vec<InFlight>) -> Self {
        Self { rx, links }
    }

    /// The next message; cancel-safe, as `mpsc::Receiver::recv`.
    pub async fn recv(&mut self) -> Option<FromServer> {
        self.rx.recv().await.map(|d| d.msg)
    }

    /// The next message if one is there.
    pub fn try_recv(&mut self) -> Result<FromServer, mpsc::error::TryRecvError> {
        self.rx.try_recv().map(|d| d.msg)
    }

    /// Bytes read from the servers that the console has not taken yet.
    pub fn in_flight(&self) -> usize {
        self.links.iter().map(InFlight::bytes).sum()
    }

    /// The most [`Inbox::in_flight`] may be (one message bigger than a
    /// link's budget holds all of it).
    pub fn bound(&self) -> usize {
        MAX_BYTES * self.links.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn permits_travel_split_and_merged_and_a_big_one_goes_alone() {
        let link = InFlight::default();
        let p = link.take(10).await;
        let parts = p.split(3);
        assert_eq!(parts.len(), 3);
        assert_eq!(link.bytes(), 10, "splitting gives nothing back");
        drop(parts);
        assert_eq!(link.bytes(), 0);

        let big = link.take(MAX_BYTES * 3).await;
        assert_eq!(link.bytes(), MAX_BYTES, "a big one holds the whole budget");
        let waiting = tokio::spawn({
            let link = link.clone();
            async move { link.take(1).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "nothing else while it is in flight");
        let other = InFlight::default();
        let mut merged = other.take(5).await;
        merged.merge(big);
        assert_eq!(other.bytes(), 5);
        drop(merged);
        let one = waiting.await.unwrap();
        assert_eq!((link.bytes(), other.bytes()), (1, 0));
        drop(one);
        assert_eq!(link.take(0).await.split(2).len(), 2);
    }
}
