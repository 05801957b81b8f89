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

/// Large allocations (a streamed answer's text as it doubles, a long tool
/// output) get pages of their own that go back to the system when freed.
/// glibc raises its mmap threshold to the size of each such block freed (up
/// to 32 MB), after which the next ones come from the heap and stay there:
/// nine panes streaming 1.2 MB answers each kept ~50 MB over the text they
/// held (4.6×; 3.4× with the threshold fixed). Setting it turns that
/// adjustment off.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const MMAP_THRESHOLD: libc::c_int = 128 * 1024;
        // SAFETY: mallopt only changes a malloc parameter; it is called
        // before any other thread exists.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        }
    }
}

/// A multi-threaded runtime with I/O and timers enabled.
pub fn build() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
}
