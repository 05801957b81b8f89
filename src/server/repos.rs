//! `/repo add DIR` and `hive ctl repo add PANE DIR` on the server (issue
//! 52): a repository joins a running pane's workspace between turns. Its
//! worktree is made at once on the pane's branch (as `hive ctl new
//! --repo` makes a workspace: the marker first, the member built aside and
//! moved into place), the git service follows the new member, and the
//! agent is started again on its own session once its old process has
//! stopped, so the vendor gets the new root the way it gets the others
//! (Claude Code's `--add-dir`, Gemini's `--include-directories`, the
//! sandbox's binds), after the new member's `worktree_setup` if any.
//! Refused while a turn runs or an approval waits: the agent would be
//! ended mid-answer.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::panes::{Done, EditError};
use super::serve::Server;
use crate::worktree::Worktree;

impl Server {
    /// Adds the repository of `dir` to pane `id`'s workspace.
    pub(super) fn add_repo(&mut self, id: &str, dir: &Path) -> Result<Done, EditError> {
        let slot = self.open_slot(id)?;
        let refuse = |why: String| EditError::Invalid(format!("/repo add: {why}"));
        let pane = &self.panes[slot];
        let Some(old) = pane.worktree.clone() else {
            return Err(refuse(format!(
                "`{id}` has no workspace (a pane made with --repo, or an agent with repos = [...])"
            )));
        };
        let r = &pane.record;
        if r.live.awaiting_approval() {
            return Err(refuse(format!(
                "`{id}` waits on an approval: answer it first, then add the repository"
            )));
        }
        if r.live.state.is_busy() {
            return Err(refuse(format!(
                "`{id}`'s turn is still running: add the repository when it ends"
            )));
        }
        let dir = where_is(&old, dir);
        let copy = r.agent.worktree_copy_uncommitted;
        let w =
            crate::worktree::workspace::add(&old, &dir, copy).map_err(|e| refuse(e.to_string()))?;
        let Some(member) = w
            .repos
            .iter()
            .find(|m| !old.repos.iter().any(|o| o.name == m.name))
        else {
            return Err(refuse("the workspace did not change".into()));
        };
        let member = member.clone();
        if let Err(e) = crate::worktree::live::hold(&member.path) {
            tracing::warn!(pane = id, "worktree lock: {e}");
        }
        self.join(slot, w, &member.repo);
        let text = format!(
            "added {} to {id}'s workspace ({}, branch {})",
            member.name,
            member.path.display(),
            member.branch
        );
        self.restart_with_roots(slot, &text);
        Ok(Done {
            text,
            json: json!({"pane": id, "added": member.name, "repo": member.repo,
                         "path": member.path, "branch": member.branch}),
            focus: None,
        })
    }

    /// Pane `slot` works in `w` from now, `repo` its new repository: its
    /// agent's roots and repositories, the layout's copy (a restart makes
    /// the same workspace) and the git service's.
    fn join(&mut self, slot: usize, w: Worktree, repo: &Path) {
        let pane = &mut self.panes[slot];
        pane.record.agent.extra_roots = w.repos.iter().map(|m| m.path.clone()).collect();
        // Its own workspace (not one handed to it): its list grows.
        if !pane.record.agent.repos.is_empty() {
            pane.record.agent.repos.push(repo.to_owned());
            pane.placed.agent.repos.push(repo.to_owned());
        }
        pane.worktree = Some(w.clone());
        self.worktrees.untrack(slot);
        self.worktrees.track(slot, w);
    }

    /// The agent of pane `slot` again, on its session, with its roots as
    /// they are now; a terminal pane's shell goes on (it sees the new
    /// directory under its own).
    fn restart_with_roots(&mut self, slot: usize, text: &str) {
        let pane = &mut self.panes[slot];
        if pane.record.agent.provider == "pty" {
            pane.log
                .note(format!("{text}; the shell sees it under its directory"));
            return;
        }
        let old = self.runners.get_mut(slot).and_then(Option::take);
        let note = format!("{text}; the agent goes on on its session with it");
        self.starter.restart_after(slot, pane, old, note);
        self.reset_pane(slot, None);
    }
}

/// `dir` as given: absolute, else relative to the workspace's first
/// repository (`../lib` beside it), since a workspace pane's own directory
/// is in hive's data directory.
fn where_is(w: &Worktree, dir: &Path) -> PathBuf {
    if dir.is_absolute() {
        return dir.to_owned();
    }
    match w.repos.first() {
        Some(first) => first.repo.join(dir),
        None => w.repo.join(dir),
    }
}
