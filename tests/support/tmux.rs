//! A private tmux server for end-to-end tests of the real binary: one server
//! socket per test (tests run in parallel), a detached session of a fixed
//! size in a temporary directory, the screen read with `capture-pane`, and
//! the server killed when the test ends.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(40);

/// False (with a message) when tmux is missing: the caller skips.
pub fn available() -> bool {
    let ok = Command::new("tmux").arg("-V").output().is_ok();
    if !ok {
        eprintln!("SKIP: tmux is not installed");
    }
    ok
}

pub struct Tmux {
    socket: String,
    /// The session, which is also its only window's target.
    target: &'static str,
    /// `HIVE_STATE_DIR` as the test set it: hive servers keep their pid
    /// files in its `run/`.
    state_dir: Option<std::path::PathBuf>,
    _dir: tempfile::TempDir,
}

impl Tmux {
    /// Starts session `target` (`cols`×`rows`, in `dir`, with `env` as
    /// `NAME=value` pairs) running `argv`.
    pub fn start(
        target: &'static str,
        dir: tempfile::TempDir,
        (cols, rows): (u16, u16),
        env: &[String],
        argv: &[&str],
    ) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmux = Tmux {
            socket: format!("hive-test-{}-{n}", std::process::id()),
            target,
            state_dir: env
                .iter()
                .find_map(|e| e.strip_prefix("HIVE_STATE_DIR="))
                .map(std::path::PathBuf::from),
            _dir: dir,
        };
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &tmux.socket, "-f", "/dev/null", "new-session", "-d"])
            .args([
                "-s",
                target,
                "-x",
                &cols.to_string(),
                "-y",
                &rows.to_string(),
            ])
            .arg("-c")
            .arg(tmux.dir());
        for e in env {
            cmd.args(["-e", e]);
        }
        let status = cmd.args(argv).status().expect("start tmux");
        assert!(status.success());
        tmux
    }

    pub fn dir(&self) -> &Path {
        self._dir.path()
    }

    pub fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", self.target])
    }

    /// The pane's terminal modes as tmux sees them:
    /// `alt=0 mouse=000 cursor=1` is a terminal given back clean.
    pub fn modes(&self) -> String {
        let format = "alt=#{alternate_on} mouse=#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag} cursor=#{cursor_flag}";
        let modes = self.cmd(&["display", "-p", "-t", self.target, format]);
        modes.trim().to_owned()
    }

    /// The pid of the program the session started.
    pub fn pane_pid(&self) -> i32 {
        let pid = self.cmd(&["display", "-p", "-t", self.target, "#{pane_pid}"]);
        pid.trim().parse().expect("pane pid")
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.target];
        args.extend_from_slice(keys);
        self.cmd(&args);
    }

    pub fn type_text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", self.target, "-l", text]);
    }

    /// Polls the screen until `pred` holds; panics with the screen if not.
    pub fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_modes(what, |s, _| pred(s)).0
    }

    /// Polls the screen and the modes until `pred(screen, modes)` holds.
    pub fn wait_modes(&self, what: &str, pred: impl Fn(&str, &str) -> bool) -> (String, String) {
        let start = Instant::now();
        loop {
            let (s, m) = (self.screen(), self.modes());
            if pred(&s, &m) {
                return (s, m);
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "timed out waiting for {what}; modes {m}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn wait_for(&self, needle: &str) -> String {
        self.wait(needle, |s| s.contains(needle))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
        if let Some(dir) = &self.state_dir {
            stop_servers(&dir.join("run"));
        }
    }
}

/// Ends every hive server with a pid file in `run`: SIGTERM, then SIGKILL
/// after two seconds.
pub fn stop_servers(run: &Path) {
    let pids: Vec<i32> = std::fs::read_dir(run)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pid"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
        .collect();
    for &pid in &pids {
        // SAFETY: kill(2) with a pid the server wrote.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let start = Instant::now();
    // SAFETY: signal 0 only checks that the process exists.
    while pids.iter().any(|&p| unsafe { libc::kill(p, 0) } == 0)
        && start.elapsed() < Duration::from_secs(2)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pid in &pids {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}
