//! Where a console's bytes go: the server's Unix socket on this machine, or
//! an `ssh -T` child whose channel ends in `hive relay` beside the remote
//! server (src/remote/). Either way the console gets a byte stream both
//! ways and speaks the same protocol over it.

use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

use crate::remote::{Ssh, Target};

/// A server a console can attach to.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// The socket of a server on this machine.
    Local(PathBuf),
    /// A server on another machine, through ssh; `bin` is hive's path
    /// there (`remote::install::locate`), looked up on the first
    /// connection when not known yet.
    Ssh {
        ssh: Ssh,
        target: Target,
        bin: Option<String>,
    },
}

impl Endpoint {
    /// What the user calls it: the server's name, or the host's.
    pub fn name(&self) -> String {
        match self {
            Endpoint::Local(socket) => crate::paths::name_of(socket),
            Endpoint::Ssh { target, .. } => target.name.clone(),
        }
    }

    /// How `hive attach` names it again: the server's name, or the
    /// host's `ssh://` address (a host's name alone names no server).
    pub fn attach_arg(&self) -> String {
        match self {
            Endpoint::Local(socket) => crate::paths::name_of(socket),
            Endpoint::Ssh { target, .. } => target.to_string(),
        }
    }

    /// The command that attaches a console to `endpoints` again (issue 46
    /// item 13): every one named as `hive attach` takes it.
    pub fn attach_command(endpoints: &[Endpoint]) -> String {
        let mut out = String::from("hive attach");
        for e in endpoints {
            out.push(' ');
            out.push_str(&e.attach_arg());
        }
        out
    }

    /// What Ctrl+Q then `s` did to `endpoints` (issue 46 item 11): a
    /// console of several servers stops this machine's and only detaches
    /// from the others, whose agents run on.
    pub fn stop_line(endpoints: &[Endpoint]) -> String {
        // Alone, a remote server is stopped too (`ClientMsg::Stop` reaches
        // it); the mux detaches from remote members.
        let detaches = |e: &Endpoint| endpoints.len() > 1 && e.reconnects();
        let names = |remote: bool| -> Vec<String> {
            endpoints
                .iter()
                .filter(|e| detaches(e) == remote)
                .map(Endpoint::name)
                .collect()
        };
        let (stopped, detached) = (names(false), names(true));
        let mut out = String::new();
        if !stopped.is_empty() {
            out = format!("stopped {} and its agents", stopped.join(" + "));
        }
        if !detached.is_empty() {
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(&format!(
                "detached from {}, whose agents keep working (`hive kill` there stops them)",
                detached.join(" + ")
            ));
        }
        out
    }

    /// Whether a lost connection is a broken link worth reconnecting (ssh),
    /// rather than a server gone (a local socket).
    pub fn reconnects(&self) -> bool {
        matches!(self, Endpoint::Ssh { .. })
    }

    /// The host the panes are on, when it is not this machine.
    pub fn host(&self) -> Option<&str> {
        match self {
            Endpoint::Local(_) => None,
            Endpoint::Ssh { target, .. } => Some(&target.name),
        }
    }

    /// Opens a byte stream to the server. `batch`: ssh must not prompt.
    pub(super) async fn open(&mut self, batch: bool) -> std::io::Result<Stream> {
        match self {
            Endpoint::Local(socket) => {
                let (read, write) = tokio::net::UnixStream::connect(socket).await?.into_split();
                Ok(Stream {
                    read: Box::pin(read),
                    write: Box::pin(write),
                    child: None,
                    stderr: Stderr::none(),
                })
            }
            Endpoint::Ssh { ssh, target, bin } => {
                let bin = match bin {
                    Some(b) => b,
                    None => bin.insert(
                        crate::remote::install::find(ssh, target)
                            .await
                            .map_err(std::io::Error::other)?,
                    ),
                };
                let remote = crate::remote::relay_command(target, bin, true);
                let mut cmd = tokio::process::Command::from(ssh.command(target, batch, &remote));
                cmd.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                let mut child = cmd.spawn()?;
                let (Some(read), Some(write), Some(err)) =
                    (child.stdout.take(), child.stdin.take(), child.stderr.take())
                else {
                    return Err(std::io::Error::other("ssh's pipes are missing"));
                };
                let (stderr, done) = Stderr::of_ssh();
                tokio::spawn(keep_stderr(err, Arc::clone(&stderr.text), done));
                Ok(Stream {
                    read: Box::pin(read),
                    write: Box::pin(write),
                    child: Some(child),
                    stderr,
                })
            }
        }
    }
}

