//! History and state are private: created 0700/0600 under a permissive
//! umask, and existing world-readable files are repaired on start.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use super::hive;

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

fn walk(root: &Path, out: &mut Vec<PathBuf>) {
    out.push(root.to_path_buf());
    if root.is_dir() {
        for e in std::fs::read_dir(root).unwrap().flatten() {
            walk(&e.path(), out);
        }
    }
}

#[test]
fn history_and_state_are_private_and_old_modes_are_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // What an older hive left behind: readable by everyone.
    let old_dir = dir.join("data/history/demo");
    std::fs::create_dir_all(&old_dir).unwrap();
    let old = old_dir.join("old-session.jsonl");
    std::fs::write(&old, "").unwrap();
    for p in [dir.join("data"), dir.join("data/history"), old_dir] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();

    let mut cmd = hive(dir);
    cmd.args(["run", "--agent", "demo", "hello"]);
    // SAFETY: umask is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut all = Vec::new();
    walk(&dir.join("data"), &mut all);
    let written: Vec<&PathBuf> = all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| std::fs::metadata(p).unwrap().len() > 0)
        .collect();
    assert!(!written.is_empty(), "history written: {all:?}");
    let state: Vec<&PathBuf> = all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(!state.is_empty(), "session state written: {all:?}");
    for p in &all {
        let want = if p.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(p), want, "{} is {:o}", p.display(), mode(p));
    }
}
