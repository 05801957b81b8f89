//! hive over OpenSSH (issue 30): a console (or `hive ctl`) on this machine
//! talks to the hive server of a project on another machine through `ssh
//! -T`, with `hive relay` on the far side copying bytes between the ssh
//! channel and that server's socket. No network protocol of hive's own and
//! no open port: the protocol is the local one (src/protocol/), the transport
//! and its trust are ssh's.
//!
//! What the remote sends is read as an agent's output is: sanitized before
//! it reaches the terminal, its paths never opened here (docs/remote.md).

pub(crate) mod carry;
pub mod install;
pub mod relay;
pub mod ssh;
pub mod target;

pub use install::Install;
pub use ssh::Ssh;
pub use target::Target;

// In this file, not ssh.rs: ssh.rs is the exec transport's ssh kind,
// which the config's agents name, and knows nothing of hive's runtime dir.
impl Ssh {
    /// `for_target` with hive's own control dir (`remote::control_dir`),
    /// made private first if it is missing: every caller gets the same
    /// master connections.
    pub fn prepared(target: &Target) -> Result<Self, ssh::SshError> {
        let dir = control_dir();
        crate::control::prepare_dir(&dir).map_err(|source| ssh::SshError::ControlDir {
            path: dir.display().to_string(),
            source,
        })?;
        Self::for_target(target, &dir)
    }
}

/// The master connections' socket dir: hive's private runtime dir.
pub fn control_dir() -> std::path::PathBuf {
    crate::control::socket_dir().join("ssh")
}

/// The shell command that runs `hive relay` with `bin` in the target's
/// project directory.
pub fn relay_command(target: &Target, bin: &str, start: bool) -> String {
    let start = if start { " --start" } else { "" };
    format!(
        "{} && exec {} relay{start}",
        target.cd_command(),
        target::quote(bin)
    )
}
