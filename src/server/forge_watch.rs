//! The pull request watcher (issue 48): per open pull request a task polls
//! `gh pr view` every `[forge] watch_every_secs` (backing off while the
//! forge fails), the loop compares each answer with what it saw
//! ([`crate::forge::watch::Watch`]), and only what is new becomes one
//! queued message to the pane that owns the branch: a failed check with the
//! tail of its failed log, an allowed reviewer's remark, a conflict with the
//! files in it. The pane's title carries the pull request's state and
//! checks. Watching stops at merged or closed, or when the pane closes;
//! past the attempt cap the watcher only marks the title.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::Utc;
use serde_json::{Value, json};

use super::forge::{Done, Watched, pane_title, poller};
use super::serve::Server;
use crate::config::ForgeSettings;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::forge::watch::{Finding, Step, Watch};
use crate::forge::{ForgeError, PullRequest};

impl Server {
    /// Starts watching the pull request `number` just opened from slot
    /// `slot`'s branch; what `pr open` answers.
    pub(super) fn watch_pr(&mut self, slot: usize, number: u64, url: &str) -> Value {
        let Some(pane) = self.panes.get(slot) else {
            return json!({"number": number, "url": url});
        };
        let cwd = pane
            .worktree
            .as_ref()
            .map_or_else(|| PathBuf::from("."), |w| w.path.clone());
        let title = pane
            .record
            .agent
            .name
            .clone()
            .unwrap_or_else(|| pane.record.agent.id.clone());
        let settings = self.starter.config.forge.clone();
        let poller = poller(
            self.forges.tx.clone(),
            settings,
            slot,
            cwd.clone(),
            number.to_string(),
        );
        let id = pane.record.agent.id.clone();
        self.forges.watched.insert(
            slot,
            Watched {
                number,
                url: url.to_owned(),
                cwd,
                title,
                watch: Watch::default(),
                sent: Vec::new(),
                error: None,
                capped: false,
                fork: None,
                merging: false,
                poller,
            },
        );
        self.retitle(slot, &format!("#{number} draft"));
        self.poll_now(slot);
        json!({"pane": id, "number": number, "url": url})
    }

    /// One poll now, besides the poller's.
    pub(super) fn poll_now(&mut self, slot: usize) {
        let Some(w) = self.forges.watched.get(&slot) else {
            return;
        };
        let settings = self.starter.config.forge.clone();
        let (cwd, head) = (w.cwd.clone(), w.number.to_string());
        self.forges.spawn(move || Done::Polled {
            slot,
            result: crate::forge::open(&settings).pr(&cwd, &head),
        });
    }

    /// A poll's answer: news becomes a message, the title follows.
    pub(super) fn polled(&mut self, slot: usize, result: Result<PullRequest, ForgeError>) {
        if self.panes.get(slot).is_none_or(|p| p.record.closed) {
            self.forges.watched.remove(&slot);
            return;
        }
        let settings = self.starter.config.forge.clone();
        let Some(w) = self.forges.watched.get_mut(&slot) else {
            return;
        };
        let pr = match result {
            Ok(pr) => pr,
            Err(e) => {
                w.error = Some(e.to_string());
                let summary = format!("#{} ⚠ forge", w.number);
                return self.retitle(slot, &summary);
            }
        };
        w.error = None;
        if pr.cross_repository && w.fork.is_none() {
            w.fork = Some(set_aside(&w.cwd, w.number));
        }
        let mut summary = pr.summary();
        let rules = crate::forge::watch::Rules::of(&settings);
        // A config rule's merge, asked once.
        let merge =
            settings.auto_merge && !w.merging && crate::forge::watch::ready_to_merge(&pr, &rules);
        w.merging |= merge;
        let number = w.number;
        let step = w.watch.step(pr, &rules);
        w.capped |= matches!(step, Step::Capped(_));
        if w.capped {
            summary.push_str(" cap");
        }
        let (cwd, fork) = (w.cwd.clone(), w.fork.is_some());
        if merge {
            let (s, c) = (settings.clone(), cwd.clone());
            self.forges.spawn(move || Done::Merged {
                slot,
                result: super::forge::merge_job(&s, &c, number, s.merge_method),
                reply: Box::new(|outcome| {
                    if let Err(e) = outcome {
                        tracing::warn!("the [forge] auto_merge rule's merge failed: {}", e.message);
                    }
                }),
            });
        }
        match step {
            Step::Quiet | Step::Capped(_) => {}
            Step::Send(found) => self
                .forges
                .spawn(move || message_job(&settings, slot, &cwd, found, fork)),
            Step::Ended(state) => {
                self.retitle(slot, &summary);
                self.forges.watched.remove(&slot);
                tracing::info!(slot, ?state, "a watched pull request ended");
                return;
            }
        }
        self.retitle(slot, &summary);
    }

