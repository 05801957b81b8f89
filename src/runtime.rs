//! The tokio runtime shared by the console and the headless commands: two
//! workers, because the machine hive targets has two cores and the UI thread
//! must never wait behind a provider's busy loop.

use std::io;

/// A multi-threaded runtime with I/O and timers enabled.
pub fn build() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}
