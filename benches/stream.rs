//! Streaming at the display (issue 15): one long markdown answer (default
//! 108,438 chars in 27-char deltas 5 ms apart, the peer benchmark's shape)
//! streamed by the `script` provider through the real runner into the real
//! app, drawn with the console's own `app::draw` (synchronized output,
//! ratatui diffing) at the console's cadence into a byte-counting writer.
//!
//! Reports, for the turn (submit → turn complete):
//! - CPU (utime+stime of this process: provider, runner, app, drawing) and
//!   CPU per 100k chars;
//! - bytes written to the terminal per char of text;
//! - RSS growth per MB of text, and the peak (VmHWM);
//! - display latency: for every delta, the time from the provider emitting
//!   it to the first frame that shows its text (p50/p99/max);
//! - frames drawn.
//!
//! Run: `cargo bench --bench stream`. Environment: `PANES` (side by side,
//! each streaming the answer; default 1), `LATENCY_MS` (the console's
//! `display_latency_ms`; 0 = gradient batches only; default 50), `CHARS`,
//! `COLS`×`ROWS` (default 160×48), `CHUNK`, `DELAY_MS`, `TEXT` (a file to
//! stream instead of the generated answer, e.g. peerbench's `stream.txt`).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "support/mod.rs"]
mod support;

use hive::app::build_app;
use hive::config::{AgentConfig, Config, ConfigSource};
use hive::event::Payload;
use hive::provider::script::ScriptFactory;
use hive::provider::{
    Capabilities, EventSink, ProviderError, ProviderEvent, ProviderFactory, ProviderHandle,
    ProviderSpec,
};
use hive::runner::{PaneEvent, RunnerCommand, RunnerOptions, SubmitMode, spawn_runner};
use hive::ui::ViewState;
use ratatui::layout::Rect;
use tokio::sync::mpsc;

use support::{answer, env_or};

/// The script provider with a tap noting when each delta left it and how
/// much text had left by then.
struct Tap {
    sent: Arc<Mutex<Vec<(Instant, usize)>>>,
}

impl ProviderFactory for Tap {
    fn capabilities(&self, agent: &AgentConfig) -> Capabilities {
        ScriptFactory.capabilities(agent)
    }

    fn spawn(
        &self,
        spec: ProviderSpec,
        events: EventSink,
    ) -> Result<ProviderHandle, ProviderError> {
        let (tx, mut rx) = hive::provider::channel::channel();
        let handle = ScriptFactory.spawn(spec, tx)?;
        let sent = Arc::clone(&self.sent);
        tokio::spawn(async move {
            let mut total = 0;
            while let Some(ev) = rx.recv().await {
                if let ProviderEvent::Stream(se) = &ev
                    && let Payload::ItemDelta { delta_content, .. } = &se.payload
                {
                    total += delta_content.len();
                    if let Ok(mut s) = sent.lock() {
                        s.push((Instant::now(), total));
                    }
                }
                if events.send(ev).is_err() {
                    break;
                }
            }
        });
        Ok(handle)
    }
}

