//! The files of a moving pane across ssh (issue 50, `/move @HOST`): a
//! package directory copied to a host (each file streamed over the
//! host's ssh command line into a private directory there, `umask 077`)
//! or back from it, and the steps asked of the host's hive server as
//! `hive ctl` lines through `hive relay` (started there when it is not
//! running). Everything here blocks: the server runs it on its blocking
//! pool, never on its loop.

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use super::{Install, Ssh, Target};
use crate::control::client::Client;
use crate::control::protocol::Call;

/// Where moving panes' packages wait on a host, below its cache dir.
const INBOX: &str = "hive/move";

/// A step of a move that failed, in words for the user.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct CarryError(pub(crate) String);

fn failed(what: impl std::fmt::Display) -> CarryError {
    CarryError(crate::sanitize::neutralize(&what.to_string()).into_owned())
}

/// A host's hive, reached over ssh: its command line and its binary.
pub(crate) struct HostLink {
    ssh: Ssh,
    target: Target,
    bin: String,
}

impl HostLink {
    /// Finds the host's hive (copying none: `hive attach --install` does).
    pub(crate) fn open(target: &Target) -> Result<Self, CarryError> {
        let ssh = Ssh::prepared(target).map_err(failed)?;
        let bin = super::install::locate(&ssh, target, Install::No)
            .map_err(|e| failed(format!("{}: {e:#}", target.name)))?;
        Ok(Self {
            ssh,
            target: target.clone(),
            bin,
        })
    }

    /// A shell command on the host, `stdin` fed from `input`; its stdout.
    fn run(&self, remote: &str, input: Option<&Path>) -> Result<Vec<u8>, CarryError> {
        let stdin = match input {
            Some(p) => Stdio::from(
                std::fs::File::open(p).map_err(|e| failed(format!("{}: {e}", p.display())))?,
            ),
            None => Stdio::null(),
        };
        let out = self
            .ssh
            .command(&self.target, true, remote)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| failed(format!("running ssh: {e}")))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            let said = said.trim();
            return Err(failed(if said.is_empty() {
                format!("ssh to {} ended with {}", self.target.name, out.status)
            } else {
                format!("{}: {said}", self.target.name)
            }));
        }
        Ok(out.stdout)
    }

    /// Copies the files of the package directory `dir` to the host, into
    /// a new private directory named `name`; its path there.
    pub(crate) fn send_dir(&self, dir: &Path, name: &str) -> Result<String, CarryError> {
        let name = target_word(name)?;
        let there = format!("\"${{XDG_CACHE_HOME:-$HOME/.cache}}\"/{INBOX}/{name}");
        let made = self.run(
            &format!("umask 077 && mkdir -p {there} && cd {there} && pwd"),
            None,
        )?;
        let remote = String::from_utf8_lossy(&made).trim().to_owned();
        if remote.is_empty() {
            return Err(failed(format!("{}: no directory made", self.target.name)));
        }
        for file in files_of(dir)? {
            let file_name = file.file_name().to_string_lossy().into_owned();
            let to = format!(
                "{}/{}",
                super::target::quote(&remote),
                target_word(&file_name)?
            );
            self.run(&format!("umask 077 && cat > {to}"), Some(&file.path()))?;
        }
        Ok(remote)
    }

    /// Copies the host's package directory `remote` (a path there) into
    /// the local directory `dir`, file by file (`names`).
    pub(crate) fn fetch_dir(
        &self,
        remote: &str,
        names: &[String],
        dir: &Path,
    ) -> Result<(), CarryError> {
        for name in names {
            let from = format!("{}/{}", super::target::quote(remote), target_word(name)?);
            let bytes = self.run(&format!("cat {from}"), None)?;
            crate::private::write_own(&dir.join(name), &bytes)
                .map_err(|e| failed(format!("{}: {e}", dir.join(name).display())))?;
        }
        Ok(())
    }

    /// Removes the host's package directory `remote` (a path in its inbox).
    pub(crate) fn remove_dir(&self, remote: &str) {
        // Only a package directory: one in a host's inbox, or one its
        // server packed in its runtime dir (`moves/`).
        if remote.contains(&format!("/{INBOX}/")) || remote.contains("/moves/") {
            let _ = self.run(&format!("rm -rf {}", super::target::quote(remote)), None);
        }
    }

    /// Asks the host's hive server (started there if need be) for `call`.
    pub(crate) fn call(&self, call: Call) -> Result<Value, CarryError> {
        let remote = super::relay_command(&self.target, &self.bin, true);
        let child = self
            .ssh
            .command(&self.target, true, &remote)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| failed(format!("running ssh: {e}")))?;
        let mut client = Client::over_ssh(child, &self.target.name).map_err(failed)?;
        client.call(call).map_err(failed)
    }
}

/// The regular files of `dir`, in name order.
fn files_of(dir: &Path) -> Result<Vec<std::fs::DirEntry>, CarryError> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| failed(format!("{}: {e}", dir.display())))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .collect();
    files.sort_by_key(std::fs::DirEntry::file_name);
    Ok(files)
}

/// A file or directory name that is one plain word (no quoting needed on
/// the far side's shell, no way out of the package directory).
fn target_word(name: &str) -> Result<&str, CarryError> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        Ok(name)
    } else {
        Err(failed(format!("`{name}` is not a plain file name")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_reach_the_far_shell() {
        assert!(target_word("pane.json").is_ok());
        assert!(target_word("fix-20261203T1200").is_ok());
        for bad in ["", "..", ".x", "a/b", "a b", "$(x)", "a;b", "'"] {
            assert!(target_word(bad).is_err(), "{bad}");
        }
    }
}
