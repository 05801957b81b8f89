//! `Verb::Forge` in the server (issue 48, docs/forge.md): the front door's
//! forge requests checked on the loop, their CLI work handed to the
//! blocking pool (src/server/forge.rs), and their outcomes applied on the
//! loop again: the issue's pane made, the pull request watched
//! (src/server/forge_watch.rs), the merge answered.

use serde_json::{Value, json};

use super::door::Reply;
use super::forge::{
    Answer, Done, Opened, OpenedPr, failure, invalid, pane_title, push_and_open, repo_dir,
};
use super::forge_parts::{Part, Wording, merge_parts, open_parts, open_pr_of, watch_parts};
use super::serve::Server;
use crate::config::{MergeMethod, WorktreeSetting};
use crate::control::protocol::{CtlError, ErrorCode};
use crate::forge::Issue;
use crate::protocol::edit::NewPane;
use crate::protocol::forge::ForgeAsk;
use crate::protocol::verb::{Caller, Verb};

/// How a forge verb is answered, whatever door it came by.
fn answer(reply: Reply, outcome: Result<Value, CtlError>) {
    match reply {
        Reply::Ctl { reply, .. } => {
            let _ = reply.send(outcome);
        }
        Reply::Op(reply) => {
            let _ =
                reply.send(outcome.map_err(|e| crate::ops::OpError::new("unavailable", e.message)));
        }
        Reply::Console => {
            if let Err(e) = outcome {
                tracing::warn!("a console's forge request failed: {}", e.message);
            }
        }
    }
}

/// A pull request's title, body, and whether it is ready for review.
type Opening = (Option<String>, Option<String>, bool);

/// The door's reply as a job's answer.
pub(super) fn answer_of(reply: Reply) -> Answer {
    Box::new(move |outcome| answer(reply, outcome))
}

impl Server {
    /// `Verb::Forge`: checked here, run off the loop, answered from
    /// [`Server::forge_done`].
    pub(super) fn forge_verb(&mut self, caller: &Caller, ask: ForgeAsk, reply: Reply) {
        let settings = self.starter.config.forge.clone();
        let reply = self.answer_for(caller, &ask, reply);
        match ask {
            ForgeAsk::Issue {
                pane,
                number,
                template,
                provider,
                cwd,
                model,
                window,
            } => {
                let new = NewPane {
                    id: pane,
                    template,
                    provider,
                    cwd,
                    model,
                    worktree: true,
                    repos: Vec::new(),
                    name: None,
                    window,
                    host: None,
                };
                // Refused before the forge is asked: a bad id or template.
                let agent = match self.new_agent(&new) {
                    Ok(a) => a,
                    Err(e) => return reply(Err(invalid(e.to_string()))),
                };
                let cwd = repo_dir(agent.cwd.as_deref());
                self.forges.spawn(move || {
                    let result = crate::forge::open(&settings).issue(&cwd, number);
                    Done::Issue { new, result, reply }
                });
            }
            ForgeAsk::PrOpen {
                pane,
                title,
                body,
                ready,
            } => self.pr_open(&pane, Some((title, body, ready)), reply),
            ForgeAsk::PrWatch { pane } => self.pr_open(&pane, None, reply),
            ForgeAsk::PrStatus { pane } => {
                let outcome = self.pr_status(&pane);
                reply(outcome);
            }
            ForgeAsk::PrMerge {
                pane,
                method,
                close,
            } => self.pr_merge(&pane, (method, close), reply),
            ForgeAsk::PrLog { pane, check } => self.pr_log(&pane, &check, reply),
        }
    }

    /// A job's outcome, on the loop.
    pub(super) fn forge_done(&mut self, done: Done) {
        match done {
            Done::Issue { new, result, reply } => {
                let outcome = match result {
                    Ok(issue) => self.issue_pane(new, issue, None).map(|(_, out)| out),
                    Err(e) => Err(failure(&e)),
                };
                reply(outcome);
            }
            Done::Opened {
                slot,
                result,
                reply,
            } => {
                let outcome = match result {
                    Ok(opened) => Ok(self.watch_prs(slot, opened)),
                    Err(e) => Err(failure(&e)),
                };
                reply(outcome);
            }
            Done::Merged {
                slot,
                result,
                close,
                reply,
            } => {
                let outcome = result.map_err(|e| failure(&e)).map(|said| {
                    // Seen at once, not at the next poll.
                    self.poll_now(slot);
                    let closed = close.and_then(|discard| self.close_merged(slot, discard));
                    json!({"merged": true, "said": said, "closed": closed})
                });
                reply(outcome);
            }
            Done::Polled { slot, repo, result } => self.polled((slot, repo), result),
            Done::Message { slot, repo, text } => self.forge_message((slot, repo), text),
            Done::Console(to) => self.tell_console(*to),
            Done::Triggered(ev) => self.triggered(*ev),
            Done::Answered { outcome, reply } => reply(outcome),
        }
    }

