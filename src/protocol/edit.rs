//! Changes to a server's set of panes (issue 32): a new pane, a closed one,
//! a new title, another place in the layout. A console sends them as
//! `ClientMsg::Edit`, `hive ctl new/close/rename/move` as control calls;
//! the server applies both the same way (src/server/panes.rs), saves the
//! layout beside the history, and sends every client a fresh snapshot.
//!
//! Panes are named by id, never by number: numbers differ between a
//! console of several servers and the server itself, and shift as panes
//! come and go.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One change to the panes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PaneEdit {
    New(NewPane),
    /// Ends its agent (with `team`, the helpers it spawned too); the
    /// history and worktree stay.
    Close {
        pane: String,
        #[serde(default)]
        team: bool,
        /// Its worktree and branch go too (the runs of a best-of-N not
        /// taken).
        #[serde(default)]
        discard: bool,
    },
    /// Its title (the id stays: history and addresses use it).
    Rename {
        pane: String,
        name: String,
    },
    /// To place `to` (0-based) among the panes.
    Move {
        pane: String,
        to: usize,
    },
    /// Into window `window` (1-based; one past the last makes a new one).
    Window {
        pane: String,
        window: usize,
    },
    /// `/handoff`: the pane's work goes on in another pane (issue 50).
    Handoff(super::carry::Handoff),
    /// `/move @HOST`: the pane goes to another host's server (issue 50).
    Relocate(super::carry::Relocate),
    /// `/repo add DIR` (issue 52): the repository of `repo` joins the
    /// pane's workspace, a worktree of it on the pane's branch, between
    /// turns; the agent goes on on its session with the new root. `repo`
    /// is absolute, or relative to the workspace's first repository (a
    /// console sends it as typed; `hive ctl` resolves it in the shell).
    AddRepo {
        pane: String,
        repo: PathBuf,
    },
}

impl PaneEdit {
    /// The pane it is about.
    pub fn pane(&self) -> &str {
        match self {
            Self::New(n) => &n.id,
            Self::Close { pane, .. }
            | Self::Rename { pane, .. }
            | Self::Move { pane, .. }
            | Self::Window { pane, .. }
            | Self::AddRepo { pane, .. } => pane,
            Self::Handoff(h) => &h.from,
            Self::Relocate(r) => r.pane(),
        }
    }
}

/// A pane made at runtime: a copy of one of the config's agents (`template`)
/// under a new id, or a provider with its defaults, with the choices a user
/// makes when adding one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewPane {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Absolute (a console or `hive ctl` resolves it where the user is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// In a git worktree of its own (branch `hive/<id>`).
    #[serde(default)]
    pub worktree: bool,
    /// A workspace of these repositories (issue 52; absolute), a worktree
    /// of each on the pane's branch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repos: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Into this window (1-based); else the window of the pane it was asked
    /// from, or the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<usize>,
    /// On this `[[host]]` of the server's config (issue 49), instead of
    /// the template's host or the `[sandbox]` default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}
