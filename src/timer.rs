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
    // `now` may be before the epoch: read before another thread's first
    // call set it, or on a clock a test has paused and advanced. The grid
    // runs both ways from the epoch.
    let on_grid = if now >= epoch {
        let ticks = (now - epoch).as_nanos() / every_ns + 1;
        nanos(ticks.saturating_mul(every_ns)).and_then(|d| epoch.checked_add(d))
    } else {
        let ticks = (epoch - now).as_nanos() / every_ns;
        let at = nanos(ticks.saturating_mul(every_ns)).and_then(|d| epoch.checked_sub(d));
        at.map(|at| if at > now { at } else { at + every })
    };
    on_grid.map_or(now + every, |at| at.min(now + every))
}

/// `ns` nanoseconds, when a `Duration` of them fits in a u64's count.
fn nanos(ns: u128) -> Option<std::time::Duration> {
    u64::try_from(ns).ok().map(std::time::Duration::from_nanos)
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

    /// An instant before the grid's epoch (read before another thread's
    /// first call, or on a paused clock) still lands on the grid: once
    /// the epoch was set later than these instants, two of one tick fired
    /// 11 ms apart.
    #[test]
    fn instants_before_the_epoch_share_the_grid_too() {
        let every = Duration::from_millis(16);
        let before = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        // Sets the epoch unless another test did: both ways, `before` is
        // then on the grid's far side or near it.
        let epoch_side = next_tick(Instant::now(), every);
        let b = before + Duration::from_millis(1);
        let c = before + Duration::from_millis(1) + Duration::from_micros(500);
        let (tb, tc) = (next_tick(b, every), next_tick(c, every));
        assert!(tb > b && tb - b <= every && tc > c && tc - c <= every);
        // Both land on the grid the later call was on.
        let off = |t: Instant| {
            let d = if t > epoch_side {
                t - epoch_side
            } else {
                epoch_side - t
            };
            d.as_nanos() % every.as_nanos()
        };
        assert_eq!((off(tb), off(tc)), (0, 0));
    }
}
