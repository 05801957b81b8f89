//! The worker: results arrive as typed events, early batch then full list,
//! and a newer query wins.

use std::sync::mpsc::channel;
use std::time::Duration;

use super::*;

fn doc(entry: usize, text: &str) -> Doc {
    Doc {
        pane: 0,
        entry,
        rev: 0,
        label: "agent".into(),
        time: None,
        text: text.into(),
    }
}

#[test]
fn early_batch_then_full_results() {
    let (tx, rx) = channel();
    let s = Searcher::spawn(move |e| {
        let _ = tx.send(e);
    })
    .unwrap();
    let docs = (0..FIRST_BATCH * 2).map(|i| doc(i, "a walnut")).collect();
    s.send(Request::Docs(docs));
    s.send(Request::Query {
        generation: 7,
        text: "walnut".into(),
    });
    let wait = Duration::from_secs(10);
    let SearchEvent::Results {
        generation,
        hits,
        done,
    } = rx.recv_timeout(wait).unwrap();
    assert_eq!((generation, hits.len(), done), (7, FIRST_BATCH, false));
    let SearchEvent::Results { hits, done, .. } = rx.recv_timeout(wait).unwrap();
    assert_eq!((hits.len(), done), (FIRST_BATCH * 2, true));
}

#[test]
fn only_the_newest_of_queued_queries_runs() {
    let (tx, rx) = channel();
    let s = Searcher::spawn(move |e| {
        let _ = tx.send(e);
    })
    .unwrap();
    s.send(Request::Docs(vec![doc(0, "alpha beta")]));
    for (g, q) in [(1, "alp"), (2, "alph"), (3, "beta")] {
        s.send(Request::Query {
            generation: g,
            text: q.into(),
        });
    }
    let mut last = None;
    while let Ok(SearchEvent::Results {
        generation, done, ..
    }) = rx.recv_timeout(Duration::from_millis(500))
    {
        if done {
            last = Some(generation);
        }
    }
    assert_eq!(last, Some(3));
}
