//! Panes made, closed, renamed and moved while the server runs (issue 32),
//! from a console (`ClientMsg::Edit`) or `hive ctl new/close/rename/move`.
//! Both go through [`Server::edit`]; after a change the layout is saved
//! (src/server/layout.rs) and every attached client gets a fresh snapshot,
//! the one way a client's panes change.

use serde_json::{Value, json};

use super::clients::ClientId;
use super::layout::{PANES_PER_WINDOW, Placed, compact_windows, next_window};
use super::serve::{Pane, Server};
use crate::config::{AgentConfig, Config, ProviderSettings, WorktreeSetting};
use crate::control::protocol::ErrorCode;
use crate::panes::Started;
use crate::wire::ServerMsg;
use crate::wire::edit::{NewPane, PaneEdit};
use crate::wire::snapshot::LayoutPane;

/// A new pane goes in a layout message when its log holds at most this
/// many entries; past that, in a snapshot's bounded parts.
const NEW_PANE_INLINE: usize = 2_000;

/// Why an edit was refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum EditError {
    #[error("no pane `{0}`")]
    NoPane(String),
    #[error("{0}")]
    Invalid(String),
}

impl EditError {
    pub(super) fn code(&self) -> ErrorCode {
        match self {
            Self::NoPane(_) => ErrorCode::SessionNotFound,
            Self::Invalid(_) => ErrorCode::BadRequest,
        }
    }
}

/// A change made.
pub(super) struct Done {
    /// For the user who asked.
    pub(super) text: String,
    /// For `hive ctl`.
    pub(super) json: Value,
    /// The slot the asking console looks at next (a pane it made).
    pub(super) focus: Option<usize>,
}

impl Server {
    /// A console's edit: applied, then that console is told how it went.
    pub(super) fn edit_from(&mut self, client: ClientId, edit: PaneEdit) {
        let notice = match self.edit(edit, Some(client)) {
            Ok(done) => ServerMsg::Notice {
                text: done.text,
                focus: done.focus.and_then(|s| self.position(s)),
            },
            Err(e) => ServerMsg::Notice {
                text: e.to_string(),
                focus: None,
            },
        };
        self.clients.send(client, &notice);
    }

    /// Applies `edit`; on success the layout is saved and every client
    /// gets the new panes.
    pub(super) fn edit(
        &mut self,
        edit: PaneEdit,
        from: Option<ClientId>,
    ) -> Result<Done, EditError> {
        let done = match edit {
            PaneEdit::New(new) => self.add(new, from)?,
            PaneEdit::Close {
                pane,
                team,
                discard,
            } => self.close(&pane, team, discard)?,
            PaneEdit::Rename { pane, name } => self.rename(&pane, &name)?,
            PaneEdit::Move { pane, to } => self.move_to(&pane, to)?,
            PaneEdit::Window { pane, window } => self.put_in_window(&pane, window)?,
            PaneEdit::Handoff(h) => self.handoff(h, from)?,
            // Answered later, off the loop: the door sends it to `relocate`.
            PaneEdit::Relocate(_) => {
                return Err(EditError::Invalid("/move @HOST goes by the door".into()));
            }
            PaneEdit::AddRepo { pane, repo } => self.add_repo(&pane, &repo)?,
        };
        self.layout_changed();
        Ok(done)
    }

    /// The slot of the open pane `id`.
    pub(super) fn open_slot(&self, id: &str) -> Result<usize, EditError> {
        self.panes
            .find(id)
            .ok_or_else(|| EditError::NoPane(id.to_owned()))
    }

    fn add(&mut self, new: NewPane, from: Option<ClientId>) -> Result<Done, EditError> {
        let agent = self.new_agent(&new)?;
        let window = new.window.or_else(|| self.window_of_client(from));
        Ok(self.add_agent(agent, window, None))
    }

