//! No process outlives hive: a fake ACP agent starts a plain child, a
//! `setsid` child and a double-forked orphan in its own session; then hive is
//! ended — `kill -9` of the process the user started, `kill -9` of the real
//! hive under it, a clean exit, `kill -9` of the server a console started,
//! or `hive kill` after the terminal closed under the console (the pty's
//! master closed: the kernel's hangup, a detach that the server and its
//! agents outlive) — and none of them may survive.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::{fake_acp_config, hive};
use crate::support::procs::alive;

struct Agents {
    _tmp: tempfile::TempDir,
    config: PathBuf,
    pids_file: PathBuf,
}

fn setup() -> Agents {
    let tmp = tempfile::tempdir().unwrap();
    let pids_file = tmp.path().join("pids");
    let pids = pids_file.display().to_string();
    let config = fake_acp_config(tmp.path(), &[("FAKE_ACP_PIDS", &pids)], "");
    Agents {
        _tmp: tmp,
        config,
        pids_file,
    }
}

fn run(a: &Agents, prompt: &str, supervised: bool) -> Child {
    let dir = a.config.parent().unwrap();
    let mut cmd = hive(dir);
    cmd.args([
        "--config",
        a.config.to_str().unwrap(),
        "run",
        "--agent",
        "fake",
        prompt,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    if !supervised {
        cmd.env("HIVE_NO_SUPERVISOR", "1");
    }
    cmd.spawn().expect("hive starts")
}

/// Waits (generously bounded) for `f` to hold.
fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The agent and its three children, once the agent has started them.
fn spawned_pids(pids_file: &Path) -> Vec<i32> {
    wait_for("the agent's children", || written_pids(pids_file))
}

/// The agent and its three children, if the agent has written them all.
fn written_pids(pids_file: &Path) -> Option<Vec<i32>> {
    let text = std::fs::read_to_string(pids_file).ok()?;
    let pids: Vec<i32> = text
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    (pids.len() == 4).then_some(pids)
}

fn assert_none_survive(pids: &[i32]) {
    wait_for("every agent process to end", || {
        pids.iter().all(|&p| !alive(p)).then_some(())
    });
}

fn kill9(pid: i32) {
    // SAFETY: kill(2) on a pid this test started (or its child).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
}

#[test]
fn kill_9_of_hive_leaves_no_agent_process() {
    let a = setup();
    let mut child = run(&a, "spawnkids", true);
    let mut pids = spawned_pids(&a.pids_file);
    let real = hive::provider::reap::descendants(child.id() as i32);
    assert!(!real.is_empty());
    pids.extend(real);
    kill9(child.id() as i32);
    child.wait().unwrap();
    assert_none_survive(&pids);
}

#[test]
fn kill_9_of_the_real_hive_leaves_no_agent_process() {
    let a = setup();
    let mut child = run(&a, "spawnkids", true);
    let pids = spawned_pids(&a.pids_file);
    // The supervisor's only child is the real hive.
    let sup = child.id();
    let children = std::fs::read_to_string(format!("/proc/{sup}/task/{sup}/children")).unwrap();
    let real: Vec<i32> = children
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(real.len(), 1, "{children}");
    kill9(real[0]);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_none_survive(&pids);
}

#[test]
fn a_clean_exit_leaves_no_detached_child() {
    let a = setup();
    // Unsupervised: the real hive's own sweep must do it.
    let mut child = run(&a, "spawnkids-end", false);
    let pids = spawned_pids(&a.pids_file);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_none_survive(&pids);
}

/// hive's console on a pty of its own (its controlling terminal), read
/// without blocking so that closing the master is the only hold on it.
struct Terminal {
    master: Box<dyn portable_pty::MasterPty + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    screen: tui_term::vt100::Parser,
}

impl Terminal {
    fn start(dir: &Path, config: &Path) -> Self {
        use portable_pty::{CommandBuilder, PtySize, native_pty_system};
        let size = PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        };
        let pty = native_pty_system().openpty(size).unwrap();
        // `hive(dir)`'s program, directory and environment, on the pty.
        let plain = hive(dir);
        let mut cmd = CommandBuilder::new(plain.get_program());
        cmd.args(["--config", config.to_str().unwrap()]);
        cmd.cwd(plain.get_current_dir().unwrap());
        for (key, value) in plain.get_envs() {
            if let Some(value) = value {
                cmd.env(key, value);
            }
        }
        cmd.env("TERM", "xterm-256color");
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let fd = pty.master.as_raw_fd().unwrap();
        // SAFETY: fcntl(2) on the master fd this test owns.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            assert_eq!(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK), 0);
        }
        Self {
            master: pty.master,
            child,
            screen: tui_term::vt100::Parser::new(size.rows, size.cols, 0),
        }
    }

    /// Reads what hive wrote since the last call (so its writes never
    /// block) onto the screen; returns how many bytes that was.
    fn drain(&mut self) -> usize {
        let fd = self.master.as_raw_fd().unwrap();
        let mut buf = [0u8; 65536];
        let mut read = 0;
        loop {
            // SAFETY: read(2) into a buffer of the given length.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            match usize::try_from(n) {
                Ok(n) if n > 0 => {
                    self.screen.process(&buf[..n]);
                    read += n;
                }
                _ => return read,
            }
        }
    }

    fn shows(&mut self, text: &str) -> bool {
        self.drain();
        self.screen.screen().contents().contains(text)
    }

    fn type_line(&mut self, text: &str) {
        let fd = self.master.as_raw_fd().unwrap();
        let line = format!("{text}\r");
        // SAFETY: write(2) of a buffer of the given length.
        let n = unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
        assert_eq!(usize::try_from(n).ok(), Some(line.len()));
    }
}

