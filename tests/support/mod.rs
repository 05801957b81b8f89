//! Helpers shared by the provider test binaries (each `tests/*.rs` that
//! needs them declares `mod support;`): process liveness, waiting for a
//! process group to go, and reading the fakes' crash timestamps.
#![allow(dead_code)] // each test binary uses a different subset

use std::time::Duration;

use hive::event::Origin;
use hive::runner::{PaneEvent, PaneUpdate};
use hive::upsert::TurnEvent;
use hive::upsert::{Upsert, UpsertKind};
use tokio::sync::mpsc;

pub fn alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim().to_owned()))
        .is_some_and(|rest| !rest.starts_with('Z'))
}

pub async fn gone(pid: i64) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// The agent's own streamed text (the runner shows the user's message first).
pub fn agent_text(e: &PaneEvent) -> bool {
    matches!(
        e,
        PaneEvent::Upsert(Upsert {
            kind: UpsertKind::Message {
                origin: Origin::Agent,
                ..
            },
            ..
        })
    )
}

/// Seconds from the fake's crash (the time it printed to stderr) to now.
pub fn since_crash(message: &str) -> Option<f64> {
    let at: f64 = message
        .split("crash at ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    Some(now - at)
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

/// A runner's output as a test reads it: waits for events, keeps all it saw.
pub struct Pane {
    pub rx: mpsc::UnboundedReceiver<PaneUpdate>,
    pub seen: Vec<PaneEvent>,
}

impl Pane {
    /// Waits (hang guard, not a speed assertion) for an event matching `pred`.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&PaneEvent) -> bool) -> PaneEvent {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let update = tokio::time::timeout_at(deadline, self.rx.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out waiting for {what}; saw {:#?}", self.seen))
                .unwrap_or_else(|| panic!("runner gone waiting for {what}"));
            self.seen.push(update.event.clone());
            if pred(&update.event) {
                return update.event;
            }
        }
    }

    pub async fn turn_end(&mut self) -> TurnEvent {
        match self
            .until(
                "turn end",
                |e| matches!(e, PaneEvent::Turn(t) if t.is_terminal()),
            )
            .await
        {
            PaneEvent::Turn(t) => t,
            _ => unreachable!(),
        }
    }

    pub fn notices(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                PaneEvent::Notice { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }
}
