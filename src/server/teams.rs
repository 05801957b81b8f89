//! Agent teams (issue 32 point 3): `agent.spawn` starts a helper in a new
//! pane for the agent that asks, of any vendor, and `agent.close` ends
//! one. The helper is the caller's: it may message it, wait for it,
//! interrupt it, answer its approvals and close it, through the operations
//! it already has; consoles show it under its parent.
//!
//! What an agent cannot do by spawning: reach past what the user gave it.
//! A helper works in the caller's directory (or below it), never as a
//! terminal (a shell would run whatever it is sent), may message only
//! panes its parent may (and the parent), and spawning is bounded by the
//! parent's `can_spawn` (helpers running at once), a depth of
//! [`MAX_DEPTH`], the team's `[limits] max_helpers` (helpers running at
//! once below one pane of the user's, however they nest: `can_spawn`
//! alone bounds each member, and 6 × 6 × 6 is 258 panes), and the parent's
//! `spawn_budget_usd` (what its helpers spent together; a helper that used
//! tokens at no known price stops further spawns, since its spend cannot
//! be counted).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::serve::Server;
use crate::ops::{Caller, HiveRequest, OpError, SpawnArgs, Verb};
use crate::wire::edit::NewPane;

/// Helpers of helpers of helpers, at most.
pub(super) const MAX_DEPTH: usize = 3;

/// Providers an agent may not spawn: a terminal runs what it is sent.
const NOT_SPAWNED: &[&str] = &["pty"];

impl Server {
    /// `agent.spawn` (from the door, src/server/door.rs).
    pub(super) fn spawn(&mut self, caller: &Caller, args: SpawnArgs) -> Result<Value, OpError> {
        let parent = match caller {
            Caller::Agent(id) => Some(self.spawner(id)?),
            // A script (hive mcp outside any pane) makes a pane of its own.
            Caller::Cli | Caller::Console { .. } | Caller::Device { .. } => None,
        };
        let base = parent.map(|slot| self.panes[slot].record.agent.cwd.clone());
        let cwd = match (&args.cwd, base) {
            (sub, Some(base)) => Some(inside(&base, sub.as_deref())?),
            (Some(dir), None) => Some(PathBuf::from(dir)),
            (None, None) => None,
        };
        let parent_id = parent.map(|s| self.panes[s].record.agent.id.clone());
        let what = args
            .template
            .clone()
            .or(args.provider.clone())
            .unwrap_or_default();
        let id = match &args.id {
            Some(id) => id.clone(),
            None => crate::config::free_id(
                &match &parent_id {
                    Some(p) => format!("{p}-{what}"),
                    None => what,
                },
                |id| self.open_slot(id).is_ok(),
            ),
        };
        let new = NewPane {
            id: id.clone(),
            template: args.template.clone(),
            provider: args.provider.clone(),
            cwd,
            model: args.model.clone(),
            worktree: args.worktree,
            repos: Vec::new(),
            name: None,
            window: parent.map(|s| self.panes[s].placed.window),
            host: None,
        };
        let mut agent = self
            .new_agent(&new)
            .map_err(|e| OpError::new("invalid_args", e.to_string()))?;
        if NOT_SPAWNED.contains(&agent.provider.as_str()) {
            return Err(OpError::new(
                "not_allowed",
                format!(
                    "agent.spawn starts agents, not a `{}` terminal",
                    agent.provider
                ),
            ));
        }
        agent.can_message = self.helper_reach(caller, args.can_message.unwrap_or_default())?;
        agent.hive_tools |= !agent.can_message.is_empty();
        if let Caller::Agent(id) = caller {
            self.ops.rate(id)?;
        }
        let done = self.add_agent(agent, new.window, parent_id);
        self.layout_changed();
        let mut out = json!({"agent": id, "started": done.json["started"],
                             "failed": done.json["failed"]});
        if let Some(task) = args.task.filter(|t| !t.trim().is_empty()) {
            let sent = self.send_as(caller, &id, task)?;
            out["message_id"] = sent["message_id"].clone();
            out["queued"] = sent["queued"].clone();
        }
        Ok(out)
    }

    /// The slot of `id`, if it may spawn one more helper now.
    fn spawner(&self, id: &str) -> Result<usize, OpError> {
        let slot = self
            .open_slot(id)
            .map_err(|e| OpError::new("unknown_agent", e.to_string()))?;
        let agent = &self.panes[slot].record.agent;
        if agent.can_spawn == 0 {
            return Err(OpError::new(
                "not_allowed",
                format!("`{id}` may not spawn agents (can_spawn = 0 in hive's config)"),
            ));
        }
        let running = self
            .panes
            .order
            .iter()
            .filter(|&&s| self.panes[s].record.parent.as_deref() == Some(id))
            .count();
        if running >= agent.can_spawn {
            return Err(OpError::new(
                "spawn_limit",
                format!(
                    "`{id}` has {running} helper(s) running, as many as its can_spawn ({}) \
                     allows; agent.close one first",
                    agent.can_spawn
                ),
            ));
        }
        if self.depth(id) >= MAX_DEPTH {
            return Err(OpError::new(
                "spawn_depth",
                format!("helpers nest at most {MAX_DEPTH} deep"),
            ));
        }
        self.team_room(id)?;
        if let Some(budget) = agent.spawn_budget_usd {
            let mut spent = 0.0;
            for p in self.panes.iter().map(|s| &s.record) {
                if !self.descends_from(p.id(), id) {
                    continue;
                }
                match p.cost() {
                    Some(c) => spent += c,
                    None => {
                        return Err(OpError::new(
                            "budget_unknown",
                            format!(
                                "`{}` used tokens at no known price, so what `{id}`'s helpers \
                                 spent against its spawn budget is unknown: add its model to \
                                 [prices] or close it",
                                p.id()
                            ),
                        ));
                    }
                }
            }
            if spent >= budget {
                return Err(OpError::new(
                    "budget_reached",
                    format!(
                        "`{id}`'s helpers have spent ${spent:.2} of its spawn budget (${budget:.2})"
                    ),
                ));
            }
        }
        Ok(slot)
    }

