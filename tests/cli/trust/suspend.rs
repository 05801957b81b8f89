//! Job control and SIGINT leave a sane terminal (tmux, the real binary in an
//! interactive bash): `kill -TSTP` gives the screen back to the shell (no
//! alternate screen, no mouse reporting, cursor shown) and stops hive; `fg`
//! brings hive back, redrawn; `kill -INT` restores the terminal before hive
//! exits. tmux's own view of the pane's modes is the witness.

use crate::support::tmux::{self, Tmux};

/// The hive the shell started (the supervisor, see src/supervisor.rs).
fn hive_pid(t: &Tmux) -> i32 {
    let shell = t.pane_pid();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    children
        .split_whitespace()
        .next()
        .expect("hive runs under the shell")
        .parse()
        .unwrap()
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) on the hive this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

const RESTORED: &str = "alt=0 mouse=000 cursor=1";

#[test]
fn suspend_resume_and_sigint_restore_the_terminal() {
    if !tmux::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_owned();
    let env = |k: &str, v: &str| format!("{k}={}", d.join(v).display());
    let vars = [
        env("HIVE_DATA_DIR", "data"),
        env("HIVE_STATE_DIR", "state"),
        env("XDG_CONFIG_HOME", "xdg"),
        env("HOME", "."),
        "TERM=xterm-256color".into(),
        "PS1=READY$ ".into(),
    ];
    let argv = ["bash", "--norc", "--noprofile", "-i"];
    let t = Tmux::start("t", dir, (140, 40), &vars, &argv);
    t.wait_modes("the shell", |s, _| s.contains("READY$"));
    let bin = env!("CARGO_BIN_EXE_hive");
    t.type_text(bin);
    t.keys(&["Enter"]);
    t.wait_modes("hive", |s, m| {
        s.contains("Architect (demo)") && m.starts_with("alt=1")
    });
    let pid = hive_pid(&t);

    signal(pid, libc::SIGTSTP);
    let (s, _) = t.wait_modes("the shell after suspend", |s, m| {
        s.contains("Stopped") && m == RESTORED
    });
    assert!(!s.contains("Architect (demo)"), "{s}");

    t.type_text("fg");
    t.keys(&["Enter"]);
    t.wait_modes("hive redrawn after fg", |s, m| {
        s.contains("Architect (demo)") && s.contains("Message Architect") && m.starts_with("alt=1")
    });

    signal(pid, libc::SIGINT);
    // A third prompt: after the first one and the one after "Stopped".
    t.wait_modes("the shell after SIGINT", |s, m| {
        s.matches("READY$").count() >= 3 && m == RESTORED
    });
}
