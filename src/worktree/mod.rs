//! Per-agent git worktrees (issue 19): an agent with `worktree = true` runs in
//! its own checkout on its own branch, so agents on one repository never
//! overwrite each other. This module is the model: create or reuse, list,
//! remove and prune worktrees (`manage`), snapshot and diff them (`diff`),
//! bring the work home (`merge`), find edits two agents share (`overlap`),
//! predict which merges would conflict and a merge order (`predict`), hand
//! a conflict to its agent (`handoff`), revert a rejected file or hunk
//! (`review`) and keep a running hive's worktrees
//! from being pruned (`live`). `workspace` makes one pane's worktrees of
//! several repositories under one root (issue 52); everything else walks
//! a pane's `Worktree::members`, which is the worktree itself for one
//! repository. `service` runs it off the UI thread and reports typed
//! events.
//!
//! git is driven through its binary (`git`) with explicit arguments; diff
//! text is parsed without I/O so the parser and the overlap check are plain
//! functions.

pub mod branch;
pub mod bundle;
pub mod diff;
pub(crate) mod git;
pub mod handoff;
pub mod live;
pub mod manage;
mod marker;
pub mod merge;
mod nofollow;
pub mod overlap;
pub mod predict;
pub mod review;
pub(crate) mod service;
pub mod setup;
pub mod workspace;
pub mod workspace_branch;

use std::path::PathBuf;

pub use crate::protocol::git::Worktree;
pub use diff::FileDiff;
pub use diff::FileStatus;
pub(crate) use diff::Hunk;
pub(crate) use manage::find_repo;
pub use manage::{ensure, list, prune, remove};
pub use merge::{BringMode, bring_home, commit_all};
pub use overlap::Overlap;
pub use overlap::overlaps;
pub use predict::{Conflict, MergePlan, Prediction, merge_order};
pub use service::{DiffScope, FileChange, WorktreeEvent, WorktreeRequest, spawn_service};

/// Where worktrees go when the config does not say: inside the repository,
/// next to `.git`, ignored through `.git/info/exclude`.
pub(crate) const DEFAULT_ROOT: &str = ".hive/worktrees";

#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("cannot run git: {source}")]
    Spawn {
        #[source]
        source: std::io::Error,
    },
    #[error("{command}: {message}")]
    Git { command: String, message: String },
    #[error("{0} is not inside a git repository")]
    NotARepo(PathBuf),
    #[error("{path} exists and is not a git worktree; move it away or set another worktree root")]
    PathTaken { path: PathBuf },
    #[error("no hive worktree for agent `{0}`")]
    Unknown(String),
    #[error("worktree of `{id}` has unmerged work ({detail}); bring it home first or force")]
    Unmerged { id: String, detail: String },
    #[error("merging {branch} would conflict in: {}", files.join(", "))]
    Conflict { branch: String, files: Vec<String> },
    #[error("worktree of `{id}` is {why}; stop that pane (or that hive) first")]
    Live { id: String, why: String },
    #[error("{0}")]
    Refused(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What an agent asks for: its branch name and whether the main checkout's
/// uncommitted changes come along.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeRequestSpec {
    pub agent_id: String,
    /// `None`: `hive/<agent-id>`.
    pub branch: Option<String>,
    pub(crate) copy_uncommitted: bool,
    /// Relative paths are relative to the repository's top level.
    pub root: Option<PathBuf>,
}

impl crate::config::AgentConfig {
    /// The worktree this agent asks for, if any (`root` from `[worktrees]`).
    pub fn worktree_spec(&self, root: Option<&std::path::Path>) -> Option<WorktreeRequestSpec> {
        let branch = match self.worktree.as_ref()? {
            crate::config::WorktreeSetting::Enabled(false) => return None,
            crate::config::WorktreeSetting::Enabled(true) => None,
            crate::config::WorktreeSetting::Branch(b) => Some(b.clone()),
        };
        Some(WorktreeRequestSpec {
            agent_id: self.id.clone(),
            branch,
            copy_uncommitted: self.worktree_copy_uncommitted,
            root: root.map(std::path::Path::to_owned),
        })
    }
}

/// The branch an agent's worktree uses.
pub(crate) fn branch_for(agent_id: &str, configured: Option<&str>) -> String {
    configured.map_or_else(|| format!("hive/{agent_id}"), str::to_owned)
}

