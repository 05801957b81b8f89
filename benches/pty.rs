//! PTY pipeline benchmark (issue #8): how long and how much CPU hive needs to
//! display a large burst of output (`cat` of a 50 MB file) in a PTY pane,
//! against the same `cat` into a PTY whose master is merely drained (what a
//! terminal costs before it parses anything).
//!
//! Run: `cargo bench --bench pty` (optional argument: size in MB, default
//! 50). Prints one row per variant:
//! - `raw pty drain`: cat → PTY → a thread discarding bytes;
//! - `hive parse only`: the `pty` provider (reader thread + vt100), no drawing;
//! - `hive parse+render`: the same plus, on every `TerminalUpdated`, the
//!   runner's `ScreenUpdate` of a 120×40 pane and `ui::terminal::render` of
//!   it, as the runner and the UI do at the frame cadence.
//!
//! For the render variant it also reports the frames drawn and the worst
//! time a frame waited for the emulator lock plus drew (UI responsiveness
//! during the burst).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use hive::config::AgentConfig;
use hive::provider::pty::PtyFactory;
use hive::provider::{ProviderEvent, ProviderFactory, ProviderSpec};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

const COLS: u16 = 120;
const ROWS: u16 = 40;

fn cpu_times() -> (Duration, Duration) {
    fn usage(who: i32) -> Duration {
        // SAFETY: getrusage fills the struct we own.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut ru) };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        tv(ru.ru_utime) + tv(ru.ru_stime)
    }
    (usage(libc::RUSAGE_SELF), usage(libc::RUSAGE_CHILDREN))
}

struct Row {
    name: &'static str,
    wall: Duration,
    own_cpu: Duration,
    child_cpu: Duration,
    extra: String,
}

fn measure(name: &'static str, run: impl FnOnce() -> String) -> Row {
    let (self0, child0) = cpu_times();
    let start = Instant::now();
    let extra = run();
    let wall = start.elapsed();
    let (self1, child1) = cpu_times();
    Row {
        name,
        wall,
        own_cpu: self1 - self0,
        child_cpu: child1 - child0,
        extra,
    }
}

/// Realistic terminal output: numbered lines of text with some colour.
fn write_fixture(path: &Path, mb: usize) -> std::io::Result<u64> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let target = (mb * 1024 * 1024) as u64;
    let mut written = 0u64;
    let mut i = 0u64;
    while written < target {
        let line = if i.is_multiple_of(7) {
            format!(
                "\x1b[32m{i:>8}\x1b[0m \x1b[1mcompiling\x1b[0m crate-{} v0.{}.{} (registry+https://example.org/index)\n",
                i % 97,
                i % 13,
                i % 5
            )
        } else {
            format!(
                "{i:>8} the quick brown fox jumps over the lazy dog; lorem ipsum dolor sit amet\n"
            )
        };
        f.write_all(line.as_bytes())?;
        written += line.len() as u64;
        i += 1;
    }
    f.flush()?;
    Ok(written)
}

fn raw_drain(file: &Path) -> String {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let mut cmd = CommandBuilder::new("cat");
    cmd.arg(file);
    let mut child = pair.slave.spawn_command(cmd).expect("spawn cat");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut buf = vec![0u8; 16 * 1024];
    let mut total = 0u64;
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n as u64,
        }
    }
    let _ = child.wait();
    format!("{total} bytes read")
}

/// The emulator alone: the file fed to vt100 (directly, or through hive's
/// `Feeder` with its query scanner and locking) on this thread, no PTY.
fn parse_only(data: &[u8], feeder: bool) -> String {
    let parser = tui_term::vt100::Parser::new(ROWS, COLS, hive::provider::pty::SCROLLBACK_LINES);
    let screen = hive::provider::TerminalScreen(std::sync::Arc::new(std::sync::Mutex::new(parser)));
    let chunk = hive::provider::pty::pump::READ_CHUNK;
    if feeder {
        let mut f = hive::provider::pty::pump::Feeder::new(screen.clone());
        for c in data.chunks(chunk) {
            f.feed(c);
        }
    } else {
        let mut p = screen.0.lock().expect("lock");
        for c in data.chunks(chunk) {
            p.process(c);
        }
    }
    let (row, col) = screen.0.lock().expect("lock").screen().cursor_position();
    format!("cursor ends at {row},{col}")
}

