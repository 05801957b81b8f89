//! `hive ctl handoff` (issue 50): a script's `/handoff`. The pane's work
//! goes on in another pane (`--to`) or a new one (`--new`, a config agent
//! or a provider), in the source's worktree (`shared`, the source stops)
//! or in a new worktree branched from it (`--branched`). And `hive ctl
//! account` (issue 51), a script's `/account`: the conversation carried
//! to another account's home.

use clap::Args;
use serde_json::Value;

use crate::control::protocol::Call;
use crate::protocol::carry::{Handoff, HandoffTarget, HandoffTree};

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["to", "new"])))]
pub struct HandoffArgs {
    /// The pane whose work goes on.
    pub pane: String,
    /// An open pane (id, name or provider) continues, starting a new
    /// session in the work's directory.
    #[arg(long, value_name = "PANE")]
    pub to: Option<String>,
    /// A new pane continues: a copy of this config agent, else this
    /// provider with its defaults.
    #[arg(long, value_name = "AGENT|PROVIDER")]
    pub new: Option<String>,
    /// In a new worktree from the pane's branch with its uncommitted
    /// changes (the pane goes on); default: in the pane's own worktree
    /// (the pane stops).
    #[arg(long)]
    pub branched: bool,
}

impl HandoffArgs {
    pub(super) fn to_call(&self) -> Call {
        let to = match (&self.to, &self.new) {
            (Some(pane), _) => HandoffTarget::Pane(pane.clone()),
            // The server takes it as a provider when no agent has that id.
            (None, what) => HandoffTarget::New {
                template: what.clone(),
                provider: None,
            },
        };
        Call::Handoff(Handoff {
            from: self.pane.clone(),
            to,
            tree: if self.branched {
                HandoffTree::Branched
            } else {
                HandoffTree::Shared
            },
        })
    }
}

/// `handed a's work to b (in /path, branch hive/b)`.
pub(super) fn handoff_text(result: &Value) -> String {
    let s = |k: &str| result.get(k).and_then(Value::as_str).unwrap_or("?");
    let branch = match result.get("branch").and_then(Value::as_str) {
        Some(b) => format!(", branch {b}"),
        None => String::new(),
    };
    format!(
        "handed {}'s work to {} (in {}{branch})",
        s("from"),
        s("to"),
        s("cwd")
    )
}

/// `cl goes on under account personal (now)`.
pub(super) fn account_text(result: &Value) -> String {
    let s = |k: &str| result.get(k).and_then(Value::as_str).unwrap_or("?");
    format!(
        "{} goes on under account {} ({})",
        s("pane"),
        s("account"),
        s("when")
    )
}
