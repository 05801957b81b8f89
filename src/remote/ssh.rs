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

    /// `for_target` with hive's own control dir (`remote::control_dir`),
    /// made private first if it is missing: every caller gets the same
    /// master connections.
    pub fn prepared(target: &Target) -> Result<Self, SshError> {
        let dir = super::control_dir();
        crate::control::prepare_dir(&dir).map_err(|source| SshError::ControlDir {
            path: dir.display().to_string(),
            source,
        })?;
        Self::for_target(target, &dir)
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

    /// A `Command` for `remote` on `target` (stdio left to the caller).
    pub fn command(&self, target: &Target, batch: bool, remote: &str) -> Command {
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(self.args(target, batch, remote));
        cmd
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

#[cfg(test)]
mod tests {
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
}
