//! An agent's `repos` (issue 52): the repositories of its workspace, read
//! when the config loads so a mistake is said there, with the agent's id,
//! rather than as a pane that cannot start.

use std::path::{Path, PathBuf};

use super::{AgentConfig, Config, WorktreeSetting};

impl Config {
    /// Makes each agent's `repos` absolute (relative to the config's
    /// directory, as `cwd`) and checks them.
    pub(super) fn resolve_repos(&mut self) -> Result<(), String> {
        let base = self.source.base_dir().map(Path::to_owned);
        for a in &mut self.agents {
            if a.repos.is_empty() {
                continue;
            }
            let here = base
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_default();
            a.repos = a
                .repos
                .iter()
                .map(|r| here.join(r).components().collect())
                .collect();
            a.check_repos()?;
        }
        Ok(())
    }
}

impl AgentConfig {
    /// `repos` asks for a workspace of worktrees: `worktree` must be on,
    /// each entry a directory inside a git repository, none twice.
    pub(crate) fn check_repos(&self) -> Result<(), String> {
        if self.repos.is_empty() {
            return Ok(());
        }
        let id = &self.id;
        if matches!(self.worktree, None | Some(WorktreeSetting::Enabled(false))) {
            return Err(format!(
                "agent `{id}`: `repos` makes a workspace of worktrees; set `worktree = true` (or a branch name) too"
            ));
        }
        let mut seen: Vec<PathBuf> = Vec::new();
        for r in &self.repos {
            let shown = r.display();
            if !r.is_dir() {
                return Err(format!(
                    "agent `{id}`: repository `{shown}` (repos) is not a directory"
                ));
            }
            if !r.ancestors().any(|d| d.join(".git").exists()) {
                return Err(format!(
                    "agent `{id}`: `{shown}` (repos) is not inside a git repository"
                ));
            }
            let real = std::fs::canonicalize(r).unwrap_or_else(|_| r.clone());
            if seen.contains(&real) {
                return Err(format!(
                    "agent `{id}`: repository `{shown}` is named twice in repos"
                ));
            }
            seen.push(real);
        }
        Ok(())
    }
}
