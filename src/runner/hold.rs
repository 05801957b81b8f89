//! Holding a pane's queue while the vendor's limit lasts, and sending the
//! failed message again when it resets (issue 33 item 4).
//!
//! A turn that fails on a rate limit or quota (`provider::limits` reads the
//! error) puts its message back at the front of the queue, unless the
//! agent opted out (`resend_on_limit = false`); the queue then waits until
//! the reset the vendor named, or a backoff when it named none, and goes
//! on by itself. The wait is a tokio deadline, so a test drives it with a
//! paused clock. Every console learns of it through `PaneEvent::Held`
//! (logged, so a console attaching later sees the wait too).

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use super::{PaneEvent, Runner};
pub use crate::protocol::hold::{Hold, HoldKind, reset_time};
use crate::provider::DiagnosticLevel;
use crate::provider::limits::{self, LimitKind};
use crate::upsert::TurnEvent;

/// Waits before sending again when the vendor names no reset: 1, 2, 4 …
/// minutes, at most an hour, doubling with each limit in a row.
const BACKOFF_FIRST: Duration = Duration::from_secs(60);
const BACKOFF_MAX: Duration = Duration::from_secs(3600);

/// What an agent whose session kept the failed turn is sent instead of the
/// message again: the vendor's conversation holds the message once.
pub const GO_ON: &str = "(The previous attempt at the message above failed on the vendor's \
rate limit or usage limit, which has now reset. Go on with it.)";

impl From<LimitKind> for HoldKind {
    fn from(k: LimitKind) -> Self {
        match k {
            LimitKind::RateLimit => Self::RateLimit,
            LimitKind::Quota => Self::Quota,
        }
    }
}

/// The runner's side of a hold: what consoles see and the deadline.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) hold: Hold,
    /// When the hold ends; `None` once the user let it go.
    pub(super) at: Option<Instant>,
    /// Limits met in a row (the backoff's exponent).
    strikes: u32,
}

/// A limit's wait: to its reset, else the backoff for `strikes` limits in
/// a row.
fn wait_for(resets_at: Option<DateTime<Utc>>, now: DateTime<Utc>, strikes: u32) -> Duration {
    match resets_at {
        Some(at) => (at - now).to_std().unwrap_or_default(),
        None => BACKOFF_FIRST
            .saturating_mul(2u32.saturating_pow(strikes.min(10)))
            .min(BACKOFF_MAX),
    }
}

impl Runner {
    /// Whether the queue waits for a limit to reset.
    pub(super) fn holding(&self) -> bool {
        self.budget_spent()
            || self
                .hold
                .as_ref()
                .is_some_and(|h| h.at.is_some() && h.hold.resend)
    }

    /// Whether the queue waits for the user after an interrupt.
    pub(super) fn held_by_user(&self) -> bool {
        self.user_hold
    }

    /// The user interrupted with messages queued: they wait (DESIGN §5,
    /// issue 34 item 9), and the consoles say how to go on.
    pub(super) fn hold_for_user(&mut self) {
        if self.user_hold || self.queue.is_empty() {
            return;
        }
        self.user_hold = true;
        self.publish_hold();
        self.notice(
            DiagnosticLevel::Info,
            "queue held: Enter sends the next · Esc again clears it",
        );
    }

    /// Esc between turns while the queue waits for the user: the queue is
    /// emptied (the user's second, explicit word on it).
    pub(super) fn clear_held_queue(&mut self) {
        let n = self.queue.len();
        self.queue.clear();
        self.queue_changed();
        self.notice(
            DiagnosticLevel::Info,
            format!(
                "queue cleared ({n} message{} not sent)",
                if n == 1 { "" } else { "s" }
            ),
        );
    }

    /// Enter on an empty composer while the queue waits for the user: the
    /// next message goes, the rest keep waiting.
    pub(super) fn send_next_held(&mut self) {
        let held = std::mem::take(&mut self.user_hold);
        self.drain();
        self.user_hold = held && !self.queue.is_empty();
        self.publish_hold();
    }

    /// The hold a failed turn calls for, if it failed on a limit.
    pub(super) fn limit_hit(&mut self, t: &TurnEvent) -> Option<Held> {
        let strikes = self.hold.as_ref().map_or(0, |h| h.strikes);
        let TurnEvent::TurnError {
            error_code,
            error_message,
            ..
        } = t
        else {
            if matches!(t, TurnEvent::TurnComplete { .. }) {
                self.hold = None;
            }
            return None;
        };
        let now = Utc::now();
        let limit = limits::recognize(error_code, error_message, now)?;
        let wait = wait_for(limit.resets_at, now, strikes);
        let resend = self.spec.agent.resend_on_limit && self.turn_text.is_some();
        Some(Held {
            hold: Hold {
                kind: limit.kind.into(),
                until: Some(now + chrono::Duration::from_std(wait).unwrap_or_default()),
                reported: limit.resets_at.is_some(),
                resend,
                spent: None,
            },
            at: Some(Instant::now() + wait),
            strikes: strikes + 1,
        })
    }

