//! What a caller asks of the forge (issue 48, docs/forge.md), one verb of
//! the front door (`Verb::Forge`): an issue made a pane, a pane's branch
//! made a pull request, the pull request's state, its merge. The server
//! runs the forge's CLI off its loop (src/server/forge.rs) and answers when
//! it is done.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One request to the forge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case", deny_unknown_fields)]
pub enum ForgeAsk {
    /// A pane `pane` for issue `number`, in a worktree on branch
    /// `hive/<number>-<slug>`, its first message the issue (quoted).
    Issue {
        pane: String,
        number: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        template: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        /// Absolute: the repository the issue is of is this checkout's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<usize>,
    },
    /// Pushes pane `pane`'s branch and opens a pull request from it (a
    /// draft unless `ready`), then watches it.
    PrOpen {
        pane: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
        #[serde(default)]
        ready: bool,
    },
    /// Watches the open pull request the pane's branch has already (after
    /// a restart, or one opened by hand).
    PrWatch { pane: String },
    /// The pane's pull request as the watcher last saw it, and what it
    /// sent.
    PrStatus { pane: String },
    /// Merges the pane's pull request (`squash`, `merge`, `rebase`; default
    /// the config's).
    PrMerge {
        pane: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        method: Option<String>,
    },
}

impl ForgeAsk {
    /// The pane it is about.
    pub fn pane(&self) -> &str {
        match self {
            Self::Issue { pane, .. }
            | Self::PrOpen { pane, .. }
            | Self::PrStatus { pane }
            | Self::PrWatch { pane }
            | Self::PrMerge { pane, .. } => pane,
        }
    }
}
