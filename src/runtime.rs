//! The tokio runtime shared by the console and the headless commands: two
//! workers, because the machine hive targets has two cores and the UI thread
//! must never wait behind a provider's busy loop.

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
        .worker_threads(2)
        .enable_all()
        .build()
}
