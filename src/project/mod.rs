//! A project's identity (issue 46 items 1–2): the canonical path of its
//! config file, the built-in default config being a project of its own.
//! Everything hive keeps for a project hangs off it: its server's name and
//! socket (`control::socket_name`), and its data dir
//! `<data dir>/projects/<key>/` holding its history, agent state and
//! layout. Two projects whose agents share ids, or whose directories share
//! a name, never see each other's conversations or server.
//!
//! Data written before projects existed lay at the data dir's root; the
//! first project that can be shown to have used it last takes it over
//! ([`migrate`]).

mod migrate;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::config::ConfigSource;

pub use migrate::Legacy;

/// Which project a config is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The config file, canonical; `None` for the built-in config.
    config: Option<PathBuf>,
    label: String,
    key: String,
}

/// The marker in a project's data dir: which config it belongs to.
const MARKER: &str = "project.json";

impl Project {
    /// The project of `source`.
    pub fn of(source: &ConfigSource) -> Self {
        let config = source.canonical_path();
        let label = socket_label(source);
        let key = match &config {
            None => "default".to_owned(),
            Some(p) => format!("{label}-{:016x}", fnv1a(p.as_os_str().as_bytes())),
        };
        Self { config, label, key }
    }

    /// The built-in config's project.
    pub fn builtin() -> Self {
        Self::of(&ConfigSource::Builtin)
    }

    /// Stable and unique per config: the name of its data dir.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Short and readable (its directory's name): its server's name when
    /// no other project's server has it.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The label with a short hash of the config's path: the server's name
    /// when another project's server runs under the label.
    pub fn tagged_label(&self) -> String {
        match &self.config {
            None => self.label.clone(),
            Some(p) => format!(
                "{}-{:08x}",
                self.label,
                fnv1a(p.as_os_str().as_bytes()) as u32
            ),
        }
    }

    pub fn config_path(&self) -> Option<&Path> {
        self.config.as_deref()
    }

    /// The config's path, or `<built-in default>`.
    pub fn describe(&self) -> String {
        self.config.as_ref().map_or_else(
            || ConfigSource::Builtin.describe(),
            |p| p.display().to_string(),
        )
    }

    /// `<data dir>/projects/<key>`.
    pub fn dir_in(&self, data: &Path) -> PathBuf {
        data.join("projects").join(&self.key)
    }

    /// The user's data dir for this project.
    pub fn data_dir(&self) -> PathBuf {
        self.dir_in(&crate::paths::data_dir())
    }

    /// This project's history store (its data dir, as [`Self::prepare`]
    /// left it).
    pub fn store(&self) -> crate::history::Store {
        let user = crate::history::Store::user();
        crate::history::Store::at(self.dir_in(user.root()))
    }

    /// The project of `config`, its data dir made (and older data taken
    /// over) for its agents.
    pub fn open(config: &crate::config::Config) -> Self {
        let project = Self::of(&config.source);
        let ids: Vec<&str> = config.agents.iter().map(|a| a.id.as_str()).collect();
        project.prepare(&ids);
        project
    }

    /// Makes the project's data dir in the user's data dir (see
    /// [`Self::prepare_in`]); `agents` are its agents' ids.
    pub fn prepare(&self, agents: &[&str]) -> PathBuf {
        self.prepare_in(&crate::paths::data_dir(), agents)
    }

    /// Its data dir in `data`, made on first use: older data at `data`'s
    /// root is taken over when it was this project's ([`migrate`]). A
    /// failure is logged; the project then starts without the old data,
    /// which stays where it was.
    pub fn prepare_in(&self, data: &Path, agents: &[&str]) -> PathBuf {
        let dir = self.dir_in(data);
        if dir.join(MARKER).is_file() {
            return dir;
        }
        if let Err(e) = migrate::open(self, data, agents) {
            tracing::warn!(project = %self.describe(), "preparing the project's data: {e}");
        }
        dir
    }

    fn marker_json(&self) -> serde_json::Value {
        serde_json::json!({
            "key": self.key,
            "label": self.label,
            "config": self.config,
        })
    }
}

/// The project this process serves (`hive serve` serves one), for the
/// socket's readers that run apart from the server's state.
static SERVED: std::sync::OnceLock<Project> = std::sync::OnceLock::new();

/// Marks `project` as the one this process serves (the first call wins).
pub fn serve(project: &Project) {
    let _ = SERVED.set(project.clone());
}

/// The project this process serves; the built-in config's when none was
/// marked.
pub fn served() -> Project {
    SERVED.get().cloned().unwrap_or_else(Project::builtin)
}

/// FNV-1a: stable across builds and machines (names made from it must
/// not change between the server that made them and a client).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The socket's name for a config: its project directory for a
/// `hive.toml`, the file's stem otherwise, `default` for the built-in one.
pub(crate) fn socket_label(source: &ConfigSource) -> String {
    let raw = match source {
        ConfigSource::Builtin => "default".to_owned(),
        ConfigSource::File(p) => {
            let abs = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            let stem = abs.file_stem().map(|s| s.to_string_lossy().into_owned());
            let parent = abs
                .parent()
                .and_then(Path::file_name)
                .map(|s| s.to_string_lossy().into_owned());
            match (stem, parent) {
                (Some(s), Some(p)) if s == "hive" || s == "config" => p,
                (Some(s), _) => s,
                (None, _) => "hive".to_owned(),
            }
        }
    };
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match clean.trim_start_matches('.') {
        "" => "hive".to_owned(),
        s => s.to_owned(),
    }
}

#[cfg(test)]
mod tests;