    /// The issue's pane: made now (its id is checked again: the forge took
    /// a while), its worktree on the issue's branch, the issue queued as
    /// its first message (`more` after it: a trigger's words).
    pub(super) fn issue_pane(
        &mut self,
        new: NewPane,
        issue: Issue,
        more: Option<String>,
    ) -> Result<(usize, Value), CtlError> {
        let branch = crate::forge::issue_branch(issue.number, &issue.title);
        let name = pane_title(&format!("#{} {}", issue.number, issue.title));
        let mut text = crate::forge::text::issue_message(&issue, &branch);
        if let Some(more) = more {
            text = format!("{more}\n\n{text}");
        }
        let (slot, mut out) = self.forge_pane(new, &branch, name, text)?;
        let number = issue.number;
        self.forges.issues.insert(slot, issue);
        self.keep_forge();
        out["issue"] = json!(number);
        Ok((slot, out))
    }

    /// A pane for forge work: made now, in a worktree of its own on
    /// `branch`, named `name`, `text` queued as its first message.
    pub(super) fn forge_pane(
        &mut self,
        new: NewPane,
        branch: &str,
        name: String,
        text: String,
    ) -> Result<(usize, Value), CtlError> {
        let mut agent = self.new_agent(&new).map_err(|e| invalid(e.to_string()))?;
        agent.worktree = Some(WorktreeSetting::Branch(branch.to_owned()));
        agent.name = Some(name);
        let done = self.add_agent(agent, new.window, None);
        self.layout_changed();
        let slot = self
            .open_slot(&new.id)
            .map_err(|e| invalid(e.to_string()))?;
        self.forge_send(slot, text);
        let mut out = done.json;
        out["branch"] = json!(branch);
        Ok((slot, out))
    }

    /// Queues `text` to slot `slot`'s agent as the user's message (behind
    /// its turn, never steering into it).
    pub(super) fn forge_send(&mut self, slot: usize, text: String) {
        let Some(pane) = self.panes.get(slot).filter(|p| !p.record.closed) else {
            return;
        };
        let verb = Verb::Send {
            pane: pane.record.agent.id.clone(),
            text,
            steer: false,
        };
        // The answer (its turn id) is nobody's: the pane shows the turn.
        let (reply, _) = tokio::sync::oneshot::channel();
        if let Some((slot, cmd)) = self.control.answer(&self.panes, verb, reply, None) {
            self.command(slot, cmd, None);
        }
    }

    /// Pushes the pane's branch and opens its pull request, off the loop.
    /// `open`: `Some((title, body, ready))`; `None`: watch the pull request
    /// the branch has already (one opened before a restart, or by hand).
    fn pr_open(&mut self, pane: &str, open: Option<Opening>, reply: Answer) {
        let slot = match self.open_slot(pane) {
            Ok(s) => s,
            Err(e) => return reply(Err(CtlError::new(e.code(), e.to_string()))),
        };
        let Some(wt) = self.panes[slot].worktree.clone() else {
            let why = format!(
                "`{pane}` has no worktree: a pull request is opened from a pane's own branch \
                 (make the pane with --worktree or --issue)"
            );
            return reply(Err(invalid(why)));
        };
        if let Some(w) = self.forges.of_pane(slot).first() {
            let why = format!("`{pane}` has pull request #{} already", w.number);
            return reply(Err(CtlError::new(ErrorCode::InvalidState, why)));
        }
        let issue = self.forges.issues.get(&slot).cloned();
        let settings = self.starter.config.forge.clone();
        let id = pane.to_owned();
        if wt.is_workspace() {
            // One pull request per repository (issue 52).
            let parts: Vec<Part> = (wt.repos.iter())
                .map(|m| Part {
                    repo: m.name.clone(),
                    cwd: m.path.clone(),
                    branch: m.branch.clone(),
                })
                .collect();
            return self.forges.spawn(move || {
                let result = match open {
                    Some((title, body, ready)) => {
                        let words = Wording {
                            pane: id,
                            issue,
                            title,
                            body,
                            ready,
                        };
                        open_parts(&settings, &parts, &words)
                    }
                    None => watch_parts(&settings, &parts),
                };
                Done::Opened {
                    slot,
                    result,
                    reply,
                }
            });
        }
        self.forges.spawn(move || {
            let result = match open {
                Some((title, body, ready)) => push_and_open(
                    &settings,
                    &wt.path,
                    &wt.branch,
                    &id,
                    issue,
                    (title, body),
                    ready,
                ),
                None => open_pr_of(&settings, &wt.path, &wt.branch),
            };
            Done::Opened {
                slot,
                result: result.map(|(number, url)| Opened {
                    prs: vec![OpenedPr {
                        repo: String::new(),
                        number,
                        url,
                    }],
                    failed: None,
                }),
                reply,
            }
        });
    }

