//! The forge's state kept across a server restart (issue 48): the issue
//! each pane was made for and each watched pull request (its number, the
//! pane's own title, what the watcher saw and sent, its attempts), in
//! `forge.json` in the project's state dir (0600, written whole and
//! atomically). A restarted server takes each watch up again by itself
//! (`hive ctl pr watch` is not needed), and the watcher does not send again
//! what it sent before the restart, nor count its attempts from zero. A
//! pane that is gone (closed, or forgotten by `--fresh`) is dropped.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::serve::Server;
use crate::forge::Issue;
use crate::forge::watch::Memory;

/// What is kept of a watched pull request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct KeptWatch {
    /// The workspace member it is of (issue 52; `""`: the pane's only
    /// repository).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(super) repo: String,
    pub(super) number: u64,
    pub(super) url: String,
    /// The pane's own title (before the pull request's summary).
    pub(super) title: String,
    /// The title the watcher last gave it.
    #[serde(default)]
    pub(super) shown: Option<String>,
    #[serde(default)]
    pub(super) memory: Memory,
    #[serde(default)]
    pub(super) sent: Vec<(DateTime<Utc>, String)>,
    #[serde(default)]
    pub(super) capped: bool,
    #[serde(default)]
    pub(super) fork: Option<Vec<String>>,
    #[serde(default)]
    pub(super) merging: bool,
}

/// One pane's forge state, by its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Kept {
    pane: String,
    #[serde(default)]
    issue: Option<Issue>,
    #[serde(default)]
    watch: Option<KeptWatch>,
    /// A workspace's other pull requests, one per repository (issue 52).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parts: Vec<KeptWatch>,
    /// The `[[trigger]]` that started it (its `max_panes` counts it).
    #[serde(default)]
    trigger: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct KeptFile {
    panes: Vec<Kept>,
    /// Each trigger's events that started a pane, by trigger id.
    #[serde(default)]
    seen: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
}

/// The file's name in the project's state dir.
const FILE: &str = "forge.json";

impl Server {
    /// Reads the kept state and takes each watch up again (at the start
    /// of `run`); from then on the file follows every change.
    pub(super) fn resume_forge(&mut self) {
        let project = crate::project::Project::of(&self.starter.config.source);
        let path = project.dir_in(&crate::paths::state_dir()).join(FILE);
        let kept = read(&path);
        self.forges.file = Some(path);
        for (trigger, keys) in kept.seen {
            if let Ok(mut s) = self.forges.triggers.seen_of(&trigger).lock() {
                s.extend(keys);
            }
        }
        let mut resumed = 0;
        for k in kept.panes {
            let Some(slot) = self.panes.find(&k.pane) else {
                continue;
            };
            if let Some(issue) = k.issue {
                self.forges.issues.insert(slot, issue);
            }
            if let Some(trigger) = k.trigger {
                self.forges.triggers.panes.insert(slot, trigger);
            }
            let has_worktree = self.panes.get(slot).is_some_and(|p| p.worktree.is_some());
            let watches = k.watch.into_iter().chain(k.parts);
            for (part, w) in watches.filter(|_| has_worktree).enumerate() {
                self.begin_watch(slot, part, w);
                resumed += 1;
            }
            self.poll_now(slot);
        }
        if resumed > 0 {
            tracing::info!(resumed, "pull request watches taken up again");
        }
        // What named gone panes is dropped now.
        self.keep_forge();
    }

    /// Writes the forge's state (after each change; a poll that changed
    /// nothing writes nothing).
    pub(super) fn keep_forge(&mut self) {
        let Some(path) = self.forges.file.clone() else {
            return;
        };
        let mut slots: Vec<usize> = self.forges.issues.keys().copied().collect();
        slots.extend(self.forges.watched.keys().map(|(s, _)| *s));
        slots.extend(self.forges.triggers.panes.keys().copied());
        slots.sort_unstable();
        slots.dedup();
        let panes = slots
            .into_iter()
            .filter_map(|slot| {
                let pane = self.panes.get(slot).filter(|p| !p.record.closed)?;
                let watches: Vec<KeptWatch> = (self.forges.of_pane(slot).into_iter())
                    .map(|w| KeptWatch {
                        repo: w.repo.clone(),
                        number: w.number,
                        url: w.url.clone(),
                        title: w.title.clone(),
                        shown: w.shown.clone(),
                        memory: w.watch.memory(),
                        sent: w.sent.clone(),
                        capped: w.capped,
                        fork: w.fork.clone(),
                        merging: w.merging,
                    })
                    .collect();
                Some(Kept {
                    pane: pane.record.agent.id.clone(),
                    issue: self.forges.issues.get(&slot).cloned(),
                    watch: watches.first().cloned(),
                    parts: watches.get(1..).map(<[_]>::to_vec).unwrap_or_default(),
                    trigger: self.forges.triggers.panes.get(&slot).cloned(),
                })
            })
            .collect();
        let seen = (self.forges.triggers.seen.iter())
            .filter_map(|(id, s)| Some((id.clone(), s.lock().ok()?.clone())))
            .collect();
        let bytes = match serde_json::to_vec_pretty(&KeptFile { panes, seen }) {
            Ok(b) => b,
            Err(e) => return tracing::warn!("cannot encode the forge's state: {e}"),
        };
        if self.forges.written.as_ref() == Some(&bytes) {
            return;
        }
        match crate::private::write_own(&path, &bytes) {
            Ok(()) => self.forges.written = Some(bytes),
            Err(e) => {
                tracing::warn!(path = %path.display(), "cannot keep the forge's state: {e}");
            }
        }
    }
}

fn read(path: &Path) -> KeptFile {
    match crate::private::read_own_string(path, crate::private::MAX_STATE_BYTES) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), "the forge's kept state is unreadable: {e}");
            KeptFile::default()
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => KeptFile::default(),
        Err(e) => {
            tracing::warn!(path = %path.display(), "cannot read the forge's kept state: {e}");
            KeptFile::default()
        }
    }
}
