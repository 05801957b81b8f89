//! The forge in the server (issue 48, docs/forge.md): `Verb::Forge` from the
//! front door. An issue becomes a pane in its own worktree on branch
//! `hive/<n>-<slug>`, its first message the issue quoted as untrusted; a
//! pane's branch is pushed and opened as a pull request, which the watcher
//! then follows (src/server/forge_watch.rs); a merge happens only when the
//! user asks. Every CLI call runs on the blocking pool, bounded by
//! `[forge] timeout_secs`, and comes back to the loop as a [`Done`], so the
//! loop never waits on the network; its failure (no `gh`, not logged in, a
//! timeout) is the answer the user reads.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::ForgeSettings;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::forge::watch::Watch;
use crate::forge::{ForgeError, Issue, NewPr, PullRequest};
use crate::protocol::edit::NewPane;

/// How a job's caller is answered, whatever door it came by
/// (src/server/forge_verbs.rs makes it of the door's reply).
pub(super) type Answer = Box<dyn FnOnce(Result<Value, CtlError>) + Send>;

/// What a forge job hands back to the loop.
pub(super) enum Done {
    Issue {
        new: NewPane,
        result: Result<Issue, ForgeError>,
        reply: Answer,
    },
    Opened {
        slot: usize,
        result: Result<Opened, ForgeError>,
        reply: Answer,
    },
    Merged {
        slot: usize,
        result: Result<String, ForgeError>,
        /// Then close the pane (`Some(true)`: discarding its worktree).
        close: Option<bool>,
        reply: Answer,
    },
    /// A poll of a watched pull request (src/server/forge_watch.rs): of
    /// the workspace member `repo` (`""`: the pane's only repository).
    Polled {
        slot: usize,
        repo: String,
        result: Result<PullRequest, ForgeError>,
    },
    /// A message the watcher made ready for the pane.
    Message {
        slot: usize,
        repo: String,
        text: String,
    },
    /// A job whose outcome is its caller's answer as it is.
    Answered {
        outcome: Result<Value, CtlError>,
        reply: Answer,
    },
    /// A trigger's new event (src/server/forge_trigger.rs).
    Triggered(Box<super::forge_types::Event>),
    /// An answer for the console that asked (src/server/forge_console.rs).
    Console(Box<super::forge_types::ToConsole>),
}

/// A watched pull request's key: the pane's slot and the workspace member
/// it is of (`""`: the pane's only repository). A workspace pane has one
/// pull request per repository (issue 52), watched together.
pub(super) type WatchKey = (usize, String);

/// What opening a pane's pull requests did: one per repository that had
/// commits to bring, in the workspace's order; `failed`: why the rest
/// were not opened (those listed are, and are watched).
#[derive(Debug, Default)]
pub(super) struct Opened {
    pub(super) prs: Vec<OpenedPr>,
    pub(super) failed: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct OpenedPr {
    pub(super) repo: String,
    pub(super) number: u64,
    pub(super) url: String,
}

/// The forge's jobs and the watched pull requests, by pane slot.
pub(super) struct Forges {
    pub(super) tx: mpsc::UnboundedSender<Done>,
    rx: mpsc::UnboundedReceiver<Done>,
    /// The issue each pane was made for (its PR's title and `Closes`).
    pub(super) issues: HashMap<usize, Issue>,
    pub(super) watched: BTreeMap<WatchKey, Watched>,
    /// The pane a console's forge ask was typed in, while the door takes
    /// it (src/server/forge_console.rs).
    pub(super) asking: Option<usize>,
    /// Where the watches and issues are kept (src/server/forge_keep.rs);
    /// `None` until the server has read it.
    pub(super) file: Option<PathBuf>,
    /// What was written there last.
    pub(super) written: Option<Vec<u8>>,
    /// `[[trigger]]`s: their tasks, what they saw, the panes they started.
    pub(super) triggers: super::forge_types::Triggers,
}

impl Forges {
    pub(super) fn new() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            tx,
            rx,
            issues: HashMap::new(),
            watched: BTreeMap::new(),
            asking: None,
            file: None,
            written: None,
            triggers: Default::default(),
        }
    }

    pub(super) async fn next(&mut self) -> Option<Done> {
        self.rx.recv().await
    }

    /// The pull requests watched for slot `slot`, in the workspace's order.
    pub(super) fn of_pane(&self, slot: usize) -> Vec<&Watched> {
        let mut out: Vec<&Watched> = self
            .watched
            .range((slot, String::new())..(slot + 1, String::new()))
            .map(|(_, w)| w)
            .collect();
        out.sort_by_key(|w| w.part);
        out
    }

    /// Stops watching slot `slot`'s pull requests.
    pub(super) fn unwatch(&mut self, slot: usize) {
        self.watched.retain(|(s, _), _| *s != slot);
    }

    /// Runs `job` on the blocking pool; its `Done` comes back to the loop.
    pub(super) fn spawn(&self, job: impl FnOnce() -> Done + Send + 'static) {
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(job());
        });
    }
}

