//! The ssh command line hive runs: `ssh`, or `HIVE_SSH` (a command line,
//! as git's `GIT_SSH_COMMAND`), or a `[[host]]`'s `ssh_command`; then the
//! options hive needs: no terminal (`-T`: the channel carries frames), one
//! master connection per host (ControlMaster, its socket in hive's private
//! runtime dir, so every console, `hive ctl` call and reconnect to a host
//! shares one TCP connection), keep-alives that notice a dead link. The
//! user's own options come first, so they win (ssh keeps the first value of
//! an option).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::target::Target;
use crate::exec::command::{Inner, Wrapped};
use crate::exec::shell;

/// Environment variable with the ssh command line.
pub const SSH_ENV: &str = "HIVE_SSH";

/// How long an idle master connection stays up after its last session.
const PERSIST_SECS: u32 = 600;

/// Why the ssh command line cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    #[error("{SSH_ENV} / ssh_command `{0}` is not a command line (unbalanced quotes?)")]
    Unparsable(String),
    #[error("{SSH_ENV} / ssh_command is empty")]
    Empty,
    #[error("the ssh control dir {path}: {source}")]
    ControlDir {
        path: String,
        source: std::io::Error,
    },
}

/// The ssh program and its user-given options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ssh {
    argv: Vec<String>,
    control_dir: PathBuf,
}

impl Ssh {
    /// `HIVE_SSH` if set, else the target's `ssh_command`, else `ssh`; the
    /// master connections' sockets go in `control_dir` (made 0700).
    pub fn for_target(target: &Target, control_dir: &Path) -> Result<Self, SshError> {
        let env = std::env::var(SSH_ENV).ok().filter(|s| !s.trim().is_empty());
        Self::from_line(
            env.as_deref().or(target.ssh_command.as_deref()),
            control_dir,
        )
    }

    fn from_line(line: Option<&str>, control_dir: &Path) -> Result<Self, SshError> {
        let argv = match line {
            None => vec!["ssh".to_owned()],
            Some(l) => shlex::split(l).ok_or_else(|| SshError::Unparsable(l.to_owned()))?,
        };
        if argv.is_empty() {
            return Err(SshError::Empty);
        }
        Ok(Self {
            argv,
            control_dir: control_dir.to_owned(),
        })
    }

    /// The master connections' socket dir.
    pub fn control_dir(&self) -> &Path {
        &self.control_dir
    }

    /// The arguments for running `remote` (a POSIX shell command line) on
    /// `target`; `batch`: never prompt (a password prompt inside the
    /// console's raw terminal would hang it).
    pub fn args(&self, target: &Target, batch: bool, remote: &str) -> Vec<String> {
        let mut args: Vec<String> = self.argv[1..].to_vec();
        let control = self.control_dir.join("%C");
        for opt in [
            "ControlMaster=auto".to_owned(),
            format!("ControlPath={}", control.display()),
            format!("ControlPersist={PERSIST_SECS}"),
            "ServerAliveInterval=5".to_owned(),
            "ServerAliveCountMax=3".to_owned(),
            "LogLevel=ERROR".to_owned(),
        ] {
            args.push("-o".to_owned());
            args.push(opt);
        }
        if batch {
            args.extend(["-o".to_owned(), "BatchMode=yes".to_owned()]);
        }
        args.push("-T".to_owned());
        if let Some(p) = target.port {
            args.extend(["-p".to_owned(), p.to_string()]);
        }
        args.push("--".to_owned());
        args.push(target.destination.clone());
        args.push(remote.to_owned());
        args
    }

    /// The ssh program (`ssh`, or the first word of `HIVE_SSH`).
    pub fn program(&self) -> &str {
        &self.argv[0]
    }

    /// A `Command` for `remote` on `target` (stdio left to the caller),
    /// through the exec transport's ssh kind: a console's relay, the probe
    /// and copy of hive, and an agent on an ssh host share one command line.
    pub fn command(&self, target: &Target, batch: bool, remote: &str) -> Command {
        SshHost::new(self.clone(), target.clone(), batch).command(remote)
    }

    /// Asks the master connection to `target` to end (`ssh -O exit`), if
    /// one runs: a test's sshd, or a user's `hive kill`, leaves none behind.
    pub fn close_master(&self, target: &Target) {
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]);
        cmd.arg("-o").arg(format!(
            "ControlPath={}",
            self.control_dir.join("%C").display()
        ));
        if let Some(p) = target.port {
            cmd.arg("-p").arg(p.to_string());
        }
        cmd.args(["-O", "exit", "--", &target.destination]);
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let _ = cmd.status();
    }
}

