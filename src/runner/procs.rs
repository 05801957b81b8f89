//! The runner's sampling of its agent's process tree (issue 33 item 6):
//! about once a second, the CPU share and memory of the agent and its
//! children (`procstat`), sent to the consoles as `PaneEvent::Process`
//! when they changed enough to show. The provider says which process is
//! its agent (`EventSink::set_agent_pid`); an HTTP agent has none.

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
        if changed(self.procs.shown.as_ref(), sample.as_ref()) {
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
}
