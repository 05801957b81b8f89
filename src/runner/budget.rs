//! An agent's budget (issue 33 item 3): `budget_usd` and `budget_tokens`
//! count what the pane's turns used since hive started it (a budget for a
//! run: an overnight job, a day). Past 80 % the pane gets a notice once; at
//! 100 % new turns wait in the queue behind a card every console shows
//! (`PaneEvent::Held` of kind `budget`): raise the budget by half, or stop
//! (the queue is emptied; the budget still holds what comes next).

use super::hold::{Hold, HoldKind};
use super::{Runner, TurnState};
use crate::config::AgentConfig;
use crate::event::Usage;
pub use crate::protocol::hold::BudgetAnswer;
use crate::provider::DiagnosticLevel;

/// The share of a budget past which the pane is told.
const BUDGET_WARN: f64 = 0.8;
/// A raise adds this share of the budget.
const RAISE: f64 = 0.5;

#[derive(Debug, Clone, Default)]
pub(super) struct Budget {
    usd: Option<f64>,
    tokens: Option<u64>,
    spent: Usage,
    warned: bool,
}

impl Budget {
    pub(super) fn new(agent: &AgentConfig) -> Self {
        Self::with(agent.budget_usd, agent.budget_tokens)
    }

    fn with(usd: Option<f64>, tokens: Option<u64>) -> Self {
        Self {
            usd: usd.filter(|u| u.is_finite() && *u > 0.0),
            tokens: tokens.filter(|&t| t > 0),
            ..Self::default()
        }
    }

