//! The event channel from a provider task to its runner, with backpressure.
//!
//! A provider can read an agent faster than the runner processes what it
//! read: nine panes each streaming 150,000 deltas as fast as hive reads them
//! queued up to 110,000 events in one pane (each a `StreamEvent` with five
//! small heap strings), and hive's RSS grew to 14× the text it held. Sending
//! stays synchronous (a translator hands over a batch of events at once), but
//! a provider waits for [`EventSink::room`] before it reads more from the
//! agent (`process::AgentProcess::spawn` gates its stdout reader, the
//! openai SSE loop and the script agent wait for it). The agent then
//! blocks on its pipe or socket, as any producer does when its consumer is
//! slower: nothing is dropped and nothing piles up.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};

pub(crate) use tokio::sync::mpsc::error::TryRecvError;

use super::ProviderEvent;

/// Events queued (sent, not yet received) at which a gated reader stops
/// reading: a few frames' worth of deltas, so a fast stream never waits on
/// it while the runner keeps up.
pub const HIGH_WATER: usize = 1024;

/// A waiting reader goes on once the queue is down to this.
const LOW_WATER: usize = HIGH_WATER / 2;

/// How often a provider need read its agent, shared by the runner (which
/// sets it) and the reader (which reads it before each rest).
#[derive(Debug, Clone)]
pub struct ReadPace(Arc<AtomicU64>);

impl ReadPace {
    pub fn new(every: Duration) -> Self {
        Self(Arc::new(AtomicU64::new(nanos(every))))
    }

    pub fn get(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }

    pub fn set(&self, every: Duration) {
        self.0.store(nanos(every), Ordering::Relaxed);
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The runner is gone: the event was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the runner is gone")]
pub struct Closed;

#[derive(Debug, Default)]
struct Depth {
    queued: AtomicUsize,
    drained: Notify,
    /// The provider reads its agent at the sink's pace (`EventSink::pace_reads`).
    paced: AtomicBool,
    /// The agent process the provider last started (0: none), whose tree
    /// the runner samples for the pane's CPU and memory.
    agent_pid: std::sync::atomic::AtomicU32,
    /// The MCP servers the pane was told did not start (each once).
    mcp_warned: super::mcp_status::Warned,
}

/// The provider's side: cloneable, never blocks, never fails loudly (a
/// closed channel means the host is gone and the task is about to end).
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<ProviderEvent>,
    depth: Arc<Depth>,
    /// How long the runner lets new text wait before it shows it: an
    /// agent's pipe need not be read more often (`paced::AgentStdout`).
    pace: Option<ReadPace>,
}

/// The runner's side.
#[derive(Debug)]
pub struct EventReceiver {
    rx: mpsc::UnboundedReceiver<ProviderEvent>,
    depth: Arc<Depth>,
}

/// A new provider → runner channel.
pub fn channel() -> (EventSink, EventReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let depth = Arc::new(Depth::default());
    (
        EventSink {
            tx,
            depth: Arc::clone(&depth),
            pace: None,
        },
        EventReceiver { rx, depth },
    )
}

impl EventSink {
    /// This sink's runner shows new text at most `pace` after it comes
    /// (the runner may change it: a pane out of focus is shown less often).
    #[must_use]
    pub fn paced(mut self, pace: Option<ReadPace>) -> Self {
        self.pace = pace;
        self
    }

    /// How often the agent's output need be read (`None`: as it comes).
    /// Asking says the provider does read at that pace: its events then come
    /// in bursts whose text has waited up to a pace already, and the runner
    /// shows each burst at once (`EventReceiver::paced`).
    pub fn pace_reads(&self) -> Option<ReadPace> {
        if self.pace.is_some() {
            self.depth.paced.store(true, Ordering::Release);
        }
        self.pace.clone()
    }

    /// The provider started its agent as process `pid`.
    pub fn set_agent_pid(&self, pid: u32) {
        self.depth.agent_pid.store(pid, Ordering::Release);
    }

    /// `vendor` says the agent's MCP server `name` did not start (`why`):
    /// a warning in the pane, the first time it is said of that server.
    pub(crate) fn mcp_failed(&self, name: &str, vendor: &str, why: &str) {
        if self.depth.mcp_warned.first(name) {
            let message = super::mcp_status::warning(name, vendor, why);
            let _ = self.send(ProviderEvent::diagnostic(
                super::DiagnosticLevel::Warn,
                message,
            ));
        }
    }

