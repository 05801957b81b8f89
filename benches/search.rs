//! Search benchmark: 100 000 transcript items over 8 panes (messages,
//! thinking, tool output from a mixed vocabulary), through the real search
//! worker as the console uses it:
//! - indexing all items (sent as one batch, timed to the first answer),
//! - N queries typed keystroke by keystroke ("w" … "walnut", a rare word,
//!   whole words): latency to the first batch of results and to the full
//!   list, per query (median) and over all N (median and p99).
//!
//! Run: `cargo bench --bench search` (HIVE_BENCH_ITEMS overrides 100 000,
//! HIVE_BENCH_QUERIES the 200 queries).

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
                text: text.into(),
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
    // The queries a user types, keystroke by keystroke, and a few whole
    // words: N of them in turn (HIVE_BENCH_QUERIES, default 200).
    let typed = [
        "w",
        "wa",
        "wal",
        "waln",
        "walnu",
        "walnut",
        "z",
        "za",
        "zan",
        "zanzibar",
        "runner queue",
        "tokio",
        "diff patch",
        "shell",
    ];
    let rounds: usize = std::env::var("HIVE_BENCH_QUERIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let mut firsts = Vec::new();
    let mut fulls = Vec::new();
    let mut per_query: Vec<(&str, Vec<Duration>, Vec<Duration>, usize)> = typed
        .iter()
        .map(|q| (*q, Vec::new(), Vec::new(), 0))
        .collect();
    for i in 0..rounds {
        let slot = &mut per_query[i % typed.len()];
        let (f, a, h) = query(&s, &rx, i as u64 + 1, slot.0);
        firsts.push(f);
        fulls.push(a);
        slot.1.push(f);
        slot.2.push(a);
        slot.3 = h;
    }
    println!(
        "{:<14} {:>10} {:>10} {:>8}",
        "query", "first p50", "full p50", "hits"
    );
    for (q, f, a, hits) in &mut per_query {
        if f.is_empty() {
            continue;
        }
        println!(
            "{q:<14} {:>10} {:>10} {hits:>8}",
            ms(percentile(f, 50.0)),
            ms(percentile(a, 50.0))
        );
    }
    println!(
        "{rounds} queries over {n} items: first results p50 {} p99 {} · full results p50 {} p99 {}",
        ms(percentile(&mut firsts, 50.0)),
        ms(percentile(&mut firsts, 99.0)),
        ms(percentile(&mut fulls, 50.0)),
        ms(percentile(&mut fulls, 99.0)),
    );
}

/// The `p`th percentile (nearest rank) of `v`.
fn percentile(v: &mut [Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort();
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}
