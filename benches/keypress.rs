//! Keypress → frame while every pane streams (issue 15 item 5): the release
//! `hive` binary runs in a pseudo-terminal (160×48) with six `script` agents,
//! each streaming a long markdown answer (27-char deltas 5 ms apart, the
//! peer benchmark's shape). While all six stream, the bench types into the
//! focused pane's composer, one key every 120 ms, and measures the time from
//! writing the key to the pty until the first output chunk after which the
//! parsed screen shows it. That is what the user feels: input handling,
//! frame scheduling and drawing under a full streaming load.
//!
//! Reports p50 / p99 / max over the keys, and hive's CPU over the run.
//!
//! Run: `cargo bench --bench keypress`. Environment: `KEYS` (default 120),
//! `PANES` (default 6), `CHARS` per answer (default 400000: enough to stream
//! for the whole measurement), `COLS`×`ROWS`.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use tui_term::vt100;

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A long markdown answer: prose, lists, code and quotes, as models write.
fn answer(chars: usize) -> String {
    let mut s = String::new();
    let mut n = 1;
    while s.len() < chars {
        s.push_str(&format!("## Section {n}\n\n"));
        s.push_str("The **runner** owns the queue and the *processor* batches deltas; ");
        s.push_str("the console reads the app state and draws it. Wrapping matters here.\n\n");
        s.push_str("- a point with `inline code`\n- another point that is somewhat longer\n\n");
        s.push_str("```rust\nfn section() -> usize {\n    (0..10).sum()\n}\n```\n\n");
        s.push_str("> A quoted remark closes the section.\n\n");
        n += 1;
    }
    s.truncate(chars);
    // The scenario holds it in a TOML literal string.
    s.replace("'''", "")
}

/// (parent pid, utime + stime ticks) of a process.
fn stat(pid: u32) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((fields.get(1)?.parse().ok()?, ticks))
}

/// CPU ticks of `root` and every process below it (hive runs its console in
/// a child of the process it was started as).
fn tree_ticks(root: u32) -> u64 {
    let procs: Vec<(u32, u32, u64)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| stat(pid).map(|(ppid, t)| (pid, ppid, t)))
        .collect();
    let mut tree = vec![root];
    let mut total = 0;
    while let Some(p) = tree.pop() {
        for &(pid, ppid, t) in &procs {
            if pid == p {
                total += t;
            }
            if ppid == p {
                tree.push(pid);
            }
        }
    }
    total
}

/// The terminal side: chunks from hive with the instant each was read, fed
/// into a vt100 parser on demand.
struct Screen {
    rx: mpsc::Receiver<(Instant, Vec<u8>)>,
    parser: vt100::Parser,
}