    /// Starts `agent` in a new pane (in `window`, else the last one) and
    /// puts it last in the layout.
    pub(super) fn add_agent(
        &mut self,
        agent: AgentConfig,
        window: Option<usize>,
        parent: Option<String>,
    ) -> Done {
        // Nine to a window whoever makes the pane (issue 46 item 12): a
        // helper asked into its parent's full window, or a pane into the
        // client's, goes where there is room.
        let placed = self.placed();
        let window = window
            .filter(|&w| placed.iter().filter(|p| p.window == w).count() < PANES_PER_WINDOW)
            .unwrap_or_else(|| next_window(&placed));
        let placed = Placed {
            agent: agent.clone(),
            window,
            added: true,
            parent,
        };
        let mut running = agent;
        let root = self.starter.config.worktrees.root.clone();
        let prepared = crate::worktree::prepare_without_setup(
            std::slice::from_mut(&mut running),
            root.as_deref(),
        );
        let (record, pane) = Pane::slot(placed, running);
        // In the registry before it starts: every door finds it from now.
        let slot = self.panes.push(record, pane);
        let pane = &mut self.panes[slot];
        for (_, result) in prepared {
            match result {
                Ok(w) => pane.worktree = Some(w),
                Err(e) => pane.record.started = Started::Failed(format!("worktree: {e}")),
            }
        }
        let runner = self
            .starter
            .start_or_set_up(slot, pane, false, &mut self.ops);
        let id = pane.record.agent.id.clone();
        let failed = pane.record.failed().map(str::to_owned);
        let worktree = pane.worktree.as_ref().map(|w| w.path.clone());
        let repos: Vec<&str> = pane
            .worktree
            .iter()
            .flat_map(|w| w.repos.iter().map(|m| m.name.as_str()))
            .collect();
        let repos = json!(repos);
        if let Some(w) = &pane.worktree {
            self.worktrees.track(slot, w.clone());
        }
        self.runners.push(runner);
        let text = match &failed {
            Some(why) => format!("added pane {id}, which could not start: {why}"),
            None => format!("added pane {id} in window {window}"),
        };
        Done {
            text,
            json: json!({"pane": id, "window": window, "started": failed.is_none(),
                         "failed": failed, "worktree": worktree, "repos": repos}),
            focus: Some(slot),
        }
    }

    /// The agent a new pane runs: its template or provider, with the
    /// user's choices, checked as a config's agent would be.
    pub(super) fn new_agent(&self, new: &NewPane) -> Result<AgentConfig, EditError> {
        let invalid = |s: String| EditError::Invalid(s);
        if !crate::config::valid_id(&new.id) {
            return Err(invalid(format!(
                "pane id `{}` must be 1 to 64 letters, digits, `-` and `_`",
                new.id
            )));
        }
        if self.open_slot(&new.id).is_ok() {
            return Err(invalid(format!("there is a pane `{}` already", new.id)));
        }
        let config = &self.starter.config;
        let mut agent = match (&new.template, &new.provider) {
            (Some(t), None) => {
                // An agent of the config, else an open pane (a copy of a
                // copy: best-of-N of a pane made at runtime).
                let open = self
                    .open_slot(t)
                    .ok()
                    .map(|s| self.panes[s].placed.agent.clone());
                let mut a = config.agent(t).cloned().or(open).ok_or_else(|| {
                    let ids: Vec<_> = config.agents.iter().map(|a| a.id.as_str()).collect();
                    invalid(format!(
                        "no agent `{t}` in the config or among the panes to copy; the config has: {}",
                        ids.join(", ")
                    ))
                })?;
                a.id.clone_from(&new.id);
                // The template's title would name two panes alike.
                a.name = None;
                a
            }
            (None, Some(p)) => {
                self.starter
                    .registry()
                    .get(p)
                    .map_err(|e| invalid(e.to_string()))?;
                config.runtime_agent(&new.id, p).map_err(invalid)?
            }
            _ => {
                return Err(invalid(
                    "give a template (an agent of the config) or a provider".into(),
                ));
            }
        };
        choose(&mut agent, new, config)?;
        self.starter
            .registry()
            .check(&agent)
            .map_err(|e| invalid(format!("{}: {}", e.key, e.message)))?;
        Ok(agent)
    }

    /// The window the console `from` looks at.
    fn window_of_client(&self, from: Option<ClientId>) -> Option<usize> {
        let slot = self.clients.focus_of(from?)?;
        self.panes.get(slot).map(|p| p.placed.window)
    }

    /// Closes pane `id`, and with `team` the helpers it spawned (theirs
    /// too).
    pub(super) fn close(&mut self, id: &str, team: bool, discard: bool) -> Result<Done, EditError> {
        let slot = self.open_slot(id)?;
        let mut slots = if team {
            self.helpers_of(slot)
        } else {
            Vec::new()
        };
        slots.push(slot);
        if self.panes.order.len() <= slots.len() {
            return Err(EditError::Invalid(format!(
                "`{id}` is the last pane: `hive kill` stops the server"
            )));
        }
        let closed: Vec<String> = slots
            .iter()
            .map(|&s| self.panes[s].record.agent.id.clone())
            .collect();
        let worktree = self.panes[slot].worktree.as_ref().map(|w| w.path.clone());
        for s in slots {
            self.close_slot(s, discard);
        }
        self.compact();
        let kept = match &worktree {
            Some(_) if discard => "; its worktree and branch are being removed".to_owned(),
            Some(w) => format!("; its worktree stays at {}", w.display()),
            None => String::new(),
        };
        let helpers = match closed.len() - 1 {
            0 => String::new(),
            1 => " and its helper".to_owned(),
            n => format!(" and its {n} helpers"),
        };
        Ok(Done {
            text: format!("closed pane {id}{helpers}; the history stays{kept}"),
            json: json!({"pane": id, "closed": closed, "worktree": worktree}),
            focus: None,
        })
    }

