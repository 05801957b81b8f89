//! A workspace's marker (issue 52): `.hive-workspace.json` in its root
//! says whose workspace it is and which repository each directory is a
//! worktree of. Read by the workspace's making (src/worktree/workspace.rs)
//! and by `hive worktree list/prune` (src/worktree/manage.rs), which find
//! members through it; kept apart so neither imports the other.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::WorktreeError;

/// The marker's name in a workspace root.
pub const MARKER: &str = ".hive-workspace.json";
/// A member being built (renamed to its name once whole).
pub(super) const BUILDING: &str = ".building-";

/// What the marker records: whose workspace it is and which repository
/// each directory is a worktree of (names stay as first given, so a
/// restart finds the same directories).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Marker {
    pub(super) agent_id: String,
    pub(super) branch: String,
    pub(super) repos: Vec<Member>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Member {
    pub(super) name: String,
    pub(super) repo: PathBuf,
}

/// Where hive keeps its workspaces.
pub fn workspaces_dir() -> PathBuf {
    crate::paths::data_dir().join("workspaces")
}

/// The root of `agent_id`'s workspace whose first repository is `first`
/// (its main checkout's top level): one per agent and project, the same
/// at every start.
pub(super) fn root_for(agent_id: &str, first: &Path) -> PathBuf {
    let digest = Sha256::digest(first.as_os_str().as_encoded_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    workspaces_dir().join(format!("{agent_id}-{hash}"))
}

pub(super) fn io_err(path: &Path) -> impl Fn(std::io::Error) -> WorktreeError + '_ {
    move |source| WorktreeError::Io {
        path: path.to_owned(),
        source,
    }
}

pub(super) fn read_marker(root: &Path) -> Marker {
    let path = root.join(MARKER);
    crate::private::read_own_string(&path, crate::private::MAX_STATE_BYTES)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

pub(super) fn write_marker(root: &Path, marker: &Marker) -> Result<(), WorktreeError> {
    let path = root.join(MARKER);
    let text = serde_json::to_vec_pretty(marker)
        .map_err(|e| WorktreeError::Refused(format!("workspace marker: {e}")))?;
    crate::private::write_own(&path, &text).map_err(io_err(&path))
}

/// The agent whose workspace the worktree at `path` is a member of: its
/// parent is a workspace root in hive's data directory whose marker names
/// it (`hive worktree list/prune` see members so, issue 52).
pub fn owner_of(path: &Path) -> Option<String> {
    let root = path.parent()?;
    let dir = std::fs::canonicalize(workspaces_dir()).ok()?;
    if root.parent() != Some(dir.as_path()) {
        return None;
    }
    let name = path.file_name()?.to_string_lossy();
    let marker = read_marker(root);
    let member = marker.repos.iter().any(|m| m.name == name);
    (member && !marker.agent_id.is_empty()).then_some(marker.agent_id)
}

/// Removes the workspace root `root` once no member is left in it (only
/// the marker): nothing of it stays behind.
pub fn tidy(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    if names.iter().all(|n| n == MARKER) {
        let _ = std::fs::remove_file(root.join(MARKER));
        let _ = std::fs::remove_dir(root);
    }
}
