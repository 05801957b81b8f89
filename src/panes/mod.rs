//! The one pane registry (issue 44): a record per slot, owned by the
//! server, read by every door's answers.
//!
//! A slot is a pane's number for the server's lifetime: runners, the
//! control hub and the operations host know a pane by it, and a pane
//! closed at runtime keeps its slot (every other pane keeps its number)
//! but nothing finds it any more. What every door reads of a pane — its
//! agent, whether it is closed, who spawned it, how its runner came up, its
//! state, queue, turn and approvals, its model, usage, process and hold —
//! is kept here once, in [`PaneRecord`], and is written only by the server
//! (through [`Panes::observe`] and its edits). What only one door needs
//! stays with that door: a `hive ctl send` waiting for its turn, an agent's
//! message chain, the server's own pane log — the server's part rides in
//! each slot as `X`.

use std::ops::{Deref, DerefMut};

use crate::config::AgentConfig;
use crate::protocol::agent::{Capabilities, PermissionRequest};
use crate::protocol::event::Usage;
use crate::protocol::hold::Hold;
use crate::protocol::pane::{PaneEvent, PaneUpdate, ProcessSample, TurnState};
use crate::protocol::upsert::TurnEvent;

mod live;
pub(crate) use live::Live;

/// How a pane's runner came up.
#[derive(Debug, Clone)]
pub enum Started {
    /// Not started yet (the server is bringing it up).
    Starting,
    Running(Capabilities),
    Failed(String),
    /// Its worktree's setup runs; the agent starts after it (messages sent
    /// meanwhile wait for it).
    SettingUp,
}

/// What a pane's restored history session tells every door.
pub struct Restoring {
    pub usage: Usage,
    /// Finished turns.
    pub turns: u64,
    /// The model its agent last ran.
    pub model: Option<String>,
}

/// What every door knows of one pane.
#[derive(Debug)]
pub struct PaneRecord {
    /// The agent as it runs now (a rename changes its name).
    pub agent: AgentConfig,
    /// Closed at runtime: no door finds it.
    pub closed: bool,
    /// The agent that spawned it.
    pub parent: Option<String>,
    pub started: Started,
    /// The model its agent last said it runs.
    pub model: Option<String>,
    /// The history session's usage: restored totals, then each turn's end.
    pub usage: Usage,
    pub process: Option<ProcessSample>,
    pub held: Option<Hold>,
    /// State, queue, turn and approvals as its updates tell them.
    pub live: Live,
}

impl PaneRecord {
    pub fn new(agent: AgentConfig, started: Started) -> Self {
        Self {
            agent,
            closed: false,
            parent: None,
            started,
            model: None,
            usage: Usage::default(),
            process: None,
            held: None,
            live: Live::default(),
        }
    }

    pub fn id(&self) -> &str {
        &self.agent.id
    }

    /// Its runner's capabilities, once it runs.
    pub fn caps(&self) -> Option<Capabilities> {
        match &self.started {
            Started::Running(c) => Some(*c),
            Started::Starting | Started::Failed(_) | Started::SettingUp => None,
        }
    }

    /// Why it could not start, if it could not.
    pub fn failed(&self) -> Option<&str> {
        match &self.started {
            Started::Failed(why) => Some(why),
            Started::Starting | Started::Running(_) | Started::SettingUp => None,
        }
    }

    /// Its agent runs.
    pub fn alive(&self) -> bool {
        self.caps().is_some() && self.live.state != TurnState::Dead
    }

    /// The model it runs: the one it said, else the configured one.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref().or(self.agent.model.as_deref())
    }

    /// The approval `id` asks for, or the oldest one.
    pub fn approval(&self, id: Option<&str>) -> Option<&PermissionRequest> {
        self.live.approval(id)
    }

    /// What it has spent in its history session (USD); `None` when it used
    /// tokens at no known price (its spend is unknown, not 0).
    pub fn cost(&self) -> Option<f64> {
        match self.usage.cost_usd {
            Some(c) => Some(c),
            None if self.usage.total_tokens() > 0 => None,
            None => Some(0.0),
        }
    }

    /// It continues a history session (at start, and after `/resume`):
    /// every door says what it used before the next turn.
    pub fn restore(&mut self, from: Restoring) {
        self.usage = from.usage;
        self.live.turns = from.turns;
        if from.model.is_some() {
            self.model = from.model;
        }
    }

    /// Follows one of its runner's events.
    fn observe(&mut self, event: &PaneEvent) {
        self.live.observe(event);
        match event {
            PaneEvent::Session(info) => {
                if let Some(m) = &info.model {
                    self.model = Some(m.clone());
                }
            }
            PaneEvent::Attached { capabilities, .. } => {
                self.started = Started::Running(*capabilities);
            }
            PaneEvent::Process(sample) => self.process = *sample,
            PaneEvent::Held(hold) => self.held.clone_from(hold),
            PaneEvent::Turn(TurnEvent::TurnStarted { model_id, .. }) if !model_id.is_empty() => {
                self.model = Some(model_id.clone());
            }
            PaneEvent::Turn(TurnEvent::TurnComplete { usage: Some(u), .. }) => {
                self.usage.accumulate(u);
            }
            _ => {}
        }
    }
}

