//! What a pane shows while its queue is held (issue 33): the title's
//! `⏸ limit · resets 15:04` while a vendor's limit lasts, and the budget
//! card, in the approval card's place, while the agent's budget is spent;
//! `⏸ queue held` while a queue waits for the user after an interrupt.

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::pane_ctx::PaneCtx;
use super::wrap::Logical;
use crate::app::pane::Pane;
use crate::keymap::Action;
use crate::protocol::hold::HoldKind;

/// `⏸ limit · resets 15:04` (`~15:04`: hive's backoff, not the vendor's
/// reset; the day too when it is not today), `⏸ budget spent`.
pub(crate) fn label(p: &Pane) -> String {
    let Some(h) = &p.conversation.held else {
        return String::new();
    };
    if h.kind == HoldKind::Interrupted {
        return "⏸ queue held".into();
    }
    let Some(until) = h.until.filter(|_| h.kind != HoldKind::Budget) else {
        return "⏸ budget spent".into();
    };
    let mark = if h.reported { "" } else { "~" };
    format!(
        "⏸ limit · resets {mark}{}",
        crate::protocol::hold::reset_time(until, chrono::Utc::now())
    )
}

/// The budget card: what was spent of what, and the two answers.
pub(crate) fn budget_card(p: &Pane, ctx: &PaneCtx<'_>) -> Vec<Logical> {
    let Some(h) = p
        .conversation
        .held
        .as_ref()
        .filter(|h| h.kind == HoldKind::Budget)
    else {
        return Vec::new();
    };
    let t = ctx.theme;
    let km = ctx.keymap;
    let key = |s: String| Span::styled(s, Style::new().fg(t.accent).add_modifier(Modifier::BOLD));
    let dim = |s: &str| Span::styled(s.to_owned(), Style::new().fg(t.dim));
    let queued = p.pending.queue.len();
    let waiting = match queued {
        0 => "new turns wait here".to_owned(),
        1 => "1 queued message waits".to_owned(),
        n => format!("{n} queued messages wait"),
    };
    vec![
        Logical::new(vec![
            Span::styled(
                h.spent.clone().unwrap_or_default(),
                Style::new().fg(t.text).add_modifier(Modifier::BOLD),
            ),
            dim(&format!("  {waiting}")),
        ]),
        Logical::new(vec![
            key(format!("[{}]", km.short(Action::RaiseBudget))),
            dim(" raise by half  "),
            key(format!("[{}]", km.short(Action::StopBudget))),
            dim(" stop (empty the queue)"),
        ]),
    ]
}
