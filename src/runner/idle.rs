//! `idle_stop_after = "30m"` (issue 49): an agent idle that long has its
//! process stopped, so a pane left open overnight holds no memory, no
//! CPU and no connection; the next message (typed, queued, or resent after
//! a limit) starts it again on the same session, as a restart does
//! (`ProviderSpec::resume`, which the agent's session report keeps).
//!
//! Only an agent whose session can be resumed is stopped: a terminal pane
//! (its shell's state is in the process) and a provider without resume are
//! left running.

use std::time::Duration;

use tokio::time::Instant;

use super::{Runner, TurnState};
use crate::provider::DiagnosticLevel;

/// The runner's part of idling.
#[derive(Debug, Default)]
pub(super) struct IdleStop {
    after: Option<Duration>,
    /// When the agent is stopped unless a turn starts first.
    pub(super) at: Option<Instant>,
    /// Stopped for idling: the next turn starts the agent again.
    pub(super) stopped: bool,
}

impl IdleStop {
    /// `after` as the config's check let it through (an agent made
    /// otherwise with a bad one is never stopped).
    pub(super) fn new(after: Option<Duration>) -> Self {
        Self {
            after,
            ..Self::default()
        }
    }

    /// The agent went idle (or started): counting from now.
    pub(super) fn arm(&mut self) {
        self.at = self.after.and_then(|d| Instant::now().checked_add(d));
    }

    /// A turn runs: not idle.
    pub(super) fn disarm(&mut self) {
        self.at = None;
    }
}

impl Runner {
    /// The idle time is up: the agent's process goes, the pane stays idle.
    pub(super) fn idle_expired(&mut self) {
        self.idle.at = None;
        let resumable = self.capabilities.resume && self.terminal.is_none();
        if self.turn.is_some() || self.state != TurnState::Idle || !resumable {
            return;
        }
        let Some(p) = self.provider.take() else {
            return;
        };
        tokio::spawn(p.kill());
        self.provider_rx = None;
        self.idle.stopped = true;
        let after = self.idle.after.map(humantime::format_duration);
        tracing::info!(pane = self.pane, "idle: the agent's process stopped");
        self.notice(
            DiagnosticLevel::Info,
            format!(
                "idle for {}: hive stopped the agent's process; the next message resumes its session",
                after.map(|d| d.to_string()).unwrap_or_default()
            ),
        );
    }

    /// Before a turn: an agent stopped for idling starts again on its
    /// session. False when it could not (the pane is dead, said why).
    pub(super) fn wake_from_idle(&mut self) -> bool {
        if !self.idle.stopped {
            return true;
        }
        self.idle.stopped = false;
        match self.start_provider() {
            Ok(()) => {
                self.notice(
                    DiagnosticLevel::Info,
                    "the agent started again on its session",
                );
                true
            }
            Err(e) => {
                self.notice(DiagnosticLevel::Error, e.to_string());
                self.set_state(TurnState::Dead);
                false
            }
        }
    }
}
