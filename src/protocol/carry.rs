//! Work that goes on elsewhere (issue 50): `/handoff`, which continues a
//! pane's task in another pane (an existing one or a new one) with the
//! worktree shared or branched, and `/move @HOST`, which takes a live pane
//! to another host's server. Both are edits of the panes
//! (`PaneEdit::Handoff`, `PaneEdit::Relocate`) from a console and verbs
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
