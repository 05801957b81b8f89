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

use super::forge::{Done, Opened, WatchKey, Watched, pane_title, poller};
use super::forge_keep::KeptWatch;
use super::serve::Server;
use crate::config::ForgeSettings;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::forge::watch::{Finding, Step, Watch};
use crate::forge::{ForgeError, PullRequest};
use crate::protocol::forge::{PrView, Sent, ViewCheck, ViewRemark};

impl Server {
    /// Starts watching the pull requests just opened from slot `slot`'s
    /// branch (one per repository of a workspace); what `pr open` answers.
    pub(super) fn watch_prs(&mut self, slot: usize, opened: Opened) -> Value {
        let prs: Vec<Value> = (opened.prs.iter())
            .map(|o| json!({"repo": o.repo, "number": o.number, "url": o.url}))
            .collect();
        let (number, url) = opened
            .prs
            .first()
            .map_or((0, String::new()), |o| (o.number, o.url.clone()));
        let Some(pane) = self.panes.get(slot) else {
            return json!({"number": number, "url": url, "prs": prs});
        };
        let title = pane
            .record
            .agent
            .name
            .clone()
            .unwrap_or_else(|| pane.record.agent.id.clone());
        let id = pane.record.agent.id.clone();
        for (part, o) in opened.prs.into_iter().enumerate() {
            let key = (slot, o.repo.clone());
            let kept = KeptWatch {
                repo: o.repo,
                number: o.number,
                url: o.url,
                title: title.clone(),
                ..KeptWatch::default()
            };
            self.begin_watch(slot, part, kept);
            if let Some(w) = self.forges.watched.get_mut(&key) {
                w.summary = format!("#{} draft", w.number);
            }
        }
        self.retitle(slot);
        self.poll_now(slot);
        self.keep_forge();
        json!({"pane": id, "number": number, "url": url, "prs": prs, "failed": opened.failed})
    }

