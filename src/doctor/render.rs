//! `hive doctor`'s report as text (coloured on a terminal) or JSON.

use std::fmt::Write;

use crossterm::style::Stylize;

use super::{Level, Report};

fn tag(level: Level, colour: bool) -> String {
    let (text, pad) = match level {
        Level::Ok => ("ok", "  "),
        Level::Info => ("info", ""),
        Level::Warn => ("warn", ""),
        Level::Fail => ("FAIL", ""),
    };
    if !colour {
        return format!("{text}{pad}");
    }
    let styled = match level {
        Level::Ok => text.green(),
        Level::Info => text.blue(),
        Level::Warn => text.yellow(),
        Level::Fail => text.red().bold(),
    };
    format!("{styled}{pad}")
}

pub fn text(report: &Report, colour: bool) -> String {
    let mut out = String::new();
    let bold = |s: &str| {
        if colour {
            s.bold().to_string()
        } else {
            s.to_owned()
        }
    };
    let _ = writeln!(out, "{} {}", bold("config"), report.config.source);
    if let Some(e) = &report.config.error {
        let _ = writeln!(out, "  {}  {e}", tag(Level::Fail, colour));
    }
    for w in &report.config.warnings {
        let _ = writeln!(out, "  {}  {w}", tag(Level::Warn, colour));
    }
    for agent in &report.agents {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{} {} ({})",
            bold("agent"),
            bold(&agent.id),
            agent.provider
        );
        checks(&mut out, &agent.checks, colour);
    }
    for host in &report.hosts {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{} {} ({})",
            bold("host"),
            bold(&host.name),
            host.target
        );
        checks(&mut out, &host.checks, colour);
    }
    let _ = writeln!(out);
    let failed: Vec<_> = report
        .agents
        .iter()
        .filter(|a| !a.can_start)
        .map(|a| a.id.as_str())
        .collect();
    let summary = if report.config.error.is_some() {
        "the config cannot be used".to_owned()
    } else if failed.is_empty() {
        match report.agents.len() {
            1 => "the agent can start".to_owned(),
            n => format!("all {n} agents can start"),
        }
    } else {
        let n = report.agents.len();
        format!(
            "{} of {n} agent{} cannot start: {}",
            failed.len(),
            if n == 1 { "" } else { "s" },
            failed.join(", ")
        )
    };
    let hosts_down: Vec<&str> = report
        .hosts
        .iter()
        .filter(|h| !h.ok())
        .map(|h| h.name.as_str())
        .collect();
    let summary = if hosts_down.is_empty() {
        summary
    } else {
        format!(
            "{summary}; host{} not usable: {}",
            if hosts_down.len() == 1 { "" } else { "s" },
            hosts_down.join(", ")
        )
    };
    let _ = writeln!(out, "{}", bold(&summary));
    out
}

/// One line per check (with its time when it has one), and its fix below.
fn checks(out: &mut String, checks: &[super::Check], colour: bool) {
    for c in checks {
        let time = c
            .elapsed_ms
            .map(|ms| format!(" in {ms} ms"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}  {:<10} {}{time}",
            tag(c.level, colour),
            c.name,
            c.detail
        );
        if let Some(fix) = &c.fix {
            let _ = writeln!(out, "        {:<10} → {fix}", "");
        }
    }
}

pub fn json(report: &Report) -> String {
    let mut v = serde_json::to_value(report).unwrap_or_default();
    if let serde_json::Value::Object(m) = &mut v {
        m.insert("ok".into(), report.ok().into());
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
