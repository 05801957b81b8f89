//! What `/mute` silenced, as the server keeps it and tells every console
//! (src/notify/mutes.rs reads it), and the reasons a pane wants attention,
//! as config names them.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Why a pane is in the attention inbox, as config names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonKind {
    Permission,
    Failed,
    Finished,
    Bell,
    Idle,
    Exited,
    Stalled,
    Posted,
    /// A helper an agent spawned finished a turn (issue 32).
    Spawned,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutes {
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub panes: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub kinds: BTreeSet<ReasonKind>,
}

/// One `/mute`: a pane or a type, silenced (`on`) or heard again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mute {
    Pane { id: String, on: bool },
    Kind { kind: ReasonKind, on: bool },
}
