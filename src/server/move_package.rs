//! A moving pane's package (issue 50, `/move @HOST`): one private
//! directory that holds everything the pane needs to go on elsewhere —
//! `pane.json` (its agent, hive's session state: the history session, the
//! agent's resume handle, the queue, the usage totals, the model and
//! effort chosen), `history.jsonl` (hive's history session, which for the
//! built-in agent is its conversation) and `work.bundle` (the worktree's
//! commits and uncommitted changes, `worktree::bundle`). Packing only
//! reads; arriving unpacks into the receiving server's repository and
//! store, and a step that fails takes back what it made there and says
//! which step it was. Blocking: run on the server's blocking pool.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::AgentConfig;
use crate::history::{PaneState, Store};
use crate::worktree::Worktree;
use crate::worktree::bundle::{self, Packed};

pub(super) const MANIFEST: &str = "pane.json";
const HISTORY: &str = "history.jsonl";
const BUNDLE: &str = "work.bundle";
/// What a package's own files may weigh (the bundle is git's to check).
const MAX_MANIFEST: u64 = 8 << 20;
const MAX_HISTORY: u64 = 1 << 30;
const VERSION: u32 = 1;

/// `pane.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Manifest {
    pub(super) version: u32,
    /// The server it left (its host's name as that server knows it).
    pub(super) from: String,
    pub(super) agent: AgentConfig,
    pub(super) state: PaneState,
    /// Its worktree, when it had one (the bundle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) work: Option<Work>,
}

/// The worktree that travels as `work.bundle`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Work {
    pub(super) branch: String,
    pub(super) head: String,
    #[serde(default)]
    pub(super) dirty: Option<String>,
    /// The agent's directory inside the worktree.
    #[serde(default)]
    pub(super) sub: PathBuf,
}

/// What packing needs of the leaving pane, taken on the loop.
pub(super) struct Leaving {
    pub(super) agent: AgentConfig,
    pub(super) from: String,
    pub(super) store: Store,
    pub(super) worktree: Option<Worktree>,
}

/// A package's files, by name, as they were written.
pub(super) fn names(m: &Manifest) -> Vec<String> {
    let mut names = vec![MANIFEST.to_owned(), HISTORY.to_owned()];
    if m.work.is_some() {
        names.push(BUNDLE.to_owned());
    }
    names
}

/// Writes the package of `l` into the (new, private) directory `dir`.
pub(super) fn pack(l: &Leaving, dir: &Path) -> Result<Manifest, String> {
    let step = |what: &str, e: &dyn std::fmt::Display| format!("packing {what}: {e}");
    let id = &l.agent.id;
    let state = PaneState::load(&l.store.state_path(id))
        .map_err(|e| step("the session state", &e))?
        .ok_or_else(|| step("the session state", &"the pane has none yet"))?;
    let session = l.store.session_path(id, &state.session);
    let history = match crate::private::read_own(&session, MAX_HISTORY) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(step("hive's history", &e)),
    };
    write(&dir.join(HISTORY), &history).map_err(|e| step("hive's history", &e))?;
    let work = match &l.worktree {
        Some(w) => {
            let packed = bundle::pack(&w.path, &w.branch, &dir.join(BUNDLE))
                .map_err(|e| step("the worktree", &e))?;
            Some(Work {
                branch: packed.branch,
                head: packed.head,
                dirty: packed.dirty,
                sub: w
                    .cwd
                    .strip_prefix(&w.path)
                    .unwrap_or(Path::new(""))
                    .to_owned(),
            })
        }
        None => None,
    };
    let m = Manifest {
        version: VERSION,
        from: l.from.clone(),
        agent: l.agent.clone(),
        state,
        work,
    };
    let json = serde_json::to_vec_pretty(&m).map_err(|e| step("the pane", &e))?;
    write(&dir.join(MANIFEST), &json).map_err(|e| step("the pane", &e))?;
    Ok(m)
}

fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::private::write_own(path, bytes)
}