    /// The open panes spawned by slot `slot`, and by them, deepest first.
    pub(super) fn helpers_of(&self, slot: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut parents = vec![self.panes[slot].record.agent.id.clone()];
        while let Some(parent) = parents.pop() {
            for &s in &self.panes.order {
                let p = &self.panes[s];
                if p.record.parent.as_deref() == Some(parent.as_str()) && !out.contains(&s) {
                    out.push(s);
                    parents.push(p.record.agent.id.clone());
                }
            }
        }
        out.reverse();
        out
    }

    /// Ends slot `slot`'s agent; `discard`: then removes its worktree and
    /// branch (once the agent has stopped writing there).
    fn close_slot(&mut self, slot: usize, discard: bool) {
        let runner = self.runners.get_mut(slot).and_then(Option::take);
        let worktree = self.panes[slot].worktree.clone().filter(|_| discard);
        let root = self.starter.config.worktrees.root.clone();
        // Its own container goes with it (issue 49), once its agent stopped.
        let containers = crate::exec::steps::take_pane(self.panes[slot].record.id());
        tokio::spawn(async move {
            if let Some(runner) = runner {
                runner.shutdown().await;
            }
            if !containers.is_empty() {
                let _ =
                    tokio::task::spawn_blocking(move || crate::exec::steps::stop(containers)).await;
            }
            if let Some(w) = worktree {
                let removed = tokio::task::spawn_blocking(move || {
                    for m in w.members() {
                        crate::worktree::live::release(&m.path);
                    }
                    if w.is_workspace() {
                        return crate::worktree::workspace::remove(&w, true).map(|_| w.path);
                    }
                    crate::worktree::manage::remove(&w.repo, root.as_deref(), &w.agent_id, true)
                        .map(|info| info.path)
                })
                .await;
                match removed {
                    Ok(Ok(path)) => tracing::info!(path = %path.display(), "worktree removed"),
                    Ok(Err(e)) => tracing::warn!("cannot remove a closed pane's worktree: {e}"),
                    Err(e) => tracing::warn!("worktree removal: {e}"),
                }
            }
        });
        self.panes.close(slot);
        let pane = &mut self.panes[slot];
        pane.log.reset(Default::default());
        self.ops.close(slot, pane.record.id());
        self.control.close_pane(slot, &pane.record);
        self.worktrees.untrack(slot);
    }

    fn rename(&mut self, id: &str, name: &str) -> Result<Done, EditError> {
        let slot = self.open_slot(id)?;
        let name = title(name)?;
        let pane = &mut self.panes[slot];
        pane.record.agent.name = Some(name.clone());
        pane.placed.agent.name = Some(name.clone());
        Ok(Done {
            text: format!("renamed {id} to {name}"),
            json: json!({"pane": id, "name": name}),
            focus: None,
        })
    }

    fn move_to(&mut self, id: &str, to: usize) -> Result<Done, EditError> {
        let slot = self.open_slot(id)?;
        self.panes.order.retain(|&s| s != slot);
        let to = to.min(self.panes.order.len());
        self.panes.order.insert(to, slot);
        Ok(Done {
            text: format!("moved {id} to place {}", to + 1),
            json: json!({"pane": id, "to": to}),
            focus: Some(slot),
        })
    }

    fn put_in_window(&mut self, id: &str, window: usize) -> Result<Done, EditError> {
        let slot = self.open_slot(id)?;
        let last = self.placed().iter().map(|p| p.window).max().unwrap_or(1);
        if window == 0 || window > last + 1 {
            return Err(EditError::Invalid(format!(
                "window {window}: the windows are 1 to {last}, and {} makes a new one",
                last + 1
            )));
        }
        self.panes[slot].placed.window = window;
        self.compact();
        let now = self.panes[slot].placed.window;
        Ok(Done {
            text: format!("moved {id} to window {now}"),
            json: json!({"pane": id, "window": now}),
            focus: Some(slot),
        })
    }

    /// The open panes as the layout saves them, in order.
    fn placed(&self) -> Vec<Placed> {
        self.panes
            .order
            .iter()
            .filter_map(|&s| self.panes.get(s))
            .map(|p| Placed {
                parent: p.record.parent.clone(),
                ..p.placed.clone()
            })
            .collect()
    }

