//! `/handoff` on the server (issue 50): a pane's task goes on in another
//! pane, an open one or a new one, which works where the work is: in the
//! source's own worktree (`shared`: the source's agent stops, so two
//! agents never write one checkout) or in a new worktree branched from the
//! source's branch with its uncommitted changes (`branched`: the source
//! goes on). The target's directory is the work's, so a confined target
//! (a sandbox bound to its cwd) reads the files it is told about; the
//! brief (src/server/handoff_brief.rs) names that directory, never one the
//! target cannot reach. Refused while the source's turn runs or waits on
//! an approval: its last answer would be half a line.

use std::path::PathBuf;

use serde_json::json;

use super::clients::ClientId;
use super::handoff_brief::{Source, brief};
use super::panes::{Done, EditError};
use super::serve::Server;
use crate::panes::Started;
use crate::protocol::carry::{Handoff, HandoffTarget, HandoffTree};
use crate::protocol::edit::NewPane;
use crate::protocol::pane::{RunnerCommand, SubmitMode};
use crate::protocol::upsert::Upsert;
use crate::worktree::Worktree;

/// Where the target works and what the brief says of it.
struct Place {
    cwd: PathBuf,
    /// Its worktree, for the git service (the source's, or a new one).
    worktree: Option<Worktree>,
    text: String,
}

/// Who continues: an open pane's slot, or a new pane's agent.
enum Target {
    Open(usize),
    New(Box<crate::config::AgentConfig>),
}

impl Server {
    /// Applies `h`: the target is started (or started again) in the
    /// work's directory with the brief as its next message.
    pub(super) fn handoff(
        &mut self,
        h: Handoff,
        _asker: Option<ClientId>,
    ) -> Result<Done, EditError> {
        let src = self.open_slot(&h.from)?;
        self.may_hand_off(src, "")?;
        let target = self.target(src, &h.to)?;
        let to_id = match &target {
            Target::New(a) => a.id.clone(),
            Target::Open(t) => self.panes[*t].record.agent.id.clone(),
        };
        let place = self.place(src, &to_id, h.tree)?;
        let text = self.brief_of(src, &place.text);
        // A workspace's repositories are the target's roots too (issue 52).
        let roots: Vec<PathBuf> = (place.worktree.iter())
            .flat_map(|w| w.repos.iter().map(|m| m.path.clone()))
            .collect();
        let slot = match target {
            Target::New(mut agent) => {
                agent.cwd = Some(place.cwd.clone());
                agent.extra_roots = roots;
                // Its own worktree setting would send it elsewhere.
                agent.worktree = None;
                let window = Some(self.panes[src].placed.window);
                let done = self.add_agent(*agent, window, None);
                done.focus.unwrap_or(src)
            }
            Target::Open(t) => {
                self.start_in(t, place.cwd.clone(), roots);
                t
            }
        };
        if let Some(w) = &place.worktree {
            self.panes[slot].worktree = Some(w.clone());
            self.worktrees.untrack(slot);
            self.worktrees.track(slot, w.clone());
        }
        let submit = RunnerCommand::Submit {
            text,
            mode: SubmitMode::Queue,
        };
        self.command(slot, submit, None);
        let to_name = self.panes[slot].record.agent.display_name().to_owned();
        match h.tree {
            HandoffTree::Shared => self.stop_after_handoff(src, &to_name),
            HandoffTree::Branched => {
                let note = format!("handed off to {to_name}, in a worktree branched from this one");
                self.panes[src].log.note(note);
                self.reset_pane(src, None);
            }
        }
        let from_id = h.from;
        Ok(Done {
            text: format!("handed {from_id}'s work to {to_name}"),
            json: json!({"from": from_id, "to": to_id, "tree": h.tree,
                         "cwd": place.cwd, "worktree": place.worktree.as_ref().map(|w| &w.path),
                         "branch": place.worktree.as_ref().map(|w| &w.branch)}),
            focus: Some(slot),
        })
    }

    /// The open pane `to` names, or a new pane's agent, checked before
    /// anything is made on disk.
    fn target(&self, src: usize, to: &HandoffTarget) -> Result<Target, EditError> {
        match to {
            HandoffTarget::Pane(t) => {
                let slot = self.handoff_target(src, t)?;
                self.may_hand_off(slot, "the target ")?;
                Ok(Target::Open(slot))
            }
            HandoffTarget::New { template, provider } => {
                let (template, provider) = self.template_or_provider(template, provider);
                let asked = NewPane {
                    id: self.free_id(template.as_deref().or(provider.as_deref())),
                    template: template.clone(),
                    provider: provider.clone(),
                    cwd: Some(self.work_dir(src)?),
                    ..NewPane::default()
                };
                Ok(Target::New(Box::new(self.new_agent(&asked)?)))
            }
        }
    }