    pub fn send(&self, event: ProviderEvent) -> Result<(), Closed> {
        self.depth.queued.fetch_add(1, Ordering::AcqRel);
        self.tx.send(event).map_err(|_| {
            self.depth.queued.fetch_sub(1, Ordering::AcqRel);
            Closed
        })
    }

    /// Events sent and not yet received.
    pub fn queued(&self) -> usize {
        self.depth.queued.load(Ordering::Acquire)
    }

    /// Resolves once the runner has room for more: at once below the high
    /// water mark, else when the queue is down to the low one (or the
    /// runner is gone). Cancel-safe.
    pub(crate) async fn room(&self) {
        if self.queued() < HIGH_WATER {
            return;
        }
        loop {
            // Registered before the check, so a drain between the check and
            // the await still wakes it.
            let drained = self.depth.drained.notified();
            if self.queued() <= LOW_WATER || self.tx.is_closed() {
                return;
            }
            tokio::select! {
                () = drained => {}
                () = self.tx.closed() => return,
            }
        }
    }
}

impl EventReceiver {
    /// The next event; `None` once every sink is dropped and the queue is
    /// empty. Cancel-safe.
    pub async fn recv(&mut self) -> Option<ProviderEvent> {
        let event = self.rx.recv().await;
        if event.is_some() {
            self.took();
        }
        event
    }

    pub fn try_recv(&mut self) -> Result<ProviderEvent, TryRecvError> {
        let event = self.rx.try_recv();
        if event.is_ok() {
            self.took();
        }
        event
    }

    /// Whether the provider reads its agent at the sink's pace.
    /// The agent process the provider last started, if any.
    pub fn agent_pid(&self) -> Option<u32> {
        Some(self.depth.agent_pid.load(Ordering::Acquire)).filter(|&p| p != 0)
    }

    pub fn paced(&self) -> bool {
        self.depth.paced.load(Ordering::Acquire)
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.rx.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rx.is_empty()
    }

    fn took(&self) {
        if self.depth.queued.fetch_sub(1, Ordering::AcqRel) == LOW_WATER + 1 {
            self.depth.drained.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::DiagnosticLevel;

    fn event(i: usize) -> ProviderEvent {
        ProviderEvent::diagnostic(DiagnosticLevel::Info, i.to_string())
    }

    #[tokio::test]
    async fn room_is_there_below_the_high_water_mark() {
        let (tx, _rx) = channel();
        for i in 0..HIGH_WATER - 1 {
            tx.send(event(i)).unwrap();
        }
        tokio::time::timeout(Duration::from_secs(5), tx.room())
            .await
            .expect("room below the mark");
    }

    #[tokio::test]
    async fn a_full_queue_waits_until_the_runner_drains_half_of_it() {
        let (tx, mut rx) = channel();
        for i in 0..HIGH_WATER {
            tx.send(event(i)).unwrap();
        }
        let waiter = {
            let tx = tx.clone();
            tokio::spawn(async move { tx.room().await })
        };
        tokio::task::yield_now().await;
        // Taking fewer than half leaves the reader waiting.
        for _ in 0..LOW_WATER - 1 {
            rx.recv().await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished(), "woke before the low water mark");
        rx.recv().await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken at the low water mark")
            .unwrap();
        assert_eq!(tx.queued(), LOW_WATER);
    }

    #[tokio::test]
    async fn a_dropped_runner_releases_a_waiting_reader() {
        let (tx, rx) = channel();
        for i in 0..HIGH_WATER {
            let _ = tx.send(event(i));
        }
        let waiter = tokio::spawn(async move { tx.room().await });
        tokio::task::yield_now().await;
        drop(rx);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("released when the runner is gone")
            .unwrap();
    }

    #[tokio::test]
    async fn events_arrive_in_order_and_the_count_follows() {
        let (tx, mut rx) = channel();
        for i in 0..10 {
            tx.send(event(i)).unwrap();
        }
        assert_eq!((tx.queued(), rx.len()), (10, 10));
        for i in 0..10 {
            match rx.try_recv().unwrap() {
                ProviderEvent::Diagnostic { message, .. } => assert_eq!(message, i.to_string()),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(tx.queued(), 0);
        assert!(rx.try_recv().is_err());
        drop(tx);
        assert!(rx.recv().await.is_none());
    }
}