/// A byte stream to a server, and the ssh process behind it if any.
pub(super) struct Stream {
    pub(super) read: Pin<Box<dyn AsyncRead + Send>>,
    pub(super) write: Pin<Box<dyn AsyncWrite + Send>>,
    /// Killed when dropped.
    pub(super) child: Option<tokio::process::Child>,
    /// ssh's last words (its errors), for the reason a link broke.
    pub(super) stderr: Stderr,
}

/// How long a broken link waits for ssh's last words: ssh closes its
/// stderr as it exits, a moment after the channel ends.
const LAST_WORDS: std::time::Duration = std::time::Duration::from_secs(2);

/// ssh's stderr as kept so far, and whether ssh has closed it.
#[derive(Clone)]
pub(super) struct Stderr {
    pub(super) text: Arc<Mutex<String>>,
    done: tokio::sync::watch::Receiver<bool>,
}

impl Stderr {
    /// No ssh: nothing more to come.
    pub(super) fn none() -> Self {
        let (_, done) = tokio::sync::watch::channel(true);
        Self {
            text: Arc::default(),
            done,
        }
    }

    /// For an ssh child: its reader says `true` when ssh closed stderr.
    pub(super) fn of_ssh() -> (Self, tokio::sync::watch::Sender<bool>) {
        let (tx, done) = tokio::sync::watch::channel(false);
        let text = Arc::default();
        (Self { text, done }, tx)
    }

    /// Why the link broke, in ssh's words when it said any, else
    /// `fallback`. ssh's words come after the channel's end (issue 46
    /// item 16: read at once, they were not there yet, and the reason
    /// blamed the server when ssh had died): they are waited for until
    /// ssh closes its stderr, `LAST_WORDS` at most.
    pub(super) async fn why(&self, fallback: &str) -> String {
        let mut done = self.done.clone();
        let _ = tokio::time::timeout(LAST_WORDS, done.wait_for(|d| *d)).await;
        let said = self
            .text
            .lock()
            .map(|s| s.trim().to_owned())
            .unwrap_or_default();
        if said.is_empty() {
            fallback.to_owned()
        } else {
            crate::sanitize::neutralize(&said).into_owned()
        }
    }
}

/// Keeps ssh's last few stderr lines (they are the remote's words: never
/// drawn unsanitized) and logs them.
async fn keep_stderr(
    err: tokio::process::ChildStderr,
    into: Arc<Mutex<String>>,
    done: tokio::sync::watch::Sender<bool>,
) {
    let mut lines = BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(target: "hive::ssh", "{}", crate::sanitize::neutralize(&line));
        if let Ok(mut s) = into.lock() {
            // The last line is the one that says why; keep a little context.
            if s.len() > 1024 {
                s.clear();
            }
            if !s.is_empty() {
                s.push_str("; ");
            }
            s.push_str(line.trim());
        }
    }
    // ssh exited (or closed its stderr): all it will say is said.
    let _ = done.send(true);
}

#[cfg(test)]
mod attach_tests {
    #![allow(clippy::unwrap_used)] // tests may panic

    use super::*;

    /// Issue 46 item 13: the detach hint names servers as `hive attach`
    /// takes them: a host by its `ssh://` address, not its bare name.
    #[test]
    fn the_attach_command_names_every_server_so_that_it_attaches() {
        let dir = tempfile::tempdir().unwrap();
        let target = crate::remote::Target::parse("ssh://ann@127.0.0.1:2222/srv/far").unwrap();
        let ssh = crate::remote::Ssh::for_target(&target, dir.path()).unwrap();
        let endpoints = [
            Endpoint::Local(dir.path().join("repo.sock")),
            Endpoint::Ssh {
                ssh,
                target,
                bin: None,
            },
        ];
        assert_eq!(
            Endpoint::attach_command(&endpoints),
            "hive attach repo ssh://ann@127.0.0.1:2222/srv/far"
        );
        assert_eq!(endpoints[1].name(), "127.0.0.1");
        // Issue 46 item 11: a stop says what it stopped and what it only
        // left running.
        assert_eq!(
            Endpoint::stop_line(&endpoints),
            "stopped repo and its agents; detached from 127.0.0.1, whose agents keep working (`hive kill` there stops them)"
        );
        assert_eq!(
            Endpoint::stop_line(&endpoints[..1]),
            "stopped repo and its agents"
        );
    }
}
