//! `hive ctl` end to end: the real `hive` console runs in tmux (private
//! server, every XDG/HIVE dir in a tempdir) on a test config of scripted
//! agents, and each test drives it with `hive ctl` subprocesses: every verb,
//! every error code and its exit status, `watch` of a turn started with
//! `send`, the socket's permissions, several servers and several consoles
//! of one server, cleanup on `hive kill`. Every server a test starts is
//! stopped when its lab goes. Skips with a message when tmux is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::tmux::stop_servers;

mod account;
mod approvals;
mod doors;
mod forge;
mod forge_parts;
mod handoff;
mod hosts;
mod moving;
mod notify;
mod panes;
mod projects;
mod repo_add;
mod teams;
mod workspace;

const TIMEOUT: Duration = Duration::from_secs(40);

struct Lab {
    dir: tempfile::TempDir,
    tmux: String,
    bin: PathBuf,
    /// The config each tmux session's console runs, for `stop`.
    sessions: std::cell::RefCell<Vec<(String, PathBuf)>>,
    /// More `NAME=value`s for the consoles (and so their servers).
    env: std::cell::RefCell<Vec<String>>,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Lab {
    /// A lab with the test config written, or `None` without tmux.
    fn new() -> Option<Self> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("SKIP: tmux is not installed");
            return None;
        }
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = tempfile::tempdir().expect("tempdir");
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl");
        let config = format!(
            r#"
[[agent]]
id = "echo"
provider = "script"
script = "{}"

[[agent]]
id = "stubborn"
provider = "script"
script = "{}"

[[agent]]
id = "broken"
provider = "script"
script = "{}"
"#,
            fixtures.join("echo.toml").display(),
            fixtures.join("stubborn.toml").display(),
            dir.path().join("missing.toml").display(),
        );
        std::fs::write(dir.path().join("ctltest.toml"), config).expect("write config");
        Some(Self {
            tmux: format!("hive-ctl-{}-{n}", std::process::id()),
            dir,
            bin: PathBuf::from(env!("CARGO_BIN_EXE_hive")),
            sessions: std::cell::RefCell::default(),
            env: std::cell::RefCell::default(),
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run_dir(&self) -> PathBuf {
        self.path("run")
    }

    fn state_dir(&self) -> PathBuf {
        self.path("hive_state_dir")
    }

    /// Where servers put their sockets and pid files: `run/` in the state
    /// dir, since `HIVE_STATE_DIR` is set (never `XDG_RUNTIME_DIR/hive`).
    fn socket_dir(&self) -> PathBuf {
        self.state_dir().join("run")
    }

    /// Starts a hive on the test config in tmux session `session`.
    fn launch(&self, session: &str, socket_name: &str) -> PathBuf {
        self.launch_with(session, &self.path("ctltest.toml"), socket_name)
    }

    /// Starts a console on `config` in tmux session `session` (which starts
    /// the config's server if none runs); waits for the server's socket.
    fn launch_with(&self, session: &str, config: &Path, socket_name: &str) -> PathBuf {
        self.launch_as(session, self.dir.path(), Some(config), socket_name)
    }

    /// [`Lab::launch_with`] with variables `env` in the console's (and so
    /// its server's) environment.
    fn launch_env(
        &self,
        session: &str,
        config: &Path,
        socket_name: &str,
        env: &[(&str, &str)],
    ) -> PathBuf {
        self.launch_full(session, self.dir.path(), Some(config), socket_name, env)
    }

    /// Starts a console as a user in project `dir` does: `hive` there,
    /// which finds `dir/hive.toml` itself.
    fn launch_in(&self, session: &str, dir: &Path, socket_name: &str) -> PathBuf {
        self.launch_as(session, dir, None, socket_name)
    }

    fn launch_as(
        &self,
        session: &str,
        cwd: &Path,
        config: Option<&Path>,
        socket_name: &str,
    ) -> PathBuf {
        self.launch_full(session, cwd, config, socket_name, &[])
    }

    fn launch_full(
        &self,
        session: &str,
        cwd: &Path,
        config: Option<&Path>,
        socket_name: &str,
        extra: &[(&str, &str)],
    ) -> PathBuf {
        let d = self.dir.path();
        let env = |name: &str| format!("{name}={}", d.join(name.to_ascii_lowercase()).display());
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.tmux, "-f", "/dev/null", "new-session", "-d"])
            .args(["-s", session, "-x", "120", "-y", "40", "-c"])
            .arg(cwd)
            .args(["-e", "TERM=xterm-256color"])
            .args(["-e", &format!("HOME={}", d.display())]);
        // Every directory hive writes to is the test's own.
        let private = [
            "HIVE_DATA_DIR",
            "HIVE_STATE_DIR",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
        ];
        for name in private {
            cmd.args(["-e", &env(name)]);
        }
        for var in self.env.borrow().iter() {
            cmd.args(["-e", var]);
        }
        for (name, value) in extra {
            cmd.args(["-e", &format!("{name}={value}")]);
        }
        cmd.args([
            "-e",
            &format!("XDG_RUNTIME_DIR={}", self.run_dir().display()),
        ])
        .arg(&self.bin);
        if let Some(config) = config {
            cmd.arg("--config").arg(config);
        }
        assert!(cmd.status().expect("start tmux").success());
        let config = config.map_or_else(|| cwd.join("hive.toml"), Path::to_owned);
        self.sessions
            .borrow_mut()
            .push((session.to_owned(), config));
        let socket = self.socket_dir().join(socket_name);
        self.wait_until("the control socket", || {
            UnixStream::connect(&socket).is_ok()
        });
        socket
    }