    /// Watches slot `slot`'s pull request as `kept` says (new, or taken up
    /// again after a restart), its poller started; `part`: its place
    /// among the pane's. One of a workspace member that is gone is not.
    pub(super) fn begin_watch(&mut self, slot: usize, part: usize, kept: KeptWatch) {
        let Some(pane) = self.panes.get(slot) else {
            return;
        };
        let cwd = match (&pane.worktree, kept.repo.as_str()) {
            (Some(w), "") => w.path.clone(),
            (Some(w), repo) => match w.member(repo) {
                Some(m) => m.path.clone(),
                None => {
                    return tracing::warn!(repo, "a watched pull request's repository is gone");
                }
            },
            (None, _) => PathBuf::from("."),
        };
        let settings = self.starter.config.forge.clone();
        let key = (slot, kept.repo.clone());
        let poller = poller(
            self.forges.tx.clone(),
            settings,
            key.clone(),
            cwd.clone(),
            kept.number.to_string(),
        );
        self.forges.watched.insert(
            key,
            Watched {
                repo: kept.repo,
                part,
                summary: format!("#{}", kept.number),
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

    /// One poll now of each of slot `slot`'s pull requests, besides the
    /// pollers'.
    pub(super) fn poll_now(&mut self, slot: usize) {
        let settings = self.starter.config.forge.clone();
        for w in self.forges.of_pane(slot) {
            let (s, repo) = (settings.clone(), w.repo.clone());
            let (cwd, head) = (w.cwd.clone(), w.number.to_string());
            self.forges.spawn(move || Done::Polled {
                slot,
                repo,
                result: crate::forge::open(&s).pr(&cwd, &head),
            });
        }
    }

    /// A poll's answer: news becomes a message, the title follows.
    pub(super) fn polled(&mut self, key: WatchKey, result: Result<PullRequest, ForgeError>) {
        let slot = key.0;
        if self.panes.get(slot).is_none_or(|p| p.record.closed) {
            self.forges.unwatch(slot);
            self.forges.issues.remove(&slot);
            return self.keep_forge();
        }
        let settings = self.starter.config.forge.clone();
        let Some(w) = self.forges.watched.get_mut(&key) else {
            return;
        };
        let pr = match result {
            Ok(pr) => pr,
            Err(e) => {
                w.error = Some(e.to_string());
                w.summary = format!("#{} ⚠ forge", w.number);
                self.retitle(slot);
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
        w.summary = summary;
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
                .spawn(move || message_job(&settings, key, &cwd, found, fork)),
            Step::Ended(state) => {
                self.retitle(slot);
                self.tell_viewers(slot);
                self.forges.watched.remove(&key);
                self.keep_forge();
                tracing::info!(slot, ?state, "a watched pull request ended");
                return;
            }
        }
        self.retitle(slot);
        self.tell_viewers(slot);
        self.keep_forge();
    }

    /// The watcher's message, queued to the pane.
    pub(super) fn forge_message(&mut self, key: WatchKey, text: String) {
        let slot = key.0;
        let Some(w) = self.forges.watched.get_mut(&key) else {
            return;
        };
        let first = text.lines().next().unwrap_or_default().to_owned();
        w.sent.push((Utc::now(), first));
        // A workspace's: which repository's pull request, and where.
        let text = if w.repo.is_empty() {
            text
        } else {
            format!(
                "About the pull request of repository {} (#{}, its worktree {}/):\n\n{text}",
                w.repo, w.number, w.repo
            )
        };
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

    /// The watched pull requests of slot `slot` as a checks view shows
    /// them: the first, a workspace's others as its `parts`.
    pub(super) fn pr_view(&self, slot: usize) -> Option<PrView> {
        let parts = self.forges.of_pane(slot);
        let mut views = parts.iter().filter_map(|w| self.view_of(slot, w));
        let mut first = views.next()?;
        first.parts = views.collect();
        Some(first)
    }

    /// One watched pull request as a checks view shows it.
    fn view_of(&self, slot: usize, w: &Watched) -> Option<PrView> {
        let pane = self.panes.get(slot)?.record.agent.id.clone();
        let rules = crate::forge::watch::Rules::of(&self.starter.config.forge);
        let word =
            |v: serde_json::Result<Value>| v.ok().and_then(|v| v.as_str().map(str::to_owned));
        let last = w.watch.last.as_ref();
        Some(PrView {
            pane,
            repo: w.repo.clone(),
            parts: Vec::new(),
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

    /// The pane's title: its own, then its pull requests' summaries (a
    /// workspace's each with its repository: `api #4 ✓ · web #5 ✗1`). A
    /// name the user gave it since (a rename) is its own from then on:
    /// the watcher adds to it, never overwrites it.
    fn retitle(&mut self, slot: usize) {
        let Some(pane) = self.panes.get(slot) else {
            return;
        };
        let current = pane.record.agent.name.clone();
        let id = pane.record.agent.id.clone();
        let parts = self.forges.of_pane(slot);
        let Some(first) = parts.first() else {
            return;
        };
        let summary = (parts.iter())
            .map(|w| match w.repo.as_str() {
                "" => w.summary.clone(),
                repo => format!("{repo} {}", w.summary),
            })
            .collect::<Vec<_>>()
            .join(" · ");
        let mut title = first.title.clone();
        if let Some(shown) = &first.shown
            && current.as_deref() != Some(shown.as_str())
        {
            title = current.clone().unwrap_or_else(|| id.clone());
        }
        let base: String = title.chars().take(40).collect();
        let name = pane_title(&format!("{base} · {summary}"));
        for w in
            (self.forges.watched.iter_mut()).filter_map(|((s, _), w)| (*s == slot).then_some(w))
        {
            w.title.clone_from(&title);
            w.shown = Some(name.clone());
        }
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
    (slot, repo): WatchKey,
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
        repo,
        text: parts.join("\n\n"),
    }
}
