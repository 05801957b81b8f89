//! Canonical history store (DESIGN §6, seed 000 "Canonical History Store").
//!
//! `open_pane` returns what a pane needs to come back after a restart — its
//! transcript, the agent's resume handle, messages still queued — and the
//! recorder that keeps all of it up to date. Formats and layout: docs/history.md.

pub mod assemble;
pub(crate) mod cut;
mod held;
pub mod import;
pub mod rebuild;
pub mod record;
mod recorder;
pub(crate) mod render;
pub mod sessions;
pub mod state;
pub mod store;

use serde::{Deserialize, Serialize};

use crate::config::AgentConfig;
use crate::protocol::pane::PaneEvent;
use crate::upsert::Upsert;

pub use crate::protocol::history::OlderPage;
pub(crate) use recorder::HistoryRecorder;
pub use state::PaneState;
pub use store::Store;
pub(crate) use store::StoreError;

/// Sees every event a runner emits, in order, on the runner's task (the
/// history store records conversations through this).
pub trait Recorder: Send {
    fn record(&mut self, event: &PaneEvent);

    /// Why the last records could not be saved, once per failure (the
    /// runner shows it as "history not saved: <reason>").
    fn take_failure(&mut self) -> Option<String> {
        None
    }

    /// A live tail showed `item` (not recorded): where it appears on screen,
    /// for recorders that keep the shown order.
    fn shown(&mut self, item: &Upsert) {
        let _ = item;
    }

    /// The user chose a model or effort for the current session (`/model`,
    /// `/effort`): keep it with the session.
    fn chose(&mut self, chosen: &Chosen) {
        let _ = chosen;
    }

    /// What was chosen for the current session (after it was opened or
    /// switched to); `None`: the recorder keeps no choices.
    fn chosen(&self) -> Option<Chosen> {
        None
    }
}

/// A session's model and effort as the user chose them with `/model` and
/// `/effort` (issue 34 item 1): part of the session, so they come back
/// after a restart and with `/resume`. `None`: the agent's configured one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chosen {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// The `[[account]]` the session went on under (`/account`): its
    /// vendor's conversation is in that account's home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

impl Chosen {
    pub fn is_empty(&self) -> bool {
        self.model.is_none() && self.effort.is_none() && self.account.is_none()
    }
}

/// Records loaded into a pane on start; older ones come on demand.
pub(crate) const DEFAULT_TAIL_RECORDS: usize = 400;

/// What a pane restores on start.
#[derive(Default)]
pub struct PaneHistory {
    /// Completed items of earlier turns, oldest first, ready to render.
    pub items: Vec<Upsert>,
    /// How those turns ended (footers, error banners), placed among `items`.
    pub ends: Vec<assemble::TurnEnd>,
    /// How long tool calls among `items` ran (item id, ms), where their
    /// pane timed them.
    pub took: Vec<(String, u64)>,
    /// Usage and turns of the whole session so far (the pane's totals).
    pub totals: Option<state::Totals>,
    /// The model the agent last reported (the pane's title).
    pub model: Option<String>,
    /// The agent's own session handle to resume, unless `fresh`.
    pub resume: Option<String>,
    /// Messages queued but never sent; offered again, not auto-sent.
    pub queue: Vec<String>,
    /// Records this pane's events from now on.
    pub recorder: Option<Box<dyn Recorder>>,
    /// Problems met while loading (torn lines skipped…), for the user to see.
    pub warnings: Vec<String>,
    /// The history session the pane continues (file name without `.jsonl`).
    pub session: String,
    /// Set when older records exist than those in `items`: pass it to
    /// `load_older` (e.g. when the user scrolls to the top).
    pub older: Option<OlderPage>,
}

/// Items older than `page`, oldest first, and the page before those (if any).
pub fn load_older(
    page: &OlderPage,
    min_records: usize,
) -> (Vec<Upsert>, Option<OlderPage>, Vec<String>) {
    match store::read_window(&page.path, page.before, min_records) {
        Ok(loaded) => {
            let items = assemble::items_from(&loaded.records);
            let older = (loaded.start > 0).then(|| OlderPage {
                path: page.path.clone(),
                before: loaded.start,
            });
            (items, older, loaded.warnings)
        }
        Err(e) => (Vec::new(), None, vec![e.to_string()]),
    }
}

/// How a pane's history is opened.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Start a new history session and a new agent session (keeps old files).
    pub fresh: bool,
    /// Persist the pending queue. `hive run` turns this off: it neither shows
    /// nor drains the queue, so it must not overwrite it.
    pub track_queue: bool,
    /// Records to load into `items` (at least; whole turns are kept together).
    pub tail_records: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            fresh: false,
            track_queue: true,
            tail_records: DEFAULT_TAIL_RECORDS,
        }
    }
}