    /// Refused while pane `slot` runs a turn or waits on an approval, and
    /// for a terminal pane (nothing to brief, nothing to send).
    fn may_hand_off(&self, slot: usize, who: &str) -> Result<(), EditError> {
        let r = &self.panes[slot].record;
        let id = r.id();
        let refuse = |why: String| Err(EditError::Invalid(format!("/handoff: {who}{why}")));
        if r.agent.provider == "pty" {
            return refuse(format!("`{id}` is a terminal pane"));
        }
        if r.live.awaiting_approval() {
            return refuse(format!(
                "`{id}` waits on an approval: answer it first, then hand off"
            ));
        }
        if r.live.state.is_busy() {
            return refuse(format!(
                "`{id}`'s turn is still running: wait for it or interrupt it, then hand off"
            ));
        }
        Ok(())
    }

    /// The open pane other than `src` that `target` names: its id, its
    /// name (any case), else the first pane of that provider.
    fn handoff_target(&self, src: usize, target: &str) -> Result<usize, EditError> {
        let others: Vec<usize> = self
            .panes
            .order
            .iter()
            .copied()
            .filter(|&s| s != src)
            .collect();
        let by = |f: &dyn Fn(&crate::config::AgentConfig) -> bool| {
            others
                .iter()
                .copied()
                .find(|&s| f(&self.panes[s].record.agent))
        };
        by(&|a| a.id == target)
            .or_else(|| by(&|a| a.display_name().eq_ignore_ascii_case(target)))
            .or_else(|| by(&|a| a.provider == target))
            .ok_or_else(|| EditError::Invalid(format!("/handoff: no other pane `{target}`")))
    }

