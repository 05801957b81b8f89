//! A real OpenSSH server for the remote tests (issue 30): `sshd` on
//! 127.0.0.1 on a free port, with a host key and a client key made for the
//! test, the client key the only one authorized, and the "remote" user's
//! environment (HOME, XDG and hive dirs) in a directory of the test's own,
//! set by sshd's `SetEnv` so the far side's hive keeps apart from the near
//! side's. Stopped (with its connections and hive's master connections to
//! it) when dropped. Skips, with a message, where sshd is not installed.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian puts it; `.ci/run` installs openssh-server.
const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    pub port: u16,
    /// The test's ssh dir: keys, config, known hosts.
    pub dir: PathBuf,
    /// The remote user's HOME (and its XDG and hive dirs under it).
    pub remote_home: PathBuf,
    child: Child,
    /// Local control dirs whose master connections end with this server.
    masters: std::sync::Mutex<Vec<PathBuf>>,
}

/// The remote side's environment inside `home`.
pub fn remote_env(home: &Path) -> Vec<(String, PathBuf)> {
    vec![
        ("HOME".into(), home.to_owned()),
        ("HIVE_STATE_DIR".into(), home.join("state")),
        ("HIVE_DATA_DIR".into(), home.join("data")),
        ("XDG_CONFIG_HOME".into(), home.join("config")),
        ("XDG_CACHE_HOME".into(), home.join("cache")),
        ("XDG_STATE_HOME".into(), home.join("xstate")),
        ("XDG_DATA_HOME".into(), home.join("xdata")),
    ]
}

impl Sshd {
    /// Starts sshd in `dir`; `max_sessions` lowers sshd's MaxSessions.
    pub fn start(dir: &Path, max_sessions: Option<u32>) -> Option<Self> {
        if !Path::new(SSHD).exists() {
            eprintln!("SKIP: {SSHD} is not installed (apt-get install openssh-server)");
            return None;
        }
        let dir = dir.join("ssh");
        let remote_home = dir.parent().unwrap().join("remote");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&remote_home).unwrap();
        // sshd wants its privilege separation dir.
        let _ = std::fs::create_dir_all("/run/sshd");
        keygen(&dir.join("host_key"));
        keygen(&dir.join("id"));
        std::fs::copy(dir.join("id.pub"), dir.join("authorized_keys")).unwrap();
        let port = free_port();
        let env: Vec<String> = remote_env(&remote_home)
            .into_iter()
            .map(|(k, v)| format!("{k}={}", v.display()))
            .collect();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
             PermitRootLogin yes\nMaxSessions {max}\nLogLevel ERROR\nSetEnv {env}\n",
            d = dir.display(),
            max = max_sessions.unwrap_or(10),
            env = env.join(" "),
        );
        std::fs::write(dir.join("sshd_config"), config).unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
            .spawn()
            .expect("start sshd");
        let sshd = Self {
            port,
            dir,
            remote_home,
            child,
            masters: Default::default(),
        };
        sshd.wait_ready();
        Some(sshd)
    }

    fn wait_ready(&self) {
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "sshd did not listen: {}",
                std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The listener's pid (its sessions are below it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `HIVE_SSH` for this server: the test's key and known hosts, nothing
    /// of the user's ssh config, and masters that do not linger.
    pub fn ssh_command(&self) -> String {
        format!(
            "ssh -F /dev/null -i {d}/id -o IdentitiesOnly=yes -o UserKnownHostsFile={d}/known_hosts \
             -o StrictHostKeyChecking=no -o ControlPersist=5",
            d = self.dir.display()
        )
    }

    /// `ssh://user@127.0.0.1:port/path`.
    pub fn url(&self, path: &Path) -> String {
        format!("ssh://{}@127.0.0.1:{}{}", user(), self.port, path.display())
    }

    /// Ends the master connections in `control_dir` when the server stops.
    pub fn masters_in(&self, control_dir: PathBuf) {
        self.masters.lock().unwrap().push(control_dir);
    }

    /// Puts `script` (a shell script) where the remote looks for a copy of
    /// `bin`'s build: a hostile "hive" at the far end of the real sshd.
    #[allow(
        dead_code,
        reason = "the remote tests use it; the console bench does not"
    )]
    pub fn seed_script(&self, bin: &Path, script: &str) {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.remote_home.join("cache/hive/bin");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("hive-{}", build_hash(bin)));
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Puts this test binary's hive where the remote looks for a copy of
    /// this build (the copy path itself has a test of its own).
    pub fn seed_binary(&self, bin: &Path) {
        let hash = build_hash(bin);
        let dir = self.remote_home.join("cache/hive/bin");
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(bin, dir.join(format!("hive-{hash}"))).unwrap();
    }
}

/// The first 16 hex digits of `bin`'s sha256: its name in the remote cache.
fn build_hash(bin: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(bin)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)[..16].to_owned()
}

/// The pid of ssh's master connection whose socket is in `control_dir`
/// (`ssh -O check` says it).
pub fn master_pid(control_dir: &Path) -> Option<i32> {
    let socket = std::fs::read_dir(control_dir)
        .ok()?
        .flatten()
        .next()?
        .path();
    let out = Command::new("ssh")
        .args([
            "-o",
            &format!("ControlPath={}", socket.display()),
            "-O",
            "check",
            "x",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let pid = text.split("pid=").nth(1)?;
    pid.trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()
}

impl Drop for Sshd {
    fn drop(&mut self) {
        for dir in self.masters.lock().unwrap().iter() {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let _ = Command::new("ssh")
                    .args(["-o", &format!("ControlPath={}", e.path().display())])
                    .args(["-O", "exit", "x"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        super::tmux::stop_servers(&self.remote_home.join("state/run"));
    }
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen");
    assert!(status.success());
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The user the tests run as (sshd logs in as the same one).
pub fn user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
