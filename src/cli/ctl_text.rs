//! How `hive ctl` prints panes, their status, holds, usage and a waited
//! turn's outcome for a person (`--json` prints the protocol's own shape).

use crate::control::protocol::{PaneInfo, UsageInfo, WaitResult};
use crate::protocol::hold::{Hold, HoldKind};
use crate::sanitize::neutralize;

pub(super) fn list_text(panes: &[PaneInfo]) -> String {
    let header = format!(
        "{:<12} {:<17} {:<20} {:>9}  NAME",
        "PANE", "STATE", "MODEL", "QUEUE"
    );
    std::iter::once(header)
        .chain(panes.iter().map(list_line))
        .collect::<Vec<_>>()
        .join("\n")
}

fn list_line(p: &PaneInfo) -> String {
    let state = if p.failed.is_some() {
        "failed".to_owned()
    } else {
        enum_name(&p.state)
    };
    let helper = match &p.spawned_by {
        Some(parent) => format!(" (helper of {})", neutralize(parent)),
        None => String::new(),
    };
    format!(
        "{:<12} {:<17} {:<20} {:>2} queued  {}{helper}",
        neutralize(&p.id),
        state,
        neutralize(p.model.as_deref().unwrap_or("-")),
        p.queue.len(),
        neutralize(&p.name)
    )
}

pub(super) fn status_text(p: &PaneInfo) -> String {
    let text = |s: &str| neutralize(s).into_owned();
    let mut lines = vec![
        format!("pane:      {}", text(&p.id)),
        format!("name:      {}", text(&p.name)),
        format!("provider:  {}", text(&p.provider)),
        format!("model:     {}", text(p.model.as_deref().unwrap_or("-"))),
        format!("state:     {}", enum_name(&p.state)),
        format!("alive:     {}", p.alive),
        format!("turn:      {}", text(p.turn_id.as_deref().unwrap_or("-"))),
        format!("turns:     {}", p.turns),
        format!("steer:     {}", p.can_steer),
        format!("interrupt: {}", p.can_interrupt),
        format!("usage:     {}", usage_text(&p.usage)),
    ];
    if let Some(s) = &p.process {
        lines.push(format!(
            "process:   {:.1}% cpu · {} · {} processes",
            s.cpu_percent,
            crate::ui::cells::bytes(s.rss_bytes),
            s.processes
        ));
    }
    // Where it runs, what is mounted how, its limits (issue 49).
    for (i, h) in p.host.iter().enumerate() {
        let label = if i == 0 { "host:     " } else { "          " };
        lines.push(format!("{label} {}", text(h)));
    }
    if let Some(h) = &p.held {
        lines.push(format!("held:      {}", held_text(h)));
    }
    if let Some(f) = &p.failed {
        lines.push(format!("failed:    {}", one_line(f)));
    }
    for a in &p.approvals {
        lines.push(format!(
            "approval:  {}  {} {}",
            text(&a.request_id),
            one_line(&a.tool),
            one_line(&a.arguments.to_string())
        ));
    }
    lines.push(format!("queue:     {}", p.queue.len()));
    for (i, q) in p.queue.iter().enumerate() {
        lines.push(format!("  {}. {}", i + 1, one_line(q)));
    }
    lines.join("\n")
}

/// `until 2026-11-28 03:00 (the vendor's reset)`, `budget spent ($5.02 of $5.00)`.
fn held_text(h: &Hold) -> String {
    if h.kind == HoldKind::Interrupted {
        return "after an interrupt (the user sends the next or clears the queue)".into();
    }
    match h.until {
        Some(until) => format!(
            "until {} ({})",
            until.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M"),
            if h.reported {
                "the vendor's reset"
            } else {
                "hive's backoff"
            }
        ),
        None => format!(
            "budget spent ({})",
            one_line(h.spent.as_deref().unwrap_or_default())
        ),
    }
}

/// `in 12345 · out 678 · $0.0123` (`~$` estimated from `[prices]`, `$—`
/// when no cost is known).
fn usage_text(u: &UsageInfo) -> String {
    let cost = match u.cost_usd {
        Some(c) if u.cost_estimated => format!("~{}", crate::runner::usage::usd(c, 4)),
        Some(c) => crate::runner::usage::usd(c, 4),
        None => "$—".into(),
    };
    let mut s = format!("in {} · out {}", u.input_tokens, u.output_tokens);
    if let Some(r) = u.cache_read_tokens.filter(|&r| r > 0) {
        s.push_str(&format!(" · cache read {r}"));
    }
    if let Some(w) = u.cache_write_tokens.filter(|&w| w > 0) {
        s.push_str(&format!(" · cache write {w}"));
    }
    format!("{s} · {cost}")
}

pub(super) fn outcome_text(w: &WaitResult) -> String {
    match (&w.error_code, &w.error_message) {
        (Some(c), Some(m)) => format!("failed [{}]: {}", neutralize(c), neutralize(m)),
        _ => enum_name(&w.status),
    }
}

pub(super) fn enum_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A one-line summary: whitespace runs folded, at most 100 characters,
/// through the sanitizer (a field for people, on a terminal or not).
pub(super) fn one_line(s: &str) -> String {
    let folded = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = folded.chars().take(100).collect();
    if folded.chars().count() > 100 {
        short.push('…');
    }
    neutralize(&short).into_owned()
}
