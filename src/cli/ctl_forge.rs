//! `hive ctl pr open|watch|status|log|merge ID` and `hive ctl new ID --issue N`
//! (issue 48, docs/forge.md): a script's way to the forge, through the
//! running server, which drives the forge's CLI in the pane's worktree.

use clap::Subcommand;
use serde_json::Value;

use crate::control::protocol::Call;
use crate::protocol::forge::ForgeAsk;

#[derive(Debug, Clone, Subcommand)]
pub enum PrVerb {
    /// Push the pane's branch and open a draft pull request from it; the
    /// server then watches its checks and reviews.
    Open {
        pane: String,
        /// Its title (default: the issue's, else the last commit's).
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// Its body (default: `Closes #N` and the branch's commits).
        #[arg(long, value_name = "TEXT")]
        body: Option<String>,
        /// Ready for review rather than a draft.
        #[arg(long)]
        ready: bool,
    },
    /// Watch the open pull request the pane's branch has already (after a
    /// restart of the server, or one opened by hand).
    Watch { pane: String },
    /// The pull request's state, checks, and what the watcher sent.
    Status { pane: String },
    /// The tail of a failed check's log, as the watcher sends it.
    Log {
        pane: String,
        /// The check's name (as `pr status` lists it).
        check: String,
    },
    /// Merge the pane's pull request (a draft is marked ready first).
    Merge {
        pane: String,
        /// `squash`, `merge` or `rebase` (default: `[forge] merge_method`).
        #[arg(long, value_name = "METHOD")]
        method: Option<String>,
        /// Once merged, close the pane (its history stays).
        #[arg(long)]
        close: bool,
        /// With --close: remove its worktree and branch too.
        #[arg(long, requires = "close")]
        discard: bool,
    },
}

impl PrVerb {
    pub(super) fn to_call(&self) -> Call {
        Call::Forge(match self {
            Self::Open {
                pane,
                title,
                body,
                ready,
            } => ForgeAsk::PrOpen {
                pane: pane.clone(),
                title: title.clone(),
                body: body.clone(),
                ready: *ready,
            },
            Self::Status { pane } => ForgeAsk::PrStatus { pane: pane.clone() },
            Self::Watch { pane } => ForgeAsk::PrWatch { pane: pane.clone() },
            Self::Log { pane, check } => ForgeAsk::PrLog {
                pane: pane.clone(),
                check: check.clone(),
            },
            Self::Merge {
                pane,
                method,
                close,
                discard,
            } => ForgeAsk::PrMerge {
                pane: pane.clone(),
                method: method.clone(),
                close: close.then_some(*discard),
            },
        })
    }

    /// What it prints.
    pub(super) fn text(&self, result: &Value) -> String {
        let line =
            |v: &Value| crate::sanitize::neutralize(v.as_str().unwrap_or_default()).into_owned();
        match self {
            Self::Open { pane, .. } => opened_text(pane, result),
            Self::Status { .. } => status_text(result),
            Self::Watch { pane } => format!(
                "watching pull request #{} of {pane}: {}",
                result["number"],
                line(&result["url"])
            ),
            Self::Merge { pane, .. } => {
                let mut out = format!("merged {pane}'s pull request: {}", line(&result["said"]));
                if result["closed"].is_string() {
                    out.push_str(&format!("\n{}", line(&result["closed"])));
                }
                out
            }
            Self::Log { .. } => format!("{}\n", line(&result["log"]).trim_end()),
        }
    }
}

/// `pr open`'s line: its pull request, or a workspace's one per
/// repository (and what was not opened, if anything was not).
fn opened_text(pane: &str, result: &Value) -> String {
    let s = |v: &Value| crate::sanitize::neutralize(v.as_str().unwrap_or_default()).into_owned();
    let prs = result["prs"].as_array().cloned().unwrap_or_default();
    let mut out = if prs.len() > 1 {
        let mut out = format!("opened {} pull requests from {pane}:", prs.len());
        for p in &prs {
            out.push_str(&format!(
                "\n  {} #{}: {}",
                s(&p["repo"]),
                p["number"],
                s(&p["url"])
            ));
        }
        out
    } else {
        format!(
            "opened pull request #{} from {pane}: {}",
            result["number"],
            s(&result["url"])
        )
    };
    if result["failed"].is_string() {
        out.push_str(&format!("\nnot opened: {}", s(&result["failed"])));
    }
    out
}

/// `#1 draft ✓1 ✗1`, each check, and what the watcher sent (a
/// workspace's other pull requests after it, each under its repository).
fn status_text(r: &Value) -> String {
    let mut out = one_status(r);
    for part in r["parts"].as_array().into_iter().flatten() {
        let repo = crate::sanitize::neutralize(part["repo"].as_str().unwrap_or("?")).into_owned();
        out.push_str(&format!("-- {repo}\n{}", one_status(part)));
    }
    out
}

fn one_status(r: &Value) -> String {
    let s = |v: &Value| crate::sanitize::neutralize(v.as_str().unwrap_or("?")).into_owned();
    let mut out = format!("{}  {}\n", s(&r["summary"]), s(&r["url"]));
    for c in r["checks"].as_array().into_iter().flatten() {
        out.push_str(&format!("  {:<8} {}\n", s(&c["outcome"]), s(&c["name"])));
    }
    out.push_str(&format!(
        "sent {} message(s) (cap reached: {}); {} remark(s) from authors not allowed\n",
        r["attempts"], r["capped"], r["ignored"]
    ));
    for m in r["sent"].as_array().into_iter().flatten() {
        out.push_str(&format!("  {}  {}\n", s(&m["at"]), s(&m["what"])));
    }
    if let Some(e) = r["error"].as_str() {
        out.push_str(&format!(
            "last poll failed: {}\n",
            crate::sanitize::neutralize(e)
        ));
    }
    out
}