fn hive_pipeline(file: &Path, render: bool) -> String {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let mut agent = AgentConfig::new("bench", "pty");
        agent.command = vec!["cat".into(), file.display().to_string()];
        let (tx, mut rx) = hive::provider::channel::channel();
        let handle = PtyFactory
            .spawn(
                ProviderSpec {
                    agent,
                    resume: None,
                },
                tx,
            )
            .expect("spawn");
        handle.send(hive::provider::ProviderCommand::Resize {
            cols: COLS,
            rows: ROWS,
        });
        let screen = handle.terminal.clone().expect("screen");
        let area = Rect::new(0, 0, COLS, ROWS);
        let mut buf = Buffer::empty(area);
        let mut frames = 0u32;
        let mut updates = 0u32;
        let mut worst = Duration::ZERO;
        let mut worst_wait = Duration::ZERO;
        let mut draw_total = Duration::ZERO;
        let mut frame_times = Vec::new();
        while let Some(ev) = rx.recv().await {
            match ev {
                ProviderEvent::TerminalUpdated => {
                    updates += 1;
                    if render {
                        let t = Instant::now();
                        drop(screen.0.lock());
                        let waited = t.elapsed();
                        // What the runner sends and the app draws.
                        let update = hive::runner::screen::capture(&screen, 0);
                        hive::ui::terminal::render(&update, true, area, &mut buf);
                        let took = t.elapsed();
                        worst = worst.max(took);
                        worst_wait = worst_wait.max(waited);
                        frame_times.push(took);
                        draw_total += took - waited;
                        frames += 1;
                    }
                }
                ProviderEvent::Exited { .. } => break,
                _ => {}
            }
        }
        frame_times.sort();
        let p99 = frame_times
            .get(frame_times.len().saturating_sub(1) * 99 / 100)
            .copied()
            .unwrap_or_default();
        if render {
            format!(
                "{updates} updates, {frames} frames; frame p99 {p99:?} max {worst:?} \
                 (lock wait max {worst_wait:?}, mean draw {:?})",
                draw_total / frames.max(1)
            )
        } else {
            format!("{updates} updates")
        }
    })
}

fn main() {
    // `cargo bench` passes `--bench`; the first numeric argument is the size.
    let mb = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(50);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("burst.txt");
    let bytes = write_fixture(&file, mb).expect("fixture");
    println!(
        "PTY pipeline: cat of {:.1} MB ({bytes} bytes), pane {COLS}x{ROWS}",
        bytes as f64 / 1_048_576.0
    );
    // Also warms the page cache so every variant reads the file from memory.
    let data = std::fs::read(&file).expect("read fixture");
    let rows = [
        measure("vt100 alone", || parse_only(&data, false)),
        measure("hive feeder, no pty", || parse_only(&data, true)),
        measure("raw pty drain", || raw_drain(&file)),
        measure("hive parse only", || hive_pipeline(&file, false)),
        measure("hive parse+render", || hive_pipeline(&file, true)),
    ];
    println!(
        "{:<20} {:>9} {:>9} {:>10} {:>9}  notes",
        "variant", "wall s", "MB/s", "hive cpu s", "cat cpu s"
    );
    for r in rows {
        println!(
            "{:<20} {:>9.2} {:>9.1} {:>10.2} {:>9.2}  {}",
            r.name,
            r.wall.as_secs_f64(),
            bytes as f64 / 1_048_576.0 / r.wall.as_secs_f64(),
            r.own_cpu.as_secs_f64(),
            r.child_cpu.as_secs_f64(),
            r.extra
        );
    }
}
