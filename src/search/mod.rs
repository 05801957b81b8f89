//! Search across every pane's transcript, off the UI thread.
//!
//! A worker thread owns the trigram `Index`. The app sends it `Request`s
//! (new or changed items, queries) and hears back only through typed
//! `SearchEvent`s: a first batch of hits as soon as there are enough to
//! fill the screen, then the full list. A newer query cancels an older
//! one mid-search.

pub mod index;

#[cfg(test)]
mod tests;

use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};

pub use index::Doc;
pub(crate) use index::{Hit, Index};

/// Hits in the first, early batch.
pub(crate) const FIRST_BATCH: usize = 50;
/// At most this many hits per query.
pub(crate) const MAX_HITS: usize = 10_000;

#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// New or changed items.
    Docs(Vec<Doc>),
    Query {
        generation: u64,
        text: String,
    },
}

/// What the worker tells the app.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchEvent {
    Results {
        generation: u64,
        hits: Vec<Hit>,
        /// False for the early batch; true once the list is complete.
        done: bool,
    },
}

/// The app's handle on the worker; dropping it ends the thread.
pub struct Searcher {
    tx: Sender<Request>,
}

impl Searcher {
    /// Starts the worker; `emit` delivers its events to the app loop.
    pub fn spawn(emit: impl Fn(SearchEvent) + Send + 'static) -> std::io::Result<Self> {
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("hive-search".into())
            .spawn(move || worker(&rx, &emit))?;
        Ok(Self { tx })
    }

    pub fn send(&self, r: Request) {
        // The worker only stops when this handle drops.
        let _ = self.tx.send(r);
    }
}

fn worker(rx: &Receiver<Request>, emit: &dyn Fn(SearchEvent)) {
    let mut index = Index::default();
    let mut pending: Option<(u64, String)> = None;
    loop {
        let next = match pending.take() {
            Some((generation, text)) => Request::Query { generation, text },
            None => match rx.recv() {
                Ok(r) => r,
                Err(_) => return,
            },
        };
        match next {
            Request::Docs(docs) => docs.into_iter().for_each(|d| index.add(d)),
            Request::Query { generation, text } => {
                // Index what came with or after the query; keep only the
                // newest query.
                let mut latest = (generation, text);
                loop {
                    match rx.try_recv() {
                        Ok(Request::Docs(docs)) => docs.into_iter().for_each(|d| index.add(d)),
                        Ok(Request::Query { generation, text }) => latest = (generation, text),
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => return,
                    }
                }
                let (newer, parked) = run_query(&index, latest.0, &latest.1, rx, emit);
                parked.into_iter().for_each(|d| index.add(d));
                pending = newer;
            }
        }
    }
}

/// Runs one query, emitting the early batch and the full list. A query
/// arriving meanwhile cancels this one and is returned to run next, with
/// the docs that arrived meanwhile (for the caller to index).
fn run_query(
    index: &Index,
    generation: u64,
    text: &str,
    rx: &Receiver<Request>,
    emit: &dyn Fn(SearchEvent),
) -> (Option<(u64, String)>, Vec<Doc>) {
    let mut hits = Vec::new();
    let mut sent_first = false;
    let mut newer = None;
    let mut parked = Vec::new();
    index.search(text, |h| {
        hits.push(h);
        if hits.len() == FIRST_BATCH && !sent_first {
            sent_first = true;
            emit(SearchEvent::Results {
                generation,
                hits: hits.clone(),
                done: false,
            });
        }
        if hits.len() % 512 == 0 {
            while let Ok(r) = rx.try_recv() {
                match r {
                    Request::Query { generation, text } => newer = Some((generation, text)),
                    Request::Docs(docs) => parked.extend(docs),
                }
            }
        }
        newer.is_none() && hits.len() < MAX_HITS
    });
    if newer.is_none() {
        emit(SearchEvent::Results {
            generation,
            hits,
            done: true,
        });
    }
    (newer, parked)
}
