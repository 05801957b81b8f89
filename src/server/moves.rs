//! The moves of panes under way (issue 50, src/server/relocate.rs): the
//! panes moving now, and the way their blocking jobs (packing, ssh,
//! unpacking) hand the rest of each step back to the server's loop. Generic
//! over the server, so the loop's state holds it without this file naming
//! the loop's type.

use std::collections::HashMap;

use tokio::sync::mpsc;

/// The rest of a step, run on the loop with the server.
pub(super) type Later<S> = Box<dyn FnOnce(&mut S) + Send>;

pub(super) struct Moves<S> {
    tx: mpsc::UnboundedSender<Later<S>>,
    rx: mpsc::UnboundedReceiver<Later<S>>,
    /// The panes moving now (slot → where to), refused a second move.
    pub(super) moving: HashMap<usize, String>,
}

impl<S: 'static> Moves<S> {
    pub(super) fn new() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            tx,
            rx,
            moving: HashMap::new(),
        }
    }

    pub(super) async fn next(&mut self) -> Option<Later<S>> {
        self.rx.recv().await
    }

    /// Runs `job` on the blocking pool; what it hands back runs on the loop.
    pub(super) fn spawn(&self, job: impl FnOnce() -> Later<S> + Send + 'static) {
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(job());
        });
    }
}
