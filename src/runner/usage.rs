//! What a pane's turns cost and how full the model's context is, decided
//! once in the runner so that every console, `hive ctl`, `hive run --json`
//! and the history see the same figures: a turn whose agent reported
//! tokens but no cost is priced from `[prices]` (marked estimated), and a
//! turn that leaves the context past [`CONTEXT_WARN`] of the window says so
//! once, with the way out the agent offers.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Runner;
use crate::config::{Price, price_of};
use crate::event::Usage;
pub use crate::protocol::event::{CONTEXT_WARN, context_fill, usd};
use crate::upsert::TurnEvent;

/// The runner's accounting state.
pub(super) struct Meter {
    prices: Arc<BTreeMap<String, Price>>,
    /// The model the running turn reported (`TurnStarted`), for its price.
    turn_model: Option<String>,
    /// The agent announced a `/compact` command.
    pub(super) compacts: bool,
    /// The context warning was given and the fill has not dropped since.
    warned: bool,
}

impl Meter {
    pub(super) fn new(prices: Arc<BTreeMap<String, Price>>) -> Self {
        Self {
            prices,
            turn_model: None,
            compacts: false,
            warned: false,
        }
    }
}

/// What `u`'s tokens cost at `price` (the cache counted apart from input,
/// as the canonical usage keeps it; an unpriced cache kind at the input
/// price).
pub fn cost(price: &Price, u: &Usage) -> f64 {
    let per = |tokens: u64, usd: f64| tokens as f64 * usd / 1e6;
    per(u.input_tokens, price.input)
        + per(u.output_tokens, price.output)
        + per(
            u.cache_read_input_tokens.unwrap_or(0),
            price.cache_read.unwrap_or(price.input),
        )
        + per(
            u.cache_creation_input_tokens.unwrap_or(0),
            price.cache_write.unwrap_or(price.input),
        )
}

/// The most one turn can plausibly cost, USD: a figure past it is a broken
/// or hostile agent's, not a bill.
const MAX_TURN_USD: f64 = 1e6;

/// The cost an agent reported, if it can be one: a negative, infinite or
/// absurd figure is dropped (then priced from `[prices]` like an unreported
/// one), never added to the totals (#53 item 14).
pub(crate) fn plausible_cost(u: &mut Usage) {
    u.cost_usd = u
        .cost_usd
        .filter(|c| c.is_finite() && (0.0..=MAX_TURN_USD).contains(c));
}

/// Fills in the cost from `price` where the agent reported tokens but no
/// cost, marked as estimated. A cost the agent reported is kept.
pub fn estimate(u: &mut Usage, price: &Price) {
    if u.cost_usd.is_some() || u.total_tokens() == 0 {
        return;
    }
    u.cost_usd = Some(cost(price, u));
    u.cost_estimated = true;
}

impl Runner {
    /// Prices a turn's end, counts it against the budget and checks the
    /// context it left; returns the warnings to show (the context just went
    /// past [`CONTEXT_WARN`], the budget past 80 % or spent).
    pub(super) fn account(&mut self, t: &mut TurnEvent) -> Vec<String> {
        match t {
            TurnEvent::TurnStarted { model_id, .. } if !model_id.is_empty() => {
                self.meter.turn_model = Some(model_id.clone());
                Vec::new()
            }
            TurnEvent::TurnComplete {
                usage: Some(usage), ..
            } => {
                plausible_cost(usage);
                let model = (usage.model.as_deref())
                    .or(self.meter.turn_model.as_deref())
                    .or(self.spec.agent.model.as_deref());
                if let Some(price) = model.and_then(|m| price_of(&self.meter.prices, m)) {
                    estimate(usage, price);
                }
                let budget = self.budget_turn(usage);
                self.context_warning(usage)
                    .into_iter()
                    .chain(budget)
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    fn context_warning(&mut self, usage: &Usage) -> Option<String> {
        let (used, window) = context_fill(usage, self.spec.agent.context_window)?;
        let share = used as f64 / window as f64;
        if share < CONTEXT_WARN {
            self.meter.warned = false;
            return None;
        }
        if std::mem::replace(&mut self.meter.warned, true) {
            return None;
        }
        let way_out = if self.meter.compacts {
            "/compact summarises the conversation to free it"
        } else {
            "/clear starts a new conversation"
        };
        Some(format!(
            "the context is {:.0} % full ({used} of {window} tokens): {way_out}",
            share * 100.0
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, read: Option<u64>, write: Option<u64>) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: write,
            ..Usage::default()
        }
    }

    #[test]
    fn cost_counts_each_kind_of_token_at_its_price() {
        let p = Price {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: None,
        };
        let c = cost(
            &p,
            &usage(1_000_000, 100_000, Some(2_000_000), Some(10_000)),
        );
        // 3 + 1.5 + 0.6 + 0.03 (cache writes at the input price)
        assert!((c - 5.13).abs() < 1e-9, "{c}");
        let mut u = usage(1_000_000, 0, None, None);
        estimate(&mut u, &p);
        assert_eq!(u.cost_usd, Some(3.0));
        assert!(u.cost_estimated);
    }

    #[test]
    fn a_reported_cost_or_an_empty_turn_is_not_priced() {
        let p = Price {
            input: 3.0,
            output: 15.0,
            ..Price::default()
        };
        let mut reported = Usage {
            cost_usd: Some(0.5),
            ..usage(1000, 10, None, None)
        };
        estimate(&mut reported, &p);
        assert_eq!(reported.cost_usd, Some(0.5));
        assert!(!reported.cost_estimated);
        let mut empty = Usage::default();
        estimate(&mut empty, &p);
        assert_eq!(empty.cost_usd, None);
    }

    /// #53 item 14: what cannot be a turn's cost never enters a total,
    /// and no total prints hundreds of digits.
    #[test]
    fn impossible_costs_are_dropped_and_huge_sums_print_short() {
        for bad in [-0.5, f64::NAN, f64::INFINITY, 1e308] {
            let mut u = Usage {
                cost_usd: Some(bad),
                ..Usage::default()
            };
            plausible_cost(&mut u);
            assert_eq!(u.cost_usd, None, "{bad}");
        }
        let mut fine = Usage {
            cost_usd: Some(0.25),
            ..Usage::default()
        };
        plausible_cost(&mut fine);
        assert_eq!(fine.cost_usd, Some(0.25));
        assert_eq!(usd(1e308, 2), "$1.00e308");
        assert_eq!(usd(5.0, 2), "$5.00");
        assert_eq!(usd(0.0123, 4), "$0.0123");
    }
}
