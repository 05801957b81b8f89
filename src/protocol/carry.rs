//! Work that goes on elsewhere (issue 50): `/handoff`, which continues a
//! pane's task in another pane (an existing one or a new one) with the
//! worktree shared or branched, and `/move @HOST`, which takes a live pane
//! to another host's server. Both are edits of the panes
//! (`PaneEdit::Handoff`, `PaneEdit::Relocate`, `Verb::Relocate`) from a console and verbs
//! through the one door (src/server/door.rs).

use serde::{Deserialize, Serialize};

/// `/handoff <pane>|new <template|provider> [shared|branched]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handoff {
    /// The pane whose work goes on.
    pub from: String,
    pub to: HandoffTarget,
    #[serde(default)]
    pub tree: HandoffTree,
}

/// Who continues.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HandoffTarget {
    /// An open pane (its id, name, number or provider): its agent starts a
    /// new session in the work's worktree.
    Pane(String),
    /// A new pane of a config agent (`template`) or of a provider.
    New {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        template: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
}

/// Where the target works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffTree {
    /// In the source's own worktree (or directory); the source stops, so
    /// two agents never write one checkout.
    #[default]
    Shared,
    /// In a new worktree on a new branch from the source's branch, with
    /// its uncommitted changes (untracked files too); the source goes on.
    Branched,
}

impl HandoffTree {
    /// `shared` or `branched`.
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "shared" | "share" => Some(Self::Shared),
            "branched" | "branch" => Some(Self::Branched),
            _ => None,
        }
    }
}

/// `/move @HOST` (issue 50): the steps of moving a live pane to another
/// host's server and back. The server that has the `[[host]]` drives
/// every step, both ways (it has the ssh command line; the host has no
/// way back to it): `Go` is asked of it by the user, `Arrive` by it of the
/// receiving server (the host's, over ssh; or its own, for a pane coming
/// back), `Leave` and `Left` of the host's when a pane comes back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case", deny_unknown_fields)]
pub enum Relocate {
    /// Pane `pane` goes to the `[[host]]` `host`; `host:pane` with `host`
    /// `local` comes back here.
    Go { pane: String, host: String },
    /// The package of a moving pane, copied to `dir` on this machine,
    /// becomes a pane here, its agent started on the moved session.
    Arrive { dir: String },
    /// Pane `pane` packs itself into a package on this machine for the
    /// server that asked (it goes on working until `Left`).
    Leave { pane: String },
    /// Pane `pane`'s move is done (it resumed at `to`): it stops here and
    /// its worktree goes (the branch stays). `abandon`: the move failed,
    /// the package goes, the pane stays as it is.
    Left {
        pane: String,
        to: String,
        #[serde(default)]
        abandon: bool,
    },
}

impl Relocate {
    /// The pane it is about (`Arrive`: none yet).
    pub fn pane(&self) -> &str {
        match self {
            Self::Go { pane, .. } | Self::Leave { pane } | Self::Left { pane, .. } => pane,
            Self::Arrive { .. } => "",
        }
    }
}
