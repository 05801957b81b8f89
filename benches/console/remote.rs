//! `remote` (issue 30): the `stream` answer (an `openai` pane on the
//! project's model server) shown by a console attached over ssh to a real
//! sshd on 127.0.0.1 (the tests' `support::sshd`), then by a console
//! attached to a local server, one after the other.
//!
//! Reports the client's CPU with its transport — the console and its ssh,
//! ssh's master connection, sshd's session processes and `hive relay`, not
//! the server — against the local console's alone (its server left out
//! too); the display latency over ssh (for each section heading, from the
//! chunk that completed it leaving the model server to the first screen
//! showing it); then the time from killing ssh's master connection to the
//! console showing it reconnected (the link is back at once: sshd runs).

use std::path::Path;
use std::time::{Duration, Instant};

use super::sshd::Sshd;
use super::support::{tree_cpu, tree_cpu_but};
use super::{CHUNK, Console, Source, chunked, ms, percentile, streamed_answer};

/// One answer shown by `hive`: the console's pid and its latencies.
struct Shown {
    cpu: f64,
    lat: Vec<Duration>,
}

/// (client cpu over ssh s, local client cpu s, latency p50 ms, p99 ms,
/// max ms, reconnect ms).
pub(super) fn remote(cols: u16, rows: u16, chars: usize) -> [f64; 6] {
    let bin = std::env::var("HIVE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_hive").into());
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(sshd) = Sshd::start(dir.path(), None) else {
        println!("remote: skipped (no sshd)");
        return [f64::NAN; 6];
    };
    sshd.seed_binary(Path::new(&bin));
    let project = sshd.remote_home.join("proj");
    std::fs::create_dir_all(&project).expect("project");
    let local = dir.path().join("local");
    std::fs::create_dir_all(&local).expect("local");
    sshd.masters_in(local.join("run/ssh"));
    let env = [("HIVE_SSH", sshd.ssh_command())];
    let url = sshd.url(&project);
    let (over_ssh, reconnect) = {
        let args = ["attach", url.as_str()];
        let start = || Console::start_env(&local, cols, rows, &args, &env);
        let (shown, mut hive) = show(start, &project, chars, |hive| {
            // The transport: ssh's master and sshd's sessions (the relay
            // among them), not the server below the relay.
            tree_cpu(hive.pid)
                + master(&local).map_or(0.0, tree_cpu)
                + tree_cpu_but(sshd.pid(), Some("serve"))
        });
        let reconnect = reconnect(&mut hive, &local);
        (shown, reconnect)
    };
    let here = tempfile::tempdir().expect("tempdir");
    let local_run = {
        let start = || Console::start(here.path(), cols, rows);
        show(start, here.path(), chars, |hive| {
            tree_cpu_but(hive.pid, Some("serve"))
        })
        .0
    };
    let lat = &over_ssh.lat;
    let out = [
        over_ssh.cpu,
        local_run.cpu,
        ms(percentile(lat, 0.5)),
        ms(percentile(lat, 0.99)),
        ms(lat.last().copied().unwrap_or_default()),
        reconnect,
    ];
    println!(
        "remote ({} chars in {CHUNK}-char chunks, openai pane): client cpu {:.3} s over ssh \
         (console, ssh, sshd, relay) vs {:.3} s local ({:.2}x); latency over ssh p50 {:.1} ms \
         p99 {:.1} ms max {:.1} ms ({} headings); reconnect after the master was killed {:.0} ms",
        chars,
        out[0],
        out[1],
        out[0] / out[1],
        out[2],
        out[3],
        out[4],
        lat.len(),
        out[5],
    );
    out
}

/// Writes the config of a pane streaming the answer into `project`, starts
/// the console, and has the answer shown; `cpu(hive)` is what is measured.
fn show(
    start: impl FnOnce() -> Console,
    project: &Path,
    chars: usize,
    cpu: impl Fn(&Console) -> f64,
) -> (Shown, Console) {
    let text = streamed_answer(chars);
    let chunks = chunked(&text);
    let source = Source::start(super::Agent::Openai, project, &text, &chunks, 1);
    let mut hive = start();
    hive.until_shown(Duration::from_secs(30), "oa")
        .expect("hive draws its pane");
    std::thread::sleep(Duration::from_millis(500));
    hive.drain();
    let headings = super::headings(&text);
    let cpu0 = cpu(&hive);
    hive.send(b"go\r");
    let shown = super::watch_headings(&mut hive, &headings, 1);
    let used = cpu(&hive) - cpu0;
    let sent = source.sent(chunks.len());
    let lat = super::latencies(&headings, &shown, &sent);
    (Shown { cpu: used, lat }, hive)
}

/// The pid of ssh's master connection for the console in `local`.
fn master(local: &Path) -> Option<u32> {
    super::sshd::master_pid(&local.join("run/ssh")).map(|p| p as u32)
}

/// Kills the master connection; ms until the console says it reconnected.
fn reconnect(hive: &mut Console, local: &Path) -> f64 {
    let Some(pid) = master(local) else {
        return f64::NAN;
    };
    hive.drain();
    let killed = Instant::now();
    // SAFETY: kill(2) on the ssh master this bench's console started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    match hive.until_shown(Duration::from_secs(30), "reconnected") {
        Some(at) => ms(at.saturating_duration_since(killed)),
        None => f64::NAN,
    }
}
