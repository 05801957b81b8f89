//! The hub's side of panes made and closed at runtime (issue 32): a new
//! pane takes the next slot; a closed one keeps its slot (every other
//! pane keeps its number) but no call finds it, and whoever waited on it
//! is told it was closed.

use super::{CtlError, ErrorCode, Hub, PaneMirror, Started};
use crate::config::AgentConfig;

impl Hub {
    /// The panes not closed, in the consoles' order.
    pub(super) fn live(&self) -> impl Iterator<Item = &PaneMirror> {
        self.order
            .iter()
            .filter_map(|&s| self.panes.get(s))
            .filter(|p| !p.closed)
    }

    /// A pane added at runtime, as its runner came up: the next slot.
    pub(crate) fn add(&mut self, agent: AgentConfig, started: Started, parent: Option<String>) {
        self.order.push(self.panes.len());
        let mut pane = PaneMirror::new(agent, started);
        pane.parent = parent;
        self.panes.push(pane);
    }

    /// Pane `slot`'s parent, for a team restored at start.
    pub(crate) fn set_parent(&mut self, slot: usize, parent: Option<String>) {
        if let Some(p) = self.panes.get_mut(slot) {
            p.parent = parent;
        }
    }

    /// The open panes' slots as consoles show them, after a move.
    pub(crate) fn set_order(&mut self, order: &[usize]) {
        order.clone_into(&mut self.order);
    }

    /// Pane `slot` was closed: sends still waiting for a turn and waits on
    /// its running turn end with an error.
    pub(crate) fn close(&mut self, slot: usize) {
        let Some(p) = self.panes.get_mut(slot) else {
            return;
        };
        p.closed = true;
        let id = p.agent.id.clone();
        let closed = || {
            CtlError::new(
                ErrorCode::SessionNotFound,
                format!("pane `{id}` was closed"),
            )
        };
        for reply in p.m.take_sends(|_| true) {
            let _ = reply.send(Err(closed()));
        }
        if let Some(turn) = p.m.turn.clone() {
            for reply in self.waiters.remove(&turn).unwrap_or_default() {
                let _ = reply.send(Err(closed()));
            }
        }
    }

    /// What pane `slot` has spent in its history session (USD); `None`
    /// when it used tokens at no known price (its spend is unknown, not 0).
    pub(crate) fn cost_of(&self, slot: usize) -> Option<f64> {
        let Some(p) = self.panes.get(slot) else {
            return Some(0.0);
        };
        match p.usage.cost_usd {
            Some(c) => Some(c),
            None if p.usage.total_tokens() > 0 => None,
            None => Some(0.0),
        }
    }

    /// How pane `slot`'s runner came up (after its worktree's setup).
    pub(crate) fn set_started_at(&mut self, slot: usize, started: Started) {
        if let Some(p) = self.panes.get_mut(slot) {
            p.started = started;
        }
    }

    pub(crate) fn rename(&mut self, slot: usize, name: &str) {
        if let Some(p) = self.panes.get_mut(slot) {
            p.agent.name = Some(name.to_owned());
        }
    }
}
