//! The real console in a pseudo-terminal (issue 15): the release `hive`
//! binary at 160×48, read back through a vt100 parser as a terminal would.
//! Reproducible from the project alone (no agent CLI, no network).
//!
//! 1. `stream`: one `openai` pane against the project's scripted model
//!    server (tests/support/openai_server.rs) streaming the peer
//!    benchmark's answer (108,438 chars of markdown in 27-char chunks 5 ms
//!    apart). Reports hive's CPU (its whole process tree) and CPU per 100k
//!    chars, bytes written to the terminal per char of text, peak RSS and
//!    RSS growth per MB of text, and display latency: for every section
//!    heading, the time from the chunk that completed it leaving the server
//!    to the first output after which the screen shows it (p50/p99/max).
//!    `pipe` is the same answer from a `claude` pane on
//!    tests/fake/fake_claude.py, as stream-json lines on the agent's
//!    stdout the way Claude Code and Codex write them (the agent's own CPU
//!    is left out; its clock times each chunk it writes). `PANES` of them
//!    side by side stream at once, the first pane focused: the latency is
//!    then of the first pane to show each heading.
//! 2. `keypress`: six `script` panes each streaming a long answer (27-char
//!    deltas 5 ms apart). While all six stream, one key every 120 ms goes
//!    into the focused pane's composer; the time from writing the key to
//!    the first output after which the screen shows it (p50/p99/max).
//!
//! 3. `memory` (issue 15 item 4): `PANES` (default 9) `openai` panes each
//!    streaming `DELTAS` (default 150,000) content deltas of 8 chars as fast
//!    as hive reads them (10.8 MB of text in all). The model server runs in
//!    this process, so the RSS is hive's alone: its growth per MB of text
//!    held when the last answer ends, and again after `SETTLE_MS` (default
//!    3000) idle, counted from after a short warm-up answer with a code
//!    block (syntect's compiled regexes, ~6.7 MB, are a fixed cost). `WRAP` runs hive under a tool (`WRAP="heaptrack -o
//!    /tmp/hive"`, with `HIVE_NO_SUPERVISOR=1`), whose own memory then
//!    counts too.
//!
//! 4. `attach` (issue 29, benches/console/attach.rs): a console attaching
//!    to a server holding `PANES` (9) panes of `ITEMS` (10,000) items: time
//!    to the first full frame, the console's peak RSS, the server's RSS.
//!
//! 5. `remote` (issue 30, benches/console/remote.rs): the `stream` answer
//!    with the console attached over ssh (a real sshd on 127.0.0.1) and
//!    locally: the client's CPU with its transport (console, ssh, master,
//!    sshd's session, relay) against the local console's; display latency
//!    over ssh; then ssh's master connection killed, and the time until
//!    the console shows it reconnected.
//!
//! 6. `swarm` (issue 45 item 4, benches/console/swarm.rs): `PANES` (30)
//!    panes streaming the reference answer at once, nine to a window: the
//!    focused pane's display latency, hive's CPU per pane, and keypress →
//!    frame while the others stream on.
//!
//! Run: `cargo bench --bench console [stream|pipe|keypress|memory|attach|remote|swarm]`
//! (stream, pipe and keypress by default). Environment: `CHARS` (stream,
//! pipe), `KEYS`, `PANES` (pipe, keypress, memory), `DELTAS`, `SETTLE_MS`,
//! `WRAP` (memory, stream: its waits are then thirty times longer, and hive
//! quits cleanly so that a profiler writes its file), `COLS`, `ROWS`, `RUNS`
//! (repetitions, default 1; medians are printed), `HIVE_BIN` (the hive
//! binary to run; default: the one this bench was built with).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

#[path = "console/attach.rs"]
mod attach;
#[path = "console/remote.rs"]
mod remote;
#[path = "../tests/support/openai_server.rs"]
mod server;
/// The tests' real sshd, for `remote` (it stops servers as tmux's does).
#[path = "../tests/support/sshd.rs"]
mod sshd;
#[path = "support/mod.rs"]
mod support;
#[path = "console/swarm.rs"]
mod swarm;
#[path = "../tests/support/tmux.rs"]
#[allow(dead_code)]
mod tmux;

use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};
use tui_term::vt100;

