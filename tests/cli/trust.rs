//! The promises of docs/security.md, tried the way a hostile agent or a
//! careless environment would: the real binary, fake agents, crafted files.
//! Confinement of ACP file access is in tests/providers/acp/live.rs
//! (`live_fs_attack_from_a_planted_repository_is_refused`).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

#[path = "trust/caps.rs"]
mod caps;
#[path = "trust/config.rs"]
mod config;
#[path = "trust/ctl.rs"]
mod ctl;
#[path = "trust/durations.rs"]
mod durations;
#[path = "trust/escapes.rs"]
mod escapes;
#[path = "trust/hung.rs"]
mod hung;
#[path = "trust/modes.rs"]
mod modes;
#[path = "trust/nosocket.rs"]
mod nosocket;
#[path = "trust/orphans.rs"]
mod orphans;
#[path = "trust/planted.rs"]
mod planted;
#[path = "trust/protocol.rs"]
mod protocol;
#[path = "trust/stalepid.rs"]
mod stalepid;
#[path = "trust/suspend.rs"]
mod suspend;
#[path = "trust/watchers.rs"]
mod watchers;
#[path = "trust/worktrees.rs"]
mod worktrees;
#[path = "trust/zombies.rs"]
mod zombies;

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

/// Agent `agent`'s history dir in the data dir `data`, in whichever
/// project keeps it (`data/projects/<project>/history/<agent>`).
pub fn history_dir(data: &Path, agent: &str) -> std::path::PathBuf {
    std::fs::read_dir(data.join("projects"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("history").join(agent))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| panic!("no project of {} keeps {agent}'s history", data.display()))
}

/// Runs the binary on a pseudo-terminal (as a user would), with its data,
/// state and config kept in `dir`: all it wrote, and whether it succeeded.
pub fn on_terminal(dir: &Path, args: &[&str]) -> (Vec<u8>, bool) {
    use std::io::Read;

    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_hive"));
    cmd.args(args);
    cmd.cwd(dir);
    cmd.env("HIVE_DATA_DIR", dir.join("data"));
    cmd.env("HIVE_STATE_DIR", dir.join("state"));
    cmd.env("XDG_CONFIG_HOME", dir.join("xdg"));
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    // EOF (or EIO on Linux) once the child has exited and closed the pty.
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    let ok = child.wait().is_ok_and(|s| s.success());
    (out, ok)
}

/// A config file in `dir` with one agent `fake`: tests/fake/fake_acp.py in
/// `dir/work`, with `env`; `top` is prepended (top-level tables).
pub fn fake_acp_config(dir: &Path, env: &[(&str, &str)], top: &str) -> std::path::PathBuf {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_acp.py");
    let mut text = format!(
        "{top}\n[[agent]]\nid = \"fake\"\nprovider = \"acp\"\ncommand = [\"python3\", {:?}]\ncwd = {:?}\n[agent.env]\n",
        script.display().to_string(),
        work.display().to_string(),
    );
    for (k, v) in env {
        text.push_str(&format!("{k} = {v:?}\n"));
    }
    let config = dir.join("hive.toml");
    std::fs::write(&config, text).unwrap();
    config
}
