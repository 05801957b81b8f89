//! The receiving and the leaving side of `/move` (issue 50):
//! `Relocate::Arrive` unpacks a moving pane's package into this server's
//! repository and history store (on the blocking pool) and starts its
//! agent on the moved session, in a new pane or in the stopped pane of
//! the same id that holds its place (a pane coming back); `Relocate::Left`
//! stops a pane that resumed elsewhere, keeping its place in the grid with
//! a note, or (`abandon`) takes back an arrival the mover gave up.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::move_package::{self, Landing, Manifest};
use super::relocate::refused;
use super::serve::Server;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::panes::Started;
use crate::worktree::Worktree;

/// What is done with an arrival's outcome, on the loop.
pub(super) type Then = Box<dyn FnOnce(&mut Server, Result<Value, CtlError>) + Send>;

impl Server {
    /// `Relocate::Arrive` from the door: answered to `asker`.
    pub(super) fn arrive(&mut self, dir: String, asker: super::relocate::Asker) {
        self.arrive_then(
            PathBuf::from(dir),
            Box::new(|s, outcome| asker.answer(s, outcome)),
        );
    }

    /// The package in `dir` becomes a pane here; `then` gets the outcome.
    pub(super) fn arrive_then(&mut self, dir: PathBuf, then: Then) {
        let checked = move_package::manifest(&dir)
            .map_err(|e| CtlError::new(ErrorCode::BadRequest, e))
            .and_then(|m| self.landing_slot(&m).map(|slot| (m, slot)));
        let (mut m, reuse) = match checked {
            Ok(x) => x,
            Err(e) => return then(self, Err(e)),
        };
        // This machine's paths, hosts and sandboxes are not the other's.
        let a = &mut m.agent;
        a.cwd = None;
        a.worktree = None;
        a.repos.clear();
        a.host = None;
        a.sandbox = None;
        a.exec = None;
        let land = Landing {
            repo: self.landing_dir(&m.agent.id, reuse),
            root: self.starter.config.worktrees.root.clone(),
            store: self.starter.store.clone(),
        };
        self.moves.spawn(move || {
            let unpacked = move_package::arrive(&m, &dir, &land);
            Box::new(move |s: &mut Server| {
                let outcome = match unpacked {
                    Ok(w) => s.arrived(m, reuse, w),
                    Err(e) => Err(CtlError::new(ErrorCode::Unavailable, e)),
                };
                then(s, outcome);
            })
        });
    }

    /// The stopped pane of the arriving id to start in, if there is one;
    /// a pane of that id that runs here refuses the arrival.
    fn landing_slot(&self, m: &Manifest) -> Result<Option<usize>, CtlError> {
        let id = &m.agent.id;
        if !crate::config::valid_id(id) {
            return Err(refused(format!("`{id}` is not a pane id")));
        }
        match self.panes.find(id) {
            Some(slot) if self.runners.get(slot).is_some_and(Option::is_some) => {
                Err(refused(format!("a pane `{id}` runs on this host already")))
            }
            Some(slot) => Ok(Some(slot)),
            None => Ok(None),
        }
    }

    /// The directory an arriving pane's worktree is unpacked into: where
    /// the pane of that id worked here (a pane coming back, or an agent of
    /// this config), else the project's.
    fn landing_dir(&self, id: &str, reuse: Option<usize>) -> PathBuf {
        let here = reuse
            .map(|slot| &self.panes[slot].placed.agent)
            .or_else(|| self.starter.config.agent(id));
        here.filter(|a| a.cwd.is_some())
            .and_then(|a| crate::provider::process::working_dir(a).ok())
            .unwrap_or_else(|| self.project_dir())
    }