/// The exec transport's ssh kind (issue 49): the ssh command line and
/// the address. The far side's shell reads the command line, so an
/// agent's command is quoted into one (`exec::shell::exec_line`); its
/// environment crosses on that line (sshd accepts no other by default),
/// which this machine's `ps` shows (docs/hosts.md). A terminal pane gets
/// `-tt` in place of `-T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshHost {
    pub ssh: Ssh,
    pub target: Target,
    /// Never prompt (a prompt in a pane, or in the console's raw terminal,
    /// would hang it).
    pub batch: bool,
}

impl SshHost {
    pub fn new(ssh: Ssh, target: Target, batch: bool) -> Self {
        Self { ssh, target, batch }
    }

    pub fn program(&self) -> &str {
        self.ssh.program()
    }

    /// The command line that runs the shell line `remote` there: how the
    /// console reaches `hive relay`, and the probe and copy of hive.
    pub fn shell(&self, remote: &str, tty: bool) -> Wrapped {
        let mut args = self.ssh.args(&self.target, self.batch, remote);
        if tty && let Some(t) = args.iter_mut().find(|a| *a == "-T") {
            "-tt".clone_into(t);
        }
        Wrapped {
            program: self.ssh.program().to_owned(),
            args,
            cwd: None,
            env: Default::default(),
        }
    }

    /// An agent's command on the host, in the host's project directory
    /// (a path of this machine means nothing there).
    pub fn wrap(&self, inner: &Inner) -> Wrapped {
        let exec = shell::exec_line(inner.program, inner.args, inner.env);
        self.shell(&shell::in_dir(&self.target.cd_command(), &exec), inner.tty)
    }

    /// A `std::process::Command` for `shell(remote)` (stdio left to the
    /// caller).
    pub fn command(&self, remote: &str) -> std::process::Command {
        let w = self.shell(remote, false);
        let mut cmd = std::process::Command::new(&w.program);
        cmd.args(&w.args);
        cmd
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn target() -> Target {
        Target::parse("ssh://ann@box:2200/srv/p").unwrap()
    }

    #[test]
    fn user_options_come_first_and_win() {
        let ssh = Ssh::from_line(
            Some("ssh -F /dev/null -o 'ControlMaster=no'"),
            Path::new("/r"),
        )
        .unwrap();
        let args = ssh.args(&target(), true, "echo hi");
        assert_eq!(&args[..4], ["-F", "/dev/null", "-o", "ControlMaster=no"]);
        let at = |s: &str| args.iter().position(|a| a == s).unwrap();
        assert!(at("ControlMaster=no") < at("ControlMaster=auto"));
        assert!(args.contains(&"ControlPath=/r/%C".to_owned()));
        assert!(args.contains(&"BatchMode=yes".to_owned()));
        assert_eq!(args[args.len() - 4..], ["2200", "--", "ann@box", "echo hi"]);
        // The command line of a prompt-free connection: no BatchMode.
        assert!(
            !ssh.args(&target(), false, "x")
                .contains(&"BatchMode=yes".to_owned())
        );
    }

    #[test]
    fn a_broken_command_line_is_said() {
        assert!(matches!(
            Ssh::from_line(Some("ssh -o 'x"), Path::new("/r")),
            Err(SshError::Unparsable(_))
        ));
        assert!(matches!(
            Ssh::from_line(Some("  "), Path::new("/r")),
            Err(SshError::Empty)
        ));
    }

    fn host() -> SshHost {
        let target = Target::parse("ssh://ann@box:2200/srv/p").unwrap();
        let ssh = Ssh::for_target(&target, Path::new("/r")).unwrap();
        SshHost::new(ssh, target, true)
    }

    #[test]
    fn an_agent_runs_in_the_hosts_project_through_the_relays_options() {
        let env = BTreeMap::from([("K".to_owned(), "v".to_owned())]);
        let args = vec!["--print".to_owned()];
        let inner = Inner {
            program: "claude",
            args: &args,
            cwd: Some(Path::new("/home/me/here")),
            env: &env,
            tty: false,
        };
        let w = host().wrap(&inner);
        let relay = host().shell("true", false);
        // The agent's line is the relay's, but for the remote command.
        assert_eq!(
            w.args[..w.args.len() - 1],
            relay.args[..relay.args.len() - 1]
        );
        assert_eq!(
            w.args.last().unwrap(),
            "cd '/srv/p' && exec env 'K=v' 'claude' '--print'"
        );
        assert!(w.args.contains(&"ControlMaster=auto".to_owned()));
        assert!(w.args.contains(&"-T".to_owned()));
        // A terminal pane asks ssh for one.
        let tty = host().wrap(&Inner { tty: true, ..inner });
        assert!(tty.args.contains(&"-tt".to_owned()) && !tty.args.contains(&"-T".to_owned()));
    }
}
