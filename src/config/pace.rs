//! How often text streams, from `[ui]`'s display latency and frame rate:
//! the server's runners send a live tail this often (by focus), and a
//! console draws a background pane's text that late (`app::pace`). Both
//! processes read it from the one config.

use std::time::Duration;

use super::Config;

/// How often a runner sends its live tail: the display latency less one
/// frame interval (a frame may wait that long for its turn). Zero turns the
/// live tail off (text shows as the gradient batches it).
pub fn live_every(config: &Config) -> Option<Duration> {
    if config.ui.display_latency_ms == 0 {
        return None;
    }
    let frame = Duration::from_secs_f64(1.0 / f64::from(config.ui.max_fps.clamp(1, 240)));
    let every = Duration::from_millis(config.ui.display_latency_ms).saturating_sub(frame);
    Some(every.max(Duration::from_millis(4)))
}

/// How much longer than the focused pane's a background pane's text may
/// wait: its live tail (and reading its agent) runs at this multiple of the
/// live tick, and the console draws it that late (`pace`).
const BACKGROUND_FACTOR: u32 = 4;

/// The live tick of a pane out of focus.
pub fn background_every(config: &Config) -> Option<Duration> {
    live_every(config).map(|every| every * BACKGROUND_FACTOR)
}
