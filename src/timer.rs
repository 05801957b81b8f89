//! Optional timers for `select!` loops: a missing deadline never fires, so a
//! loop can select on its next timer unconditionally.

use tokio::time::Instant;

/// Sleeps until `at`; pends forever when there is no deadline.
pub async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
