//! Per-pane session state: which history session the pane continues, the
//! agent's own resume handle (Claude session id, Codex thread id, pi session…)
//! and the messages still queued. Small, rewritten whole on every change, and
//! always atomically (temp file + fsync + rename): a crash leaves the old state
//! or the new one, never half of either.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Chosen;
use super::store::StoreError;
use crate::config::AgentConfig;
pub use crate::protocol::history::Totals;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaneState {
    #[serde(default = "version")]
    pub version: u32,
    pub agent_id: String,
    /// The history session the pane appends to.
    pub session: String,
    /// The agent's own session handle; `None` starts a new agent session.
    #[serde(default)]
    pub resume: Option<String>,
    #[serde(default)]
    pub provider: Option<String>,
    /// Which agent program `resume` belongs to (`resume_key`): a handle is
    /// never offered to another one (issue 13 item 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_key: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// Usage and turns of this history session, added up as turns end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
    /// The model and effort the user chose for this session (`/model`,
    /// `/effort`); the agent starts with them again.
    #[serde(default, skip_serializing_if = "Chosen::is_empty")]
    pub chosen: Chosen,
    /// Queued, never-sent messages, oldest first.
    #[serde(default)]
    pub queue: Vec<String>,
    /// The agent's handles of the pane's earlier history sessions, so
    /// `/resume` can continue one (history session → handle).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub past: BTreeMap<String, PastResume>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub updated_at: i64,
}

/// An earlier session's agent handle and the agent program it belongs to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PastResume {
    /// Empty: the agent kept no session of its own for it (its choices
    /// are still kept).
    #[serde(default)]
    pub resume: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_key: Option<String>,
    /// That session's totals when the pane left it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
    /// The model and effort chosen for it.
    #[serde(default, skip_serializing_if = "Chosen::is_empty")]
    pub chosen: Chosen,
}

impl Totals {
    /// Counts a restored turn's end: a turn that failed is not a turn.
    pub fn add_end(&mut self, end: &super::rebuild::TurnEnd) {
        if !matches!(end.outcome, super::rebuild::Outcome::Failed { .. }) {
            self.turns += 1;
            if let Some(u) = &end.usage {
                self.usage.accumulate(u);
            }
        }
    }
}

fn version() -> u32 {
    1
}

impl PaneState {
    /// Reads the state; `Ok(None)` when there is none yet.
    pub fn load(path: &Path) -> Result<Option<Self>, StoreError> {
        // No link, FIFO or device, and a size cap: a planted file cannot
        // hang or flood the server before its socket exists.
        let text = match crate::private::read_own(path, crate::private::MAX_STATE_BYTES) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(path, e)),
        };
        serde_json::from_slice(&text)
            .map(Some)
            .map_err(|e| StoreError::Invalid {
                path: path.display().to_string(),
                message: format!("unreadable session state: {e}"),
            })
    }

    /// Writes the state atomically.
    pub fn save(&mut self, path: &Path) -> Result<(), StoreError> {
        self.updated_at = super::record::now_ms();
        self.version = version();
        let json = serde_json::to_vec_pretty(self).map_err(|e| StoreError::Invalid {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        write_atomic(path, &json)
    }
}

/// The agent program a resume handle is valid for: the provider and the
/// configured command (ACP runs several different agents).
pub fn resume_key(agent: &AgentConfig) -> String {
    let mut key = agent.provider.clone();
    for part in &agent.command {
        key.push(' ');
        key.push_str(part);
    }
    key
}

impl PaneState {
    /// Drops a stored resume handle that belongs to another agent program
    /// than `agent`, saying why; then binds the state to `agent`. States
    /// written before the key existed are judged by their provider.
    pub(crate) fn bind_resume(&mut self, agent: &AgentConfig) -> Option<String> {
        let key = resume_key(agent);
        let owner = match (&self.resume_key, &self.provider) {
            (Some(k), _) => Some(k.clone()),
            (None, Some(p)) if *p != agent.provider => Some(p.clone()),
            (None, _) => None,
        };
        let stale = self.resume.is_some() && owner.as_ref().is_some_and(|o| *o != key);
        let dropped = stale.then(|| {
            self.resume = None;
            format!(
                "the stored agent session belongs to `{}`, not `{key}`: a new agent session starts (the transcript stays)",
                owner.unwrap_or_default()
            )
        });
        self.resume_key = Some(key);
        dropped
    }
}

impl PaneState {
    /// Makes `session` the current one, keeping the handle of the session
    /// left behind for a later `/resume`; the new session continues the
    /// agent's session `resume` (`None`: the agent starts a new one).
    pub(crate) fn switch_to(&mut self, session: &str, resume: Option<String>) {
        let totals = self.totals.take();
        let chosen = self.chosen.clone();
        let old = self.resume.take();
        if !self.session.is_empty() && (old.is_some() || totals.is_some() || !chosen.is_empty()) {
            self.past.insert(
                std::mem::take(&mut self.session),
                PastResume {
                    resume: old.unwrap_or_default(),
                    resume_key: self.resume_key.clone(),
                    totals,
                    chosen,
                },
            );
        }
        // A session continued gets its own choices back; a new one (or one
        // from before choices were kept) goes on with the pane's.
        if let Some(past) = self.past.remove(session) {
            self.totals = past.totals;
            self.chosen = past.chosen;
        }
        session.clone_into(&mut self.session);
        self.resume = resume;
    }

    /// The stored handle of an earlier session, if it belongs to `key`'s
    /// agent program (the current session's handle included).
    pub(crate) fn resume_of(&self, session: &str, key: &str) -> Option<String> {
        if session == self.session {
            return self.resume.clone();
        }
        self.past
            .get(session)
            .filter(|p| !p.resume.is_empty())
            .filter(|p| p.resume_key.as_deref().is_none_or(|k| k == key))
            .map(|p| p.resume.clone())
    }
}

/// Writes `bytes` to a temp file beside `path`, syncs it, then renames it over
/// `path` (`private::write_own`: a link planted at `path` is replaced, not
/// written through). Readers see the old content or the new, nothing in between.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    crate::private::write_own(path, bytes).map_err(|e| StoreError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 53 item 8: `state/<agent>.json` was read with no type or
    /// size check. A link planted there (to a state outside, to /dev/zero)
    /// is refused, not followed; so is a file too large to be hive's.
    #[test]
    fn a_planted_state_file_is_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.json");
        let mut theirs = PaneState {
            session: "planted".into(),
            ..PaneState::default()
        };
        theirs.save(&outside).unwrap();
        let path = dir.path().join("a.json");
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        let err = PaneState::load(&path).expect_err("read through the link");
        assert!(err.to_string().contains("symlink"), "{err}");

        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert!(PaneState::load(&path).is_err());

        std::fs::remove_file(&path).unwrap();
        let big = std::fs::File::create(&path).unwrap();
        big.set_len(crate::private::MAX_STATE_BYTES + 1).unwrap();
        let err = PaneState::load(&path).expect_err("a huge state was read");
        assert!(err.to_string().contains("larger than"), "{err}");

        // Saving replaces a planted link, never writes through it.
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        PaneState::default().save(&path).unwrap();
        assert!(!path.is_symlink());
        let kept = std::fs::read_to_string(&outside).unwrap();
        assert!(kept.contains("planted"), "{kept}");
    }
}
