//! Console rendering cost (`cargo bench --bench render`):
//!
//! 1. 6 panes × 10,000 mixed messages (user, markdown answers with code and
//!    tables, thinking, tool calls with output, footers): frame time median
//!    and p99 for steady frames and for frames after a streaming update, the
//!    cold first frame, and the process RSS.
//! 2. One 108k-character markdown answer streamed as the processor emits it
//!    (gradient batches), a frame after every emission: total CPU time.
//! 3. The real binary idle in tmux for 10 s: CPU seconds and wake-ups
//!    (context switches of all threads) of the console and of its server.
//!    Skipped when tmux is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::process::Command;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;

use hive::app::build_app;
use hive::app::state::App;
use hive::config::{Config, ConfigSource};
use hive::event::{Origin, ToolDisplay, Usage};
use hive::runner::{PaneEvent, PaneUpdate};
use hive::text::TextBuffer;
use hive::ui::ViewState;
use hive::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};

const PANES: usize = 6;
const MESSAGES: usize = 10_000;
const W: u16 = 240;
const H: u16 = 64;

fn upsert(item: String, status: UpsertStatus, kind: UpsertKind) -> PaneEvent {
    PaneEvent::Upsert(Upsert {
        turn_id: "turn".into(),
        session_id: "s".into(),
        item_id: item,
        source_timestamp: chrono::DateTime::UNIX_EPOCH,
        emitted_at: chrono::DateTime::UNIX_EPOCH,
        status,
        error_code: None,
        error_message: None,
        kind,
    })
}

const ANSWER: &str = "## Findings\n\nThe **runner** owns the queue; the *processor* batches deltas.\n\n- one\n- two with `code`\n\n```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";

fn fill(app: &mut App) {
    for p in 0..PANES {
        for i in 0..MESSAGES {
            let id = format!("p{p}-i{i}");
            let event = match i % 6 {
                0 => upsert(id, UpsertStatus::Complete, UpsertKind::Message {
                    content: format!("question {i}: what about the queue?").into(),
                    origin: Origin::User,
                }),
                1 => upsert(id, UpsertStatus::Complete, UpsertKind::Thinking {
                    content: "Let me look at the runner and the processor first, then answer.".into(),
                    provider_id: "bench".into(),
                }),
                2 => upsert(id, UpsertStatus::Complete, UpsertKind::ToolCall {
                    tool_name: "Bash".into(),
                    arguments: json!({"command": format!("grep -n queue src/runner.rs # {i}")}),
                    call_id: format!("c{i}"),
                    output: Some("12: queue: VecDeque<String>,\n40: self.queue.push_back(text);\n41: self.queue_changed();\n90: fn drain(&mut self)\n91: ...".into()),
                    output_is_error: Some(false),
                    display: Some(Box::new(ToolDisplay {
                        summary: format!("grep -n queue src/runner.rs # {i}"),
                        diff: None,
                    })),
                }),
                3 | 4 => upsert(id, UpsertStatus::Complete, UpsertKind::Message {
                    content: ANSWER.into(),
                    origin: Origin::Agent,
                }),
                _ => PaneEvent::Turn(TurnEvent::TurnComplete {
                    turn_id: format!("t{i}"),
                    session_id: "s".into(),
                    status: TurnStatus::Completed,
                    usage: Some(Usage { input_tokens: 1200, output_tokens: 340, cost_usd: Some(0.004), ..Usage::default() }),
                    finish_reason: None,
                }),
            };
            app.apply(PaneUpdate { pane: p, event });
        }
    }
}

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn stats(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let median = v[v.len() / 2];
    let p99 = v[(v.len() * 99 / 100).min(v.len() - 1)];
    (median, p99)
}

/// One console frame (`app::frame`: composer looks, the read-only render
/// into the view state, the app taking back the geometry).
fn frame(app: &mut App, view: &mut ViewState, buf: &mut Buffer) -> Duration {
    let start = Instant::now();
    buf.reset();
    hive::app::frame(app, view, Rect::new(0, 0, W, H), buf);
    start.elapsed()
}

fn many_panes() {
    let config_text: String = (0..PANES)
        .map(|i| format!("[[agent]]\nid = \"a{i}\"\nprovider = \"script\"\nmodel = \"m\"\n\n"))
        .collect();
    let config = Config::parse(&config_text, ConfigSource::Builtin).expect("config");
    let (mut app, _) = build_app(&config);
    let rss0 = rss_mb();
    let t = Instant::now();
    fill(&mut app);
    let fill_time = t.elapsed();
    let mut buf = Buffer::empty(Rect::new(0, 0, W, H));
    let mut view = ViewState::default();
    let cold = frame(&mut app, &mut view, &mut buf);
    let steady: Vec<Duration> = (0..500)
        .map(|_| frame(&mut app, &mut view, &mut buf))
        .collect();
    // A frame after one pane's streaming message grew (the common case).
    let mut text = TextBuffer::new();
    let mut updated = Vec::new();
    for i in 0..500 {
        text.push_str(&format!("streamed word {i} and some more text. "));
        if i % 40 == 39 {
            text.push_str("\n\n");
        }
        app.apply(PaneUpdate {
            pane: i % PANES,
            event: upsert(
                "live".into(),
                UpsertStatus::Update,
                UpsertKind::Message {
                    content: text.snapshot(),
                    origin: Origin::Agent,
                },
            ),
        });
        updated.push(frame(&mut app, &mut view, &mut buf));
    }
    // Scrolling into history lays out entries never seen before.
    let mut scrolled = Vec::new();
    for _ in 0..200 {
        for p in &mut app.panes {
            p.scroll += 40;
        }
        scrolled.push(frame(&mut app, &mut view, &mut buf));
    }
    let (sm, sp) = stats(steady);
    let (um, up) = stats(updated);
    let (cm, cp) = stats(scrolled);
    println!("6 panes x 10,000 messages at {W}x{H}:");
    println!("  load (apply 60,000 upserts): {fill_time:.2?}");
    println!("  cold first frame:            {cold:.2?}");
    println!("  steady frame:                median {sm:.3?}  p99 {sp:.3?}");
    println!("  frame after a stream update: median {um:.3?}  p99 {up:.3?}");
    println!("  frame while scrolling back:  median {cm:.3?}  p99 {cp:.3?}");
    println!("  RSS: {:.1} MB (before loading: {rss0:.1} MB)", rss_mb());
}

