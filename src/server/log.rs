//! Placeholder until the compacting log lands: keeps every event.

use std::time::Instant;

use crate::runner::PaneEvent;
use crate::wire::snapshot::{Logged, Restored};

pub struct PaneLog {
    restored: Restored,
    events: Vec<Logged>,
}

impl PaneLog {
    pub fn new(restored: Restored) -> Self {
        Self {
            restored,
            events: Vec::new(),
        }
    }

    pub fn push(&mut self, seq: u64, at: Instant, event: &PaneEvent) {
        self.events.push(Logged {
            seq,
            at: Some(at),
            event: event.clone(),
        });
    }

    pub fn reset(&mut self, restored: Restored) {
        *self = Self::new(restored);
    }

    pub fn restored(&self) -> &Restored {
        &self.restored
    }

    /// Whether a turn runs (the latest state is a busy one).
    pub fn busy(&self) -> bool {
        self.events.iter().rev().find_map(|l| match &l.event {
            PaneEvent::State(s) => Some(s.is_busy()),
            _ => None,
        }) == Some(true)
    }

    pub fn events(&self) -> Vec<Logged> {
        self.events.clone()
    }
}