    /// Merges the pane's pull request; `close`: then closes the pane
    /// (`Some(true)`: with its worktree and branch).
    fn pr_merge(
        &mut self,
        pane: &str,
        (method, close): (Option<String>, Option<bool>),
        reply: Answer,
    ) {
        let slot = match self.open_slot(pane) {
            Ok(s) => s,
            Err(e) => return reply(Err(CtlError::new(e.code(), e.to_string()))),
        };
        let prs: Vec<_> = (self.forges.of_pane(slot).into_iter())
            .map(|w| (w.repo.clone(), w.cwd.clone(), w.number))
            .collect();
        if prs.is_empty() {
            let why = format!("`{pane}` has no pull request (hive ctl pr open {pane})");
            return reply(Err(CtlError::new(ErrorCode::InvalidState, why)));
        }
        let settings = self.starter.config.forge.clone();
        let method = match method.as_deref() {
            None => settings.merge_method,
            Some("squash") => MergeMethod::Squash,
            Some("merge") => MergeMethod::Merge,
            Some("rebase") => MergeMethod::Rebase,
            Some(other) => {
                let why = format!("merge method `{other}`: squash, merge or rebase");
                return reply(Err(invalid(why)));
            }
        };
        self.forges.spawn(move || {
            let result = merge_parts(&settings, &prs, method);
            Done::Merged {
                slot,
                result,
                close,
                reply,
            }
        });
    }

    /// The tail of the failed log of check `check` of the pane's pull
    /// request, as the watcher would send it.
    fn pr_log(&mut self, pane: &str, check: &str, reply: Answer) {
        let slot = match self.open_slot(pane) {
            Ok(s) => s,
            Err(e) => return reply(Err(CtlError::new(e.code(), e.to_string()))),
        };
        let parts = self.forges.of_pane(slot);
        let Some(first) = parts.first() else {
            let why = format!("`{pane}` has no watched pull request");
            return reply(Err(CtlError::new(ErrorCode::InvalidState, why)));
        };
        // A workspace's: the first of its pull requests that has the check.
        let has = |w: &&super::forge::Watched| {
            (w.watch.last.as_ref()).is_some_and(|pr| pr.checks.iter().any(|c| c.name == check))
        };
        let w = parts.iter().copied().find(has).unwrap_or(first);
        let found =
            (w.watch.last.as_ref()).and_then(|pr| pr.checks.iter().find(|c| c.name == check));
        let Some(run) = found.and_then(|c| c.run_id.clone()) else {
            let why = match found {
                Some(_) => format!("check `{check}` has no run whose log the forge can give"),
                None => format!("pull request #{} has no check `{check}`", w.number),
            };
            return reply(Err(invalid(crate::forge::text::line(&why))));
        };
        let settings = self.starter.config.forge.clone();
        let (cwd, check) = (w.cwd.clone(), check.to_owned());
        self.forges.spawn(move || {
            let log = crate::forge::open(&settings).failed_log(&cwd, &run);
            let outcome = log.map_err(|e| failure(&e)).map(|log| {
                let tail = crate::forge::text::tail(
                    &crate::forge::text::strip_escapes(&log),
                    settings.log_tail_bytes,
                );
                json!({"check": check, "run": run, "log": tail})
            });
            Done::Answered { outcome, reply }
        });
    }

    /// Closes slot `slot`'s pane after its merge (`discard`: its worktree
    /// and branch too); what the close said.
    fn close_merged(&mut self, slot: usize, discard: bool) -> Option<String> {
        let id = self.panes.get(slot)?.record.agent.id.clone();
        self.forges.unwatch(slot);
        self.forges.issues.remove(&slot);
        self.keep_forge();
        let edit = crate::protocol::edit::PaneEdit::Close {
            pane: id,
            team: false,
            discard,
        };
        match self.edit(edit, None) {
            Ok(done) => Some(done.text),
            Err(e) => Some(format!("not closed: {e}")),
        }
    }
}