/// Reads the manifest of the package in `dir` (small, checked).
pub(super) fn manifest(dir: &Path) -> Result<Manifest, String> {
    let bytes = crate::private::read_own(&dir.join(MANIFEST), MAX_MANIFEST)
        .map_err(|e| format!("reading the package in {}: {e}", dir.display()))?;
    let m: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| format!("reading the package: {e}"))?;
    if m.version != VERSION {
        return Err(format!(
            "reading the package: version {} (this hive reads {VERSION})",
            m.version
        ));
    }
    Ok(m)
}

/// Where an arriving pane goes: the receiving server's repository, its
/// worktrees' root, its history store.
pub(super) struct Landing {
    pub(super) repo: PathBuf,
    pub(super) root: Option<PathBuf>,
    pub(super) store: Store,
}

/// Unpacks `m` (read from `dir`) at `land`: the worktree first (into
/// `<root>/<name>`, the branch as it was), then hive's history and state.
/// A failed step takes back the worktree it made.
pub(super) fn arrive(m: &Manifest, dir: &Path, land: &Landing) -> Result<Option<Worktree>, String> {
    let worktree = match &m.work {
        Some(work) => Some(unpack(m, work, dir, land)?),
        None => None,
    };
    if let Err(e) = settle_history(m, dir, &land.store) {
        if let Some(w) = &worktree {
            let git = crate::worktree::git::Git::at(&land.repo);
            let _ = git.output(&["worktree", "remove", "--force", &w.path.to_string_lossy()]);
        }
        return Err(e);
    }
    Ok(worktree)
}

fn unpack(m: &Manifest, work: &Work, dir: &Path, land: &Landing) -> Result<Worktree, String> {
    let step = |e: &dyn std::fmt::Display| format!("unpacking the worktree: {e}");
    let repo = crate::worktree::manage::canonical(&land.repo).map_err(|e| step(&e))?;
    let root = crate::worktree::manage::root_dir(&repo, land.root.as_deref());
    let name = crate::history::store::safe_name(&m.agent.id);
    let path = root.join(&name);
    crate::worktree::manage::create_root(&root).map_err(|e| step(&e))?;
    crate::worktree::manage::exclude_root(&repo, &root).map_err(|e| step(&e))?;
    let packed = Packed {
        bundle: dir.join(BUNDLE),
        branch: work.branch.clone(),
        head: work.head.clone(),
        dirty: work.dirty.clone(),
    };
    bundle::unpack(&repo, &packed, &path).map_err(|e| step(&e))?;
    Ok(Worktree {
        agent_id: m.agent.id.clone(),
        repo,
        cwd: path.join(&work.sub),
        path,
        branch: work.branch.clone(),
        created: true,
        setup_output: None,
        name: String::new(),
        repos: Vec::new(),
    })
}

/// The moved history session becomes the agent's current one here; the
/// session it had here (a pane of that id before) stays for `/resume`.
fn settle_history(m: &Manifest, dir: &Path, store: &Store) -> Result<(), String> {
    let step = |e: &dyn std::fmt::Display| format!("writing hive's history: {e}");
    let id = &m.agent.id;
    let moved = &m.state;
    let history =
        crate::private::read_own(&dir.join(HISTORY), MAX_HISTORY).map_err(|e| step(&e))?;
    let session = store.session_path(id, &moved.session);
    if let Some(parent) = session.parent() {
        crate::private::create_dir(parent).map_err(|e| step(&e))?;
    }
    crate::history::state::write_atomic(&session, &history).map_err(|e| step(&e))?;
    let state_path = store.state_path(id);
    let mut state = PaneState::load(&state_path)
        .ok()
        .flatten()
        .unwrap_or_default();
    state.switch_to(&moved.session, moved.resume.clone());
    state.agent_id.clone_from(id);
    state.resume_key = Some(crate::history::state::resume_key(&m.agent));
    state.provider.clone_from(&moved.provider);
    state.model.clone_from(&moved.model);
    state.totals.clone_from(&moved.totals);
    state.chosen = moved.chosen.clone();
    state.queue.clone_from(&moved.queue);
    if let Some(parent) = state_path.parent() {
        crate::private::create_dir(parent).map_err(|e| step(&e))?;
    }
    state.save(&state_path).map_err(|e| step(&e))
}
