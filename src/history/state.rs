//! Per-pane session state: which history session the pane continues, the
//! agent's own resume handle (Claude session id, Codex thread id, pi session…)
//! and the messages still queued. Small, rewritten whole on every change, and
//! always atomically (temp file + fsync + rename): a crash leaves the old state
//! or the new one, never half of either.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::store::StoreError;

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
    #[serde(default)]
    pub model: Option<String>,
    /// Queued, never-sent messages, oldest first.
    #[serde(default)]
    pub queue: Vec<String>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub updated_at: i64,
}

fn version() -> u32 {
    1
}

impl PaneState {
    /// Reads the state; `Ok(None)` when there is none yet.
    pub fn load(path: &Path) -> Result<Option<Self>, StoreError> {
        let text = match std::fs::read(path) {
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

/// Writes `bytes` to a temp file beside `path`, syncs it, then renames it over
/// `path`. Readers see the old content or the new, nothing in between.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::private::create_dir(dir).map_err(|e| StoreError::io(dir, e))?;
    let mut tmp_name = path.file_name().unwrap_or_default().to_owned();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp: PathBuf = dir.join(tmp_name);
    let result = (|| {
        let mut f = crate::private::file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(StoreError::io(path, e));
    }
    Ok(())
}