/// Opens the history of `agent` (a new session when `fresh`).
pub fn open_pane(store: &Store, agent: &AgentConfig, fresh: bool) -> PaneHistory {
    let opts = OpenOptions {
        fresh,
        ..OpenOptions::default()
    };
    open_pane_in(store, agent, &opts)
}

/// `open_pane` against a given store.
pub fn open_pane_in(store: &Store, agent: &AgentConfig, opts: &OpenOptions) -> PaneHistory {
    let mut out = PaneHistory::default();
    let state_path = store.state_path(&agent.id);
    let stored = match PaneState::load(&state_path) {
        Ok(s) => s,
        Err(e) => {
            out.warnings
                .push(format!("{e}; starting from the newest history file"));
            None
        }
    };
    let mut state = match stored {
        Some(s) if !opts.fresh => s,
        Some(s) => {
            // A fresh session still offers the messages that were never
            // sent, and keeps the old session's handle for `/resume`.
            let mut fresh = PaneState {
                queue: s.queue,
                past: s.past,
                session: s.session,
                resume: s.resume,
                resume_key: s.resume_key,
                chosen: s.chosen,
                ..PaneState::default()
            };
            fresh.switch_to("", None);
            // The config's model and effort, not the last session's choice
            // (which stays with that session for `/resume`).
            fresh.chosen = Chosen::default();
            fresh
        }
        None if !opts.fresh => recover_state(store, &agent.id, &mut out.warnings),
        None => PaneState::default(),
    };
    if state.session.is_empty() {
        state.session = store::new_session_id();
        state.resume = None;
    }
    state.agent_id = agent.id.clone();
    out.warnings.extend(state.bind_resume(agent));
    state.provider = Some(agent.provider.clone());
    if state.model.is_none() {
        state.model = agent.model.clone();
    }
    let path = store.session_path(&agent.id, &state.session);
    // A turn a killed hive left open joins its session, as `cut`.
    if let Err(e) = cut::recover(&path) {
        out.warnings
            .push(format!("a cut turn was not restored: {e}"));
    }
    if !opts.fresh && opts.tail_records > 0 {
        match store::read_window(&path, u64::MAX, opts.tail_records) {
            Ok(loaded) => {
                assemble::restore_into(&loaded.records, &mut out);
                out.warnings.extend(loaded.warnings);
                out.older = (loaded.start > 0).then(|| OlderPage {
                    path: path.clone(),
                    before: loaded.start,
                });
            }
            Err(e) => out.warnings.push(e.to_string()),
        }
    }
    if let Err(e) = state.save(&state_path) {
        out.warnings.push(format!("session state not saved: {e}"));
    }
    out.resume = state.resume.clone();
    out.queue = state.queue.clone();
    out.totals = state.totals.clone();
    out.model = state.model.clone();
    out.session = state.session.clone();
    out.recorder = Some(Box::new(HistoryRecorder::new(
        store::SessionWriter::new(path),
        state,
        state_path,
        opts.track_queue,
    )));
    out
}

/// No usable state file but history exists: continue the newest session
/// (without an agent resume handle — that was in the lost state).
fn recover_state(store: &Store, agent: &str, warnings: &mut Vec<String>) -> PaneState {
    let Some(newest) = store.sessions(agent).pop() else {
        return PaneState::default();
    };
    if !warnings.is_empty() {
        warnings.push(format!(
            "continuing history session {} without resuming the agent's own session",
            newest.session
        ));
    }
    PaneState {
        session: newest.session,
        ..PaneState::default()
    }
}

/// The session an agent continues: its current one, else its newest.
pub(crate) fn agent_session(store: &Store, agent: &str) -> Option<store::SessionEntry> {
    let mut sessions = store.sessions(agent);
    let current = PaneState::load(&store.state_path(agent))
        .ok()
        .flatten()
        .map(|s| s.session);
    match sessions
        .iter()
        .position(|s| Some(&s.session) == current.as_ref())
    {
        Some(i) => Some(sessions.swap_remove(i)),
        None => sessions.pop(),
    }
}

impl crate::protocol::snapshot::Restored {
    /// Copies what a client needs out of a freshly opened history.
    pub fn of(history: &PaneHistory) -> Self {
        Self {
            items: history.items.clone(),
            ends: history.ends.clone(),
            took: history.took.clone(),
            totals: history.totals.clone(),
            model: history.model.clone(),
            queue: history.queue.clone(),
            warnings: history.warnings.clone(),
            session: history.session.clone(),
            older: history.older.clone(),
        }
    }

    /// Back into a history (`hive run` and the tests restore from one).
    pub fn into_history(self) -> PaneHistory {
        PaneHistory {
            items: self.items,
            ends: self.ends,
            took: self.took,
            totals: self.totals,
            model: self.model,
            resume: None,
            queue: self.queue,
            recorder: None,
            warnings: self.warnings,
            session: self.session,
            older: self.older,
        }
    }
}
