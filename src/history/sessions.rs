//! A pane's past sessions for `/resume` and `/clear`: one summary line per
//! history file (when, the first prompt, how many turns, which model), and
//! what switching to one needs (its newest records and the agent's handle).
//!
//! Summaries scan each file once without parsing every record: only the
//! first user record and the last assistant record are decoded, and turns
//! are counted by their user records.

use std::io::BufRead;
use std::path::PathBuf;

use super::record::{Record, Role};
use super::state::{PaneState, resume_key};
use super::store::{self, Store};
use super::{OlderPage, PaneHistory, assemble};
use crate::config::AgentConfig;
pub use crate::protocol::history::SessionSummary;

/// The sessions of `agent`, newest first. Empty sessions (never a prompt)
/// are left out, except `keep` (the pane's current one).
pub fn list(store: &Store, agent: &str, keep: Option<&str>) -> Vec<SessionSummary> {
    let mut out: Vec<SessionSummary> = store
        .sessions(agent)
        .into_iter()
        .filter_map(|e| {
            let updated = e
                .modified
                .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64);
            let mut s = summarize(e.path, e.session)?;
            s.updated = updated.or(s.updated);
            s.started = s.started.or(updated);
            Some(s)
        })
        .filter(|s| s.turns > 0 || Some(s.session.as_str()) == keep)
        .collect();
    out.sort_by(|a, b| (b.updated, &b.session).cmp(&(a.updated, &a.session)));
    out
}

/// Reads one session file's summary; `None` when it cannot be read.
fn summarize(path: PathBuf, session: String) -> Option<SessionSummary> {
    // A planted link, FIFO or device is no session (and cannot hang the list).
    let file = crate::private::open_own_file(std::fs::OpenOptions::new().read(true), &path).ok()?;
    let mut out = SessionSummary {
        session,
        path: PathBuf::new(),
        started: None,
        updated: None,
        first_prompt: String::new(),
        turns: 0,
        model: None,
    };
    let mut last_assistant: Option<String> = None;
    for line in std::io::BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        // The record's own fields are written without spaces; a quote
        // inside a text is escaped, so these never match message text.
        if line.contains(r#""role":"user""#) {
            out.turns += 1;
            if out.turns == 1
                && let Ok(r) = serde_json::from_str::<Record>(&line)
                && r.role == Role::User
            {
                out.started = Some(r.timestamp);
                out.first_prompt = r.text();
            }
        } else if line.contains(r#""role":"assistant""#) && line.contains(r#""model":"#) {
            last_assistant = Some(line);
        }
    }
    out.model = last_assistant
        .and_then(|l| serde_json::from_str::<Record>(&l).ok())
        .and_then(|r| r.meta)
        .and_then(|m| m.model);
    out.path = path;
    Some(out)
}

/// Loads the newest `tail_records` of `session` as a pane shows them on
/// start (items, turn footers), with the agent's handle for that session
/// (when hive kept one for this agent program) and its totals.
pub fn open(store: &Store, agent: &AgentConfig, session: &str, tail_records: usize) -> PaneHistory {
    let mut out = PaneHistory {
        session: session.to_owned(),
        ..PaneHistory::default()
    };
    let path = store.session_path(&agent.id, session);
    match store::read_window(&path, u64::MAX, tail_records) {
        Ok(loaded) => {
            assemble::restore_into(&loaded.records, &mut out);
            out.warnings = loaded.warnings;
            out.older = (loaded.start > 0).then(|| OlderPage {
                path: path.clone(),
                before: loaded.start,
            });
        }
        Err(e) => out.warnings.push(e.to_string()),
    }
    match PaneState::load(&store.state_path(&agent.id)) {
        Ok(Some(state)) => {
            out.resume = state.resume_of(session, &resume_key(agent));
            out.totals = state.past.get(session).and_then(|p| p.totals.clone());
        }
        Ok(None) => {}
        Err(e) => out.warnings.push(e.to_string()),
    }
    out
}
