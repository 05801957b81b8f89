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
        /// Once merged, close the pane (`Some(true)`: and remove its
        /// worktree and branch, as `close --discard`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        close: Option<bool>,
    },
    /// The tail of the failed log of the pane's pull request's check
    /// `check` (as the agent would get it).
    PrLog { pane: String, check: String },
}

impl ForgeAsk {
    /// The pane it is about.
    pub fn pane(&self) -> &str {
        match self {
            Self::Issue { pane, .. }
            | Self::PrOpen { pane, .. }
            | Self::PrStatus { pane }
            | Self::PrWatch { pane }
            | Self::PrMerge { pane, .. }
            | Self::PrLog { pane, .. } => pane,
        }
    }

    /// Names the pane it is about `id` (a console asks by its own
    /// numbering; the server names the pane): not an issue's new pane.
    pub fn set_pane(&mut self, id: &str) {
        match self {
            Self::Issue { .. } => {}
            Self::PrOpen { pane, .. }
            | Self::PrStatus { pane }
            | Self::PrWatch { pane }
            | Self::PrMerge { pane, .. }
            | Self::PrLog { pane, .. } => *pane = id.to_owned(),
        }
    }
}

/// A pull request as a console's checks view (`/checks`) and `hive ctl pr
/// status` show it: as the watcher last saw it, and what it sent. The
/// texts are the forge's (untrusted): whoever draws them neutralises them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PrView {
    pub pane: String,
    /// The workspace member it is of (issue 52); empty for a pane of one
    /// repository.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repo: String,
    /// A workspace's other pull requests, one per repository, watched
    /// together with this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PrView>,
    pub number: u64,
    pub url: String,
    /// `#8 draft ✓2 ✗1`; `None` before the first poll answered.
    pub summary: Option<String>,
    /// `open`, `closed`, `merged`.
    pub state: Option<String>,
    #[serde(default)]
    pub draft: bool,
    /// `mergeable`, `conflicting`, `unknown`.
    pub mergeable: Option<String>,
    pub checks: Option<Vec<ViewCheck>>,
    /// Reviews, then comments, oldest first.
    #[serde(default)]
    pub remarks: Vec<ViewRemark>,
    /// Messages the watcher sent by itself.
    pub attempts: u32,
    /// Remarks not passed on: their authors are not allowed.
    pub ignored: u32,
    /// The attempt cap is reached: the user decides.
    pub capped: bool,
    /// The `auto_merge` rule asked for its merge.
    pub auto_merged: bool,
    /// A fork's head: the instruction files set aside.
    pub fork_set_aside: Option<Vec<String>>,
    /// The last poll's failure.
    pub error: Option<String>,
    pub sent: Vec<Sent>,
}

/// One check of the head commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewCheck {
    pub name: String,
    /// `passed`, `failed`, `pending`, `other`.
    pub outcome: String,
    pub url: String,
    /// A run whose failed log can be read (`l` in the checks view).
    pub run_id: Option<String>,
}

/// A review or comment on the pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewRemark {
    pub author: String,
    pub association: String,
    /// A review's verdict; `None` for a comment.
    pub review: Option<String>,
    pub body: String,
    pub when: String,
    /// Its author is allowed: the watcher passes it on.
    pub allowed: bool,
}

/// A message the watcher sent: when, and its first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    pub at: String,
    pub what: String,
}

/// The server's forge answer to the console that asked, for one pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ForgeNews {
    /// The pane's pull request (`/checks`; again after each poll while the
    /// console looks).
    View(Box<PrView>),
    /// The tail of a failed check's log.
    Log { check: String, text: String },
    /// How a request went (`failed`: it did not), for the pane's
    /// transcript.
    Said { text: String, failed: bool },
}

/// A sample of each ask and answer, for the protocol's pinned shape
/// (src/protocol/shape.rs).
#[cfg(test)]
pub(crate) mod samples {
    use super::*;

    pub(crate) fn asks() -> Vec<ForgeAsk> {
        vec![
            ForgeAsk::Issue {
                pane: "issue-7".into(),
                number: 7,
                template: Some("claude".into()),
                provider: None,
                cwd: Some(PathBuf::from("/repo")),
                model: None,
                window: Some(0),
            },
            ForgeAsk::PrOpen {
                pane: String::new(),
                title: Some("t".into()),
                body: None,
                ready: false,
            },
            ForgeAsk::PrWatch {
                pane: String::new(),
            },
            ForgeAsk::PrStatus {
                pane: String::new(),
            },
            ForgeAsk::PrMerge {
                pane: String::new(),
                method: Some("squash".into()),
                close: Some(true),
            },
            ForgeAsk::PrLog {
                pane: String::new(),
                check: "test".into(),
            },
        ]
    }

    pub(crate) fn news() -> Vec<ForgeNews> {
        let view = PrView {
            pane: "a".into(),
            repo: "api".into(),
            parts: vec![PrView {
                pane: "a".into(),
                repo: "web".into(),
                number: 3,
                url: "https://github.com/o/web/pull/3".into(),
                ..PrView::default()
            }],
            number: 8,
            url: "https://github.com/o/r/pull/8".into(),
            summary: Some("#8 draft ✓1 ✗1".into()),
            state: Some("open".into()),
            draft: true,
            mergeable: Some("mergeable".into()),
            checks: Some(vec![ViewCheck {
                name: "test".into(),
                outcome: "failed".into(),
                url: "https://github.com/o/r/actions/runs/1/job/2".into(),
                run_id: Some("1".into()),
            }]),
            remarks: vec![ViewRemark {
                author: "octo".into(),
                association: "OWNER".into(),
                review: Some("CHANGES_REQUESTED".into()),
                body: "b".into(),
                when: "2026-12-02T10:00:00Z".into(),
                allowed: true,
            }],
            attempts: 1,
            ignored: 0,
            capped: false,
            auto_merged: false,
            fork_set_aside: None,
            error: None,
            sent: vec![Sent {
                at: "2026-12-02T10:00:00Z".into(),
                what: "The pull request's check `test` failed".into(),
            }],
        };
        vec![
            ForgeNews::View(Box::new(view)),
            ForgeNews::Log {
                check: "test".into(),
                text: "error".into(),
            },
            ForgeNews::Said {
                text: "opened #8".into(),
                failed: false,
            },
        ]
    }
}