use support::{answer, env_or, tree_cpu, tree_cpu_but, tree_max_mb, tree_switches_but};

const CHUNK: usize = 27;
const EVERY: Duration = Duration::from_millis(5);
const END: &str = "The end of the long answer.";

/// hive in a pty: its output chunks with the instant each was read, parsed
/// on demand into the screen a terminal would show.
struct Console {
    rx: mpsc::Receiver<(Instant, Vec<u8>)>,
    parser: vt100::Parser,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    pid: u32,
    /// Bytes read so far.
    bytes: u64,
    /// Frames read so far (synchronized-output updates begun).
    frames: u64,
    /// Where the server it starts keeps its pid file (stopped on drop, should
    /// a run end without its Ctrl+Q).
    run_dir: std::path::PathBuf,
}

impl Console {
    /// Starts the release binary on `dir/hive.toml`, in `dir`, with every
    /// data and config directory inside `dir`.
    fn start(dir: &Path, cols: u16, rows: u16) -> Self {
        Self::start_with(dir, cols, rows, &["--config", "hive.toml", "--fresh"])
    }

    /// Starts the binary with `args` (a console: `hive`, `hive attach`).
    fn start_with(dir: &Path, cols: u16, rows: u16, args: &[&str]) -> Self {
        Self::start_env(dir, cols, rows, args, &[])
    }

    /// `start_with`, with `env` set too.
    fn start_env(dir: &Path, cols: u16, rows: u16, args: &[&str], env: &[(&str, String)]) -> Self {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        // HIVE_BIN compares another build (e.g. main's) with this one.
        let bin = std::env::var("HIVE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_hive").into());
        let wrap = std::env::var("WRAP").unwrap_or_default();
        let mut argv: Vec<&str> = wrap.split_whitespace().collect();
        argv.push(bin.as_str());
        argv.extend(args);
        let mut cmd = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
        cmd.cwd(dir);
        for var in ["HIVE_DATA_DIR", "HIVE_STATE_DIR", "XDG_CONFIG_HOME", "HOME"] {
            cmd.env(var, dir);
        }
        cmd.env("TERM", "xterm-256color");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pty.slave.spawn_command(cmd).expect("spawn hive");
        let pid = child.process_id().expect("pid");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("reader");
        let writer = pty.master.take_writer().expect("writer");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _master = pty.master;
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
        Self {
            rx,
            parser: vt100::Parser::new(rows, cols, 0),
            writer,
            child,
            pid,
            bytes: 0,
            frames: 0,
            run_dir: dir.join("run"),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to hive");
        self.writer.flush().expect("flush to hive");
    }

    /// Feeds output, calling `seen(read time, screen text)` after each
    /// chunk, until it returns true; false after `timeout`.
    fn watch(&mut self, timeout: Duration, mut seen: impl FnMut(Instant, &str) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            let Ok((at, bytes)) = self.rx.recv_timeout(left) else {
                return false;
            };
            self.take(&bytes);
            if seen(at, &self.parser.screen().contents()) {
                return true;
            }
        }
    }

    /// The read time of the first chunk after which the screen shows `text`.
    fn until_shown(&mut self, timeout: Duration, text: &str) -> Option<Instant> {
        let mut shown = None;
        self.watch(timeout, |at, screen| {
            shown = screen.contains(text).then_some(at);
            shown.is_some()
        });
        shown
    }

    /// Takes whatever arrived, without waiting.
    fn drain(&mut self) {
        while let Ok((_, bytes)) = self.rx.try_recv() {
            self.take(&bytes);
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        const BEGIN: &[u8] = b"\x1b[?2026h";
        self.bytes += bytes.len() as u64;
        // A marker split across two reads is missed: a rare undercount.
        self.frames += bytes.windows(BEGIN.len()).filter(|w| *w == BEGIN).count() as u64;
        self.parser.process(bytes);
    }
}