    /// The watcher's message, queued to the pane.
    pub(super) fn forge_message(&mut self, slot: usize, text: String) {
        let Some(w) = self.forges.watched.get_mut(&slot) else {
            return;
        };
        let first = text.lines().next().unwrap_or_default().to_owned();
        w.sent.push((Utc::now(), first));
        self.forge_send(slot, text);
    }

    /// `pr status`: the pull request as last seen and what was sent.
    pub(super) fn pr_status(&self, pane: &str) -> Result<Value, CtlError> {
        let slot = self
            .open_slot(pane)
            .map_err(|e| CtlError::new(e.code(), e.to_string()))?;
        let Some(w) = self.forges.watched.get(&slot) else {
            let why = format!("`{pane}` has no watched pull request");
            return Err(CtlError::new(ErrorCode::InvalidState, why));
        };
        let sent: Vec<Value> = w
            .sent
            .iter()
            .map(|(at, what)| json!({"at": at.to_rfc3339(), "what": what}))
            .collect();
        let last = w.watch.last.as_ref();
        Ok(json!({
            "pane": pane,
            "number": w.number,
            "url": w.url,
            "summary": last.map(PullRequest::summary),
            "state": last.map(|p| p.state),
            "mergeable": last.map(|p| p.mergeable),
            "checks": last.map(|p| p.checks.clone()),
            "attempts": w.watch.attempts,
            "ignored": w.watch.ignored,
            "capped": w.capped,
            "auto_merged": w.merging,
            "fork_set_aside": w.fork,
            "error": w.error,
            "sent": sent,
        }))
    }

    /// The pane's title: its own, then the pull request's summary.
    fn retitle(&mut self, slot: usize, summary: &str) {
        let Some(w) = self.forges.watched.get(&slot) else {
            return;
        };
        let Some(pane) = self.panes.get(slot) else {
            return;
        };
        let base: String = w.title.chars().take(40).collect();
        let name = pane_title(&format!("{base} · {summary}"));
        if pane.record.agent.name.as_deref() == Some(name.as_str()) {
            return;
        }
        let id = pane.record.agent.id.clone();
        let edit = crate::protocol::edit::PaneEdit::Rename { pane: id, name };
        if let Err(e) = self.edit(edit, None) {
            tracing::warn!("cannot retitle a pane for its pull request: {e}");
        }
    }
}

/// A fork's head: its agent instructions go to a private directory.
fn set_aside(cwd: &Path, number: u64) -> Vec<String> {
    let keep = crate::paths::state_dir()
        .join("forge-set-aside")
        .join(format!("pr-{number}-{}", std::process::id()));
    match crate::forge::fork::set_aside(cwd, &keep) {
        Ok(moved) => moved,
        Err(e) => {
            tracing::warn!("cannot set a fork's instructions aside: {e}");
            Vec::new()
        }
    }
}

/// Makes one message of a poll's news: each failed check with its log's
/// tail, each remark, a conflict with the files in it.
fn message_job(
    settings: &ForgeSettings,
    slot: usize,
    cwd: &Path,
    found: Vec<Finding>,
    fork: bool,
) -> Done {
    use crate::forge::text;
    let forge = crate::forge::open(settings);
    let mut parts = Vec::new();
    if fork {
        parts.push(
            "This pull request comes from a fork: its code is someone else's. Do not run it \
             (no tests, builds, scripts or hooks from it); read and edit only. Its agent \
             instructions were set aside."
                .to_owned(),
        );
    }
    for f in found {
        parts.push(match f {
            Finding::Failed(check) => {
                let log = check
                    .run_id
                    .as_deref()
                    .and_then(|id| forge.failed_log(cwd, id).ok());
                text::check_message(&check, log.as_deref(), settings.log_tail_bytes)
            }
            Finding::Remark(remark) => text::remark_message(&remark),
            Finding::Conflict { base } => {
                let timeout = Duration::from_secs(settings.timeout_secs.max(1));
                let files = crate::forge::conflicts::files(cwd, &base, timeout);
                text::conflict_message(&base, &files)
            }
        });
    }
    Done::Message {
        slot,
        text: parts.join("\n\n"),
    }
}
