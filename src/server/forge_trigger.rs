//! `[[trigger]]` in the server (issue 48, docs/forge.md): one task per
//! trigger, whether or not a console is attached. A label or
//! check_failed trigger asks the forge every `every_secs` (backing off to
//! 8× while it fails); a schedule trigger wakes at its cron times. Each new
//! event (an issue, a failed run; for a schedule, what its gate prints)
//! first runs the gate, off the loop: nothing printed, nothing more (no
//! pane, no model call). Then the loop starts one pane for it, in its own
//! worktree, its first message the event quoted as untrusted, unless the
//! event was seen before (kept across restarts, src/server/forge_keep.rs)
//! or the trigger has `max_panes` open already (then it is tried again at
//! the next poll).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::forge::{Done, pane_title, repo_dir};
use super::forge_types::{Event, What};
use super::serve::Server;
use crate::config::{ForgeSettings, TriggerConfig, TriggerOn};
use crate::forge::ForgeError;
use crate::protocol::edit::NewPane;

/// Events each trigger asks the forge for, at most, per poll.
const LIST_LIMIT: usize = 20;
/// Event keys kept per trigger (the oldest are forgotten past it).
const SEEN_CAP: usize = 1000;

impl Server {
    /// Starts each `[[trigger]]`'s task (after the kept state was read).
    pub(super) fn start_triggers(&mut self) {
        let triggers = self.starter.config.triggers.clone();
        for t in triggers {
            let Some(template) = self.starter.config.agent(&t.template) else {
                continue;
            };
            let cwd = repo_dir(template.cwd.as_deref());
            let seen = self.forges.triggers.seen_of(&t.id);
            let task = tokio::spawn(watch(
                self.forges.tx.clone(),
                self.starter.config.forge.clone(),
                t,
                cwd,
                seen,
            ));
            self.forges.triggers.tasks.push(task);
        }
    }

    /// A trigger's event, on the loop: one pane for it, never two.
    pub(super) fn triggered(&mut self, ev: Event) {
        let Some(t) = (self.starter.config.triggers.iter())
            .find(|t| t.id == ev.trigger)
            .cloned()
        else {
            return;
        };
        let seen = self.forges.triggers.seen_of(&t.id);
        if seen.lock().is_ok_and(|s| s.contains(&ev.key)) {
            return;
        }
        let open = (self.forges.triggers.panes.iter())
            .filter(|(slot, id)| {
                **id == t.id && self.panes.get(**slot).is_some_and(|p| !p.record.closed)
            })
            .count();
        if open >= t.max_panes {
            tracing::info!(trigger = %t.id, open, "a trigger's event waits: max_panes open");
            return;
        }
        let id = crate::config::free_id(&format!("{}-{}", t.id, short(&ev)), |id| {
            self.panes.find(id).is_some()
        });
        let new = NewPane {
            id,
            template: Some(t.template.clone()),
            worktree: true,
            ..NewPane::default()
        };
        let made = self.trigger_pane(&t, new, &ev);
        match made {
            Ok(slot) => {
                if let Ok(mut s) = seen.lock() {
                    s.insert(ev.key.clone());
                    while s.len() > SEEN_CAP {
                        let first = s.iter().next().cloned();
                        if let Some(first) = first {
                            s.remove(&first);
                        }
                    }
                }
                self.forges.triggers.panes.insert(slot, t.id.clone());
                tracing::info!(trigger = %t.id, key = %ev.key, "a trigger started a pane");
                self.keep_forge();
            }
            Err(e) => tracing::warn!(trigger = %t.id, "a trigger's pane: {}", e.message),
        }
    }