impl Console {
    /// Ctrl+Q then `s` (stop every agent), then waits up to `timeout` for
    /// hive (and a `WRAP` tool writing its profile) to exit.
    fn quit(&mut self, timeout: Duration) {
        self.send(b"\x11s");
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            self.drain();
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The console's server outlives it: end it too.
        for e in std::fs::read_dir(&self.run_dir)
            .into_iter()
            .flatten()
            .flatten()
        {
            let pid = std::fs::read_to_string(e.path())
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok());
            if let Some(pid) = pid.filter(|_| e.path().extension().is_some_and(|x| x == "pid")) {
                // SAFETY: kill(2) on the server this bench started.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len().saturating_sub(1)) as f64 * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The agent `stream` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    /// An `openai` pane on the project's model server (SSE over HTTP).
    Openai,
    /// A `claude` pane on tests/fake/fake_claude.py: the answer as
    /// stream-json lines on the agent's stdout, as Claude Code writes it.
    /// Its own CPU is left out of hive's.
    Pipe,
}

/// Where the answer comes from, and when each chunk left it.
enum Source {
    Openai(server::Server),
    Pipe { sent: std::path::PathBuf },
}

impl Source {
    /// Starts the source for `chunks` and writes hive's config into `dir`.
    fn start(agent: Agent, dir: &Path, text: &str, chunks: &[&str], panes: usize) -> Self {
        match agent {
            Agent::Openai => {
                let mut replies: Vec<serde_json::Value> =
                    chunks.iter().map(|c| server::text(c)).collect();
                replies.push(server::finish("stop"));
                let model = server::Server::start(vec![server::Reply::Paced(replies, EVERY)]);
                let config = format!(
                    "[[agent]]\nid = \"oa\"\nprovider = \"openai\"\nmodel = \"bench\"\nbase_url = \"{}\"\n",
                    model.base_url
                );
                std::fs::write(dir.join("hive.toml"), config).expect("config");
                Self::Openai(model)
            }
            Agent::Pipe => {
                let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_claude.py");
                std::fs::write(dir.join("answer.txt"), text).expect("answer");
                // The first pane's send times: the focused one, measured.
                let sent = dir.join("sent-1.txt");
                let config: String = (1..=panes)
                    .map(|i| {
                        format!(
                            "[[agent]]\nid = \"{}\"\nprovider = \"claude\"\ncommand = [\"python3\", \"{}\"]\n\
                             [agent.env]\nFAKE_CLAUDE_TEXT_FILE = \"{}\"\nFAKE_CLAUDE_SENT_FILE = \"{}\"\n\
                             FAKE_CLAUDE_CHUNK = \"{CHUNK}\"\nFAKE_CLAUDE_DELAY_MS = \"{}\"\n\n",
                            if i == 1 { "oa".to_owned() } else { format!("p{i}") },
                            fake.display(),
                            dir.join("answer.txt").display(),
                            dir.join(format!("sent-{i}.txt")).display(),
                            EVERY.as_millis(),
                        )
                    })
                    .collect();
                std::fs::write(dir.join("hive.toml"), config).expect("config");
                Self::Pipe { sent }
            }
        }
    }

    /// The agent's own processes, left out of hive's CPU.
    fn agent_marker(&self) -> Option<&'static str> {
        match self {
            Self::Openai(_) => None,
            Self::Pipe { .. } => Some("fake_claude.py"),
        }
    }

    /// When each of the `chunks` chunks left the source, by chunk.
    fn sent(&self, chunks: usize) -> Vec<Instant> {
        match self {
            Self::Openai(model) => model.sent(),
            Self::Pipe { sent } => {
                // The fake writes its times after its last chunk's pause,
                // which a fast screen can beat: wait for all of them.
                let deadline = Instant::now() + Duration::from_secs(10);
                let mut text = String::new();
                while Instant::now() < deadline {
                    text = std::fs::read_to_string(sent).unwrap_or_default();
                    if text.lines().count() >= chunks {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                // The fake's wall clock, moved onto this process's Instants.
                let (now, wall) = (Instant::now(), std::time::SystemTime::now());
                let wall_ns = wall
                    .duration_since(std::time::UNIX_EPOCH)
                    .expect("clock")
                    .as_nanos();
                text.lines()
                    .filter_map(|l| l.parse::<u128>().ok())
                    .map(|ns| now - Duration::from_nanos((wall_ns.saturating_sub(ns)) as u64))
                    .collect()
            }
        }
    }
}

/// The answer `stream` sends: `chars` of markdown, then its last words.
fn streamed_answer(chars: usize) -> String {
    let mut text = answer(chars);
    text.push_str("\n\n");
    text.push_str(END);
    text
}

/// The answer in the chunks the source sends.
fn chunked(text: &str) -> Vec<&str> {
    text.as_bytes()
        .chunks(CHUNK)
        .map(|c| std::str::from_utf8(c).expect("the answer is ASCII"))
        .collect()
}

/// Each section heading of the answer, with the chunk that completes it.
fn headings(text: &str) -> Vec<(String, usize)> {
    (1..)
        .map(|n| format!("Section {n} of the long answer"))
        .map_while(|h| {
            let end = text.find(&h)? + h.len();
            Some((h, (end - 1) / CHUNK))
        })
        .collect()
}

/// Watches the answer stream until `panes` panes show its end; when each
/// heading was first shown.
fn watch_headings(
    hive: &mut Console,
    headings: &[(String, usize)],
    panes: usize,
) -> Vec<Option<Instant>> {
    let mut shown: Vec<Option<Instant>> = vec![None; headings.len()];
    let mut next = 0;
    let ended = hive.watch(patience(Duration::from_secs(120)), |at, screen| {
        // A heading scrolled past between two frames is never seen; look a
        // few ahead so one miss does not stall the scan.
        for (i, (h, _)) in headings.iter().enumerate().skip(next).take(4) {
            if shown[i].is_none() && screen.contains(h.as_str()) {
                shown[i] = Some(at);
                next = i + 1;
            }
        }
        screen.matches(END).count() >= panes
    });
    assert!(ended, "the answer's end never showed");
    shown
}

/// Each shown heading's time from its chunk leaving the source, sorted.
fn latencies(
    headings: &[(String, usize)],
    shown: &[Option<Instant>],
    sent: &[Instant],
) -> Vec<Duration> {
    let mut lat: Vec<Duration> = headings
        .iter()
        .zip(shown)
        .filter_map(|((_, chunk), at)| {
            Some(at.as_ref()?.saturating_duration_since(*sent.get(*chunk)?))
        })
        .collect();
    lat.sort();
    lat
}

/// Whether hive runs under a `WRAP` tool (a profiler).
fn wrapped() -> bool {
    std::env::var("WRAP").is_ok_and(|w| !w.trim().is_empty())
}

/// `wait`, or thirty times it under a `WRAP` tool: callgrind runs hive
/// some fifty times slower.
fn patience(wait: Duration) -> Duration {
    if wrapped() { wait * 30 } else { wait }
}

/// One streamed answer; returns (cpu s, bytes per char, rss MB per MB of
/// text, latency p50 ms, p99 ms).
fn stream(cols: u16, rows: u16, chars: usize, agent: Agent, panes: usize) -> [f64; 5] {
    let text = streamed_answer(chars);
    let chunks = chunked(&text);
    let dir = tempfile::tempdir().expect("tempdir");
    let source = Source::start(agent, dir.path(), &text, &chunks, panes);
    let mut hive = Console::start(dir.path(), cols, rows);
    hive.until_shown(patience(Duration::from_secs(10)), "oa")
        .expect("hive draws its pane");
    std::thread::sleep(Duration::from_millis(500));
    hive.drain();

    let headings = headings(&text);
    let (pid, marker) = (hive.pid, source.agent_marker());
    let cpu_now = || tree_cpu_but(pid, marker);
    let rss0 = tree_max_mb(hive.pid, "VmRSS:");
    let cpu0 = cpu_now();
    let woke0 = tree_switches_but(pid, marker);
    let (bytes0, frames0) = (hive.bytes, hive.frames);
    // The other panes first, each focused in turn; the first pane last,
    // keeping the focus.
    for i in (2..=panes).chain([1]) {
        if panes > 1 {
            hive.send(format!("\x1b{i}").as_bytes());
        }
        hive.send(b"go\r");
    }
    let shown = watch_headings(&mut hive, &headings, panes);
    let cpu = cpu_now() - cpu0;
    let woke = tree_switches_but(pid, marker).saturating_sub(woke0);
    let bytes = hive.bytes - bytes0;
    let frames = hive.frames - frames0;
    let hwm = tree_max_mb(hive.pid, "VmHWM:");
    let rss = tree_max_mb(hive.pid, "VmRSS:");
    // Before hive (and with it the agent, still writing them) ends.
    let sent = source.sent(chunks.len());
    if wrapped() {
        // A profiler writes its file at a clean exit, not at the kill.
        hive.quit(patience(Duration::from_secs(10)));
    }
    drop(hive);

    let lat = latencies(&headings, &shown, &sent);
    // Every pane streams the text: per char of all of it.
    let all = (text.len() * panes) as f64;
    let mb = all / 1e6;
    println!(
        "stream ({panes} {} pane(s), {cols}x{rows}, {} chars in {CHUNK}-char chunks {} ms apart): \
         cpu {cpu:.3} s ({:.3} s per 100k chars), terminal {:.2} bytes per char, \
         rss peak {hwm:.1} MB (+{:.1} MB per MB of text), \
         latency p50 {:.1} ms p99 {:.1} ms max {:.1} ms ({} of {} headings seen), \
         {frames} frames, hive's threads switched {woke} times",
        match agent {
            Agent::Openai => "openai",
            Agent::Pipe => "claude (fake, over a pipe)",
        },
        text.len(),
        EVERY.as_millis(),
        cpu * 100_000.0 / all,
        bytes as f64 / all,
        (rss - rss0) / mb,
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.99)),
        ms(lat.last().copied().unwrap_or_default()),
        lat.len(),
        headings.len(),
    );
    [
        cpu,
        bytes as f64 / all,
        (rss - rss0) / mb,
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.99)),
    ]
}

