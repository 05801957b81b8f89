//! The runner's sampling of its agent's process tree (issue 33 item 6):
//! about once a second, the CPU share and memory of the agent and its
//! children (`procstat`), sent to the consoles as `PaneEvent::Process`
//! when they changed enough to show. The provider says which process is
//! its agent (`EventSink::set_agent_pid`); an HTTP agent has none.
//!
//! Between turns the sampling stops once a sample shows nothing new and
//! no CPU (an idle agent's figures do not move): an idle server is not
//! woken once a second per pane (issue 45 item 3). It starts again with
//! the next turn; a background job that keeps the tree busy keeps it on.

use std::time::Duration;

use tokio::time::Instant;

use super::{PaneEvent, Runner};
use crate::procstat::{ProcessSample, Sampler};

pub(super) struct Procs {
    every: Option<Duration>,
    /// When the next sample is due.
    pub(super) next: Option<Instant>,
    sampler: Option<Sampler>,
    /// What the consoles were last told.
    shown: Option<ProcessSample>,
}

impl Procs {
    pub(super) fn new(every: Option<Duration>) -> Self {
        Self {
            every,
            next: every.map(|e| Instant::now() + e),
            sampler: None,
            shown: None,
        }
    }
}

/// Whether `now` differs from what was shown by enough to show: a tenth
/// of a percent of CPU, a process, or 64 KiB of memory.
fn changed(shown: Option<&ProcessSample>, now: Option<&ProcessSample>) -> bool {
    match (shown, now) {
        (Some(a), Some(b)) => {
            (a.cpu_percent - b.cpu_percent).abs() >= 0.1
                || a.processes != b.processes
                || a.rss_bytes.abs_diff(b.rss_bytes) >= 64 << 10
        }
        (None, None) => false,
        _ => true,
    }
}

/// Whether to sample again after `now` (what was just read, `changed`
/// from what was shown): always while a turn runs; between turns only
/// while the figures move or the tree spends CPU.
fn keeps_sampling(busy: bool, changed: bool, now: Option<&ProcessSample>) -> bool {
    busy || changed || now.is_some_and(|s| s.cpu_percent >= 0.1)
}

impl Procs {
    /// A turn starts: sample again if the sampling had stopped.
    pub(super) fn wake(&mut self) {
        if self.next.is_none()
            && let Some(every) = self.every
        {
            self.next = Some(Instant::now() + every);
        }
    }
}

impl Runner {
    pub(super) fn sample_processes(&mut self) {
        let Some(every) = self.procs.every else {
            self.procs.next = None;
            return;
        };
        self.procs.next = Some(Instant::now() + every);
        let pid = self
            .provider_rx
            .as_ref()
            .and_then(crate::provider::EventReceiver::agent_pid);
        let sample = match pid {
            Some(pid) => {
                if self.procs.sampler.as_ref().map(Sampler::pid) != Some(pid) {
                    self.procs.sampler = Some(Sampler::new(pid));
                }
                self.procs.sampler.as_mut().and_then(Sampler::sample)
            }
            None => {
                self.procs.sampler = None;
                None
            }
        };
        let changed = changed(self.procs.shown.as_ref(), sample.as_ref());
        if !keeps_sampling(self.state.is_busy(), changed, sample.as_ref()) {
            self.procs.next = None;
        }
        if changed {
            self.procs.shown = sample;
            // Not recorded: the recorder keeps the conversation only.
            let _ = self.out.send(super::PaneUpdate {
                pane: self.pane,
                event: PaneEvent::Process(sample),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_moves_are_not_sent() {
        let s = |cpu: f64, rss: u64| ProcessSample {
            cpu_percent: cpu,
            rss_bytes: rss,
            processes: 1,
        };
        assert!(!changed(
            Some(&s(1.0, 1 << 20)),
            Some(&s(1.05, (1 << 20) + 100))
        ));
        assert!(changed(Some(&s(1.0, 1 << 20)), Some(&s(1.2, 1 << 20))));
        assert!(changed(Some(&s(1.0, 1 << 20)), Some(&s(1.0, 2 << 20))));
        assert!(changed(None, Some(&s(0.0, 0))));
        assert!(changed(Some(&s(0.0, 0)), None));
    }

    fn sample(cpu_percent: f64) -> ProcessSample {
        ProcessSample {
            cpu_percent,
            rss_bytes: 100 << 20,
            processes: 2,
        }
    }

    /// Sampling stops between turns once the figures rest (no wake-up a
    /// second per idle pane), and goes on while they move.
    #[test]
    fn sampling_rests_between_turns_once_the_figures_do() {
        let idle = sample(0.0);
        assert!(!keeps_sampling(false, false, Some(&idle)));
        assert!(!keeps_sampling(false, false, None));
        assert!(keeps_sampling(true, false, Some(&idle)), "a turn runs");
        assert!(keeps_sampling(false, true, Some(&idle)), "it just changed");
        assert!(
            keeps_sampling(false, false, Some(&sample(3.0))),
            "a job runs"
        );
        let mut procs = Procs::new(Some(Duration::from_secs(1)));
        procs.next = None;
        procs.wake();
        assert!(procs.next.is_some(), "a turn starts the sampling again");
        let mut never = Procs::new(None);
        never.wake();
        assert!(never.next.is_none());
    }
}