    fn trigger_pane(
        &mut self,
        t: &TriggerConfig,
        new: NewPane,
        ev: &Event,
    ) -> Result<usize, crate::control::protocol::CtlError> {
        use crate::forge::text;
        let mut opening = Vec::new();
        if let Some(m) = &t.message {
            opening.push(fill(m, ev));
        }
        if let Some(out) = &ev.gate {
            opening.push(text::gate_message(&t.id, out));
        }
        let opening = (!opening.is_empty()).then(|| opening.join("\n\n"));
        let cap = self.starter.config.forge.log_tail_bytes;
        match &ev.what {
            What::Issue(issue) => self.issue_pane(new, issue.clone(), opening).map(|(s, _)| s),
            What::Run { run, log } => {
                let branch = format!("hive/run-{}", crate::forge::slug(&run.id));
                let name = pane_title(&format!("✗ {} on {}", run.workflow, run.branch));
                let mut msg = text::run_message(run, log.as_deref(), cap);
                if let Some(o) = opening {
                    msg = format!("{o}\n\n{msg}");
                }
                self.forge_pane(new, &branch, name, msg).map(|(s, _)| s)
            }
            What::Tick => {
                let branch = format!("hive/{}", new.id);
                let name = pane_title(&format!("{} (trigger)", t.id));
                let msg = opening.unwrap_or_else(|| format!("The trigger `{}` fired.", t.id));
                self.forge_pane(new, &branch, name, msg).map(|(s, _)| s)
            }
        }
    }
}

/// The event's part of its pane's id.
fn short(ev: &Event) -> String {
    match &ev.what {
        What::Issue(i) => i.number.to_string(),
        What::Run { run, .. } => crate::forge::slug(&run.id),
        What::Tick => "1".into(),
    }
}

/// `{title}`, `{number}`, `{url}`, `{branch}` of the event in `message`
/// (one line each, neutralised).
fn fill(message: &str, ev: &Event) -> String {
    let line = crate::forge::text::line;
    let (title, number, url, branch) = match &ev.what {
        What::Issue(i) => (
            i.title.clone(),
            i.number.to_string(),
            i.url.clone(),
            String::new(),
        ),
        What::Run { run, .. } => (
            run.title.clone(),
            run.id.clone(),
            run.url.clone(),
            run.branch.clone(),
        ),
        What::Tick => Default::default(),
    };
    message
        .replace("{title}", &line(&title))
        .replace("{number}", &line(&number))
        .replace("{url}", &line(&url))
        .replace("{branch}", &line(&branch))
}

/// One trigger's task: wait, ask, gate, hand each new event to the loop.
async fn watch(
    tx: tokio::sync::mpsc::UnboundedSender<Done>,
    settings: ForgeSettings,
    t: TriggerConfig,
    cwd: PathBuf,
    seen: Arc<Mutex<BTreeSet<String>>>,
) {
    let every = Duration::from_secs(t.every_secs.unwrap_or(settings.watch_every_secs).max(1));
    let cron = t
        .schedule
        .as_deref()
        .and_then(|s| crate::config::cron::Cron::parse(s).ok());
    let mut wait = every;
    loop {
        if t.on == TriggerOn::Schedule {
            let Some(next) = cron
                .as_ref()
                .and_then(|c| c.next_after(chrono::Local::now()))
            else {
                return;
            };
            let secs = (next - chrono::Local::now()).to_std().unwrap_or_default();
            tokio::time::sleep(secs).await;
        } else {
            tokio::time::sleep(wait).await;
        }
        let (s, trig, dir, seen) = (settings.clone(), t.clone(), cwd.clone(), seen.clone());
        let polled = tokio::task::spawn_blocking(move || poll(&s, &trig, &dir, &seen)).await;
        match polled {
            Ok(Ok(events)) => {
                wait = every;
                for ev in events {
                    if tx.send(Done::Triggered(Box::new(ev))).is_err() {
                        return;
                    }
                }
            }
            Ok(Err(e)) => {
                wait = (wait * 2).min(every * 8);
                tracing::warn!(trigger = %t.id, "a trigger's poll failed: {e}");
            }
            Err(e) => tracing::warn!(trigger = %t.id, "a trigger's poll: {e}"),
        }
    }
}