/// DESIGN §9's stream: 108k chars of markdown; the processor's gradient
/// makes ~230 emissions; one frame per emission.
fn long_stream() {
    let config = Config::parse(
        "[[agent]]\nid = \"a\"\nprovider = \"script\"\n",
        ConfigSource::Builtin,
    )
    .expect("config");
    let (mut app, _) = build_app(&config);
    let mut src = String::new();
    while src.len() < 108_000 {
        src.push_str(ANSWER);
        src.push_str("Some prose that goes on for a while to fill the paragraph with words.\n\n");
    }
    let mut buf = Buffer::empty(Rect::new(0, 0, 160, 45));
    let mut view = ViewState::default();
    let mut text = TextBuffer::new();
    let chunk = src.len() / 4000;
    let (mut tokens, mut threshold, mut step) = (0u64, 10u64, 0usize);
    let gradient = [10u64, 20, 40, 80, 120];
    let mut emissions = 0;
    let start = Instant::now();
    let mut pos = 0;
    while pos < src.len() {
        let mut end = (pos + chunk).min(src.len());
        while !src.is_char_boundary(end) {
            end += 1;
        }
        text.push_str(&src[pos..end]);
        tokens += (end - pos).div_ceil(4) as u64;
        pos = end;
        if tokens > threshold || pos == src.len() {
            while tokens > threshold {
                step = (step + 1).min(gradient.len() - 1);
                threshold += gradient[step];
            }
            emissions += 1;
            app.apply(PaneUpdate {
                pane: 0,
                event: upsert(
                    "m".into(),
                    UpsertStatus::Update,
                    UpsertKind::Message {
                        content: text.snapshot(),
                        origin: Origin::Agent,
                    },
                ),
            });
            buf.reset();
            hive::app::frame(&mut app, &mut view, Rect::new(0, 0, 160, 45), &mut buf);
        }
    }
    println!(
        "108k-char markdown stream: {emissions} emissions, a frame each: {:.1} ms total UI time",
        start.elapsed().as_secs_f64() * 1e3
    );
}

fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn idle_cpu() {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("idle CPU: skipped (no tmux)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let socket = format!("hive-bench-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_hive");
    let ok = Command::new("tmux")
        .args([
            "-L",
            &socket,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
        ])
        .arg(d)
        .args([
            "-e",
            &format!("HIVE_DATA_DIR={}", d.display()),
            "-e",
            &format!("HIVE_STATE_DIR={}", d.display()),
        ])
        .args([
            "-e",
            &format!("XDG_CONFIG_HOME={}", d.display()),
            "-e",
            "TERM=xterm-256color",
        ])
        .arg(bin)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("idle CPU: skipped (tmux failed)");
        return;
    }
    std::thread::sleep(Duration::from_secs(3));
    let client: Option<u32> = Command::new("tmux")
        .args(["-L", &socket, "display", "-p", "-t", "b", "#{pane_pid}"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok());
    // The server the console started: its pid file in the state dir.
    let server: Option<u32> = std::fs::read_to_string(d.join("run/default.pid"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    let ticks_per_s = 100.0; // USER_HZ on Linux
    for (who, pid) in [("client", client), ("server", server)] {
        let Some(pid) = pid else {
            println!("idle CPU: could not find the {who}'s pid");
            continue;
        };
        let before = (cpu_ticks(pid), wakeups(pid));
        std::thread::sleep(Duration::from_secs(10));
        let after = (cpu_ticks(pid), wakeups(pid));
        println!(
            "idle {who} of hive over 10 s (built-in config, 3 panes): CPU {:.2} s, {} wake-ups",
            after.0.unwrap_or(0).saturating_sub(before.0.unwrap_or(0)) as f64 / ticks_per_s,
            after.1.saturating_sub(before.1)
        );
    }
    let _ = Command::new("tmux")
        .args(["-L", &socket, "kill-server"])
        .status();
    if let Some(pid) = server {
        // SAFETY: kill(2) on the server this bench started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    }
}

/// Context switches of every thread of `pid` (each is a wake-up: a thread
/// that slept and runs again), from /proc.
fn wakeups(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .flat_map(|s| {
            s.lines()
                .filter(|l| {
                    l.starts_with("voluntary_ctxt_switches")
                        || l.starts_with("nonvoluntary_ctxt_switches")
                })
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

fn main() {
    // `cargo test --benches` runs bench binaries with no filter; keep it short then.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    many_panes();
    long_stream();
    idle_cpu();
}
