//! Servers seen from outside: which one serves a config, starting one in
//! a session of its own (so it outlives the terminal that started it),
//! listing the running ones, stopping one.
//!
//! A server is named by its socket, `<name>.sock` in the socket dir
//! (`control::socket_dir`), the name being its project's label (its
//! directory for a `hive.toml`, `default` for the built-in config), tagged
//! with a hash of the config's path when another project's server has the
//! label (`control::server_name`). `<name>.pid` beside it holds its pid,
//! `<name>.project` its project. Running servers answer `hive ctl`'s
//! JSON line protocol, so `ls` and `kill` are two control calls.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::config::Config;
use crate::control::client::Client;
use crate::control::protocol::Call;
pub use crate::paths::name_of;

/// How long a new server may take to open its socket.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long `kill` waits for a server to end before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// The socket of the server for `config`.
pub fn socket_for(config: &Config) -> PathBuf {
    let dir = crate::control::socket_dir();
    let name = crate::control::socket_name(&dir, &config.source);
    dir.join(format!("{name}.sock"))
}

/// The socket named `name` (or a path, when it has a slash).
pub fn socket_named(name: &str) -> PathBuf {
    crate::control::socket_path_for(name, &crate::control::socket_dir())
}

/// Whether a server answers on `socket`.
pub fn is_live(socket: &Path) -> bool {
    UnixStream::connect(socket).is_ok()
}

/// Whether the server on `socket` is `config`'s project's.
pub fn serves(socket: &Path, config: &Config) -> bool {
    let dir = socket.parent().unwrap_or(Path::new("."));
    let project = crate::project::Project::of(&config.source);
    crate::control::owner_of(dir, &name_of(socket)).as_deref() == Some(project.key())
}

/// Starts `hive serve` for `config` in a session of its own (no terminal,
/// so closing this one does not reach it), its output appended to
/// hive.log, and waits until its project's server accepts connections;
/// returns its socket.
pub fn start(config: &Config, fresh: bool) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding hive's own executable")?;
    let mut cmd = Command::new(exe);
    cmd.arg("serve");
    // The config found here, whatever the server's own search would find.
    if let Some(p) = config.source.canonical_path() {
        cmd.arg("--config").arg(p);
    }
    if fresh {
        cmd.arg("--fresh");
    }
    let log = log_file();
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(
        log.as_ref().map_or_else(Stdio::null, |(f, _)| {
            f.try_clone().map_or_else(|_| Stdio::null(), Stdio::from)
        }),
    );
    // SAFETY: setsid(2) is async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().context("starting the hive server")?;
    let started = Instant::now();
    let socket = loop {
        // Named when it binds: another project's server may take the label
        // meanwhile.
        let socket = socket_for(config);
        if is_live(&socket) && serves(&socket, config) {
            break socket;
        }
        if let Some(status) = child.try_wait()? {
            let tail = log.as_ref().map(|(_, p)| tail_of(p)).unwrap_or_default();
            bail!("the hive server could not start ({status}){tail}");
        }
        if started.elapsed() > START_TIMEOUT {
            bail!(
                "the hive server did not open {} within {}s (see hive.log in {})",
                socket.display(),
                START_TIMEOUT.as_secs(),
                crate::paths::state_dir().display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // Reaped when it ends, so it never lingers as a zombie of this client.
    std::thread::spawn(move || child.wait());
    Ok(socket)
}

/// hive.log for a server's stderr (`log::open_log`), blocking as any file.
fn log_file() -> Option<(std::fs::File, PathBuf)> {
    let (file, path) = crate::log::open_log()?;
    // The server's stderr must block like any file, not fail with EAGAIN.
    let _ = set_blocking(&file);
    Some((file, path))
}

fn set_blocking(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The last lines of the log, where a server that failed said why.
fn tail_of(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut text);
    }
    let lines: Vec<&str> = text.lines().rev().take(3).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from(":");
    for l in lines.into_iter().rev() {
        out.push_str("\n  ");
        out.push_str(&crate::sanitize::neutralize(l));
    }
    out
}

/// A running server as `hive ls` shows it.
#[derive(Debug, Clone)]
pub struct Running {
    pub name: String,
    pub socket: PathBuf,
    /// Its answer to the `server` call.
    pub info: Value,
}

/// Every server answering in the socket dir, by name.
pub fn list() -> Vec<Running> {
    let dir = crate::control::socket_dir();
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for e in entries.flatten() {
        let socket = e.path();
        if socket.extension().is_none_or(|x| x != "sock") {
            continue;
        }
        if let Ok(info) = call(&socket, Call::Server) {
            out.push(Running {
                name: name_of(&socket),
                socket,
                info,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn call(socket: &Path, what: Call) -> anyhow::Result<Value> {
    let mut client = Client::connect(socket)?;
    Ok(client.call(what)?)
}

/// Stops the server on `socket` and every agent it runs: asks, waits for
/// it to end, and kills it (by its pid file) if it will not.
pub fn kill(socket: &Path) -> anyhow::Result<()> {
    let written = read_pid(socket);
    // After a crash the pid may be another process's now: only a hive
    // server that wrote this very file is waited for and killed (#53 item 9).
    let pid = written.filter(|&p| is_server_of(p, &socket.with_extension("pid")));
    let asked = call(socket, Call::Kill);
    if asked.is_err() && pid.is_none() {
        if let Some(p) = written {
            let _ = std::fs::remove_file(socket.with_extension("pid"));
            bail!(
                "no hive server answers on {}; its pid file named pid {p}, which is not that \
                 server any more (left alone; the stale file is removed)",
                socket.display()
            );
        }
        bail!("no hive server answers on {}", socket.display());
    }
    let started = Instant::now();
    while started.elapsed() < KILL_GRACE {
        if !alive(pid) && !is_live(socket) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some(pid) = pid {
        // SAFETY: kill(2) on the pid the server wrote.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let _ = std::fs::remove_file(socket);
    let _ = std::fs::remove_file(socket.with_extension("pid"));
    let _ = std::fs::remove_file(socket.with_extension("project"));
    Ok(())
}

fn read_pid(socket: &Path) -> Option<i32> {
    std::fs::read_to_string(socket.with_extension("pid"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether `pid` is a `hive serve` that was running when `pid_file` was
/// written, so the process that wrote it: a process started later got the
/// pid after the server ended (Linux, from /proc; elsewhere the pid is
/// taken as written).
fn is_server_of(pid: i32, pid_file: &Path) -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    let serve = std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|&b| b == 0).nth(1) == Some(b"serve".as_slice()));
    let written = std::fs::metadata(pid_file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    match (serve, written, started_at(pid)) {
        // Whole seconds on both sides: a second of slack.
        (true, Some(w), Some(s)) => s <= w.as_secs() + 1,
        _ => false,
    }
}

/// When `pid` started, in seconds since the epoch (/proc/<pid>/stat's
/// start time after boot, plus /proc/stat's boot time).
fn started_at(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which may hold spaces and ')'.
    let rest = stat.rsplit_once(')')?.1;
    let ticks: u64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    let boot: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf only reads a system constant.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    Some(boot + ticks / hz.max(1))
}

fn alive(pid: Option<i32>) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid.is_some_and(|p| unsafe { libc::kill(p, 0) } == 0)
}
