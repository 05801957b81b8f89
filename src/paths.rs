//! XDG locations: config, data (history), state (logs, session handles).

use std::path::PathBuf;

fn dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "hive")
}

/// `$XDG_CONFIG_HOME/hive/config.toml`.
pub(crate) fn user_config_file() -> Option<PathBuf> {
    dirs().map(|d| d.config_dir().join("config.toml"))
}

/// `$XDG_DATA_HOME/hive` (history lives here). `HIVE_DATA_DIR` overrides it,
/// which tests use to stay out of the user's data.
pub(crate) fn data_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("HIVE_DATA_DIR") {
        return PathBuf::from(p);
    }
    dirs()
        .map(|d| d.data_dir().to_owned())
        .unwrap_or_else(|| std::env::temp_dir().join("hive-data"))
}

/// `$XDG_STATE_HOME/hive` (logs). `HIVE_STATE_DIR` overrides it.
pub(crate) fn state_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("HIVE_STATE_DIR") {
        return PathBuf::from(p);
    }
    dirs()
        .and_then(|d| d.state_dir().map(ToOwned::to_owned))
        .unwrap_or_else(|| data_dir().join("state"))
}

/// Where servers' sockets live: `run/` in the state dir when
/// `HIVE_STATE_DIR` names one (a hive with a state of its own has servers
/// of its own), else `$XDG_RUNTIME_DIR/hive`, else `run/` in the default
/// state dir.
pub(crate) fn socket_dir() -> PathBuf {
    if std::env::var_os("HIVE_STATE_DIR").is_some() {
        return state_dir().join("run");
    }
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(d) if d.is_absolute() => d.join("hive"),
        _ => state_dir().join("run"),
    }
}

/// A server's name: its socket's file stem.
pub fn name_of(socket: &std::path::Path) -> String {
    socket
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
