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

/// The first instant after `now` on a grid of `every` shared by the whole
/// process (counted from its first call): timers of different panes that
/// tick at the same rate, or at multiples of it, fire together. Thirty
/// panes streaming each rested one tick from their own last read, so their
/// reads, runners and the frames they sent to each console were spread
/// over the tick, thirty wake-ups of the server and of every console a
/// tick; on one grid they are one (issue 45 item 2). The wait is never
/// longer than `every`, as one tick from `now` was.
pub fn next_tick(now: Instant, every: std::time::Duration) -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let epoch = *EPOCH.get_or_init(|| now);
    let every_ns = every.as_nanos();
    if every_ns == 0 {
        return now;
    }
    let since = now.saturating_duration_since(epoch).as_nanos();
    let ticks = since / every_ns + 1;
    let at = ticks.saturating_mul(every_ns);
    u64::try_from(at)
        .ok()
        .and_then(|ns| epoch.checked_add(std::time::Duration::from_nanos(ns)))
        .map_or(now + every, |at| at.min(now + every))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Two timers armed at different moments of one tick fire at the same
    /// instant, at most one tick after each was armed; a slower rate that
    /// is a multiple of the tick lands on the same grid.
    #[test]
    fn timers_armed_within_one_tick_fire_together() {
        let every = Duration::from_millis(16);
        // The grid's epoch is set by its first call, maybe another test's
        // on another thread: from here on `now` is past it.
        next_tick(Instant::now(), every);
        let a = Instant::now();
        let first = next_tick(a, every);
        let b = first + Duration::from_millis(3);
        let c = first + Duration::from_millis(14);
        assert_eq!(next_tick(b, every), next_tick(c, every));
        for at in [a, b, c] {
            let t = next_tick(at, every);
            assert!(t > at && t - at <= every, "{:?} after", t - at);
        }
        let slow = next_tick(b, every * 4);
        assert_eq!((slow - first).as_nanos() % every.as_nanos(), 0);
        assert_eq!(next_tick(b, Duration::ZERO), b);
    }
}