    /// Windows renumbered 1, 2, … with no gap.
    fn compact(&mut self) {
        let mut placed = self.placed();
        compact_windows(&mut placed);
        for (slot, p) in self.panes.order.clone().into_iter().zip(placed) {
            self.panes[slot].placed.window = p.window;
        }
    }

    /// Saves the layout and sends every client the panes as they are now.
    pub(super) fn layout_changed(&mut self) {
        self.save_layout();
        self.send_layout();
    }

    /// Every attached client gets the panes in their new order: those it
    /// has by id, the new ones whole (`ServerMsg::Layout`). A new pane
    /// with a long history (one that came back with its session) goes as
    /// a fresh snapshot instead, in the snapshot's bounded parts.
    fn send_layout(&mut self) {
        let seen = Some(self.seq);
        let mut panes = Vec::with_capacity(self.panes.order.len());
        for &slot in &self.panes.order {
            let Some(p) = self.panes.get(slot) else {
                continue;
            };
            if self.shown.contains(&slot) {
                panes.push(LayoutPane::Kept {
                    id: p.record.agent.id.clone(),
                    name: p.record.agent.name.clone(),
                    window: p.placed.window,
                    parent: p.record.parent.clone(),
                });
            } else if p.log.size() > NEW_PANE_INLINE {
                return self.resnapshot();
            } else {
                let snap = super::serve::pane_snapshot(p, seen);
                panes.push(LayoutPane::New(Box::new(snap)));
            }
        }
        self.shown.clone_from(&self.panes.order);
        let msg = ServerMsg::Layout(panes);
        let ids: Vec<ClientId> = self.clients.attached().map(|l| l.id).collect();
        for id in ids {
            if self.clients.send_layout(id, &msg) {
                self.catch_up(id);
            }
        }
    }

    fn save_layout(&self) {
        let mutes = &self.notifier.mutes;
        self.layout
            .save(&self.placed(), &self.starter.config, mutes);
    }

    /// `/mute` from a console: kept with the layout, told to every client
    /// (their bells and titles follow it).
    pub(super) fn mute(&mut self, change: &crate::notify::Mute) {
        self.notifier.mute(change);
        self.save_layout();
        let mutes = ServerMsg::Mutes(self.notifier.mutes.clone());
        self.clients.broadcast(&mutes, None);
    }
}

/// A pane's title as given: one line, not empty, at most 64 characters.
fn title(name: &str) -> Result<String, EditError> {
    let name = name.trim();
    if name.is_empty() || name.chars().any(char::is_control) || name.chars().count() > 64 {
        return Err(EditError::Invalid(
            "a pane's name is one line of 1 to 64 characters".into(),
        ));
    }
    Ok(name.to_owned())
}

/// `--repo`: a workspace over these repositories (issue 52), so a
/// worktree in each.
fn with_repos(agent: &mut AgentConfig, repos: &[std::path::PathBuf]) -> Result<(), String> {
    if !repos.is_empty() {
        if let Some(r) = repos.iter().find(|r| !r.is_absolute()) {
            return Err(format!(
                "repository `{}` must be an absolute path",
                r.display()
            ));
        }
        agent.repos = repos.to_vec();
        if matches!(agent.worktree, None | Some(WorktreeSetting::Enabled(false))) {
            agent.worktree = Some(WorktreeSetting::Enabled(true));
        }
    }
    agent.check_repos()
}

/// The user's choices for a new pane over its template's or provider's.
fn choose(agent: &mut AgentConfig, new: &NewPane, config: &Config) -> Result<(), EditError> {
    let invalid = |s: String| EditError::Invalid(s);
    if let Some(cwd) = &new.cwd {
        if !cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd `{}` must be an absolute path",
                cwd.display()
            )));
        }
        agent.cwd = Some(cwd.clone());
    }
    agent.check_cwd().map_err(invalid)?;
    if new.model.is_some() {
        agent.model.clone_from(&new.model);
    }
    if new.worktree {
        agent.worktree = Some(WorktreeSetting::Enabled(true));
    }
    with_repos(agent, &new.repos).map_err(invalid)?;
    if let Some(name) = &new.name {
        agent.name = Some(title(name)?);
    }
    if let Some(host) = &new.host {
        // One of the config's `[[host]]`s, in place of the template's host
        // or sandbox and of the `[sandbox]` default (issue 49).
        agent.host = Some(host.clone());
        agent.sandbox = None;
        agent.exec = config.exec_for(agent).map_err(invalid)?;
    }
    Ok(())
}
