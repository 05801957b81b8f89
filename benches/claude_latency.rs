//! First-token latency of the `claude` provider (seed 002 NFR: first visible
//! token ≤ 200 ms after the agent's first delta).
//!
//! Drives `tests/fake/fake_claude.py` through the runner for N turns in one
//! process. The fake appends the wall-clock time (ns) at which it writes each
//! turn's first content delta to a mark file; the bench notes the wall-clock
//! time at which (a) the provider emitted its first `item_delta` (provider
//! only) and (b) the runner emitted the first agent-message upsert
//! (provider + upsert processor with the default gradient). Both clocks are
//! CLOCK_REALTIME on the same machine.
//!
//! Run: `cargo bench --bench claude_latency` (env `TURNS`, default 20).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hive::config::AgentConfig;
use hive::event::{Origin, Payload};
use hive::provider::claude::ClaudeFactory;
use hive::provider::{ProviderCommand, ProviderEvent, ProviderFactory, ProviderSpec};
use hive::runner::{PaneEvent, RunnerCommand, RunnerOptions, SubmitMode, spawn_runner};
use hive::upsert::{TurnEvent, UpsertKind};
use tokio::sync::mpsc;

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

fn agent(dir: &std::path::Path, delay_ms: u64) -> AgentConfig {
    let mut a = AgentConfig::new("bench", "claude");
    a.command = vec![
        "python3".into(),
        format!("{}/tests/fake/fake_claude.py", env!("CARGO_MANIFEST_DIR")),
    ];
    a.env.insert(
        "FAKE_CLAUDE_MARK_FILE".into(),
        dir.join("marks").display().to_string(),
    );
    a.env
        .insert("FAKE_CLAUDE_DELAY_MS".into(), delay_ms.to_string());
    a
}

fn marks(dir: &std::path::Path) -> Vec<i128> {
    std::fs::read_to_string(dir.join("marks"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

const PROMPT: &str = "latency probe: the quick brown fox jumps over the lazy dog, twice over, \
                      to make the reply long enough to pass the first gradient step";

/// Provider only: first `item_delta` out of the provider task.
async fn provider_only(turns: usize, delay_ms: u64) -> Vec<f64> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (tx, mut rx) = hive::provider::channel::channel();
    let handle = ClaudeFactory
        .spawn(
            ProviderSpec {
                agent: agent(dir.path(), delay_ms),
                resume: None,
            },
            tx,
        )
        .expect("spawn fake claude");
    let mut seen = Vec::new();
    for n in 0..turns {
        handle.send(ProviderCommand::Send {
            turn_id: format!("turn_{n}"),
            text: PROMPT.into(),
        });
        let mut first = None;
        while let Some(ev) = rx.recv().await {
            if let ProviderEvent::Stream(s) = ev {
                match s.payload {
                    Payload::ItemDelta { .. } if first.is_none() => first = Some(now_ns()),
                    Payload::ResponseDone { .. } | Payload::ResponseError { .. } => break,
                    _ => {}
                }
            }
        }
        seen.push(first.unwrap_or(0));
    }
    handle.kill().await;
    latencies(&marks(dir.path()), &seen)
}

/// Provider + runner + upsert processor: first agent-message upsert.
async fn through_runner(turns: usize, delay_ms: u64) -> Vec<f64> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let runner = spawn_runner(
        0,
        Arc::new(ClaudeFactory),
        ProviderSpec {
            agent: agent(dir.path(), delay_ms),
            resume: None,
        },
        RunnerOptions::default(),
        tx,
    )
    .expect("runner");
    let mut seen = Vec::new();
    for _ in 0..turns {
        runner.send(RunnerCommand::Submit {
            text: PROMPT.into(),
            mode: SubmitMode::Auto,
        });
        let mut first = None;
        while let Some(update) = rx.recv().await {
            match update.event {
                PaneEvent::Upsert(u)
                    if first.is_none()
                        && matches!(
                            u.kind,
                            UpsertKind::Message {
                                origin: Origin::Agent,
                                ..
                            }
                        ) =>
                {
                    first = Some(now_ns());
                }
                PaneEvent::Turn(t) if !matches!(t, TurnEvent::TurnStarted { .. }) => break,
                _ => {}
            }
        }
        seen.push(first.unwrap_or(0));
    }
    runner.send(RunnerCommand::Shutdown);
    tokio::time::sleep(Duration::from_millis(700)).await;
    latencies(&marks(dir.path()), &seen)
}

fn latencies(marks: &[i128], seen: &[i128]) -> Vec<f64> {
    marks
        .iter()
        .zip(seen)
        .filter(|(_, s)| **s > 0)
        .map(|(m, s)| (s - m) as f64 / 1e6)
        .collect()
}

fn report(what: &str, mut ms: Vec<f64>) {
    if ms.is_empty() {
        println!("{what}: no samples");
        return;
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    println!(
        "{what:<58} n={:>3}  median {:>7.2} ms  p95 {:>7.2} ms  min {:>7.2}  max {:>7.2}",
        ms.len(),
        pct(0.5),
        pct(0.95),
        ms[0],
        ms[ms.len() - 1]
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs it once quickly.
    let quick =
        std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench");
    let turns: usize = std::env::var("TURNS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(if quick { 2 } else { 20 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        report(
            "first delta -> provider item_delta (8-char chunks, 0 ms)",
            provider_only(turns, 0).await,
        );
        report(
            "first delta -> first upsert (8-char chunks, 0 ms apart)",
            through_runner(turns, 0).await,
        );
        report(
            "first delta -> first upsert (8-char chunks, 15 ms apart)",
            through_runner(turns, 15).await,
        );
    });
}