    /// Closes session `session`'s terminal: its console detaches, and the
    /// server lives on.
    fn detach(&self, session: &str) {
        let _ = Command::new("tmux")
            .args(["-L", &self.tmux, "kill-session", "-t", session])
            .output();
    }

    /// Closes the session and stops its console's server (`hive kill`).
    fn stop(&self, session: &str) {
        self.detach(session);
        let config = self
            .sessions
            .borrow()
            .iter()
            .find(|(s, _)| s == session)
            .map(|(_, c)| c.clone())
            .expect("a launched session");
        let out = self
            .hive_cmd(&["kill", "--config", config.to_str().unwrap()])
            .output()
            .expect("run hive kill");
        assert!(
            out.status.success(),
            "hive kill: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn wait_until(&self, what: &str, mut pred: impl FnMut() -> bool) {
        let start = Instant::now();
        while !pred() {
            assert!(start.elapsed() < TIMEOUT, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `hive ARGS` with the consoles' directories.
    fn hive_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("XDG_RUNTIME_DIR", self.run_dir())
            .env("HIVE_STATE_DIR", self.state_dir())
            .env("HIVE_DATA_DIR", self.path("hive_data_dir"))
            .env("XDG_CONFIG_HOME", self.path("xdg_config_home"))
            .env_remove("HIVE_SOCKET");
        for (k, v) in self.env.borrow().iter().filter_map(|v| v.split_once('=')) {
            cmd.env(k, v);
        }
        cmd
    }

    fn ctl_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.hive_cmd(&["ctl"]);
        cmd.args(args);
        cmd
    }

    /// Keys (tmux's names) to session `session`'s console.
    fn keys(&self, session: &str, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.tmux, "send-keys", "-t", session])
            .args(keys)
            .status()
            .expect("send-keys");
        assert!(status.success());
    }

    /// `text`, then Enter, typed into session `session`'s console.
    fn type_line(&self, session: &str, text: &str) {
        self.keys(session, &["-l", text]);
        self.keys(session, &["Enter"]);
    }