    /// Whether `id`'s team (the user's pane it descends from, and every
    /// helper below that) may run one more helper.
    fn team_room(&self, id: &str) -> Result<(), OpError> {
        let mut root = id.to_owned();
        for _ in 0..=MAX_DEPTH {
            match self.parent_of(&root) {
                Some(p) => root = p,
                None => break,
            }
        }
        let running = self
            .panes
            .order
            .iter()
            .filter(|&&s| self.descends_from(&self.panes[s].record.agent.id, &root))
            .count();
        let cap = self.starter.config.limits.max_helpers;
        if running >= cap {
            return Err(OpError::new(
                "team_limit",
                format!(
                    "`{root}`'s team runs {running} helper(s), as many as [limits] max_helpers \
                     ({cap}) allows; agent.close one first"
                ),
            ));
        }
        Ok(())
    }

    /// How many spawns deep `id` is (0: a pane of the user's).
    fn depth(&self, id: &str) -> usize {
        let mut depth = 0;
        let mut at = id.to_owned();
        while let Some(parent) = self.parent_of(&at) {
            depth += 1;
            if depth > MAX_DEPTH {
                break;
            }
            at = parent;
        }
        depth
    }

    fn parent_of(&self, id: &str) -> Option<String> {
        self.panes
            .iter()
            .rev()
            .find(|p| p.record.agent.id == id)
            .and_then(|p| p.record.parent.clone())
    }

    /// Whether `id` was spawned by `ancestor`, directly or not.
    fn descends_from(&self, id: &str, ancestor: &str) -> bool {
        let mut at = id.to_owned();
        for _ in 0..=MAX_DEPTH {
            match self.parent_of(&at) {
                Some(p) if p == ancestor => return true,
                Some(p) => at = p,
                None => return false,
            }
        }
        false
    }

    /// Whom a helper may message: only panes its parent may, and the
    /// parent.
    fn helper_reach(&self, caller: &Caller, asked: Vec<String>) -> Result<Vec<String>, OpError> {
        let Caller::Agent(parent) = caller else {
            return Ok(asked);
        };
        for target in &asked {
            if target != parent && !crate::ops::allowed(&self.panes, caller, target) {
                return Err(OpError::new(
                    "not_allowed",
                    format!("a helper may message only panes you may, not `{target}`"),
                ));
            }
        }
        Ok(asked)
    }

    /// `agent.send` of `text` to `id` as `caller`, answered at once.
    fn send_as(&mut self, caller: &Caller, id: &str, text: String) -> Result<Value, OpError> {
        let (reply, mut rx) = tokio::sync::oneshot::channel();
        let verb = Verb::Send {
            pane: id.to_owned(),
            text,
            steer: false,
        };
        let req = HiveRequest {
            caller: caller.clone(),
            verb,
            reply,
        };
        if let Some((slot, cmd)) = self.ops.handle(req, &self.panes, &self.runners) {
            self.command(slot, cmd, None);
        }
        rx.try_recv()
            .map_err(|_| OpError::new("unavailable", "the helper did not take its task"))?
    }

    /// `agent.close`: a helper of the caller's, with its own helpers.
    pub(super) fn close_helper(&mut self, caller: &Caller, agent: &str) -> Result<Value, OpError> {
        if let Caller::Agent(id) = caller
            && !crate::ops::is_child(&self.panes, agent, id)
        {
            return Err(OpError::new(
                "not_allowed",
                format!("an agent closes only the panes it spawned, not `{agent}`"),
            ));
        }
        let done = self
            .close(agent, true, false)
            .map_err(|e| OpError::new("invalid_args", e.to_string()))?;
        self.layout_changed();
        Ok(json!({"closed": done.json["closed"]}))
    }
}

/// `sub` (a directory below `base`, or `base` itself): refused when it
/// leads outside, by `..` or a link.
fn inside(base: &Option<PathBuf>, sub: Option<&str>) -> Result<PathBuf, OpError> {
    let here = std::env::current_dir().unwrap_or_default();
    let base = base.clone().unwrap_or(here);
    let Some(sub) = sub else {
        return Ok(base);
    };
    let outside = || {
        OpError::new(
            "not_allowed",
            format!("cwd `{sub}` is not a directory inside yours"),
        )
    };
    let real_base = base.canonicalize().map_err(|_| outside())?;
    let real = base
        .join(Path::new(sub))
        .canonicalize()
        .map_err(|_| outside())?;
    if real.starts_with(&real_base) && real.is_dir() {
        Ok(real)
    } else {
        Err(outside())
    }
}