    /// The larger share spent of the two budgets, if there is one.
    fn share(&self) -> Option<f64> {
        let cost = self.usd.map(|b| self.spent.cost_usd.unwrap_or(0.0) / b);
        let tokens = self
            .tokens
            .map(|b| self.spent.total_tokens() as f64 / b as f64);
        match (cost, tokens) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    pub(super) fn spent_out(&self) -> bool {
        self.share().is_some_and(|s| s >= 1.0)
    }

    /// `$5.02 of $5.00 · 1.2M of 2.0M tokens`.
    fn describe(&self) -> String {
        // Cents, or four places below a cent (as the footer writes it).
        let usd = |v: f64| super::usage::usd(v, if v < 0.01 { 4 } else { 2 });
        let mut parts = Vec::new();
        if let Some(b) = self.usd {
            let mark = if self.spent.cost_estimated { "~" } else { "" };
            let spent = self.spent.cost_usd.unwrap_or(0.0);
            let (mut s, mut of) = (usd(spent), usd(b));
            // Over by less than a cent must not read as exactly spent
            // (`$0.34 of $0.34`, #46 item 22).
            if s == of && spent > b {
                (s, of) = (format!("${spent:.4}"), format!("${b:.4}"));
            }
            parts.push(format!("{mark}{s} of {of}"));
        }
        if let Some(b) = self.tokens {
            parts.push(format!("{} of {b} tokens", self.spent.total_tokens()));
        }
        parts.join(" · ")
    }

    /// Counts a finished turn; the notice to give when the budget just
    /// went past [`BUDGET_WARN`] or was spent.
    fn add(&mut self, usage: &Usage) -> Option<String> {
        let before = self.share()?;
        self.spent.accumulate(usage);
        let now = self.share()?;
        if now >= 1.0 && before < 1.0 {
            return Some(format!(
                "budget spent ({}): new turns wait in the queue until you raise it (r) or stop (s)",
                self.describe()
            ));
        }
        if now >= BUDGET_WARN && !self.warned {
            self.warned = true;
            return Some(format!(
                "{:.0} % of the budget spent ({})",
                now * 100.0,
                self.describe()
            ));
        }
        None
    }

    /// Raises each budget by half of itself, or to what was spent and half
    /// again when it was overrun further.
    fn raise(&mut self) {
        let spent_usd = self.spent.cost_usd.unwrap_or(0.0);
        let spent_tokens = self.spent.total_tokens();
        if let Some(b) = self.usd.as_mut() {
            *b = (*b * (1.0 + RAISE)).max(spent_usd * (1.0 + RAISE));
        }
        if let Some(b) = self.tokens.as_mut() {
            let raised = (*b as f64 * (1.0 + RAISE)).max(spent_tokens as f64 * (1.0 + RAISE));
            *b = raised.ceil() as u64;
        }
        self.warned = self.share().is_some_and(|s| s >= BUDGET_WARN);
    }
}

/// The whole hive's budget (`[budget]`), shared by the runners of one
/// server: each adds its turns; when it is spent every pane's new turns
/// wait, and a raise from any pane's card lets them all go on (the
/// runners hear of both through `changed`).
#[derive(Debug)]
pub struct HiveBudget {
    state: std::sync::Mutex<Budget>,
    changed: tokio::sync::watch::Sender<u64>,
}

impl HiveBudget {
    /// `None` when neither budget is set.
    pub fn new(usd: Option<f64>, tokens: Option<u64>) -> Option<std::sync::Arc<Self>> {
        let state = Budget::with(usd, tokens);
        (state.usd.is_some() || state.tokens.is_some()).then(|| {
            std::sync::Arc::new(Self {
                state: std::sync::Mutex::new(state),
                changed: tokio::sync::watch::channel(0).0,
            })
        })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Budget) -> T) -> Option<T> {
        self.state.lock().ok().map(|mut b| f(&mut b))
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    fn add(&self, usage: &Usage) -> Option<String> {
        let (note, flipped) = self.with(|b| {
            let before = b.spent_out();
            (b.add(usage), b.spent_out() != before)
        })?;
        if flipped {
            self.bump();
        }
        note.map(|n| format!("hive {n}"))
    }

    fn spent_out(&self) -> bool {
        self.with(|b| b.spent_out()).unwrap_or(false)
    }

    fn describe(&self) -> String {
        self.with(|b| b.describe()).unwrap_or_default()
    }

    fn raise(&self) {
        self.with(Budget::raise);
        self.bump();
    }

    pub(super) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

/// Waits for the hive budget to change (never, without one).
pub(super) async fn hive_changed(rx: &mut Option<tokio::sync::watch::Receiver<u64>>) {
    let changed = match rx {
        Some(rx) => rx.changed().await.is_ok(),
        None => false,
    };
    if !changed {
        std::future::pending::<()>().await;
    }
}

impl Runner {
    fn hive_spent(&self) -> bool {
        self.hive.as_ref().is_some_and(|h| h.spent_out())
    }

    /// Whether a budget (the agent's or the hive's) holds new turns.
    pub(super) fn budget_spent(&self) -> bool {
        self.budget.spent_out() || self.hive_spent()
    }

    /// The budget card consoles show while a budget is spent.
    pub(super) fn budget_hold(&self) -> Option<Hold> {
        let spent = if self.budget.spent_out() {
            self.budget.describe()
        } else if let Some(h) = self.hive.as_ref().filter(|h| h.spent_out()) {
            format!("hive: {}", h.describe())
        } else {
            return None;
        };
        Some(Hold {
            kind: HoldKind::Budget,
            until: None,
            reported: false,
            resend: false,
            spent: Some(spent),
        })
    }

    /// Counts a finished turn against the budgets; their notices.
    pub(super) fn budget_turn(&mut self, usage: &Usage) -> Vec<String> {
        let own = self.budget.add(usage);
        let hive = self.hive.as_ref().and_then(|h| h.add(usage));
        own.into_iter().chain(hive).collect()
    }

    /// The hive's budget was spent or raised (by any pane).
    pub(super) fn hive_budget_changed(&mut self) {
        self.publish_hold();
        if self.state == TurnState::Idle {
            self.drain();
        }
    }

    /// The user answered the budget card.
    pub(super) fn answer_budget(&mut self, answer: BudgetAnswer) {
        if !self.budget_spent() {
            return;
        }
        match answer {
            BudgetAnswer::Raise => {
                let what = if self.budget.spent_out() {
                    self.budget.raise();
                    self.budget.describe()
                } else {
                    let hive = self.hive.clone();
                    hive.map(|h| {
                        h.raise();
                        format!("hive: {}", h.describe())
                    })
                    .unwrap_or_default()
                };
                self.notice(DiagnosticLevel::Info, format!("budget raised: {what}"));
                self.publish_hold();
                if self.state == TurnState::Idle {
                    self.drain();
                }
            }
            BudgetAnswer::Stop => {
                self.queue.clear();
                self.undelivered = None;
                self.kept_by_agent = None;
                self.queue_changed();
                self.notice(
                    DiagnosticLevel::Info,
                    "stopped on the budget: the queue is empty; new messages wait until you raise it",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(usd: f64) -> Usage {
        Usage {
            input_tokens: 1,
            cost_usd: Some(usd),
            ..Usage::default()
        }
    }

    #[test]
    fn a_budget_warns_at_80_percent_then_is_spent_then_raised() {
        let mut agent = AgentConfig::new("a", "fake");
        agent.budget_usd = Some(1.0);
        let mut b = Budget::new(&agent);
        assert_eq!(b.add(&cost(0.5)), None);
        assert_eq!(
            b.add(&cost(0.35)).as_deref(),
            Some("85 % of the budget spent ($0.85 of $1.00)")
        );
        assert!(!b.spent_out());
        assert!(
            b.add(&cost(0.35))
                .unwrap()
                .starts_with("budget spent ($1.20 of $1.00)")
        );
        assert!(b.spent_out());
        // Raised past what was spent: half again of the larger.
        b.raise();
        assert!(!b.spent_out());
        assert_eq!(b.describe(), "$1.20 of $1.80");
        // Over by less than a cent: the places that show it.
        let mut agent = AgentConfig::new("c", "fake");
        agent.budget_usd = Some(0.34);
        let mut over = Budget::new(&agent);
        over.add(&cost(0.3412));
        assert!(over.spent_out());
        assert_eq!(over.describe(), "$0.3412 of $0.3400");
        // No budget: nothing counted, nothing held.
        let mut none = Budget::new(&AgentConfig::new("b", "fake"));
        assert_eq!(none.add(&cost(100.0)), None);
        assert!(!none.spent_out());
    }

    #[test]
    fn tokens_count_every_kind() {
        let mut agent = AgentConfig::new("a", "fake");
        agent.budget_tokens = Some(1000);
        let mut b = Budget::new(&agent);
        let u = Usage {
            input_tokens: 500,
            output_tokens: 300,
            cache_read_input_tokens: Some(250),
            ..Usage::default()
        };
        assert!(
            b.add(&u)
                .unwrap()
                .starts_with("budget spent (1050 of 1000 tokens)")
        );
    }
}
