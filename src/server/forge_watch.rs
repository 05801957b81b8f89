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
use super::forge_keep::KeptWatch;
use super::serve::Server;
use crate::config::ForgeSettings;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::forge::watch::{Finding, Step, Watch};
use crate::forge::{ForgeError, PullRequest};
use crate::protocol::forge::{PrView, Sent, ViewCheck, ViewRemark};

impl Server {
    /// Starts watching the pull request `number` just opened from slot
    /// `slot`'s branch; what `pr open` answers.
    pub(super) fn watch_pr(&mut self, slot: usize, number: u64, url: &str) -> Value {
        let Some(pane) = self.panes.get(slot) else {
            return json!({"number": number, "url": url});
        };
        let title = pane
            .record
            .agent
            .name
            .clone()
            .unwrap_or_else(|| pane.record.agent.id.clone());
        let id = pane.record.agent.id.clone();
        let kept = KeptWatch {
            number,
            url: url.to_owned(),
            title,
            ..KeptWatch::default()
        };
        self.begin_watch(slot, kept);
        self.retitle(slot, &format!("#{number} draft"));
        self.poll_now(slot);
        self.keep_forge();
        json!({"pane": id, "number": number, "url": url})
    }

    /// Watches slot `slot`'s pull request as `kept` says (new, or taken up
    /// again after a restart), its poller started.
    pub(super) fn begin_watch(&mut self, slot: usize, kept: KeptWatch) {
        let Some(pane) = self.panes.get(slot) else {
            return;
        };
        let cwd = pane
            .worktree
            .as_ref()
            .map_or_else(|| PathBuf::from("."), |w| w.path.clone());
        let settings = self.starter.config.forge.clone();
        let poller = poller(
            self.forges.tx.clone(),
            settings,
            slot,
            cwd.clone(),
            kept.number.to_string(),
        );
        self.forges.watched.insert(
            slot,
            Watched {
                number: kept.number,
                url: kept.url,
                cwd,
                title: kept.title,
                shown: kept.shown,
                watch: Watch::remembering(kept.memory),
                sent: kept.sent,
                error: None,
                capped: kept.capped,
                fork: kept.fork,
                merging: kept.merging,
                viewers: Default::default(),
                poller,
            },
        );
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
            self.forges.issues.remove(&slot);
            return self.keep_forge();
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
                self.retitle(slot, &summary);
                return self.tell_viewers(slot);
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
                close: None,
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
                self.tell_viewers(slot);
                self.forges.watched.remove(&slot);
                self.keep_forge();
                tracing::info!(slot, ?state, "a watched pull request ended");
                return;
            }
        }
        self.retitle(slot, &summary);
        self.tell_viewers(slot);
        self.keep_forge();
    }

    /// The watcher's message, queued to the pane.
    pub(super) fn forge_message(&mut self, slot: usize, text: String) {
        let Some(w) = self.forges.watched.get_mut(&slot) else {
            return;
        };
        let first = text.lines().next().unwrap_or_default().to_owned();
        w.sent.push((Utc::now(), first));
        self.forge_send(slot, text);
        self.tell_viewers(slot);
        self.keep_forge();
    }

    /// `pr status`: the pull request as last seen and what was sent.
    pub(super) fn pr_status(&self, pane: &str) -> Result<Value, CtlError> {
        let slot = self
            .open_slot(pane)
            .map_err(|e| CtlError::new(e.code(), e.to_string()))?;
        let Some(view) = self.pr_view(slot) else {
            let why = format!("`{pane}` has no watched pull request");
            return Err(CtlError::new(ErrorCode::InvalidState, why));
        };
        serde_json::to_value(view).map_err(|e| CtlError::new(ErrorCode::Unavailable, e.to_string()))
    }

    /// The watched pull request of slot `slot` as a checks view shows it.
    pub(super) fn pr_view(&self, slot: usize) -> Option<PrView> {
        let w = self.forges.watched.get(&slot)?;
        let pane = self.panes.get(slot)?.record.agent.id.clone();
        let rules = crate::forge::watch::Rules::of(&self.starter.config.forge);
        let word =
            |v: serde_json::Result<Value>| v.ok().and_then(|v| v.as_str().map(str::to_owned));
        let last = w.watch.last.as_ref();
        Some(PrView {
            pane,
            number: w.number,
            url: w.url.clone(),
            summary: last.map(PullRequest::summary),
            state: last.and_then(|p| word(serde_json::to_value(p.state))),
            draft: last.is_some_and(|p| p.draft),
            mergeable: last.and_then(|p| word(serde_json::to_value(p.mergeable))),
            checks: last.map(|p| {
                p.checks
                    .iter()
                    .map(|c| ViewCheck {
                        name: c.name.clone(),
                        outcome: word(serde_json::to_value(c.outcome)).unwrap_or_default(),
                        url: c.url.clone(),
                        run_id: c.run_id.clone(),
                    })
                    .collect()
            }),
            remarks: last.map_or_else(Vec::new, |p| {
                p.remarks
                    .iter()
                    .map(|r| ViewRemark {
                        author: r.author.clone(),
                        association: r.association.clone(),
                        review: r.review.clone(),
                        body: r.body.clone(),
                        when: r.when.clone(),
                        allowed: rules.allows(r),
                    })
                    .collect()
            }),
            attempts: w.watch.attempts,
            ignored: w.watch.ignored,
            capped: w.capped,
            auto_merged: w.merging,
            fork_set_aside: w.fork.clone(),
            error: w.error.clone(),
            sent: w
                .sent
                .iter()
                .map(|(at, what)| Sent {
                    at: at.to_rfc3339(),
                    what: what.clone(),
                })
                .collect(),
        })
    }

    /// The pane's title: its own, then the pull request's summary. A name
    /// the user gave it since (a rename) is its own from then on: the
    /// watcher adds to it, never overwrites it.
    fn retitle(&mut self, slot: usize, summary: &str) {
        let Some(pane) = self.panes.get(slot) else {
            return;
        };
        let current = pane.record.agent.name.clone();
        let id = pane.record.agent.id.clone();
        let Some(w) = self.forges.watched.get_mut(&slot) else {
            return;
        };
        if let Some(shown) = &w.shown
            && current.as_deref() != Some(shown.as_str())
        {
            w.title = current.clone().unwrap_or_else(|| id.clone());
        }
        let base: String = w.title.chars().take(40).collect();
        let name = pane_title(&format!("{base} · {summary}"));
        w.shown = Some(name.clone());
        if current.as_deref() == Some(name.as_str()) {
            return;
        }
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
