//! Work that comes to hive from a forge (issue 48): an issue becomes a pane,
//! a pane's branch becomes a pull request, the pull request's checks and
//! reviews come back to the pane, and it is merged on the user's word.
//!
//! hive drives the forge through its own CLI (`gh` for GitHub), never its
//! API by hand: the CLI holds the user's login, knows the repository from
//! the checkout's remote, and its `--json` output is documented. The forge
//! sits behind one small trait, [`Forge`], so GitLab's `glab` can follow
//! with an implementation of its own; nothing outside this room knows a
//! `gh` argument or JSON field.
//!
//! Every call is bounded ([`run`]): a missing CLI, a logged-out one and one
//! that hangs each end as a [`ForgeError`] that says what to do, never as a
//! wait. Whatever the forge returns (an issue's body, a reviewer's comment,
//! a failed log) is untrusted text: [`text`] quotes it for the agent and
//! neutralises its control characters before it can reach a terminal.

pub mod conflicts;
pub mod fork;
pub mod gh;
pub mod run;
pub mod text;
pub mod watch;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// An issue as the forge shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub url: String,
    pub labels: Vec<String>,
}

/// A workflow run (GitHub Actions) that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub id: String,
    /// What the run is of (its commit's subject, or the pull request's
    /// title).
    pub title: String,
    pub workflow: String,
    pub branch: String,
    pub head_sha: String,
    pub url: String,
}

/// A pull request to open from a pushed branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPr {
    pub head: String,
    /// `None`: the repository's default branch.
    pub base: Option<String>,
    pub title: String,
    pub body: String,
    pub draft: bool,
}

/// A pull request's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrState {
    Open,
    Closed,
    Merged,
}

/// Whether the head merges into the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mergeable {
    Mergeable,
    Conflicting,
    /// The forge has not computed it yet.
    Unknown,
}

/// Where a check stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pending,
    Passed,
    Failed,
    /// Skipped, neutral, cancelled by a newer run: neither way.
    Other,
}

/// One check of the head commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub outcome: Outcome,
    /// The forge's page for it.
    pub url: String,
    /// The run whose failed log can be fetched (GitHub Actions), if any.
    pub run_id: Option<String>,
}

/// A review or a comment on the pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remark {
    /// The forge's id, or one made of author, time and text where the
    /// forge gives none.
    pub id: String,
    pub author: String,
    /// The author's relation to the repository (`OWNER`, `MEMBER`,
    /// `COLLABORATOR`, `CONTRIBUTOR`, `NONE`, …).
    pub association: String,
    pub body: String,
    /// A review's verdict (`APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`);
    /// `None` for a comment.
    pub review: Option<String>,
    pub when: String,
}

/// A pull request as the watcher sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub url: String,
    pub state: PrState,
    pub draft: bool,
    pub mergeable: Mergeable,
    pub head: String,
    pub base: String,
    /// From a fork: its head is someone else's code.
    pub cross_repository: bool,
    pub checks: Vec<Check>,
    pub remarks: Vec<Remark>,
}

impl PullRequest {
    /// `#12 draft ✓2 ✗1 …1`: what a pane's title shows of it.
    pub fn summary(&self) -> String {
        let state = match (self.state, self.draft) {
            (PrState::Merged, _) => "merged",
            (PrState::Closed, _) => "closed",
            (PrState::Open, true) => "draft",
            (PrState::Open, false) => "open",
        };
        let count = |o: Outcome| self.checks.iter().filter(|c| c.outcome == o).count();
        let mut out = format!("#{} {state}", self.number);
        for (mark, n) in [
            ("✓", count(Outcome::Passed)),
            ("✗", count(Outcome::Failed)),
            ("…", count(Outcome::Pending)),
        ] {
            if n > 0 {
                out.push_str(&format!(" {mark}{n}"));
            }
        }
        if self.mergeable == Mergeable::Conflicting {
            out.push_str(" conflict");
        }
        out
    }

    /// Every check passed (none pending or failed) and at least one ran.
    pub fn green(&self) -> bool {
        !self.checks.is_empty()
            && self
                .checks
                .iter()
                .all(|c| matches!(c.outcome, Outcome::Passed | Outcome::Other))
    }
}

pub use crate::config::MergeMethod;

/// Why a forge call failed, each with what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForgeError {
    #[error("`{program}` is not installed (or not on PATH): {hint}")]
    Missing { program: String, hint: String },
    #[error("`{program}` is not logged in: run `{login}` in a terminal, then try again")]
    LoggedOut { program: String, login: String },
    #[error("`{command}` gave no answer in {secs} s and was stopped")]
    Timeout { command: String, secs: u64 },
    #[error("`{command}` failed: {message}")]
    Failed { command: String, message: String },
    #[error("`{command}` answered what hive cannot read: {message}")]
    BadOutput { command: String, message: String },
}

