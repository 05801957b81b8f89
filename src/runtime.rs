//! The tokio runtime shared by the console and the headless commands.
//!
//! One worker: the console's own loop runs on the calling thread
//! (`block_on`), so the UI never waits behind a provider's task anyway,
//! and the providers' and runners' tasks pass each event along a channel
//! to the next task. With two workers each such hand-off woke the idle
//! worker to steal it, a futex wake and a context switch per SSE chunk;
//! on one worker the next task runs right after, on the same thread.
//! Streaming the reference answer took 8% less of hive's CPU (console
//! stream bench, medians of 3: 0.65 s against 0.71 s). The price: terminal
//! input (`app::tty::Input`, a task) and the loop's timers are driven by
//! that one worker, so a task that held it long would delay a key; the
//! providers parse a line at a time, and with six panes streaming a key
//! still shows within 3 ms (`console keypress` p99).

use std::io;

/// A multi-threaded runtime with I/O and timers enabled.
pub fn build() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
}
