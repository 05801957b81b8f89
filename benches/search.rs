//! Search benchmark: 100 000 transcript items over 8 panes (messages,
//! thinking, tool output from a mixed vocabulary), through the real search
//! worker as the console uses it:
//! - indexing all items (sent as one batch, timed to the first answer),
//! - per keystroke of a query ("w" … "walnut" and a rare word): latency to
//!   the first batch of results and to the full list.
//!
//! Run: `cargo bench --bench search` (HIVE_BENCH_ITEMS overrides 100 000).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use hive::search::{Doc, Request, SearchEvent, Searcher};

const WORDS: &[&str] = &[
    "the",
    "runner",
    "queue",
    "pane",
    "render",
    "cargo",
    "test",
    "result",
    "ok",
    "src",
    "processor",
    "upsert",
    "event",
    "provider",
    "claude",
    "codex",
    "error",
    "warning",
    "fn",
    "let",
    "match",
    "struct",
    "impl",
    "async",
    "tokio",
    "index",
    "search",
    "history",
    "file",
    "line",
    "diff",
    "patch",
    "build",
    "release",
    "walk",
    "wall",
    "nut",
    "shell",
];

/// A small deterministic generator (no dependency, same data every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn docs(n: usize) -> Vec<Doc> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|i| {
            let words = 10 + (rng.next() % 60) as usize;
            let mut text = String::new();
            for w in 0..words {
                if w > 0 {
                    text.push(if rng.next().is_multiple_of(12) {
                        '\n'
                    } else {
                        ' '
                    });
                }
                text.push_str(WORDS[(rng.next() % WORDS.len() as u64) as usize]);
            }
            // A rare word in about one item in a thousand, a common one in 1%.
            if rng.next().is_multiple_of(1000) {
                text.push_str(" zanzibar");
            }
            if rng.next().is_multiple_of(100) {
                text.push_str(" walnut");
            }
            let label = ["you", "agent", "thinking", "tool Bash"][i % 4];
            Doc {
                pane: i % 8,
                entry: i / 8,
                rev: 0,
                label: label.into(),
                time: None,
                text,
            }
        })
        .collect()
}

/// Sends `q` and waits for its first batch and its full list.
fn query(
    s: &Searcher,
    rx: &Receiver<SearchEvent>,
    generation: u64,
    q: &str,
) -> (Duration, Duration, usize) {
    let t0 = Instant::now();
    s.send(Request::Query {
        generation,
        text: q.into(),
    });
    let mut first = None;
    loop {
        let SearchEvent::Results {
            generation: g,
            hits,
            done,
        } = rx.recv().expect("worker alive");
        if g != generation {
            continue;
        }
        first.get_or_insert_with(|| t0.elapsed());
        if done {
            return (first.unwrap_or_default(), t0.elapsed(), hits.len());
        }
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let n: usize = std::env::var("HIVE_BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let items = docs(n);
    let bytes: usize = items.iter().map(|d| d.text.len()).sum();
    println!(
        "search over {n} items ({:.1} MB of text)",
        bytes as f64 / 1e6
    );
    let (tx, rx) = channel();
    let s = Searcher::spawn(move |e| {
        let _ = tx.send(e);
    })
    .expect("worker");
    let t0 = Instant::now();
    s.send(Request::Docs(items));
    let (_, _, _) = query(&s, &rx, 0, "zzzz-warm-up");
    println!(
        "index {n} items (first query answered): {}",
        ms(t0.elapsed())
    );
    let mut generation = 1;
    println!(
        "{:<10} {:>12} {:>12} {:>8}",
        "query", "first", "full", "hits"
    );
    for q in [
        "w",
        "wa",
        "wal",
        "waln",
        "walnu",
        "walnut",
        "zanzibar",
        "runner queue",
    ] {
        let mut firsts = Vec::new();
        let mut fulls = Vec::new();
        let mut hits = 0;
        for _ in 0..5 {
            let (f, a, h) = query(&s, &rx, generation, q);
            generation += 1;
            firsts.push(f);
            fulls.push(a);
            hits = h;
        }
        firsts.sort();
        fulls.sort();
        println!(
            "{q:<10} {:>12} {:>12} {hits:>8}",
            ms(firsts[2]),
            ms(fulls[2])
        );
    }
}