/// Counts the bytes written; with `DUMP=path`, also keeps them there.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicU64>, Option<Arc<Mutex<std::fs::File>>>);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.fetch_add(buf.len() as u64, Ordering::Relaxed);
        if let Some(f) = &self.1
            && let Ok(mut f) = f.lock()
        {
            f.write_all(buf)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn cpu() -> Duration {
    // SAFETY: getrusage fills the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn status_kb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse().ok())
        .unwrap_or(f64::NAN)
}

fn pct(v: &[Duration], p: usize) -> Duration {
    v.get((v.len() * p / 100).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

fn main() -> anyhow::Result<()> {
    let panes: usize = env_or("PANES", 1);
    let latency: u64 = env_or("LATENCY_MS", 50);
    let text = match std::env::var("TEXT") {
        Ok(path) => std::fs::read_to_string(path)?,
        Err(_) => answer(env_or("CHARS", 108_438)),
    };
    let chars = text.len();
    let (cols, rows): (u16, u16) = (env_or("COLS", 160), env_or("ROWS", 48));
    let chunk: usize = env_or("CHUNK", 27);
    let delay: u64 = env_or("DELAY_MS", 5);

    let dir = tempfile::tempdir()?;
    let scenario = dir.path().join("stream.toml");
    std::fs::write(
        &scenario,
        format!(
            "chunk_chars = {chunk}\ndelay_ms = {delay}\n[[turn]]\n[[turn.step]]\ntext = '''\n{text}'''\n"
        ),
    )?;
    let agents: String = (0..panes)
        .map(|i| {
            format!(
                "[[agent]]\nid = \"a{i}\"\nprovider = \"script\"\nscript = \"{}\"\n\n",
                scenario.display()
            )
        })
        .collect();
    let config = Config::parse(
        &format!("[ui]\ndisplay_latency_ms = {latency}\n\n{agents}"),
        ConfigSource::Builtin,
    )?;
    let (mut app, _) = build_app(&config);
    // As the console does before its runners start (`app::event_loop`).
    hive::ui::highlight::warm_up();
    let dump = match std::env::var("DUMP") {
        Ok(path) => Some(Arc::new(Mutex::new(std::fs::File::create(path)?))),
        Err(_) => None,
    };
    let bytes = Counter(Arc::default(), dump);
    let backend = ratatui::backend::CrosstermBackend::new(bytes.clone());
    let mut terminal = hive::app::screen::Screen::new(backend);
    let area = Rect::new(0, 0, cols, rows);
    let rt = hive::cli::runtime()?;
    let sent = Arc::new(Mutex::new(Vec::new()));
    let rss0 = status_kb("VmRSS:");
    let (cpu_used, frames, shown) = rt.block_on(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut runners = Vec::new();
        for agent in &config.agents {
            // Latency is read for pane 0's deltas.
            let factory = Arc::new(Tap {
                sent: if runners.is_empty() {
                    Arc::clone(&sent)
                } else {
                    Arc::default()
                },
            });
            let options = RunnerOptions {
                live_every: hive::config::live_every(&config),
                ..RunnerOptions::default()
            };
            let spec = ProviderSpec {
                agent: agent.clone(),
                resume: None,
            };
            runners.push(Some(spawn_runner(
                runners.len(),
                factory,
                spec,
                options,
                tx.clone(),
            )?));
        }
        let mut view = ViewState::default();
        hive::app::draw(&mut terminal, area, &mut app, &mut view, &runners)?;
        let start_bytes = bytes.0.load(Ordering::Relaxed);
        let cpu0 = cpu();
        for r in runners.iter().flatten() {
            r.send(RunnerCommand::Submit {
                text: "go".into(),
                mode: SubmitMode::Auto,
            });
        }
        // The console's own frame pacing (`app::pace`).
        let mut pace = hive::app::pace::Pace::new(&config, Instant::now());
        let mut done = 0;
        // (frame time, text shown in pane 0) after every frame.
        let mut frames: Vec<(Instant, usize)> = Vec::new();
        while done < panes || pace.due().is_some() {
            let now = Instant::now();
            if pace.ready(now) {
                app.now = now;
                hive::app::draw(&mut terminal, area, &mut app, &mut view, &runners)?;
                pace.drawn(now);
                frames.push((Instant::now(), agent_text(&app)));
                continue;
            }
            let frame_at = pace.due().map(tokio::time::Instant::from_std);
            tokio::select! {
                Some(update) = rx.recv() => {
                    let mut apply = |u: hive::runner::PaneUpdate| {
                        if matches!(&u.event, PaneEvent::Turn(t) if t.is_terminal()) {
                            done += 1;
                        }
                        app.now = Instant::now();
                        pace.update(&u, app.focus, app.now);
                        app.apply(u);
                    };
                    apply(update);
                    while let Ok(u) = rx.try_recv() {
                        apply(u);
                    }
                }
                _ = hive::timer::sleep_until(frame_at) => {}
            }
        }
        let used = cpu() - cpu0;
        for r in runners.iter().flatten() {
            r.shutdown().await;
        }
        anyhow::Ok((used, frames, bytes.0.load(Ordering::Relaxed) - start_bytes))
    })?;
    let rss1 = status_kb("VmRSS:");
    let hwm = status_kb("VmHWM:");
    let sent = sent.lock().map(|s| s.clone()).unwrap_or_default();
    let mut latencies = Vec::new();
    let mut f = 0;
    for &(at, total) in &sent {
        while f < frames.len() && (frames[f].0 < at || frames[f].1 < total) {
            f += 1;
        }
        if let Some((shown_at, _)) = frames.get(f) {
            latencies.push(shown_at.saturating_duration_since(at));
        }
    }
    latencies.sort();
    let text_bytes = (chars * panes) as f64;
    println!(
        "stream: {panes} pane(s) {cols}x{rows}, {chars} chars in {chunk}-char deltas {delay} ms apart, display_latency_ms={latency}"
    );
    println!(
        "  cpu {:.3} s ({:.3} s per 100k chars)",
        cpu_used.as_secs_f64(),
        cpu_used.as_secs_f64() * 100_000.0 / text_bytes
    );
    println!(
        "  terminal bytes {} ({:.2} per char of text), frames {}",
        shown,
        shown as f64 / text_bytes,
        frames.len()
    );
    println!(
        "  rss +{:.1} MB ({:.1} per MB of text), peak {:.1} MB",
        (rss1 - rss0) / 1024.0,
        (rss1 - rss0) / 1024.0 / (text_bytes / 1e6),
        hwm / 1024.0
    );
    println!(
        "  display latency p50 {:?} p99 {:?} max {:?} ({} deltas)",
        pct(&latencies, 50),
        pct(&latencies, 99),
        latencies.last().copied().unwrap_or_default(),
        latencies.len()
    );
    Ok(())
}

/// Length of the newest agent text in pane 0 (what the last frame drew).
fn agent_text(app: &hive::app::state::App) -> usize {
    app.panes
        .first()
        .and_then(|p| {
            p.conversation
                .transcript
                .entries
                .iter()
                .rev()
                .find_map(|e| match &e.kind {
                    hive::app::transcript::EntryKind::Item(u) => u.text().map(|t| t.len()),
                    _ => None,
                })
        })
        .unwrap_or(0)
}