/// A forge failure as `hive ctl` reads it.
pub(super) fn failure(e: &ForgeError) -> CtlError {
    let code = match e {
        ForgeError::Missing { .. } | ForgeError::LoggedOut { .. } => ErrorCode::Unavailable,
        ForgeError::Timeout { .. } => ErrorCode::Unavailable,
        ForgeError::Failed { .. } | ForgeError::BadOutput { .. } => ErrorCode::InvalidState,
    };
    CtlError::new(code, e.to_string())
}

pub(super) fn invalid(why: impl Into<String>) -> CtlError {
    CtlError::new(ErrorCode::BadRequest, why.into())
}

/// A watched pull request.
pub(super) struct Watched {
    /// The workspace member it is of (`""`: the pane's only repository).
    pub(super) repo: String,
    /// Its place among the pane's pull requests (0-based).
    pub(super) part: usize,
    /// Its state in a word (`#4 ✓`), for the pane's title.
    pub(super) summary: String,
    pub(super) number: u64,
    pub(super) url: String,
    /// Its worktree, where the CLI runs.
    pub(super) cwd: PathBuf,
    /// The pane's title before hive added the pull request to it (or the
    /// user's since).
    pub(super) title: String,
    /// The title the watcher gave the pane last: another one is the
    /// user's rename.
    pub(super) shown: Option<String>,
    pub(super) watch: Watch,
    /// What the watcher sent, and when (the first line of each).
    pub(super) sent: Vec<(DateTime<Utc>, String)>,
    /// The last poll's failure, if it failed.
    pub(super) error: Option<String>,
    pub(super) capped: bool,
    /// A fork's head: its instruction files were set aside.
    pub(super) fork: Option<Vec<String>>,
    /// The `auto_merge` rule asked for its merge.
    pub(super) merging: bool,
    /// Consoles that asked for its checks view: told again after each poll.
    pub(super) viewers: std::collections::HashSet<super::clients::ClientId>,
    pub(super) poller: JoinHandle<()>,
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.poller.abort();
    }
}

/// Polls `head` in `cwd` every `every`, doubling the wait (to 8×) while
/// the forge fails; ends when the loop is gone.
pub(super) fn poller(
    tx: tokio::sync::mpsc::UnboundedSender<Done>,
    settings: ForgeSettings,
    (slot, repo): WatchKey,
    cwd: PathBuf,
    head: String,
) -> JoinHandle<()> {
    let every = Duration::from_secs(settings.watch_every_secs.max(1));
    tokio::spawn(async move {
        let mut wait = every;
        loop {
            tokio::time::sleep(wait).await;
            let (s, c, h) = (settings.clone(), cwd.clone(), head.clone());
            let result =
                tokio::task::spawn_blocking(move || crate::forge::open(&s).pr(&c, &h)).await;
            let result = result.unwrap_or_else(|e| {
                Err(ForgeError::Failed {
                    command: "gh pr view".into(),
                    message: e.to_string(),
                })
            });
            wait = if result.is_ok() {
                every
            } else {
                (wait * 2).min(every * 8)
            };
            let repo = repo.clone();
            if tx.send(Done::Polled { slot, repo, result }).is_err() {
                break;
            }
        }
    })
}

