//! Terminal panes gone quiet, found by the server (#46 item 8): a client
//! typed into the pane, it printed while no console looked at it, then
//! nothing for [`IDLE_AFTER`]. The server logs a `PaneEvent::Idle` for it,
//! so every console has the inbox entry, one attaching later too, and
//! `notify_command` runs for it with no console attached. (Each console
//! used to find it alone, and it went with that console.)
//!
//! Output a console looked at is seen: it does not arm the watch, and a
//! console looking at the pane disarms it. One report per typed command:
//! typing again re-arms it. Only armed panes set a deadline, so an idle
//! server does not wake for this.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// A terminal pane quiet this long after output is idle.
pub(super) const IDLE_AFTER: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
pub(super) struct IdleWatch {
    /// Slots typed into since their last report.
    typed: HashSet<usize>,
    /// Slots typed into that printed while no console looked: when last.
    output: HashMap<usize, Instant>,
}

impl IdleWatch {
    /// A client typed into terminal pane `slot`.
    pub(super) fn typed(&mut self, slot: usize) {
        self.typed.insert(slot);
    }

    /// Pane `slot`'s screen changed at `now`; `looked_at`: a console
    /// shows it.
    pub(super) fn output(&mut self, slot: usize, now: Instant, looked_at: bool) {
        if looked_at {
            self.output.remove(&slot);
        } else if self.typed.contains(&slot) {
            self.output.insert(slot, now);
        }
    }

    /// A console looks at pane `slot`: what it printed is seen.
    pub(super) fn looked_at(&mut self, slot: usize) {
        self.output.remove(&slot);
    }

    /// When the next pane goes idle, if any is armed.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.output.values().map(|at| *at + IDLE_AFTER).min()
    }

    /// The panes idle at `now`, each disarmed until typed into again.
    pub(super) fn due(&mut self, now: Instant) -> Vec<usize> {
        let mut idle: Vec<usize> = self
            .output
            .iter()
            .filter(|(_, at)| now.saturating_duration_since(**at) >= IDLE_AFTER)
            .map(|(slot, _)| *slot)
            .collect();
        idle.sort_unstable();
        for slot in &idle {
            self.output.remove(slot);
            self.typed.remove(slot);
        }
        idle
    }
}

/// Waits until `deadline`; forever without one.
pub(super) async fn idle_at(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_after_typing_then_quiet_is_idle_once() {
        let t0 = Instant::now();
        let mut w = IdleWatch::default();
        w.output(3, t0, false);
        assert_eq!(w.deadline(), None, "a shell's own prompt is not news");
        w.typed(3);
        w.output(3, t0, false);
        assert_eq!(w.deadline(), Some(t0 + IDLE_AFTER));
        assert!(w.due(t0 + Duration::from_secs(4)).is_empty());
        assert_eq!(w.due(t0 + IDLE_AFTER), vec![3]);
        w.output(3, t0 + IDLE_AFTER, false);
        assert_eq!(w.deadline(), None, "once per typed command");
    }

    #[test]
    fn output_a_console_looks_at_is_seen() {
        let t0 = Instant::now();
        let mut w = IdleWatch::default();
        w.typed(1);
        w.output(1, t0, true);
        assert_eq!(w.deadline(), None);
        w.output(1, t0, false);
        w.looked_at(1);
        assert!(w.due(t0 + IDLE_AFTER).is_empty());
        // Still typed: output while away arms it again.
        w.output(1, t0, false);
        assert_eq!(w.due(t0 + IDLE_AFTER), vec![1]);
    }
}
