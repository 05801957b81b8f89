//! `hive ctl new/close/rename/move` (issue 32): a script's way to change a
//! running hive's panes, as `/new`, `/close`, `/rename`, `/move` and
//! `/window` are a console's. The server applies both alike and every
//! console attached sees the new layout at once.

use clap::Args;
use serde_json::Value;

use crate::control::protocol::Call;

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("from").required(true).args(["template", "provider"])))]
pub struct NewArgs {
    /// The new pane's id (history and `hive ctl` name it by this).
    pub id: String,
    /// Copy this agent of the config (its provider, command, settings…).
    #[arg(long, value_name = "AGENT")]
    pub template: Option<String>,
    /// Or start this provider with its defaults (`claude`, `codex`, `pty`…).
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,
    /// Its working directory (relative: to this shell's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// In a git worktree of its own (branch `hive/<id>`).
    #[arg(long)]
    pub worktree: bool,
    /// A workspace over these repositories (repeat it: `--repo ../api
    /// --repo ../web`), a worktree of each on the pane's branch.
    #[arg(long = "repo", value_name = "DIR")]
    pub repos: Vec<std::path::PathBuf>,
    /// Its title (default: the id).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Into this window (1-based; one past the last makes a new one).
    #[arg(long, value_name = "N")]
    pub window: Option<usize>,
    /// Run its agent on this `[[host]]` of the hive's config (a container,
    /// a box, an ssh machine; docs/hosts.md).
    #[arg(long = "host", value_name = "NAME")]
    pub exec_host: Option<String>,
    /// For this forge issue: its own worktree on branch
    /// `hive/<N>-<slug>`, the issue its first message (docs/forge.md).
    #[arg(long, value_name = "N", conflicts_with_all = ["worktree", "name"])]
    pub issue: Option<u64>,
}

impl NewArgs {
    pub(super) fn to_call(&self) -> Call {
        if let Some(n) = self.issue {
            return issue_call(self, n);
        }
        let here = std::env::current_dir().unwrap_or_default();
        Call::New {
            pane: self.id.clone(),
            template: self.template.clone(),
            provider: self.provider.clone(),
            cwd: self.cwd.as_ref().map(|c| here.join(c)),
            model: self.model.clone(),
            worktree: self.worktree,
            repos: self.repos.iter().map(|r| here.join(r)).collect(),
            name: self.name.clone(),
            window: self.window,
            host: self.exec_host.clone(),
        }
    }

    /// The same, for the hive of `[[host]]` (its id without the `host:`).
    pub(super) fn on_host(&self, id: String) -> Self {
        Self { id, ..self.clone() }
    }
}

/// What `new` prints: the pane, where, and whether its agent started.
pub(super) fn new_text(result: &Value) -> String {
    let pane = result["pane"].as_str().unwrap_or_default();
    let window = result["window"].as_u64().unwrap_or(1);
    let mut out = match result["failed"].as_str() {
        Some(why) => format!("added {pane} in window {window}; it could not start: {why}"),
        None => format!("added {pane} in window {window}"),
    };
    if let (Some(n), Some(branch)) = (result["issue"].as_u64(), result["branch"].as_str()) {
        out.push_str(&format!(" for issue #{n}, on branch {branch}"));
    }
    out
}

/// `new ID --issue N`'s call.
fn issue_call(args: &NewArgs, number: u64) -> Call {
    let here = std::env::current_dir().unwrap_or_default();
    Call::Forge(crate::protocol::forge::ForgeAsk::Issue {
        pane: args.id.clone(),
        number,
        template: args.template.clone(),
        provider: args.provider.clone(),
        cwd: args.cwd.as_ref().map(|c| here.join(c)),
        model: args.model.clone(),
        window: args.window,
    })
}

/// `hive ctl repo …` (issue 52): a running pane's workspace.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum RepoVerb {
    /// A repository joins the pane's workspace between turns (a worktree
    /// of it on the pane's branch); the agent goes on on its session with
    /// the new root. Refused while a turn runs.
    Add {
        pane: String,
        /// A directory inside the repository (relative: to this shell's).
        dir: std::path::PathBuf,
    },
}

impl RepoVerb {
    pub(super) fn to_call(&self) -> Call {
        let here = std::env::current_dir().unwrap_or_default();
        match self {
            Self::Add { pane, dir } => Call::AddRepo {
                pane: pane.clone(),
                repo: here.join(dir),
            },
        }
    }
}

/// What `repo add` prints: the member and where it is.
pub(super) fn repo_text(result: &Value) -> String {
    let pane = result["pane"].as_str().unwrap_or_default();
    let name = result["added"].as_str().unwrap_or_default();
    let path = result["path"].as_str().unwrap_or_default();
    let branch = result["branch"].as_str().unwrap_or_default();
    format!("added {name} to {pane}'s workspace: {path} on {branch}")
}
