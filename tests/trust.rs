//! The promises of docs/security.md, tried the way a hostile agent or a
//! careless environment would: the real binary, fake agents, crafted files.
//! Confinement of ACP file access is in tests/acp/live.rs
//! (`live_fs_attack_from_a_planted_repository_is_refused`).

#[path = "trust/config.rs"]
mod config;
#[path = "trust/modes.rs"]
mod modes;
#[path = "trust/orphans.rs"]
mod orphans;

use std::path::Path;
use std::process::Command;

/// The real binary with its data, state and config kept in `dir`.
pub fn hive(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hive"));
    c.current_dir(dir)
        .env("HIVE_DATA_DIR", dir.join("data"))
        .env("HIVE_STATE_DIR", dir.join("state"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"));
    c
}
