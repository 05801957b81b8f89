//! `[forge]`: how hive reaches the forge (issue 48, docs/forge.md): the CLI
//! it drives, how long one call may take, how often an open pull request is
//! looked at, and who may reach an agent through it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ForgeSettings {
    /// The GitHub CLI (a name on PATH or a path).
    pub gh: String,
    /// One call's limit; past it the CLI is stopped and the pane told.
    pub timeout_secs: u64,
    /// How often the watcher looks at each open pull request.
    pub watch_every_secs: u64,
    /// Messages the watcher sends a pane by itself per pull request.
    pub max_attempts: u32,
    /// Remarks from authors of these associations reach the agent (the
    /// repository's writers).
    pub allowed_associations: Vec<String>,
    /// And remarks from these logins, whatever their association.
    pub allowed_authors: Vec<String>,
    /// How much of a failed log's end the pane gets (bytes).
    pub log_tail_bytes: usize,
    /// `squash`, `merge` or `rebase`.
    pub merge_method: MergeMethod,
    /// Merge without the user's word once every check passed, the branch
    /// merges, and an allowed reviewer approved (none asking for changes).
    pub auto_merge: bool,
}

impl Default for ForgeSettings {
    fn default() -> Self {
        Self {
            gh: "gh".into(),
            timeout_secs: 30,
            watch_every_secs: 120,
            max_attempts: 5,
            allowed_associations: ["OWNER", "MEMBER", "COLLABORATOR"]
                .map(String::from)
                .to_vec(),
            allowed_authors: Vec::new(),
            log_tail_bytes: 6000,
            merge_method: MergeMethod::Squash,
            auto_merge: false,
        }
    }
}

/// How a pull request is merged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeMethod {
    #[default]
    Squash,
    Merge,
    Rebase,
}