/// Keys typed while `panes` panes stream; returns (p50 ms, p99 ms).
fn keypress(cols: u16, rows: u16, panes: usize, keys: usize) -> [f64; 2] {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // Long enough to stream through the whole measurement.
    let scenario = format!(
        "chunk_chars = {CHUNK}\ndelay_ms = {}\n[[turn]]\n[[turn.step]]\ntext = '''\n{}'''\n",
        EVERY.as_millis(),
        answer(400_000)
    );
    std::fs::write(d.join("long.toml"), scenario).expect("scenario");
    let config: String = (1..=panes)
        .map(|i| {
            format!("[[agent]]\nid = \"p{i}\"\nprovider = \"script\"\nscript = \"long.toml\"\n")
        })
        .collect();
    std::fs::write(d.join("hive.toml"), config).expect("config");
    let mut hive = Console::start(d, cols, rows);
    hive.until_shown(Duration::from_secs(10), &format!("p{panes}"))
        .expect("hive draws its panes");
    start_all(&mut hive, panes);
    hive.send(b"\x1b1");
    hive.until_shown(Duration::from_secs(10), "Section 2 of")
        .expect("the answers stream");

    let cpu0 = tree_cpu(hive.pid);
    let wall0 = Instant::now();
    let (lat, missed) = type_keys(&mut hive, keys);
    let cpu = tree_cpu(hive.pid) - cpu0;
    let wall = wall0.elapsed().as_secs_f64();
    println!(
        "keypress → frame ({panes} panes streaming, {cols}x{rows}, {} keys, {missed} not shown within 2 s): \
         p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms; hive cpu {cpu:.2} s over {wall:.1} s ({:.0} %)",
        lat.len(),
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.99)),
        ms(lat.last().copied().unwrap_or_default()),
        cpu / wall * 100.0,
    );
    [ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))]
}