    /// The console's screen in tmux session `session`.
    fn screen(&self, session: &str) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.tmux, "capture-pane", "-p", "-t", session])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The CLIENTS column of `hive ls` for server `name`.
    fn clients(&self, name: &str) -> Option<u32> {
        let out = self.hive_cmd(&["ls"]).output().expect("run hive ls");
        let ls = String::from_utf8_lossy(&out.stdout).into_owned();
        let row = ls
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))?;
        row.split_whitespace().nth(4)?.parse().ok()
    }

    fn ctl(&self, args: &[&str]) -> Out {
        let out = self.ctl_cmd(args).output().expect("run hive ctl");
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).trim_end().to_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `ctl` that must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.ctl(args);
        assert_eq!(out.code, 0, "hive ctl {args:?}: {}", out.stderr);
        out.stdout
    }

    /// `ctl` that must fail with `code` and name `name` on stderr.
    fn fails(&self, args: &[&str], code: i32, name: &str) -> Out {
        let out = self.ctl(args);
        assert_eq!(out.code, code, "hive ctl {args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(name),
            "hive ctl {args:?}: {}",
            out.stderr
        );
        out
    }

    fn status(&self, pane: &str) -> Value {
        serde_json::from_str(&self.ok(&["status", pane, "--json"])).expect("status json")
    }
}

impl Drop for Lab {
    /// Closes every console, then stops every server they started (a
    /// closed terminal only detaches).
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.tmux, "kill-server"])
            .output();
        stop_servers(&self.socket_dir());
    }
}