    /// Holds the queue (the failed message at its front, unless the agent
    /// opted out) and tells the consoles until when.
    pub(super) fn hold_queue(&mut self, held: Held) {
        self.requeue_failed(held.hold.resend);
        let until = reset_time(held.hold.until.unwrap_or_else(Utc::now), Utc::now());
        let what = match held.hold.kind {
            HoldKind::RateLimit => "rate limit",
            HoldKind::Quota | HoldKind::Budget | HoldKind::Interrupted => "usage limit",
        };
        let when = if held.hold.reported {
            format!("it resets at {until}")
        } else {
            format!("no reset time given; trying again at {until}")
        };
        let then = if held.hold.resend {
            "the message is back at the front of the queue and is sent again then (Esc lets the queue go now)"
        } else {
            "the message is not sent again (resend_on_limit = false)"
        };
        self.notice(DiagnosticLevel::Warn, format!("{what}: {when}; {then}"));
        self.hold = Some(held);
        self.publish_hold();
    }

    /// The failed turn's message back at the front of the queue (`resend`),
    /// marked so that it is neither shown twice nor, where the agent's
    /// session kept it, given to the agent twice.
    pub(super) fn requeue_failed(&mut self, resend: bool) {
        if resend && let Some(text) = self.turn_text.clone() {
            // Shown and recorded in the failed turn already: not again.
            self.undelivered = Some(text.clone());
            if self.capabilities.keeps_failed_prompt {
                self.kept_by_agent = Some(text.clone());
            }
            self.queue.push_front(text);
            self.queue_changed();
        }
    }

    /// What holds the queue now, as consoles show it: a spent budget
    /// first (only the user lifts it), else a limit's wait.
    pub(super) fn current_hold(&self) -> Option<Hold> {
        self.budget_hold()
            .or_else(|| {
                self.hold
                    .as_ref()
                    .filter(|h| h.at.is_some())
                    .map(|h| h.hold.clone())
            })
            .or_else(|| {
                self.user_hold.then_some(Hold {
                    kind: HoldKind::Interrupted,
                    until: None,
                    reported: false,
                    resend: false,
                    spent: None,
                })
            })
    }

    /// Tells the consoles what holds the queue, when that changed.
    pub(super) fn publish_hold(&mut self) {
        let now = self.current_hold();
        if now != self.shown_hold {
            self.shown_hold.clone_from(&now);
            self.emit(PaneEvent::Held(now));
        }
    }

    /// The hold's time came: the queue goes on.
    pub(super) fn release_hold(&mut self) {
        let Some(held) = self.hold.as_mut() else {
            return;
        };
        // Kept (without a deadline) so that a limit met again backs off longer.
        held.at = None;
        self.publish_hold();
        self.drain();
    }

    /// The user let the held queue go (Esc between turns): the next message
    /// sends it.
    pub(super) fn cancel_hold(&mut self) {
        if self.hold.as_ref().is_some_and(|h| h.at.is_some()) {
            if let Some(h) = self.hold.as_mut() {
                h.at = None;
            }
            self.publish_hold();
            self.notice(
                DiagnosticLevel::Info,
                "the queue no longer waits for the limit: the next message sends it",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_the_reset_else_a_doubling_backoff() {
        let now = Utc::now();
        let at = now + chrono::Duration::seconds(90);
        assert_eq!(wait_for(Some(at), now, 5), Duration::from_secs(90));
        assert_eq!(
            wait_for(Some(now - chrono::Duration::seconds(5)), now, 0),
            Duration::ZERO
        );
        assert_eq!(wait_for(None, now, 0), Duration::from_secs(60));
        assert_eq!(wait_for(None, now, 2), Duration::from_secs(240));
        assert_eq!(wait_for(None, now, 30), BACKOFF_MAX);
    }

    #[test]
    fn a_reset_minutes_away_is_told_to_the_second() {
        let now = Utc::now();
        let soon = now + chrono::Duration::seconds(20);
        let local = soon.with_timezone(&chrono::Local);
        assert_eq!(reset_time(soon, now), local.format("%H:%M:%S").to_string());
        let later = now + chrono::Duration::minutes(30);
        let time = reset_time(later, now);
        assert!(time.len() == 5 || time.len() == 9, "{time}");
    }
}
