//! Why a pane's queue waits (a vendor's limit, a spent budget, the user's
//! interrupt), as every console shows it, and the answer on the budget
//! card. The runner decides (src/runner/hold.rs, budget.rs).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Why a pane's queue waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldKind {
    /// The vendor's rate limit, until it resets.
    RateLimit,
    /// The vendor's usage cap or quota, until it resets.
    Quota,
    /// The agent's budget is spent, until the user raises it
    /// (`runner::budget`).
    Budget,
    /// The user interrupted a turn with messages queued: they wait for the
    /// user (Enter sends the next, Esc again clears them), not sent at once.
    Interrupted,
}

/// Why a pane's queue waits, as consoles show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hold {
    pub kind: HoldKind,
    /// When the queue goes on (a limit's reset, or hive's backoff); `None`
    /// for a budget, which waits for the user.
    #[serde(default)]
    pub until: Option<DateTime<Utc>>,
    /// The vendor named that time (not hive's guess).
    pub reported: bool,
    /// The failed message waits at the front of the queue to be sent again.
    pub resend: bool,
    /// A budget's state: what was spent of what (`$5.02 of $5.00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<String>,
}

/// What the user answered on the budget card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetAnswer {
    /// Raise the budget by half and go on.
    Raise,
    /// Empty the queue; the budget stays spent.
    Stop,
}

/// When a hold ends, as the pane and its notice say it: to the second
/// when that is minutes away (a 20 s limit read `resets 15:04`, #46 item
/// 22), the day too when it is not today.
pub fn reset_time(until: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let local = until.with_timezone(&chrono::Local);
    let soon = until - now < chrono::Duration::minutes(10);
    let today = now.with_timezone(&chrono::Local).date_naive() == local.date_naive();
    let format = match (today, soon) {
        (true, true) => "%H:%M:%S",
        (true, false) => "%H:%M",
        (false, _) => "%a %H:%M",
    };
    local.format(format).to_string()
}