/// Where the forge CLI runs for a new pane: its configured directory, else
/// the server's own.
pub(super) fn repo_dir(cwd: Option<&Path>) -> PathBuf {
    cwd.map(Path::to_owned)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// A pane's title made of forge text: one line of at most 64 characters.
pub(super) fn pane_title(s: &str) -> String {
    let line = crate::forge::text::line(s);
    let line = line.trim();
    if line.chars().count() <= 64 {
        return line.to_owned();
    }
    let mut out: String = line.chars().take(63).collect();
    out.push('…');
    out
}

/// `git push -u origin <branch>`, then `gh pr create` from it. The title
/// and body default to the issue's and the branch's commits.
pub(super) fn push_and_open(
    settings: &ForgeSettings,
    worktree: &Path,
    branch: &str,
    pane: &str,
    issue: Option<Issue>,
    (title, body): (Option<String>, Option<String>),
    ready: bool,
) -> Result<(u64, String), ForgeError> {
    let commits = unpushed(settings, worktree)?;
    if commits.trim().is_empty() {
        return Err(ForgeError::Failed {
            command: format!("git log {branch}"),
            message: "the branch has no commits the remote lacks: commit the work first".into(),
        });
    }
    push(settings, worktree, branch)?;
    let title = title.unwrap_or_else(|| default_title(issue.as_ref(), &commits, branch));
    let body = body.unwrap_or_else(|| {
        let closes = issue
            .as_ref()
            .map(|i| format!("Closes #{}.\n\n", i.number))
            .unwrap_or_default();
        format!("{closes}{commits}\nOpened by hive from pane `{pane}`.")
    });
    crate::forge::open(settings).open_pr(
        worktree,
        &NewPr {
            head: branch.to_owned(),
            base: None,
            title,
            body,
            draft: !ready,
        },
    )
}

/// `git` in `worktree`, bounded by the forge's timeout.
fn git_in(settings: &ForgeSettings, worktree: &Path, args: &[&str]) -> Result<String, ForgeError> {
    let timeout = std::time::Duration::from_secs(settings.timeout_secs.max(1));
    let ran = crate::forge::run::run("git", args, worktree, timeout)?;
    if ran.code != 0 {
        return Err(ForgeError::Failed {
            command: crate::forge::run::describe("git", args),
            message: crate::forge::text::line(ran.stderr.trim()),
        });
    }
    Ok(ran.stdout)
}

/// The commits no remote branch has yet (`- subject` lines): what a pull
/// request from `worktree` brings.
pub(super) fn unpushed(settings: &ForgeSettings, worktree: &Path) -> Result<String, ForgeError> {
    git_in(
        settings,
        worktree,
        &["log", "--format=- %s", "HEAD", "--not", "--remotes=origin"],
    )
}

/// `git push -u origin HEAD:refs/heads/<branch>`.
pub(super) fn push(
    settings: &ForgeSettings,
    worktree: &Path,
    branch: &str,
) -> Result<(), ForgeError> {
    git_in(
        settings,
        worktree,
        &[
            "push",
            "--quiet",
            "-u",
            "origin",
            &format!("HEAD:refs/heads/{branch}"),
        ],
    )
    .map(drop)
}

/// A pull request's title when none is given: the issue's, else the
/// branch's first commit's subject.
pub(super) fn default_title(issue: Option<&Issue>, commits: &str, branch: &str) -> String {
    match issue {
        Some(i) => i.title.clone(),
        None => commits
            .lines()
            .last()
            .unwrap_or(branch)
            .trim_start_matches("- ")
            .to_owned(),
    }
}

/// Merges pull request `number` (a draft is marked ready first).
pub(super) fn merge_job(
    settings: &ForgeSettings,
    cwd: &Path,
    number: u64,
    method: crate::forge::MergeMethod,
) -> Result<String, ForgeError> {
    let forge = crate::forge::open(settings);
    let pr = forge.pr(cwd, &number.to_string())?;
    if pr.draft {
        forge.ready(cwd, number)?;
    }
    forge.merge(cwd, number, method)
}

#[cfg(test)]
mod tests {
    use super::pane_title;

    #[test]
    fn a_forge_title_is_one_safe_line_that_fits() {
        let t = pane_title("#7 Fix\u{1b}]0;pwned\u{7}\nnow\u{202e}");
        assert!(!t.chars().any(char::is_control), "{t:?}");
        assert!(t.starts_with("#7 Fix␛]0;pwned␇ now"), "{t}");
        let long = pane_title(&"é".repeat(100));
        assert_eq!(long.chars().count(), 64);
        assert!(long.ends_with('…'));
    }
}
