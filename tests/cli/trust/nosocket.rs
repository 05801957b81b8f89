//! The server's socket cannot be made (here: a file planted where its
//! directory, `<HIVE_STATE_DIR>/run`, goes). A server without a socket
//! could never be reached, stopped or attached to again, so it does not
//! start: `hive` fails at once with the directory and the reason on stderr,
//! and leaves no process behind.

use std::path::Path;

use crate::support::tmux::{Tmux, available};

#[test]
fn a_server_socket_that_cannot_be_made_stops_hive_with_the_reason() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_owned();
    let state = d.join("state");
    std::fs::create_dir(&state).unwrap();
    let run = state.join("run");
    std::fs::write(&run, "planted\n").unwrap();
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    std::fs::write(
        d.join("hive.toml"),
        format!(
            "[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = {:?}\n",
            echo.display().to_string()
        ),
    )
    .unwrap();
    let env = [
        format!("XDG_RUNTIME_DIR={}", d.join("rt").display()),
        format!("HIVE_DATA_DIR={}", d.join("data").display()),
        format!("HIVE_STATE_DIR={}", state.display()),
        format!("XDG_CONFIG_HOME={}", d.join("xdg").display()),
    ];
    let bin = env!("CARGO_BIN_EXE_hive");
    // The console needs a terminal; its stderr and status go to files, and
    // the shell stays so the session outlives it.
    let script = "\"$0\" 2>err.txt; echo $? >status.tmp; mv status.tmp status.txt; sleep 600";
    let t = Tmux::start("nosock", dir, (160, 40), &env, &["sh", "-c", script, bin]);
    let status_file = t.dir().join("status.txt");
    let started = std::time::Instant::now();
    while !status_file.exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(40),
            "hive did not end; screen:\n{}",
            t.screen()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = std::fs::read_to_string(&status_file).unwrap();
    let stderr = std::fs::read_to_string(t.dir().join("err.txt")).unwrap();
    assert_ne!(status.trim(), "0", "hive must fail: {stderr}");
    assert!(
        stderr.contains("the hive server could not start"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("cannot serve on {}", run.display())),
        "the directory named: {stderr}"
    );
    assert!(stderr.contains("File exists"), "the reason: {stderr}");
    assert_eq!(std::fs::read_to_string(&run).unwrap(), "planted\n");

    let left = hive_processes_of(Path::new(bin), &state);
    assert!(left.is_empty(), "hive processes left behind: {left:?}");
}

/// Pids of processes running `bin` with `HIVE_STATE_DIR=state`.
fn hive_processes_of(bin: &Path, state: &Path) -> Vec<u32> {
    let bin = std::fs::canonicalize(bin).unwrap();
    let needle = format!("HIVE_STATE_DIR={}", state.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let proc = Path::new("/proc").join(pid.to_string());
            std::fs::read_link(proc.join("exe")).is_ok_and(|exe| exe == bin)
                && std::fs::read(proc.join("environ"))
                    .is_ok_and(|env| env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect()
}