    /// A `template` that names no agent of the config nor an open pane but
    /// a provider is that provider (`hive ctl handoff --new claude`).
    fn template_or_provider<'a>(
        &self,
        template: &'a Option<String>,
        provider: &'a Option<String>,
    ) -> (&'a Option<String>, &'a Option<String>) {
        match template {
            Some(t)
                if provider.is_none()
                    && self.starter.config.agent(t).is_none()
                    && self.open_slot(t).is_err()
                    && self.starter.registry().get(t).is_ok() =>
            {
                (provider, template)
            }
            _ => (template, provider),
        }
    }

    /// `base`, else `base-2`, … : an id no pane has.
    fn free_id(&self, base: Option<&str>) -> String {
        let base: String = base
            .unwrap_or("handoff")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .take(56)
            .collect();
        let base = if base.is_empty() {
            "handoff".into()
        } else {
            base
        };
        (1..)
            .map(|n| match n {
                1 => base.clone(),
                n => format!("{base}-{n}"),
            })
            .find(|id| self.panes.find(id).is_none() && self.starter.config.agent(id).is_none())
            .unwrap_or(base)
    }

    /// The directory pane `src` works in.
    fn work_dir(&self, src: usize) -> Result<PathBuf, EditError> {
        let pane = &self.panes[src];
        if let Some(w) = &pane.worktree {
            return Ok(w.cwd.clone());
        }
        crate::provider::process::working_dir(&pane.record.agent).map_err(|e| {
            EditError::Invalid(format!("/handoff: where `{}` works: {e}", pane.record.id()))
        })
    }

    /// Where the target of a hand-off from `src` works: the source's
    /// directory, or a new worktree branched from it (made here).
    fn place(&self, src: usize, to: &str, tree: HandoffTree) -> Result<Place, EditError> {
        let cwd = self.work_dir(src)?;
        let own = self.panes[src].worktree.clone();
        if let (HandoffTree::Branched, Some(ws)) = (tree, own.as_ref().filter(|w| w.is_workspace()))
        {
            return branched_workspace(ws, to);
        }
        match tree {
            HandoffTree::Shared => {
                let text = match &own {
                    Some(w) => format!(
                        "You work in the git worktree it worked in, {} (branch {}): its commits and uncommitted changes are there. Its agent has stopped; the worktree is yours now.",
                        w.cwd.display(),
                        w.branch
                    ),
                    None => format!(
                        "You work in the directory it worked in, {}. Its agent has stopped.",
                        cwd.display()
                    ),
                };
                Ok(Place {
                    cwd,
                    worktree: own,
                    text,
                })
            }
            HandoffTree::Branched => {
                let root = self.starter.config.worktrees.root.clone();
                let w = crate::worktree::branch::branch_from(&cwd, to, root.as_deref())
                    .map_err(|e| EditError::Invalid(format!("/handoff branched: {e}")))?;
                if let Err(e) = crate::worktree::live::hold(&w.path) {
                    tracing::warn!(pane = to, "worktree lock: {e}");
                }
                let from = own.as_ref().map_or_else(
                    || format!("the checkout at {}", cwd.display()),
                    |o| format!("its branch {}", o.branch),
                );
                let text = format!(
                    "You work in a new git worktree, {} (branch {}), made from {from} with its uncommitted changes (untracked files too). It goes on in its own.",
                    w.cwd.display(),
                    w.branch
                );
                Ok(Place {
                    cwd: w.cwd.clone(),
                    worktree: Some(w),
                    text,
                })
            }
        }
    }

    /// The brief of pane `src`'s finished items, saying `place`.
    fn brief_of(&self, src: usize, place: &str) -> String {
        let pane = &self.panes[src];
        let r = &pane.record;
        let logged = pane.log.events();
        let running = r.live.busy_turn();
        let items = pane
            .log
            .restored()
            .items
            .iter()
            .chain(logged.iter().filter_map(|l| match &l.event {
                crate::protocol::pane::PaneEvent::Upsert(u) => Some(u),
                _ => None,
            }))
            .filter(|u: &&Upsert| Some(u.turn_id.as_str()) != running);
        let source = Source {
            name: r.agent.display_name(),
            provider: &r.agent.provider,
            model: r.model(),
            place: place.to_owned(),
            queued: &r.live.queue,
        };
        brief(&source, items)
    }

    /// Starts open pane `slot`'s agent again, in `cwd`, on a new history
    /// session (its vendor's session belongs to its old directory).
    fn start_in(&mut self, slot: usize, cwd: PathBuf, roots: Vec<PathBuf>) {
        if let Some(r) = self.runners.get_mut(slot).and_then(Option::take) {
            tokio::spawn(async move { r.shutdown().await });
        }
        self.worktrees.untrack(slot);
        let pane = &mut self.panes[slot];
        pane.worktree = None;
        pane.record.agent.cwd = Some(cwd.clone());
        pane.record.agent.worktree = None;
        pane.record.agent.extra_roots = roots;
        pane.placed.agent.cwd = Some(cwd);
        pane.placed.agent.worktree = None;
        pane.record.started = Started::Starting;
        let runner = self.starter.start(slot, pane, true, &mut self.ops);
        if let Some(place) = self.runners.get_mut(slot) {
            *place = runner;
        }
        self.reset_pane(slot, None);
    }

    /// The source of a shared hand-off stops: its worktree is the
    /// target's now. The pane stays, saying so.
    fn stop_after_handoff(&mut self, slot: usize, to: &str) {
        if let Some(r) = self.runners.get_mut(slot).and_then(Option::take) {
            tokio::spawn(async move { r.shutdown().await });
        }
        let why = format!(
            "handed off to {to}, which works in this pane's directory now; its agent stopped"
        );
        // The worktree is the target's now: its git state, its diffs, a
        // discarding close are the target's.
        self.worktrees.untrack(slot);
        let pane = &mut self.panes[slot];
        pane.worktree = None;
        pane.log.note(why.clone());
        pane.record.started = Started::Failed(why);
        self.reset_pane(slot, None);
    }
}

/// A branched hand-off of a workspace pane (issue 52): a new workspace
/// with a branch of every repository, each carrying its member's work.
fn branched_workspace(ws: &Worktree, to: &str) -> Result<Place, EditError> {
    let w = crate::worktree::workspace_branch::branch_workspace(ws, to)
        .map_err(|e| EditError::Invalid(format!("/handoff branched: {e}")))?;
    for m in &w.repos {
        if let Err(e) = crate::worktree::live::hold(&m.path) {
            tracing::warn!(pane = to, "worktree lock: {e}");
        }
    }
    let names: Vec<&str> = w.repos.iter().map(|m| m.name.as_str()).collect();
    let text = format!(
        "You work in a new workspace, {}: a git worktree of each repository ({}, each \
         under its name) on branch {}, made from its branch {} with its uncommitted changes \
         (untracked files too). It goes on in its own.",
        w.cwd.display(),
        names.join(", "),
        w.branch,
        ws.branch
    );
    Ok(Place {
        cwd: w.cwd.clone(),
        worktree: Some(w),
        text,
    })
}