#[test]
fn ctl_verbs_drive_a_running_hive() {
    let Some(lab) = Lab::new() else { return };
    lab.launch("hive", "ctltest.sock");

    let list = lab.ok(&["list"]);
    assert!(list.contains("echo") && list.contains("idle"), "{list}");
    let broken = list.lines().find(|l| l.starts_with("broken")).expect(&list);
    assert!(broken.contains("failed"), "{list}");
    let panes: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    let ids: Vec<_> = panes["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["echo", "stubborn", "broken"]);
    assert_eq!(panes["panes"][0]["alive"], true);
    assert_eq!(panes["panes"][2]["alive"], false);
    assert!(
        panes["panes"][2]["failed"]
            .as_str()
            .unwrap()
            .contains("missing.toml")
    );
    let status = lab.ok(&["status", "echo"]);
    assert!(
        status.contains("provider:  script") && status.contains("state:     idle"),
        "{status}"
    );

    // `watch` sees a turn that `send` starts, from create to turn_complete.
    let mut watch = lab
        .ctl_cmd(&["watch", "echo", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(watch.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.contains("watching"), "{line}");

    let turn = lab.ok(&["send", "echo", "hello", "there"]);
    assert!(turn.starts_with("turn"), "{turn}");
    let answer = lab.ok(&["wait", &turn]);
    assert!(
        answer.starts_with("Reply to: hello there\n\nThis reply"),
        "{answer}"
    );

    let mut events = Vec::new();
    for line in BufReader::new(watch.stdout.take().unwrap()).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let done = v["type"] == "turn_complete" && v["turn_id"] == turn.as_str();
        events.push(v);
        if done {
            break;
        }
    }
    watch.kill().unwrap();
    watch.wait().unwrap();
    let of_turn: Vec<_> = events
        .iter()
        .filter(|e| e["turn_id"] == turn.as_str())
        .collect();
    assert!(
        of_turn.iter().all(|e| e.get("pane").is_none()),
        "one pane: run --json lines"
    );
    assert_eq!(
        of_turn
            .iter()
            .filter(|e| e["type"] == "turn_started")
            .count(),
        1
    );
    let reply: Vec<_> = of_turn
        .iter()
        .filter(|e| e["type"] == "message" && e["origin"] == "agent")
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(reply.first(), Some(&"create"), "{events:?}");
    assert_eq!(reply.last(), Some(&"complete"), "{events:?}");
    let last = of_turn.last().unwrap();
    assert_eq!(last["type"], "turn_complete");
    assert_eq!(last["status"], "completed");

    let history = lab.ok(&["history", "echo"]);
    assert!(
        history.contains("hello there") && history.contains("Reply to: hello there"),
        "{history}"
    );

    // cancel: the slow turn ends cancelled and `wait` says so.
    // A `send` to a busy pane queues and answers when its turn starts.
    let slow = lab.ok(&["send", "echo", "something slow"]);
    let queued = lab
        .ctl_cmd(&["send", "echo", "queued behind it"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    lab.wait_until("the message in the queue", || {
        lab.status("echo")["queue"] == serde_json::json!(["queued behind it"])
    });
    let listed = lab.ok(&["list"]);
    assert!(listed.contains(" 1 queued"), "{listed}");
    assert_eq!(lab.ok(&["cancel", "echo"]), slow);
    let out = lab.fails(&["wait", &slow], 1, "cancelled");
    assert!(out.stdout.len() < 40, "cut short: {}", out.stdout);
    let next = queued.wait_with_output().unwrap();
    assert!(next.status.success());
    let next = String::from_utf8_lossy(&next.stdout).trim().to_owned();
    assert_ne!(next, slow);
    assert!(
        lab.ok(&["wait", &next])
            .starts_with("Reply to: queued behind it")
    );

    // --steer on an agent that can be interrupted: the running turn ends
    // cancelled and the message starts its own turn at once.
    let slow = lab.ok(&["send", "echo", "another slow one"]);
    let steered = lab.ok(&["send", "--steer", "echo", "steered in"]);
    assert_ne!(steered, slow);
    lab.fails(&["wait", &slow], 1, "cancelled");
    assert!(
        lab.ok(&["wait", &steered])
            .starts_with("Reply to: steered in")
    );

    // A failed turn: exit 1 with the error.
    let fail = lab.ok(&["send", "echo", "please fail"]);
    let out = lab.fails(&["wait", &fail, "--json"], 1, "");
    let w: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(w["status"], "error");
    assert_eq!(w["error_code"], "scripted_failure");

    // A crash kills the agent: sending fails until `restart`.
    let crash = lab.ok(&["send", "echo", "crash now"]);
    lab.fails(&["wait", &crash], 1, "failed");
    lab.wait_until("the pane to be dead", || {
        lab.status("echo")["alive"] == false
    });
    lab.fails(&["send", "echo", "hi"], 6, "PROCESS_CRASH");
    assert_eq!(lab.ok(&["restart", "echo"]), "restarting echo");
    lab.wait_until("the pane to be back", || {
        lab.status("echo")["alive"] == true
    });
    let again = lab.ok(&["send", "echo", "back again"]);
    assert!(
        lab.ok(&["wait", &again])
            .starts_with("Reply to: back again")
    );
    assert!(lab.status("echo")["turns"].as_u64().unwrap() >= 8);
}

/// `hive ctl list | head -1`: a reader that closed its end ends ctl
/// quietly (status 0, nothing on stderr), as other CLIs do.
#[test]
fn a_closed_output_ends_ctl_quietly() {
    let Some(lab) = Lab::new() else { return };
    lab.launch("hive", "ctltest.sock");
    for args in [&["list"][..], &["list", "--json"], &["status", "echo"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = lab.ctl_cmd(args).stdout(writer).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "hive ctl {args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "hive ctl {args:?}"
        );
    }
}

#[test]
fn ctl_errors_map_to_codes_and_exit_statuses() {
    let Some(lab) = Lab::new() else { return };
    let socket = lab.launch("hive", "ctltest.sock");

    lab.fails(&["status", "nope"], 3, "SESSION_NOT_FOUND");
    let out = lab.fails(&["send", "nope", "hi"], 3, "SESSION_NOT_FOUND");
    assert!(
        out.stderr.contains("panes: echo, stubborn, broken"),
        "{}",
        out.stderr
    );
    lab.fails(&["wait", "turn-bogus"], 4, "TURN_NOT_FOUND");
    lab.fails(&["cancel", "stubborn"], 5, "UNSUPPORTED_CLI_TYPE");
    lab.fails(
        &["send", "--steer", "stubborn", "now"],
        5,
        "UNSUPPORTED_CLI_TYPE",
    );
    lab.fails(&["send", "broken", "hi"], 6, "PROCESS_CRASH");
    lab.fails(&["restart", "broken"], 6, "PROCESS_CRASH");
    lab.fails(&["cancel", "echo"], 7, "INVALID_STATE");
    lab.fails(&["restart", "echo"], 7, "INVALID_STATE");
    lab.fails(&["send", "echo", "   "], 2, "BAD_REQUEST");

    // Raw protocol: a malformed line and a request missing a field.
    let mut s = UnixStream::connect(&socket).unwrap();
    s.write_all(
        b"this is not json\n{\"id\":5,\"method\":\"status\"}\n{\"id\":6,\"method\":\"list\"}\n",
    )
    .unwrap();
    let mut lines = BufReader::new(s).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let a = next();
    assert_eq!(a["id"], Value::Null);
    assert_eq!(a["error"]["code"], "BAD_REQUEST");
    let b = next();
    assert_eq!(b["id"], 5);
    assert_eq!(b["error"]["code"], "BAD_REQUEST");
    let c = next();
    assert_eq!(c["id"], 6);
    assert!(c["result"]["panes"].is_array());

    // No hive at the given place, or none at all.
    lab.fails(&["--socket", "elsewhere", "list"], 9, "UNAVAILABLE");
    let out = lab
        .ctl_cmd(&["list"])
        .env("HIVE_STATE_DIR", lab.path("empty"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(9));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no running hive"));
}

#[test]
fn ctl_socket_is_private_and_per_hive() {
    let Some(lab) = Lab::new() else { return };
    let first = lab.launch("one", "ctltest.sock");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&lab.socket_dir()), 0o700);
    assert_eq!(mode(&first), 0o600);
    assert!(
        !lab.run_dir().join("hive").exists(),
        "with HIVE_STATE_DIR set, nothing goes to XDG_RUNTIME_DIR/hive"
    );

    // A second console on the same config attaches to the same server: one
    // socket, two clients, and `hive ctl` has no choice to ask about.
    lab.launch("two", "ctltest.sock");
    lab.wait_until("two clients on one server", || {
        lab.clients("ctltest") == Some(2)
    });
    let sockets = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(lab.socket_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sock"))
            .collect();
        names.sort();
        names
    };
    assert_eq!(sockets(), ["ctltest.sock"]);
    assert!(lab.ok(&["list"]).contains("echo"));
    // Closing one console's terminal only detaches it.
    lab.detach("two");
    lab.wait_until("one client left", || lab.clients("ctltest") == Some(1));
    assert!(UnixStream::connect(&first).is_ok(), "the server lives on");

    // Another config has a server of its own: with two, `hive ctl` asks
    // which one, and --socket / HIVE_SOCKET / --config / ./hive.toml pick.
    let proj = lab.path("proj");
    std::fs::create_dir(&proj).unwrap();
    let solo = std::fs::read_to_string(lab.path("ctltest.toml"))
        .unwrap()
        .replacen("id = \"echo\"", "id = \"solo\"", 1);
    std::fs::write(proj.join("hive.toml"), solo).unwrap();
    let third = lab.launch_with("three", &proj.join("hive.toml"), "proj.sock");
    assert_eq!(sockets(), ["ctltest.sock", "proj.sock"]);
    let out = lab.fails(&["list"], 9, "2 hives are running");
    assert!(out.stderr.contains("ctltest, proj"), "{}", out.stderr);
    // The first column of `hive ctl list`: the panes.
    let first_pane = |list: &str| {
        list.lines()
            .nth(1)
            .and_then(|l| l.split_whitespace().next())
            .map(str::to_owned)
    };
    let by_name = lab.ok(&["--socket", "proj", "list"]);
    assert_eq!(first_pane(&by_name).as_deref(), Some("solo"), "{by_name}");
    let config = lab.path("ctltest.toml");
    let by_config = lab.ok(&["--config", config.to_str().unwrap(), "list"]);
    assert_eq!(
        first_pane(&by_config).as_deref(),
        Some("echo"),
        "{by_config}"
    );
    let here = lab.ctl_cmd(&["list"]).current_dir(&proj).output().unwrap();
    assert!(here.status.success());
    assert!(String::from_utf8_lossy(&here.stdout).contains("solo"));
    let by_env = lab
        .ctl_cmd(&["list"])
        .env("HIVE_SOCKET", &third)
        .output()
        .unwrap();
    assert!(by_env.status.success());
    assert!(String::from_utf8_lossy(&by_env.stdout).contains("solo"));
    // `hive kill` stops a server and removes its socket.
    lab.stop("three");
    lab.wait_until("the third socket to be removed", || !third.exists());
    assert!(lab.ok(&["list"]).contains("echo"), "one hive left: found");

    // Another user is refused by the peer-credential check even when the
    // file modes would let it in (root can switch users; others skip).
    if unsafe_is_root() {
        for dir in [lab.dir.path().to_owned(), lab.state_dir(), lab.socket_dir()] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::set_permissions(&first, std::fs::Permissions::from_mode(0o666)).unwrap();
        use std::os::unix::process::CommandExt;
        let out = lab
            .ctl_cmd(&["--socket", first.to_str().unwrap(), "list"])
            .env("HOME", "/tmp")
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("Permission denied (os error 13)") {
            eprintln!("SKIP: uid 65534 cannot reach the test's files: {stderr}");
        } else {
            assert_eq!(out.status.code(), Some(8), "{stderr}");
            assert!(stderr.contains("PERMISSION_DENIED"), "{stderr}");
        }
    } else {
        eprintln!("SKIP: not root, cannot connect as another uid (peer_allowed is unit-tested)");
    }

    lab.stop("one");
    lab.wait_until("the first socket to be removed", || !first.exists());
    assert!(sockets().is_empty(), "{:?}", sockets());
    lab.fails(&["list"], 9, "no running hive");
}
fn unsafe_is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

/// `hive mcp` against a real server (started by its console): its `op`
/// calls go through the control socket to the server's ops host, as the
/// pane `--agent` names
/// (here `architect`, which may message `echo` only).
#[test]
fn hive_mcp_reaches_the_running_console_as_its_pane() {
    let Some(lab) = Lab::new() else { return };
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let config = lab.path("mcptest.toml");
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nid = \"architect\"\nprovider = \"script\"\nscript = \"{e}\"\nhive_tools = true\ncan_message = [\"echo\"]\n\n[[agent]]\nid = \"echo\"\nprovider = \"script\"\nscript = \"{e}\"\n",
            e = echo.display()
        ),
    )
    .unwrap();
    let socket = lab.launch_with("mcp", &config, "mcptest.sock");

    let mut mcp = Command::new(&lab.bin)
        .arg("mcp")
        .arg("--socket")
        .arg(&socket)
        .args(["--agent", "architect"])
        .env_remove("HIVE_SOCKET")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = mcp.stdin.take().unwrap();
    let mut stdout = BufReader::new(mcp.stdout.take().unwrap());
    let mut rpc = |id: u64, method: &str, params: Value| -> Value {
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{msg}").unwrap();
        if method == "initialize" {
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )
            .unwrap();
        }
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "hive mcp hung up");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v["result"].clone();
            }
        }
    };
    let init = rpc(
        1,
        "initialize",
        serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ctl-test", "version": "0"}}),
    );
    assert_eq!(init["serverInfo"]["name"], "hive");
    let calls = serde_json::json!({"calls": [
        {"op": "agent.send", "args": {"agent": "echo", "text": "hi from mcp"}},
        {"op": "agent.wait", "args": {"agent": "echo", "timeout_secs": 30}},
        {"op": "agent.send", "args": {"agent": "nobody", "text": "x"}}
    ]});
    let r = rpc(
        2,
        "tools/call",
        serde_json::json!({"name": "hive_call", "arguments": calls}),
    );
    let results: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(results[1]["result"]["status"], "completed", "{results}");
    let answer = results[1]["result"]["text"].as_str().unwrap();
    assert!(
        answer.starts_with(
            "Reply to: [message from architect (architect) via hive, m1]\nhi from mcp"
        ),
        "{answer}"
    );
    assert_eq!(results[2]["error"]["code"], "unknown_agent");
    drop(stdin);
    mcp.wait().unwrap();
    lab.stop("mcp");
}
