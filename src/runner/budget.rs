//! An agent's budget (issue 33 item 3): `budget_usd` and `budget_tokens`
//! count what the pane's turns used since hive started it (a budget for a
//! run: an overnight job, a day). Past 80 % the pane gets a notice once; at
//! 100 % new turns wait in the queue behind a card every console shows
//! (`PaneEvent::Held` of kind `budget`): raise the budget by half, or stop
//! (the queue is emptied; the budget still holds what comes next).

use serde::{Deserialize, Serialize};

use super::hold::{Hold, HoldKind};
use super::{Runner, TurnState};
use crate::config::AgentConfig;
use crate::event::Usage;
use crate::provider::DiagnosticLevel;

/// The share of a budget past which the pane is told.
const BUDGET_WARN: f64 = 0.8;
/// A raise adds this share of the budget.
const RAISE: f64 = 0.5;

/// What the user answered on the budget card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetAnswer {
    /// Raise the budget by half and go on.
    Raise,
    /// Empty the queue; the budget stays spent.
    Stop,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Budget {
    usd: Option<f64>,
    tokens: Option<u64>,
    spent: Usage,
    warned: bool,
}

impl Budget {
    pub(super) fn new(agent: &AgentConfig) -> Self {
        Self {
            usd: agent.budget_usd.filter(|u| u.is_finite() && *u > 0.0),
            tokens: agent.budget_tokens.filter(|&t| t > 0),
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
        let usd = |v: f64| {
            if v < 0.01 {
                format!("${v:.4}")
            } else {
                format!("${v:.2}")
            }
        };
        let mut parts = Vec::new();
        if let Some(b) = self.usd {
            let mark = if self.spent.cost_estimated { "~" } else { "" };
            parts.push(format!(
                "{mark}{} of {}",
                usd(self.spent.cost_usd.unwrap_or(0.0)),
                usd(b)
            ));
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

impl Runner {
    /// The budget card consoles show while the budget is spent.
    pub(super) fn budget_hold(&self) -> Option<Hold> {
        self.budget.spent_out().then(|| Hold {
            kind: HoldKind::Budget,
            until: None,
            reported: false,
            resend: false,
            spent: Some(self.budget.describe()),
        })
    }

    /// Counts a finished turn against the budget; its notice, if any.
    pub(super) fn budget_turn(&mut self, usage: &Usage) -> Option<String> {
        self.budget.add(usage)
    }

    /// The user answered the budget card.
    pub(super) fn answer_budget(&mut self, answer: BudgetAnswer) {
        if !self.budget.spent_out() {
            return;
        }
        match answer {
            BudgetAnswer::Raise => {
                self.budget.raise();
                self.notice(
                    DiagnosticLevel::Info,
                    format!("budget raised: {}", self.budget.describe()),
                );
                self.publish_hold();
                if self.state == TurnState::Idle {
                    self.drain();
                }
            }
            BudgetAnswer::Stop => {
                self.queue.clear();
                self.undelivered = None;
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
