//! `hive ctl approvals` (issue 47, docs/control.md): the cards waiting
//! across panes; `--log`, what was decided (the audit log); `--rules`, the
//! rules that decide (the config's and the learned ones); `--forget RULE`,
//! a learned rule removed. Everything an agent wrote is neutralized before
//! it reaches the terminal.

use clap::Args;
use serde_json::Value;

use crate::control::protocol::Call;
use crate::protocol::verb::ApprovalsAsk;
use crate::sanitize::neutralize;

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("what").args(["log", "rules", "forget"])))]
pub struct ApprovalsArgs {
    /// What was decided: the audit log's last lines.
    #[arg(long)]
    log: bool,
    /// With `--log`: how many lines.
    #[arg(long, value_name = "N", default_value_t = 20, requires = "log")]
    last: usize,
    /// With `--log`: only this pane's decisions.
    #[arg(long, value_name = "PANE", requires = "log")]
    pane: Option<String>,
    /// The rules: the config's, each pane's preset, the learned ones.
    #[arg(long)]
    rules: bool,
    /// Remove a rule learned from `allow always` (its id: `learned.N`).
    #[arg(long, value_name = "RULE")]
    forget: Option<String>,
}

impl ApprovalsArgs {
    pub(super) fn to_call(&self) -> Call {
        Call::Approvals(if self.log {
            ApprovalsAsk::Log {
                last: self.last,
                pane: self.pane.clone(),
            }
        } else if self.rules {
            ApprovalsAsk::Rules
        } else if let Some(rule) = &self.forget {
            ApprovalsAsk::Forget { rule: rule.clone() }
        } else {
            ApprovalsAsk::Queue
        })
    }

    /// What it prints.
    pub(super) fn text(&self, result: &Value) -> String {
        if self.log {
            log_text(result)
        } else if self.rules {
            rules_text(result)
        } else if let Some(rule) = &self.forget {
            format!("forgot {}", neutralize(rule))
        } else {
            queue_text(result)
        }
    }
}

fn s(v: &Value) -> String {
    neutralize(v.as_str().unwrap_or_default()).into_owned()
}

/// One line of at most `n` characters (an agent's text may hold anything).
fn short(text: &str, n: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let one = neutralize(&one).into_owned();
    if one.chars().count() <= n {
        return one;
    }
    let mut cut: String = one.chars().take(n.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// What a card asks about: its command, its path, else its description.
fn what(a: &Value) -> String {
    let args = &a["arguments"];
    let text = ["command", "file_path", "path"]
        .iter()
        .find_map(|k| match &args[k] {
            Value::String(t) => Some(t.clone()),
            Value::Array(words) => Some(
                words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        })
        .or_else(|| a["description"].as_str().map(str::to_owned))
        .unwrap_or_default();
    short(&text, 80)
}

fn queue_text(r: &Value) -> String {
    let cards = r["approvals"].as_array().cloned().unwrap_or_default();
    if cards.is_empty() {
        return "no approval waits".into();
    }
    let mut out = String::new();
    for a in &cards {
        let confirm = if a["confirm"] == true {
            "  (destructive: `hive ctl approve PANE --confirm` runs it)"
        } else {
            ""
        };
        out.push_str(&format!(
            "{:<14} {:<22} {:<12} {}{confirm}\n",
            s(&a["pane"]),
            s(&a["request_id"]),
            s(&a["tool"]),
            what(a),
        ));
    }
    out
}

fn log_text(r: &Value) -> String {
    let entries = r["entries"].as_array().cloned().unwrap_or_default();
    if entries.is_empty() {
        return format!("nothing decided yet ({})", s(&r["path"]));
    }
    let mut out = String::new();
    for e in &entries {
        let subject = match e["command"].as_str() {
            Some(c) => short(c, 60),
            None => short(
                &e["paths"]
                    .as_array()
                    .map(|p| {
                        p.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default(),
                60,
            ),
        };
        let reason = e["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
            .map(|r| format!("  ({})", short(r, 60)))
            .unwrap_or_default();
        out.push_str(&format!(
            "{}  {:<12} {:<8} {:<12} by {:<16} {subject}{reason}\n",
            s(&e["at"]),
            s(&e["pane"]),
            s(&e["tool"]),
            s(&e["decision"]),
            s(&e["by"]),
        ));
    }
    out
}

/// `allow Bash(cargo test*)`, `deny Edit(path: secrets/**)`.
fn rule_text(r: &Value) -> String {
    let mut inner = Vec::new();
    if let Some(c) = r["command"].as_str() {
        inner.push(short(c, 60));
    }
    if let Some(p) = r["path"].as_str() {
        inner.push(format!("path: {}", short(p, 60)));
    }
    format!(
        "{} {}({})",
        s(&r["action"]),
        s(&r["tool"]),
        inner.join(", ")
    )
}

fn rules_text(r: &Value) -> String {
    let mut out = String::new();
    for p in r["panes"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "pane {} preset {}\n",
            s(&p["pane"]),
            s(&p["preset"])
        ));
    }
    for rule in r["rules"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "{:<22} {}  (config)\n",
            s(&rule["id"]),
            rule_text(&rule["rule"])
        ));
    }
    let learned = r["learned"].as_array().cloned().unwrap_or_default();
    for l in &learned {
        out.push_str(&format!(
            "{:<22} {}  (learned from {} at {})\n",
            s(&l["id"]),
            rule_text(l),
            s(&l["pane"]),
            s(&l["at"]),
        ));
    }
    if out.is_empty() {
        out = "no rules and no pane with a policy\n".into();
    }
    out.push_str(&format!("learned rules are kept in {}\n", s(&r["path"])));
    out
}
