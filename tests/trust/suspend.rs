//! Job control and SIGINT leave a sane terminal (tmux, the real binary in an
//! interactive bash): `kill -TSTP` gives the screen back to the shell (no
//! alternate screen, no mouse reporting, cursor shown) and stops hive; `fg`
//! brings hive back, redrawn; `kill -INT` restores the terminal before hive
//! exits. tmux's own view of the pane's modes is the witness.

use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
    _dir: tempfile::TempDir,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Screen text plus the pane's modes as tmux sees them.
    fn state(&self) -> (String, String) {
        let screen = self.cmd(&["capture-pane", "-p", "-t", "t"]);
        let modes = self.cmd(&[
            "display",
            "-p",
            "-t",
            "t",
            "alt=#{alternate_on} mouse=#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag} cursor=#{cursor_flag}",
        ]);
        (screen, modes.trim().to_owned())
    }

    fn wait(&self, what: &str, pred: impl Fn(&str, &str) -> bool) -> (String, String) {
        let start = Instant::now();
        loop {
            let (s, m) = self.state();
            if pred(&s, &m) {
                return (s, m);
            }
            assert!(
                start.elapsed() < Duration::from_secs(40),
                "timed out waiting for {what}; modes {m}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The hive the shell started (the supervisor, see src/supervisor.rs).
    fn hive_pid(&self) -> i32 {
        let shell = self.cmd(&["display", "-p", "-t", "t", "#{pane_pid}"]);
        let shell = shell.trim();
        let children =
            std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
        children
            .split_whitespace()
            .next()
            .expect("hive runs under the shell")
            .parse()
            .unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) on the hive this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

const RESTORED: &str = "alt=0 mouse=000 cursor=1";

#[test]
fn suspend_resume_and_sigint_restore_the_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIP: tmux is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_owned();
    let t = Tmux {
        socket: format!("hive-trust-{}", std::process::id()),
        _dir: dir,
    };
    let env = |k: &str, v: &str| format!("{k}={}", d.join(v).display());
    let status = Command::new("tmux")
        .args([
            "-L",
            &t.socket,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
        ])
        .args(["-x", "140", "-y", "40", "-c"])
        .arg(&d)
        .args([
            "-e",
            &env("HIVE_DATA_DIR", "data"),
            "-e",
            &env("HIVE_STATE_DIR", "state"),
        ])
        .args([
            "-e",
            &env("XDG_CONFIG_HOME", "xdg"),
            "-e",
            &env("HOME", "."),
        ])
        .args(["-e", "TERM=xterm-256color", "-e", "PS1=READY$ "])
        .args(["bash", "--norc", "--noprofile", "-i"])
        .status()
        .expect("start tmux");
    assert!(status.success());
    t.wait("the shell", |s, _| s.contains("READY$"));
    let bin = env!("CARGO_BIN_EXE_hive");
    t.cmd(&["send-keys", "-t", "t", "-l", bin]);
    t.cmd(&["send-keys", "-t", "t", "Enter"]);
    t.wait("hive", |s, m| {
        s.contains("Architect (demo)") && m.starts_with("alt=1")
    });
    let pid = t.hive_pid();

    signal(pid, libc::SIGTSTP);
    let (s, _) = t.wait("the shell after suspend", |s, m| {
        s.contains("Stopped") && m == RESTORED
    });
    assert!(!s.contains("Architect (demo)"), "{s}");

    t.cmd(&["send-keys", "-t", "t", "-l", "fg"]);
    t.cmd(&["send-keys", "-t", "t", "Enter"]);
    t.wait("hive redrawn after fg", |s, m| {
        s.contains("Architect (demo)") && s.contains("Message Architect") && m.starts_with("alt=1")
    });

    signal(pid, libc::SIGINT);
    // A third prompt: after the first one and the one after "Stopped".
    t.wait("the shell after SIGINT", |s, m| {
        s.matches("READY$").count() >= 3 && m == RESTORED
    });
}
