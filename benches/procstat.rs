//! What sampling the panes' process trees costs (issue 33 item 6: at most
//! 1 % of a core with 9 panes). Starts 9 trees like an agent's (a shell, a
//! child, a grandchild: 3 processes each), samples all 9 the way each
//! runner does once a second, and reports the CPU time one round takes on
//! this thread and the share of a core that is at one round a second.
//!
//! Run: `cargo bench --bench procstat` (HIVE_BENCH_ROUNDS overrides 500).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hive::procstat::Sampler;

const PANES: usize = 9;

/// This thread's CPU time so far.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer for the calling thread's clock.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() {
    let rounds: usize = std::env::var("HIVE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let mut trees: Vec<_> = (0..PANES)
        .map(|_| {
            Command::new("sh")
                .args(["-c", "sh -c 'sleep 300 & wait' & wait"])
                .stdout(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut samplers: Vec<Sampler> = trees.iter().map(|c| Sampler::new(c.id())).collect();
    let processes: u32 = samplers
        .iter_mut()
        .map(|s| s.sample().map_or(0, |x| x.processes))
        .sum();
    let (cpu0, wall0) = (thread_cpu(), Instant::now());
    for _ in 0..rounds {
        for s in &mut samplers {
            std::hint::black_box(s.sample());
        }
    }
    let cpu = (thread_cpu() - cpu0) / rounds as u32;
    let wall = wall0.elapsed() / rounds as u32;
    for c in &mut trees {
        // SAFETY: signalling the bench's own process groups.
        unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
        let _ = c.wait();
    }
    println!(
        "procstat: {PANES} panes, {processes} processes; one round: {:.1} µs CPU ({:.1} µs wall); \
         at 1 Hz: {:.3} % of a core",
        cpu.as_secs_f64() * 1e6,
        wall.as_secs_f64() * 1e6,
        cpu.as_secs_f64() * 100.0
    );
}