/// Asks the forge for the trigger's events and runs the gate of each new
/// one (blocking; bounded by `[forge] timeout_secs` per call).
fn poll(
    settings: &ForgeSettings,
    t: &TriggerConfig,
    cwd: &Path,
    seen: &Mutex<BTreeSet<String>>,
) -> Result<Vec<Event>, ForgeError> {
    let forge = crate::forge::open(settings);
    let is_new = |key: &str| seen.lock().is_ok_and(|s| !s.contains(key));
    let found: Vec<(String, What)> = match t.on {
        TriggerOn::Label => {
            let label = t.label.as_deref().unwrap_or_default();
            forge
                .labeled(cwd, label, LIST_LIMIT)?
                .into_iter()
                .map(|i| (format!("issue:{}", i.number), What::Issue(i)))
                .collect()
        }
        TriggerOn::CheckFailed => {
            let branch = t.branch.as_deref().unwrap_or("main");
            let runs = forge.failed_runs(cwd, branch, LIST_LIMIT)?;
            runs.into_iter()
                .filter(|r| is_new(&format!("run:{}", r.id)))
                .map(|run| {
                    let log = forge.failed_log(cwd, &run.id).ok();
                    (format!("run:{}", run.id), What::Run { run, log })
                })
                .collect()
        }
        TriggerOn::Schedule => vec![(String::new(), What::Tick)],
    };
    let mut out = Vec::new();
    for (key, what) in found {
        if !key.is_empty() && !is_new(&key) {
            continue;
        }
        let gate = match &t.gate {
            None => None,
            Some(cmd) => match run_gate(settings, cmd, cwd, &t.id, &key, &what) {
                Some(printed) => Some(printed),
                None => continue,
            },
        };
        // A schedule's event is what its gate printed: the same twice is
        // one event; without a gate, each time it fires.
        let key = match (&what, &gate) {
            (What::Tick, Some(g)) => format!("gate:{}", digest(g)),
            (What::Tick, None) => format!("at:{}", chrono::Local::now().to_rfc3339()),
            _ => key,
        };
        if !is_new(&key) {
            continue;
        }
        out.push(Event {
            trigger: t.id.clone(),
            key,
            what,
            gate,
        });
    }
    Ok(out)
}

/// The gate's output, `None` when it printed nothing (or failed).
fn run_gate(
    settings: &ForgeSettings,
    cmd: &str,
    cwd: &Path,
    trigger: &str,
    key: &str,
    what: &What,
) -> Option<String> {
    let mut env = vec![
        ("HIVE_TRIGGER".to_owned(), trigger.to_owned()),
        ("HIVE_EVENT".to_owned(), key.to_owned()),
    ];
    match what {
        What::Issue(i) => {
            env.push(("HIVE_EVENT_NUMBER".into(), i.number.to_string()));
            env.push(("HIVE_EVENT_TITLE".into(), i.title.clone()));
            env.push(("HIVE_EVENT_URL".into(), i.url.clone()));
        }
        What::Run { run, .. } => {
            env.push(("HIVE_EVENT_NUMBER".into(), run.id.clone()));
            env.push(("HIVE_EVENT_TITLE".into(), run.title.clone()));
            env.push(("HIVE_EVENT_URL".into(), run.url.clone()));
        }
        What::Tick => {}
    }
    let timeout = Duration::from_secs(settings.timeout_secs.max(1));
    match crate::forge::run::run_env("sh", &["-c", cmd], cwd, timeout, &env) {
        Ok(ran) if ran.code == 0 && !ran.stdout.trim().is_empty() => Some(ran.stdout),
        Ok(ran) if ran.code != 0 => {
            tracing::warn!(trigger, code = ran.code, "a trigger's gate failed: no pane");
            None
        }
        Ok(_) => None,
        Err(e) => {
            tracing::warn!(trigger, "a trigger's gate: {e}");
            None
        }
    }
}

fn digest(s: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(s.trim().as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}