    /// The project's directory: its config's, else the server's own.
    fn project_dir(&self) -> PathBuf {
        self.info
            .config_path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_owned)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// The unpacked pane starts here: in its place, else as a new pane.
    fn arrived(
        &mut self,
        m: Manifest,
        reuse: Option<usize>,
        worktree: Option<Worktree>,
    ) -> Result<Value, CtlError> {
        let mut agent = m.agent;
        agent.cwd = Some(
            worktree
                .as_ref()
                .map_or_else(|| self.project_dir(), |w| w.cwd.clone()),
        );
        let id = agent.id.clone();
        let slot = match reuse {
            Some(slot) => {
                self.start_moved(slot, agent, worktree.clone());
                slot
            }
            None => {
                let done = self.add_agent(agent, None, None);
                let slot = done.focus.unwrap_or_default();
                if let Some(w) = &worktree {
                    self.panes[slot].worktree = Some(w.clone());
                    self.worktrees.untrack(slot);
                    self.worktrees.track(slot, w.clone());
                }
                self.layout_changed();
                slot
            }
        };
        if let Some(why) = self.panes[slot].record.failed().map(str::to_owned) {
            let _ = self.moved_off(&id, "", true);
            return Err(CtlError::new(
                ErrorCode::ProcessCrash,
                format!("starting the agent: {why}"),
            ));
        }
        let pane = &mut self.panes[slot];
        pane.log.note(format!("moved here from {}", m.from));
        self.reset_pane(slot, None);
        Ok(json!({
            "pane": id,
            "cwd": self.panes[slot].record.agent.cwd,
            "worktree": worktree.as_ref().map(|w| &w.path),
            "branch": worktree.as_ref().map(|w| &w.branch),
            "session": m.state.session,
        }))
    }

    /// Starts the stopped pane `slot` again as the arriving `agent`, on
    /// the moved session (its state names it).
    fn start_moved(&mut self, slot: usize, agent: crate::config::AgentConfig, w: Option<Worktree>) {
        self.worktrees.untrack(slot);
        let pane = &mut self.panes[slot];
        // Its placement stays the config's (and the layout's): where it
        // works here when it comes back again.
        pane.record.agent = agent;
        pane.worktree = w.clone();
        pane.record.started = Started::Starting;
        let runner = self.starter.start(slot, pane, false, &mut self.ops);
        if let Some(place) = self.runners.get_mut(slot) {
            *place = runner;
        }
        if let Some(w) = w {
            self.worktrees.track(slot, w);
        }
        self.layout_changed();
    }

    /// Pane `pane` resumed at `to`: it stops here, keeping its place with
    /// a note, and its worktree goes (its branch stays). `abandon`: an
    /// arrival taken back, the pane closed.
    pub(super) fn moved_off(
        &mut self,
        pane: &str,
        to: &str,
        abandon: bool,
    ) -> Result<Value, CtlError> {
        let slot = self
            .open_slot(pane)
            .map_err(|e| CtlError::new(e.code(), e.to_string()))?;
        if !abandon {
            let live = &self.panes[slot].record.live;
            if live.state.is_busy() || live.awaiting_approval() {
                return Err(refused(format!(
                    "`{pane}` started a turn while it moved: it stays here"
                )));
            }
        }
        if let Some(r) = self.runners.get_mut(slot).and_then(Option::take) {
            tokio::spawn(async move { r.shutdown().await });
        }
        self.worktrees.untrack(slot);
        if let Some(w) = self.panes[slot].worktree.take() {
            let git = crate::worktree::git::Git::at(&w.repo);
            if let Err(e) = git.run(&["worktree", "remove", "--force", &w.path.to_string_lossy()]) {
                tracing::warn!(pane, "the moved pane's worktree stays: {e}");
            }
        }
        if abandon {
            return self
                .close(pane, false, false)
                .map(|done| {
                    self.layout_changed();
                    done.json
                })
                .map_err(|e| CtlError::new(e.code(), e.to_string()));
        }
        let why = format!("moved to {to}: it goes on there");
        let p = &mut self.panes[slot];
        p.log.note(format!("{why}; this pane holds its place"));
        p.record.started = Started::Failed(why);
        self.reset_pane(slot, None);
        Ok(json!({"pane": pane, "to": to}))
    }
}