impl Screen {
    /// Feeds output until `done(screen text)` holds; returns the read time of
    /// the chunk that made it true, or None after `timeout`.
    fn until(&mut self, timeout: Duration, done: impl Fn(&str) -> bool) -> Option<Instant> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let (at, bytes) = self.rx.recv_timeout(left).ok()?;
            self.parser.process(&bytes);
            // Drain what is already here before the (costly) screen check,
            // unless this chunk alone may have shown it: check each chunk so
            // the time is the first chunk that shows the key.
            if done(&self.parser.screen().contents()) {
                return Some(at);
            }
        }
    }

    /// Reads whatever arrived, without waiting.
    fn drain(&mut self) {
        while let Ok((_, bytes)) = self.rx.try_recv() {
            self.parser.process(&bytes);
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let keys: usize = env_or("KEYS", 120);
    let panes: usize = env_or("PANES", 6);
    let chars: usize = env_or("CHARS", 400_000);
    let (cols, rows): (u16, u16) = (env_or("COLS", 160), env_or("ROWS", 48));

    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let scenario = format!(
        "chunk_chars = 27\ndelay_ms = 5\n[[turn]]\n[[turn.step]]\ntext = '''\n{}'''\n",
        answer(chars)
    );
    std::fs::write(d.join("long.toml"), scenario).expect("scenario");
    let mut config = String::new();
    for i in 1..=panes {
        config.push_str(&format!(
            "[[agent]]\nid = \"p{i}\"\nprovider = \"script\"\nscript = \"long.toml\"\n"
        ));
    }
    std::fs::write(d.join("hive.toml"), config).expect("config");

    let pty = native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_hive"));
    cmd.args(["--config", "hive.toml", "--fresh"]);
    cmd.cwd(d);
    for var in ["HIVE_DATA_DIR", "HIVE_STATE_DIR", "XDG_CONFIG_HOME", "HOME"] {
        cmd.env(var, d);
    }
    cmd.env("TERM", "xterm-256color");
    let mut child = pty.slave.spawn_command(cmd).expect("spawn hive");
    let pid = child.process_id().expect("pid");
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().expect("reader");
    let mut writer = pty.master.take_writer().expect("writer");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    let mut screen = Screen {
        rx,
        parser: vt100::Parser::new(rows, cols, 0),
    };
    let mut send = |bytes: &[u8]| {
        writer.write_all(bytes).expect("write key");
        writer.flush().expect("flush key");
    };

    screen
        .until(Duration::from_secs(10), |s| {
            s.contains(&format!("p{panes}"))
        })
        .expect("hive draws its panes");
    // Start every pane streaming: focus it (Alt+N), type, Enter.
    for i in 1..=panes {
        send(format!("\x1b{i}").as_bytes());
        std::thread::sleep(Duration::from_millis(100));
        send(b"go\r");
        std::thread::sleep(Duration::from_millis(150));
    }
    send(b"\x1b1");
    std::thread::sleep(Duration::from_millis(500));
    screen.drain();
    screen
        .until(Duration::from_secs(10), |s| s.contains("Section 2"))
        .expect("the answers stream");

    let cpu0 = tree_ticks(pid);
    let wall0 = Instant::now();
    let mut lat = Vec::with_capacity(keys);
    let mut missed = 0;
    // Typed text: an unmeasured marker that is not in the answers, then
    // measured letters. After 30 keys the line is erased and typing starts
    // again, so the composer never wraps.
    let mut typed = String::new();
    for k in 0..keys {
        if k % 30 == 0 {
            if !typed.is_empty() {
                send(&vec![0x7f; typed.len()]);
                std::thread::sleep(Duration::from_millis(300));
            }
            typed = "ZQX".into();
            send(typed.as_bytes());
            std::thread::sleep(Duration::from_millis(300));
        }
        let ch = (b'a' + (k % 26) as u8) as char;
        screen.drain();
        typed.push(ch);
        let at = Instant::now();
        send(ch.to_string().as_bytes());
        match screen.until(Duration::from_secs(2), |s| s.contains(typed.as_str())) {
            Some(shown) => lat.push(shown.saturating_duration_since(at)),
            None => missed += 1,
        }
        std::thread::sleep(Duration::from_millis(120));
    }
    let wall = wall0.elapsed();
    let cpu = tree_ticks(pid).saturating_sub(cpu0) as f64 / 100.0;
    screen.drain();
    let _ = child.kill();
    let _ = child.wait();

    lat.sort();
    println!(
        "keypress → frame, {panes} panes streaming, {cols}x{rows}, {} keys ({missed} not shown within 2 s): \
         p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms",
        lat.len(),
        percentile(&lat, 0.5).as_secs_f64() * 1e3,
        percentile(&lat, 0.99).as_secs_f64() * 1e3,
        lat.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
    println!(
        "hive CPU while measuring: {cpu:.2} s over {:.1} s wall ({:.0} %)",
        wall.as_secs_f64(),
        cpu / wall.as_secs_f64() * 100.0
    );
    if let Ok(path) = std::env::var("DUMP") {
        std::fs::write(path, screen.parser.screen().contents()).expect("dump");
    }
}
