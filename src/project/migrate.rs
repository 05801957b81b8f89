//! Taking over the data older versions kept at the data dir's root
//! (`history/<agent>/`, `state/<agent>.json`, `layouts/<server>.json`),
//! shared by every project, into the project that used it.
//!
//! Nothing older recorded a config, so ownership is read from what was
//! kept: a layout file is named by its server, i.e. its project's label,
//! and the history and agent state belong to the project whose layout was
//! saved last (or, when no layout was ever saved, to the first project to
//! start that has an agent with stored state). Data no project can claim
//! stays where it was: never lost, never shown in a wrong project.
//!
//! Crash-safe: a claim is first written down (`projects/<key>.migrating/
//! claim.json`), then each part moves by one `rename`, then the staging dir
//! becomes the project's. Whoever opens a project next finishes a claim
//! left half done, under a lock, before deciding anything else.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{MARKER, Project};

/// What the staging dir says it is for.
#[derive(Debug, Serialize, Deserialize)]
struct Claim {
    key: String,
    label: String,
    /// Whether the root's history and agent state move too (else only the
    /// layout of the project's label).
    all: bool,
    marker: serde_json::Value,
}

/// The data older versions left at the data dir's root.
#[derive(Debug, Default)]
pub struct Legacy {
    /// Agent ids with a state file.
    pub states: Vec<String>,
    /// Whether a history dir with anything in it is there.
    pub history: bool,
    /// Layout files by server name, newest first.
    pub layouts: Vec<String>,
}

impl Legacy {
    pub fn at(data: &Path) -> Self {
        let names = |dir: &Path, ext: &str| -> Vec<(String, Option<std::time::SystemTime>)> {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_str()?.strip_suffix(ext)?.to_owned();
                    let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
                    Some((name, meta.modified().ok()))
                })
                .collect()
        };
        let states = names(&data.join("state"), ".json")
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let mut layouts = names(&data.join("layouts"), ".json");
        layouts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let history = std::fs::read_dir(data.join("history")).is_ok_and(|mut d| d.next().is_some());
        Self {
            states,
            history,
            layouts: layouts.into_iter().map(|(n, _)| n).collect(),
        }
    }

    /// Whether the history and agent state are `project`'s (its agents
    /// are `agents`).
    fn belongs_to(&self, project: &Project, agents: &[&str]) -> bool {
        if self.states.is_empty() && !self.history {
            return false;
        }
        match self.layouts.first() {
            Some(newest) => *newest == project.label,
            None => agents.iter().any(|a| self.states.iter().any(|s| s == a)),
        }
    }
}

/// Makes `project`'s data dir in `data`, taking over what older versions
/// left there when it was this project's. `agents`: its agents' ids.
pub(super) fn open(project: &Project, data: &Path, agents: &[&str]) -> io::Result<()> {
    let projects = data.join("projects");
    crate::private::create_dir(&projects)?;
    let _lock = lock(&projects.join(".lock"))?;
    finish_pending(data)?;
    let dir = project.dir_in(data);
    if dir.join(MARKER).is_file() {
        return Ok(());
    }
    let legacy = Legacy::at(data);
    let all = legacy.belongs_to(project, agents);
    let layout = data.join("layouts").join(format!("{}.json", project.label));
    if !all && !layout.is_file() {
        crate::private::create_dir(&dir)?;
        return write_marker(&dir, &project.marker_json());
    }
    let staging = staging_of(&projects, &project.key);
    crate::private::create_dir(&staging)?;
    let claim = Claim {
        key: project.key.clone(),
        label: project.label.clone(),
        all,
        marker: project.marker_json(),
    };
    let json = serde_json::to_vec_pretty(&claim).map_err(io::Error::other)?;
    crate::history::state::write_atomic(&staging.join("claim.json"), &json)
        .map_err(io::Error::other)?;
    finish(data, &staging, &claim)
}

fn staging_of(projects: &Path, key: &str) -> PathBuf {
    projects.join(format!("{key}.migrating"))
}

/// Finishes every claim a crash left half done.
fn finish_pending(data: &Path) -> io::Result<()> {
    let projects = data.join("projects");
    for e in std::fs::read_dir(&projects)?.flatten() {
        let staging = e.path();
        if staging.extension().is_none_or(|x| x != "migrating") {
            continue;
        }
        let claim: Option<Claim> = std::fs::read(staging.join("claim.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let done = match claim {
            Some(claim) => finish(data, &staging, &claim),
            // Made, then cut before its claim was written: nothing moved.
            None => std::fs::remove_dir_all(&staging),
        };
        // One claim that cannot finish must not keep every project shut.
        if let Err(e) = done {
            tracing::warn!(staging = %staging.display(), "finishing a migration: {e}");
        }
    }
    Ok(())
}

/// Moves the claimed parts into `staging` (those not moved yet), marks it,
/// and makes it the project's dir.
fn finish(data: &Path, staging: &Path, claim: &Claim) -> io::Result<()> {
    let mut parts = vec![(
        data.join("layouts").join(format!("{}.json", claim.label)),
        staging.join("layout.json"),
    )];
    if claim.all {
        parts.push((data.join("history"), staging.join("history")));
        parts.push((data.join("state"), staging.join("state")));
    }
    for (from, to) in parts {
        if from.exists() && !to.exists() {
            std::fs::rename(&from, &to)?;
        }
    }
    write_marker(staging, &claim.marker)?;
    let dir = data.join("projects").join(&claim.key);
    // An empty dir there (made and cut before its marker) is replaced; one
    // with files gets the staging dir's parts it lacks.
    let _ = std::fs::remove_dir(&dir);
    if std::fs::rename(staging, &dir).is_err() {
        for e in std::fs::read_dir(staging)?.flatten() {
            let to = dir.join(e.file_name());
            if !to.exists() {
                std::fs::rename(e.path(), to)?;
            }
        }
        std::fs::remove_dir_all(staging)?;
    }
    let _ = std::fs::remove_file(dir.join("claim.json"));
    sync_dir(&data.join("projects"));
    tracing::info!(project = %dir.display(), all = claim.all, "older data taken over");
    Ok(())
}

fn write_marker(dir: &Path, marker: &serde_json::Value) -> io::Result<()> {
    let json = serde_json::to_vec_pretty(marker).map_err(io::Error::other)?;
    crate::history::state::write_atomic(&dir.join(MARKER), &json).map_err(io::Error::other)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// An exclusive `flock` on `path`, held while the file stays open: two
/// servers starting at once never claim the same data.
fn lock(path: &Path) -> io::Result<File> {
    let mut options = crate::private::file_options();
    options.read(true).write(true).create(true).truncate(false);
    let file = crate::private::open_own_file(&mut options, path)?;
    // SAFETY: flock on a descriptor we own; it blocks until granted.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}