/// One slot: the record every door reads, and what the owner keeps beside
/// it (the server's log, draft and worktree; nothing in tests).
#[derive(Debug)]
pub struct Slot<X> {
    pub record: PaneRecord,
    own: X,
}

impl<X> Deref for Slot<X> {
    type Target = X;
    fn deref(&self) -> &X {
        &self.own
    }
}

impl<X> DerefMut for Slot<X> {
    fn deref_mut(&mut self) -> &mut X {
        &mut self.own
    }
}

/// Every pane by slot, and the open ones in the order consoles show them.
#[derive(Debug)]
pub struct Panes<X> {
    slots: Vec<Slot<X>>,
    /// The open panes' slots as consoles show them: a console's pane `n`
    /// is slot `order[n]`.
    pub order: Vec<usize>,
}

impl<X> Default for Panes<X> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            order: Vec::new(),
        }
    }
}

impl<X: Default> Panes<X> {
    /// One slot per agent, in order, none started yet.
    pub fn of_agents(agents: impl IntoIterator<Item = AgentConfig>) -> Self {
        let mut panes = Self::default();
        for agent in agents {
            panes.push(PaneRecord::new(agent, Started::Starting), X::default());
        }
        panes
    }
}

impl<X> Panes<X> {
    /// A pane in the next slot, shown last; its slot.
    pub fn push(&mut self, record: PaneRecord, own: X) -> usize {
        let slot = self.slots.len();
        self.slots.push(Slot { record, own });
        self.order.push(slot);
        slot
    }

    /// Slots ever made, closed ones included.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn get(&self, slot: usize) -> Option<&Slot<X>> {
        self.slots.get(slot)
    }

    pub fn get_mut(&mut self, slot: usize) -> Option<&mut Slot<X>> {
        self.slots.get_mut(slot)
    }

    pub fn record(&self, slot: usize) -> Option<&PaneRecord> {
        self.slots.get(slot).map(|s| &s.record)
    }

    pub fn record_mut(&mut self, slot: usize) -> Option<&mut PaneRecord> {
        self.slots.get_mut(slot).map(|s| &mut s.record)
    }

    /// Every slot, closed ones included, by slot.
    pub fn iter(&self) -> std::slice::Iter<'_, Slot<X>> {
        self.slots.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Slot<X>> {
        self.slots.iter_mut()
    }

    /// The slot of the open pane `id`.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| !s.record.closed && s.record.agent.id == id)
    }

    /// The open panes' records, in the consoles' order.
    pub fn open(&self) -> impl Iterator<Item = &PaneRecord> {
        self.order
            .iter()
            .filter_map(|&s| self.record(s))
            .filter(|r| !r.closed)
    }

    /// The open panes' ids, in the consoles' order (for "no pane `x`;
    /// panes: …").
    pub fn ids(&self) -> String {
        let ids: Vec<&str> = self.open().map(PaneRecord::id).collect();
        ids.join(", ")
    }

    /// Pane `slot` was closed: its slot stays, out of the order.
    pub fn close(&mut self, slot: usize) {
        if let Some(r) = self.record_mut(slot) {
            r.closed = true;
        }
        self.order.retain(|&s| s != slot);
    }

    /// Follows one runner event: the one place a record learns from its
    /// runner.
    pub fn observe(&mut self, update: &PaneUpdate) {
        if let Some(r) = self.record_mut(update.pane) {
            r.observe(&update.event);
        }
    }
}

impl<X> std::ops::Index<usize> for Panes<X> {
    type Output = Slot<X>;
    fn index(&self, slot: usize) -> &Slot<X> {
        &self.slots[slot]
    }
}

impl<X> std::ops::IndexMut<usize> for Panes<X> {
    fn index_mut(&mut self, slot: usize) -> &mut Slot<X> {
        &mut self.slots[slot]
    }
}

#[cfg(test)]
mod tests;
