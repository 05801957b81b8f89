//! `swarm` (issue 45 item 4): `PANES` (default 30) panes streaming the
//! reference answer at once, nine to a window, so most of them are in
//! windows out of view. Pane 1 is a `claude` pane on
//! tests/fake/fake_claude.py (its clock times each chunk, so its display
//! latency is measured as `pipe` measures it); the others are `script`
//! panes (played inside the server: no agent process of their own) that
//! stream the same text, headings renamed so only pane 1's count, then a
//! long tail so they still stream afterwards. Reports, with every pane
//! streaming: pane 1's display latency (p50/p99/max), hive's CPU (the
//! console, the server and the supervisor; the fake agent left out) in all
//! and per pane, and frames drawn; then `KEYS` (60) keys typed into pane
//! 1's composer while the others stream on: keypress → frame p50/p99/max.

use std::time::{Duration, Instant};

use super::support::{answer, tree_cpu_but, tree_switches_but};
use super::{CHUNK, Console, END, EVERY, Source, ms, percentile};

/// Writes the config: pane 1 the fake Claude, the others script panes.
/// Returns where pane 1's fake writes its chunks' times.
fn configure(dir: &std::path::Path, text: &str, panes: usize) -> std::path::PathBuf {
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_claude.py");
    std::fs::write(dir.join("answer.txt"), text).expect("answer");
    let sent = dir.join("sent-1.txt");
    // The same text without pane 1's headings and end, then more of it.
    let theirs = text
        .replace("Section", "Chapter")
        .replace(END, "And on it goes.");
    let scenario = format!(
        "chunk_chars = {CHUNK}\ndelay_ms = {}\n[[turn]]\n[[turn.step]]\ntext = '''\n{theirs}\n\n{}'''\n",
        EVERY.as_millis(),
        answer(200_000).replace("Section", "Chapter"),
    );
    std::fs::write(dir.join("swarm.toml"), scenario).expect("scenario");
    let mut config = format!(
        "[[agent]]\nid = \"oa\"\nprovider = \"claude\"\ncommand = [\"python3\", \"{}\"]\n\
         [agent.env]\nFAKE_CLAUDE_TEXT_FILE = \"{}\"\nFAKE_CLAUDE_SENT_FILE = \"{}\"\n\
         FAKE_CLAUDE_CHUNK = \"{CHUNK}\"\nFAKE_CLAUDE_DELAY_MS = \"{}\"\n\n",
        fake.display(),
        dir.join("answer.txt").display(),
        sent.display(),
        EVERY.as_millis(),
    );
    for i in 2..=panes {
        config.push_str(&format!(
            "[[agent]]\nid = \"s{i}\"\nprovider = \"script\"\nscript = \"swarm.toml\"\n\n"
        ));
    }
    std::fs::write(dir.join("hive.toml"), config).expect("config");
    sent
}

/// Starts panes 2.. window by window (Alt+N inside a window, Ctrl+B n to
/// the next), then comes back to window 1 and focuses pane 1.
fn start_others(hive: &mut Console, panes: usize) {
    let windows = panes.div_ceil(9);
    for w in 0..windows {
        for n in 1..=9 {
            let pane = w * 9 + n;
            if pane == 1 || pane > panes {
                continue;
            }
            hive.send(format!("\x1b{n}").as_bytes());
            std::thread::sleep(Duration::from_millis(60));
            hive.send(b"go\r");
            std::thread::sleep(Duration::from_millis(60));
            hive.drain();
        }
        if w + 1 < windows {
            hive.send(b"\x02n");
            std::thread::sleep(Duration::from_millis(150));
        }
    }
    for _ in 1..windows {
        hive.send(b"\x02p");
        std::thread::sleep(Duration::from_millis(150));
    }
    hive.send(b"\x1b1");
    std::thread::sleep(Duration::from_millis(100));
    hive.drain();
}

pub(super) fn swarm(cols: u16, rows: u16, panes: usize, chars: usize, keys: usize) {
    let text = super::streamed_answer(chars);
    let chunks = super::chunked(&text);
    let dir = tempfile::tempdir().expect("tempdir");
    let sent = configure(dir.path(), &text, panes);
    let source = Source::Pipe { sent };
    let mut hive = Console::start(dir.path(), cols, rows);
    hive.until_shown(Duration::from_secs(20), "oa")
        .expect("hive draws its panes");
    std::thread::sleep(Duration::from_millis(500));
    start_others(&mut hive, panes);
    hive.until_shown(Duration::from_secs(20), "Chapter 2 of")
        .expect("the script panes stream");

    let headings = super::headings(&text);
    let (pid, marker) = (hive.pid, source.agent_marker());
    let cpu0 = tree_cpu_but(pid, marker);
    let woke0 = tree_switches_but(pid, marker);
    let (wall0, frames0) = (Instant::now(), hive.frames);
    hive.send(b"go\r");
    let shown = super::watch_headings(&mut hive, &headings, 1);
    let cpu = tree_cpu_but(pid, marker) - cpu0;
    let woke = tree_switches_but(pid, marker).saturating_sub(woke0);
    let wall = wall0.elapsed().as_secs_f64();
    let frames = hive.frames - frames0;
    let lat = super::latencies(&headings, &shown, &source.sent(chunks.len()));
    println!(
        "swarm ({panes} panes streaming, {cols}x{rows}, pane 1 a fake claude over a pipe, \
         {} chars in {CHUNK}-char chunks {} ms apart): display latency p50 {:.1} ms \
         p99 {:.1} ms max {:.1} ms ({} of {} headings seen); hive cpu {cpu:.2} s over \
         {wall:.1} s ({:.0} %), {:.3} s per pane; {frames} frames; hive's threads \
         switched {woke} times ({:.0} a second)",
        text.len(),
        EVERY.as_millis(),
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.99)),
        ms(lat.last().copied().unwrap_or_default()),
        lat.len(),
        headings.len(),
        cpu / wall * 100.0,
        cpu / panes as f64,
        woke as f64 / wall,
    );

    let cpu0 = tree_cpu_but(pid, marker);
    let wall0 = Instant::now();
    let (lat, missed) = super::type_keys(&mut hive, keys);
    let cpu = tree_cpu_but(pid, marker) - cpu0;
    let wall = wall0.elapsed().as_secs_f64();
    println!(
        "swarm keypress → frame ({} others streaming, {} keys, {missed} not shown within 2 s): \
         p50 {:.1} ms p99 {:.1} ms max {:.1} ms; hive cpu {cpu:.2} s over {wall:.1} s ({:.0} %)",
        panes - 1,
        lat.len(),
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.99)),
        ms(lat.last().copied().unwrap_or_default()),
        cpu / wall * 100.0,
    );
    hive.quit(Duration::from_secs(10));
}