/// The server's pid (the real one, under its supervisor), from its pid file.
fn server_pid(dir: &Path) -> i32 {
    let run = dir.join("state/run");
    wait_for("the server's pid file", || {
        std::fs::read_dir(&run)
            .ok()?
            .flatten()
            .find(|e| e.path().extension().is_some_and(|x| x == "pid"))
            .and_then(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
    })
}

/// Starts the console, sends `prompt` (which makes the fake agent start
/// its children), waits for `ready`, then closes the terminal: the console
/// ends, but the server and every agent process keep working (a closed
/// terminal is a detach); `hive kill` then ends the server, its supervisor
/// and every agent process, and the prompt is kept.
fn close_the_terminal(prompt: &str, ready: impl Fn(&mut Terminal) -> bool) {
    let a = setup();
    let dir = a.config.parent().unwrap();
    let mut term = Terminal::start(dir, &a.config);
    wait_for("the console", || term.shows("Message").then_some(()));
    term.type_line(prompt);
    let mut pids = wait_for("the agent's children", || {
        term.drain();
        written_pids(&a.pids_file)
    });
    wait_for("the console's state before the hangup", || {
        ready(&mut term).then_some(())
    });
    let server = server_pid(dir);
    // The server's parent is its supervisor.
    let supervisor = std::fs::read_to_string(format!("/proc/{server}/stat"))
        .ok()
        .and_then(|s| {
            s[s.rfind(')')? + 1..]
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        })
        .expect("the server's parent");
    pids.extend([server, supervisor]);
    pids.extend(hive::provider::reap::descendants(server));

    let Terminal {
        master, mut child, ..
    } = term;
    drop(master);
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    for &p in &pids {
        assert!(alive(p), "process {p} ended with the console: {pids:?}");
    }
    let killed = hive(dir)
        .args(["--config", a.config.to_str().unwrap(), "kill"])
        .output()
        .unwrap();
    assert!(killed.status.success(), "{killed:?}");
    assert_none_survive(&pids);
    // The pane's history, as the next start reads it.
    let history = super::history_dir(&dir.join("data"), "fake");
    let kept = std::fs::read_dir(&history)
        .unwrap()
        .flatten()
        .any(|f| std::fs::read_to_string(f.path()).is_ok_and(|s| s.contains(prompt)));
    assert!(kept, "the prompt is in no file of {}", history.display());
}

#[test]
fn closing_the_terminal_mid_turn_detaches_and_hive_kill_ends_every_agent_process() {
    close_the_terminal("spawnkids", |_| true);
}

/// Idle, the console writes nothing, so no failed write tells it the
/// terminal is gone: only the hangup does.
#[test]
fn closing_the_terminal_of_an_idle_console_detaches_and_hive_kill_ends_every_agent_process() {
    close_the_terminal("spawnkids-end", |term| {
        let idle = term.shows("fake-model · idle") && term.shows("spawnkids-end");
        // Quiet: nothing drawn between two looks.
        idle && {
            std::thread::sleep(Duration::from_millis(300));
            term.drain() == 0
        }
    });
}

/// `kill -9` of the server the console started: its supervisor sweeps
/// every agent process, and the console says the server is gone.
#[test]
fn kill_9_of_the_server_leaves_no_agent_process() {
    let a = setup();
    let dir = a.config.parent().unwrap();
    let mut term = Terminal::start(dir, &a.config);
    wait_for("the console", || term.shows("Message").then_some(()));
    term.type_line("spawnkids");
    let pids = wait_for("the agent's children", || {
        term.drain();
        written_pids(&a.pids_file)
    });
    kill9(server_pid(dir));
    assert_none_survive(&pids);
    let status = term.child.wait().unwrap();
    assert!(
        !status.success(),
        "the console saw nothing wrong: {status:?}"
    );
}

/// The same, with the agent in a bubblewrap box (issue 49): the real hive
/// killed with SIGKILL takes the box and everything in it (the box's pids
/// are its own, so the test finds them by their command lines).
#[test]
fn kill_9_of_hive_leaves_nothing_of_a_boxed_agent() {
    if !Path::new("/usr/bin/bwrap").exists() {
        eprintln!("SKIP: /usr/bin/bwrap is not installed (apt-get install bubblewrap)");
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    // The interpreter itself, and its prefix shown: a python3 of a version
    // manager lives under the home, which the box hides.
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable); print(sys.prefix)"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let (python, prefix) = (lines.next().unwrap(), lines.next().unwrap());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_acp.py");
    let pids_file = work.join("pids");
    let config = tmp.path().join("hive.toml");
    std::fs::write(
        &config,
        format!(
            "[sandbox]\nkind = \"bwrap\"\nread_only = [{prefix:?}]\n\n[[agent]]\nid = \"fake\"\n\
             provider = \"acp\"\ncommand = [{python:?}, {:?}]\ncwd = {:?}\n[agent.env]\n\
             FAKE_ACP_PIDS = {:?}\n",
            script.display().to_string(),
            work.display().to_string(),
            pids_file.display().to_string(),
        ),
    )
    .unwrap();
    let a = Agents {
        _tmp: tmp,
        config,
        pids_file,
    };
    let mut child = run(&a, "spawnkids", true);
    spawned_pids(&a.pids_file);
    // Everything under hive: the box and the agent's three sleeps.
    let real = hive::provider::reap::descendants(child.id() as i32);
    let sleeps = real
        .iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.starts_with("sleep\0"))
        })
        .count();
    assert_eq!(sleeps, 3, "the agent's children");
    let boxed = real.iter().any(|p| {
        std::fs::read_to_string(format!("/proc/{p}/cmdline"))
            .is_ok_and(|c| c.starts_with("bwrap\0") && c.contains("--die-with-parent"))
    });
    assert!(boxed, "the agent runs in a box");
    kill9(child.id() as i32);
    child.wait().unwrap();
    assert_none_survive(&real);
}
