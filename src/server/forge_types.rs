//! The forge's messages between its jobs and the loop (issue 48), in a
//! room of their own so that src/server/forge.rs (the jobs' `Done`) and
//! the modules that make and read them (forge_console.rs,
//! forge_trigger.rs) do not import each other.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::task::JoinHandle;

use super::clients::ClientId;
use crate::control::protocol::CtlError;
use crate::forge::{Issue, Run};
use crate::protocol::forge::ForgeAsk;

/// Which ask a console's answer is of: it says how the answer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Issue,
    Open,
    Watch,
    Status,
    Merge,
    Log,
}

impl Kind {
    pub(super) fn of(ask: &ForgeAsk) -> Self {
        match ask {
            ForgeAsk::Issue { .. } => Self::Issue,
            ForgeAsk::PrOpen { .. } => Self::Open,
            ForgeAsk::PrWatch { .. } => Self::Watch,
            ForgeAsk::PrStatus { .. } => Self::Status,
            ForgeAsk::PrMerge { .. } => Self::Merge,
            ForgeAsk::PrLog { .. } => Self::Log,
        }
    }
}

/// A console's answer, waiting to be sent from the loop.
pub(super) struct ToConsole {
    pub(super) client: ClientId,
    /// The pane it was asked in.
    pub(super) slot: usize,
    pub(super) kind: Kind,
    pub(super) outcome: Result<Value, CtlError>,
}

/// What happened.
#[derive(Debug, Clone)]
pub(super) enum What {
    Issue(Issue),
    Run { run: Run, log: Option<String> },
    Tick,
}

/// One new event of trigger `trigger`, its gate passed.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub(super) trigger: String,
    /// Its deduplication key: `issue:N`, `run:ID`, `gate:<hash>`.
    pub(super) key: String,
    pub(super) what: What,
    /// What the gate printed, if there is a gate.
    pub(super) gate: Option<String>,
}

/// The triggers' tasks and what they saw.
#[derive(Default)]
pub(super) struct Triggers {
    /// Event keys that started a pane, by trigger id (shared with the
    /// trigger's task, so its gate is not run again for them).
    pub(super) seen: HashMap<String, Arc<Mutex<BTreeSet<String>>>>,
    /// The panes each trigger started, by slot.
    pub(super) panes: HashMap<usize, String>,
    pub(super) tasks: Vec<JoinHandle<()>>,
}

impl Drop for Triggers {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Triggers {
    pub(super) fn seen_of(&mut self, id: &str) -> Arc<Mutex<BTreeSet<String>>> {
        self.seen.entry(id.to_owned()).or_default().clone()
    }
}