/// Types `keys` keys into the focused pane's composer, one every 120 ms;
/// the time from writing each to the first output after which the screen
/// shows it (sorted), and how many never showed within 2 s.
fn type_keys(hive: &mut Console, keys: usize) -> (Vec<Duration>, usize) {
    let mut lat = Vec::with_capacity(keys);
    let mut missed = 0;
    // An unmeasured marker that is in no answer, then measured letters;
    // every 30 keys the line is erased so the composer never wraps.
    let mut typed = String::new();
    for k in 0..keys {
        if k % 30 == 0 {
            if !typed.is_empty() {
                hive.send(&vec![0x7f; typed.len()]);
                std::thread::sleep(Duration::from_millis(300));
            }
            typed = "ZQX".into();
            hive.send(typed.as_bytes());
            std::thread::sleep(Duration::from_millis(300));
        }
        hive.drain();
        typed.push((b'a' + (k % 26) as u8) as char);
        let at = Instant::now();
        hive.send(&typed.as_bytes()[typed.len() - 1..]);
        match hive.until_shown(Duration::from_secs(2), &typed) {
            Some(shown) => lat.push(shown.saturating_duration_since(at)),
            None => missed += 1,
        }
        std::thread::sleep(Duration::from_millis(120));
    }
    lat.sort();
    (lat, missed)
}