/// Creates or reuses the worktree of every agent that asks for one and
/// points the agent's `cwd` into it. Returns each such agent's index with
/// its worktree or why there is none (that agent must not start in the
/// shared checkout instead).
pub fn prepare(
    agents: &mut [crate::config::AgentConfig],
    root: Option<&std::path::Path>,
) -> Vec<(usize, Result<Worktree, WorktreeError>)> {
    let mut out = prepare_without_setup(agents, root);
    for (i, result) in &mut out {
        let Some(agent) = agents.get(*i) else {
            continue;
        };
        if let Ok(w) = result {
            match setup(agent, w) {
                Ok(output) => w.setup_output = output,
                Err(e) => *result = Err(e),
            }
        }
    }
    out
}

/// `prepare` without running any `worktree_setup`: a server runs those in
/// the background (`setup`) and starts each agent when its setup is done,
/// so a long `npm ci` holds up neither the server nor the other panes.
pub fn prepare_without_setup(
    agents: &mut [crate::config::AgentConfig],
    root: Option<&std::path::Path>,
) -> Vec<(usize, Result<Worktree, WorktreeError>)> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut out = Vec::new();
    let mut ports = Vec::new();
    for (i, agent) in agents.iter_mut().enumerate() {
        let Some(spec) = agent.worktree_spec(root) else {
            continue;
        };
        let cwd = agent
            .cwd
            .as_ref()
            .map_or_else(|| here.clone(), |c| here.join(c));
        let made = if agent.repos.is_empty() {
            ensure(&cwd, &spec)
        } else {
            workspace::ensure(&spec, &agent.repos)
        };
        let result = made.and_then(|w| {
            tracing::info!(agent = %agent.id, path = %w.path.display(), created = w.created, "worktree");
            agent.cwd = Some(w.cwd.clone());
            agent.extra_roots = w.repos.iter().map(|m| m.path.clone()).collect();
            // `hive worktree prune/remove` must see the pane as alive.
            for m in w.members() {
                if let Err(e) = live::hold(&m.path) {
                    tracing::warn!(agent = %agent.id, "worktree lock: {e}");
                }
            }
            prepare_env(agent, &w, &mut ports)?;
            Ok(w)
        });
        if let Err(e) = &result {
            tracing::warn!(agent = %agent.id, "worktree: {e}");
        }
        out.push((i, result));
    }
    out
}

/// The worktree's own port in the agent's environment (`HIVE_PORT`, unless
/// the config sets it).
fn prepare_env(
    agent: &mut crate::config::AgentConfig,
    w: &Worktree,
    ports: &mut Vec<u16>,
) -> Result<(), WorktreeError> {
    if !agent.env.contains_key("HIVE_PORT") {
        let port = setup::port_for(&w.members()[0], ports)?;
        ports.push(port);
        agent.env.insert("HIVE_PORT".into(), port.to_string());
    }
    Ok(())
}

/// Whether `agent`'s `worktree_setup` has yet to run in `w`.
pub fn setup_pending(agent: &crate::config::AgentConfig, w: &Worktree) -> bool {
    !agent.worktree_setup.is_empty() && w.members().iter().any(|m| !setup::done(m))
}

/// Runs `agent`'s `worktree_setup` in `w` unless it ran there before, with
/// the agent's environment: what it printed (its last lines), when it ran
/// now. Blocking: minutes for an `npm ci`.
pub fn setup(
    agent: &crate::config::AgentConfig,
    w: &Worktree,
) -> Result<Option<String>, WorktreeError> {
    let envs: Vec<(String, String)> = agent
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // A workspace runs it in each repository (issue 52), in order.
    let mut said = Vec::new();
    for m in w.members() {
        let ran = setup::run_setup(m, &agent.worktree_setup, &envs).map_err(|e| match e {
            e if m.name.is_empty() => e,
            e => WorktreeError::Refused(format!("in {}: {e}", m.name)),
        })?;
        let Some(output) = ran else {
            continue;
        };
        tracing::info!(agent = %agent.id, "worktree_setup done: {} bytes of output", output.len());
        let shown = agent.worktree_setup.join(" ");
        let place = if m.name.is_empty() {
            String::new()
        } else {
            format!(" in {}", m.name)
        };
        let tail = setup::tail(&output, setup::TAIL_LINES);
        said.push(if tail.trim().is_empty() {
            format!("worktree setup `{shown}` ran{place} (no output)")
        } else {
            format!("worktree setup `{shown}` ran{place}:\n{tail}")
        });
    }
    Ok((!said.is_empty()).then(|| said.join("\n")))
}