/// A forge driven through its CLI. Each call runs in `cwd` (the forge finds
/// the repository from its remote) and is bounded by the implementation's
/// timeout; all of them block, so the server calls them off its loop.
pub trait Forge: Send + Sync {
    /// The CLI's name, for messages.
    fn name(&self) -> &str;
    /// The issue `number` of the repository of `cwd`.
    fn issue(&self, cwd: &Path, number: u64) -> Result<Issue, ForgeError>;
    /// Opens a pull request from `pr.head` (already pushed); its number
    /// and address.
    fn open_pr(&self, cwd: &Path, pr: &NewPr) -> Result<(u64, String), ForgeError>;
    /// Sets pull request `number`'s description (the parts of one change
    /// across repositories name each other once all are open).
    fn edit_body(&self, cwd: &Path, number: u64, body: &str) -> Result<(), ForgeError>;
    /// The pull request of branch (or number) `head`.
    fn pr(&self, cwd: &Path, head: &str) -> Result<PullRequest, ForgeError>;
    /// The failed steps' log of run `run_id` (as the CLI prints it; the
    /// caller bounds and quotes it).
    fn failed_log(&self, cwd: &Path, run_id: &str) -> Result<String, ForgeError>;
    /// Marks draft pull request `number` ready for review (a draft cannot
    /// be merged).
    fn ready(&self, cwd: &Path, number: u64) -> Result<(), ForgeError>;
    /// Merges pull request `number`; what the CLI said.
    fn merge(&self, cwd: &Path, number: u64, method: MergeMethod) -> Result<String, ForgeError>;
    /// The open issues with `label`, newest first (at most `limit`).
    fn labeled(&self, cwd: &Path, label: &str, limit: usize) -> Result<Vec<Issue>, ForgeError>;
    /// The failed runs on `branch`, newest first (at most `limit`).
    fn failed_runs(&self, cwd: &Path, branch: &str, limit: usize) -> Result<Vec<Run>, ForgeError>;
}

/// The forge of the config's `[forge]` table.
pub fn open(settings: &crate::config::ForgeSettings) -> Box<dyn Forge> {
    Box::new(gh::Gh::new(
        &settings.gh,
        Duration::from_secs(settings.timeout_secs.max(1)),
    ))
}

/// `hive/<n>-<slug>`: the branch an issue's pane works on.
pub fn issue_branch(number: u64, title: &str) -> String {
    let slug = slug(title);
    if slug.is_empty() {
        format!("hive/{number}")
    } else {
        format!("hive/{number}-{slug}")
    }
}

/// A title as a branch name's part: lowercase ASCII letters and digits,
/// words joined by `-`, at most 40 characters, cut at a word.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for word in title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_ascii_lowercase();
        let more = usize::from(!out.is_empty()) + word.len();
        if out.len() + more > 40 {
            if out.is_empty() {
                out.push_str(&word[..40]);
            }
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issue_branch_is_a_clean_slug_of_its_title() {
        assert_eq!(
            issue_branch(7, "Fix: the parser panics on `\\x1b` input!"),
            "hive/7-fix-the-parser-panics-on-x1b-input"
        );
        assert_eq!(issue_branch(9, "日本語だけ"), "hive/9");
        let long = issue_branch(3, &"word ".repeat(30));
        assert!(long.len() <= "hive/3-".len() + 40, "{long}");
        assert!(!long.ends_with('-'));
        assert_eq!(slug(&"x".repeat(60)).len(), 40);
        // What git takes: no `..`, no spaces, no control characters.
        assert_eq!(slug("a..b \u{1b}[31m c"), "a-b-31m-c");
    }

    fn check(outcome: Outcome) -> Check {
        Check {
            name: "t".into(),
            outcome,
            url: String::new(),
            run_id: None,
        }
    }

    #[test]
    fn a_summary_counts_checks_and_says_a_conflict() {
        let mut pr = PullRequest {
            number: 12,
            url: String::new(),
            state: PrState::Open,
            draft: true,
            mergeable: Mergeable::Conflicting,
            head: "h".into(),
            base: "main".into(),
            cross_repository: false,
            checks: vec![
                check(Outcome::Passed),
                check(Outcome::Failed),
                check(Outcome::Passed),
            ],
            remarks: vec![],
        };
        assert_eq!(pr.summary(), "#12 draft ✓2 ✗1 conflict");
        assert!(!pr.green());
        pr.checks.remove(1);
        pr.state = PrState::Merged;
        pr.mergeable = Mergeable::Mergeable;
        assert_eq!(pr.summary(), "#12 merged ✓2");
        assert!(pr.green());
        pr.checks.clear();
        assert!(!pr.green(), "no check ran: not green");
    }
}