/// Starts the first `panes` panes one after another: focus
/// (Alt+N), type, Enter.
fn start_all(hive: &mut Console, panes: usize) {
    for i in 1..=panes {
        hive.send(format!("\x1b{i}").as_bytes());
        std::thread::sleep(Duration::from_millis(100));
        hive.send(b"go\r");
        std::thread::sleep(Duration::from_millis(150));
    }
}

/// The memory mode's first answer, before the baseline is read.
const WARM_UP: &str = "Warming up:\n\n```rust\nfn warm() -> u8 {\n    1\n}\n```\n\nWarmed up.";

/// `panes` openai panes each streaming `deltas` 8-char deltas; returns hive's
/// RSS growth per MB of text at the end and after settling, and its peak.
fn memory(cols: u16, rows: u16, panes: usize, deltas: usize) -> [f64; 3] {
    const DELTA: usize = 8;
    let mut text = answer(deltas.saturating_sub(4) * DELTA);
    text.push_str("\n\n");
    text.push_str(END);
    let whole: std::sync::Arc<str> = text.into();
    // syntect compiles a grammar's regexes the first time it highlights with
    // it (about 6.7 MB for Rust's, whatever the text's length): a short
    // answer with a code block pays that before the baseline, so the figure
    // is what the streamed text costs.
    let warm = server::Reply::Text(WARM_UP.into(), DELTA);
    let model = server::Server::start(
        std::iter::once(warm)
            .chain((0..panes).map(|_| server::Reply::Text(std::sync::Arc::clone(&whole), DELTA)))
            .collect(),
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let config: String = (1..=panes)
        .map(|i| {
            format!(
                "[[agent]]\nid = \"m{i}\"\nprovider = \"openai\"\nmodel = \"bench\"\nbase_url = \"{}\"\n",
                model.base_url
            )
        })
        .collect();
    std::fs::write(dir.path().join("hive.toml"), config).expect("config");
    let mut hive = Console::start(dir.path(), cols, rows);
    hive.until_shown(Duration::from_secs(30), &format!("m{panes}"))
        .expect("hive draws its panes");
    hive.send(b"\x1b1");
    std::thread::sleep(Duration::from_millis(100));
    hive.send(b"warm up\r");
    hive.until_shown(Duration::from_secs(30), "Warmed up.")
        .expect("the warm-up answer shows");
    std::thread::sleep(Duration::from_millis(500));
    hive.drain();
    let rss0 = tree_max_mb(hive.pid, "VmRSS:");
    let cpu0 = tree_cpu(hive.pid);
    let wall0 = Instant::now();
    start_all(&mut hive, panes);
    // Every pane shows the end of its answer.
    let ended = hive.watch(Duration::from_secs(1200), |_, screen| {
        screen.matches(END).count() >= panes
    });
    assert!(ended, "not every answer's end showed");
    let wall = wall0.elapsed().as_secs_f64();
    let cpu = tree_cpu(hive.pid) - cpu0;
    let end = tree_max_mb(hive.pid, "VmRSS:");
    let settle = Duration::from_millis(env_or("SETTLE_MS", 3000));
    hive.watch(settle, |_, _| false);
    let settled = tree_max_mb(hive.pid, "VmRSS:");
    let hwm = tree_max_mb(hive.pid, "VmHWM:");
    hive.quit(Duration::from_secs(120));
    drop(hive);
    let mb = (whole.len() * panes + WARM_UP.len()) as f64 / 1e6;
    println!(
        "memory ({panes} openai panes, {cols}x{rows}, {deltas} deltas of {DELTA} chars each, \
         {mb:.1} MB of text): rss {rss0:.1} MB before, +{:.1} MB at the end ({:.2}x the text), \
         +{:.1} MB settled ({:.2}x), peak {hwm:.1} MB; hive cpu {cpu:.1} s over {wall:.1} s",
        end - rss0,
        (end - rss0) / mb,
        settled - rss0,
        (settled - rss0) / mb,
    );
    [(end - rss0) / mb, (settled - rss0) / mb, hwm]
}

fn main() {
    // `cargo test --benches` runs bench binaries with no filter; keep it short then.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |name: &str| {
        (only.is_empty() && !["memory", "attach", "remote", "swarm"].contains(&name))
            || only.iter().any(|o| o == name)
    };
    let (cols, rows): (u16, u16) = (env_or("COLS", 160), env_or("ROWS", 48));
    let runs: usize = env_or("RUNS", 1);
    for (name, agent) in [("stream", Agent::Openai), ("pipe", Agent::Pipe)] {
        if !wants(name) {
            continue;
        }
        let chars: usize = env_or("CHARS", 108_438);
        // Side by side, only over pipes (the model server serves one answer).
        let panes = if agent == Agent::Pipe {
            env_or("PANES", 1)
        } else {
            1
        };
        let all: Vec<[f64; 5]> = (0..runs)
            .map(|_| stream(cols, rows, chars, agent, panes))
            .collect();
        if runs > 1 {
            let m = |i: usize| median(all.iter().map(|r| r[i]).collect());
            println!(
                "{name}, median of {runs}: cpu {:.3} s, {:.2} bytes per char, +{:.1} MB RSS per MB, latency p50 {:.1} ms p99 {:.1} ms",
                m(0),
                m(1),
                m(2),
                m(3),
                m(4)
            );
        }
    }
    if wants("memory") {
        let (panes, deltas): (usize, usize) = (env_or("PANES", 9), env_or("DELTAS", 150_000));
        let all: Vec<[f64; 3]> = (0..runs)
            .map(|_| memory(cols, rows, panes, deltas))
            .collect();
        if runs > 1 {
            let m = |i: usize| median(all.iter().map(|r| r[i]).collect());
            println!(
                "memory, median of {runs}: {:.2}x the text at the end, {:.2}x settled, peak {:.1} MB",
                m(0),
                m(1),
                m(2)
            );
        }
    }
    if wants("attach") {
        let (panes, items): (usize, usize) = (env_or("PANES", 9), env_or("ITEMS", 10_000));
        let all: Vec<[f64; 3]> = (0..runs)
            .map(|_| attach::attach(cols, rows, panes, items))
            .collect();
        if runs > 1 {
            let m = |i: usize| median(all.iter().map(|r| r[i]).collect());
            println!(
                "attach, median of {runs}: first frame {:.0} ms, console peak RSS {:.1} MB, server RSS {:.1} MB",
                m(0),
                m(1),
                m(2)
            );
        }
    }
    if wants("remote") {
        let chars: usize = env_or("CHARS", 108_438);
        let all: Vec<[f64; 6]> = (0..runs)
            .map(|_| remote::remote(cols, rows, chars))
            .collect();
        if runs > 1 {
            let m = |i: usize| median(all.iter().map(|r| r[i]).collect());
            println!(
                "remote, median of {runs}: client cpu {:.3} s over ssh vs {:.3} s local ({:.2}x), latency p50 {:.1} ms p99 {:.1} ms, reconnect {:.0} ms",
                m(0),
                m(1),
                m(0) / m(1),
                m(2),
                m(3),
                m(5)
            );
        }
    }
    if wants("swarm") {
        let (panes, keys): (usize, usize) = (env_or("PANES", 30), env_or("KEYS", 60));
        let chars: usize = env_or("CHARS", 108_438);
        for _ in 0..runs {
            swarm::swarm(cols, rows, panes, chars, keys);
        }
    }
    if wants("keypress") {
        let (panes, keys): (usize, usize) = (env_or("PANES", 6), env_or("KEYS", 120));
        let all: Vec<[f64; 2]> = (0..runs)
            .map(|_| keypress(cols, rows, panes, keys))
            .collect();
        if runs > 1 {
            let m = |i: usize| median(all.iter().map(|r| r[i]).collect());
            println!(
                "keypress, median of {runs}: p50 {:.1} ms p99 {:.1} ms",
                m(0),
                m(1)
            );
        }
    }
}
