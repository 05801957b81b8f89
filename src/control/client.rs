//! `hive ctl`'s end of the socket: finds the hive to talk to, sends one
//! request and reads its reply (and, for `watch`, the event lines after it).
//! Blocking std I/O: the client does one thing at a time.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::protocol::{Call, CtlError, ErrorCode, Reply, Request};

/// Why `hive ctl` could not get an answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// The hive answered with an error.
    #[error("{0}")]
    Ctl(CtlError),
    /// No hive to talk to, or the connection failed.
    #[error("{0}")]
    Unreachable(String),
    /// Our own output was closed (`hive ctl list | head -1`): the reader
    /// has what it wanted, so ctl ends quietly, as other CLIs do.
    #[error("output closed")]
    OutputClosed,
}

impl ClientError {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            ClientError::Ctl(e) => e.code.exit_code(),
            ClientError::Unreachable(_) => ErrorCode::Unavailable.exit_code(),
            ClientError::OutputClosed => 0,
        }
    }

    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            ClientError::Ctl(e) => e.code,
            ClientError::Unreachable(_) | ClientError::OutputClosed => ErrorCode::Unavailable,
        }
    }
}

/// Which hive the config in use points at (its socket label).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Prefer<'a> {
    None,
    /// Settles a choice between several running hives.
    IfSeveral(&'a str),
    /// Named outright (`--config`): that hive or none.
    Only(&'a str),
}

/// Picks the socket: `explicit` (`--socket` or `HIVE_SOCKET`), else the
/// preferred label's, else the one live socket in `dir`.
pub(crate) fn discover(
    explicit: Option<&str>,
    dir: &Path,
    prefer: Prefer,
) -> Result<PathBuf, ClientError> {
    if let Some(arg) = explicit {
        return Ok(super::socket_path_for(arg, dir));
    }
    if let Prefer::Only(label) = prefer {
        return Ok(super::socket_path_for(label, dir));
    }
    let mut live = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "sock") && UnixStream::connect(&path).is_ok() {
                live.push(path);
            }
        }
    }
    live.sort_by_key(|p| p.file_stem().map(ToOwned::to_owned));
    let stem = |p: &PathBuf| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    if live.len() > 1
        && let Prefer::IfSeveral(label) = prefer
        && let Some(p) = live.iter().find(|p| stem(p).as_deref() == Some(label))
    {
        return Ok(p.clone());
    }
    match live.len() {
        1 => Ok(live.remove(0)),
        0 => Err(ClientError::Unreachable(format!(
            "no running hive found in {} (start `hive`, or pass --socket / {})",
            dir.display(),
            super::SOCKET_ENV
        ))),
        _ => {
            let names: Vec<_> = live.iter().filter_map(stem).collect();
            Err(ClientError::Unreachable(format!(
                "{} hives are running ({}); pick one with --socket NAME or {}",
                names.len(),
                names.join(", "),
                super::SOCKET_ENV
            )))
        }
    }
}

/// One connection to a hive: its socket here, or its socket on another
/// machine through ssh and `hive relay` (the same lines cross).
pub(crate) struct Client {
    /// Where, for messages.
    path: String,
    reader: BufReader<Box<dyn io::Read + Send>>,
    writer: Box<dyn Write + Send>,
    /// The ssh process of a remote connection, killed with the client.
    child: Option<std::process::Child>,
    next_id: u64,
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Client {
    pub(crate) fn connect(path: &Path) -> Result<Self, ClientError> {
        let stream = UnixStream::connect(path).map_err(|e| {
            ClientError::Unreachable(format!("cannot connect to {}: {e}", path.display()))
        })?;
        let writer = stream
            .try_clone()
            .map_err(|e| ClientError::Unreachable(e.to_string()))?;
        Ok(Self {
            path: path.display().to_string(),
            reader: BufReader::new(Box::new(stream)),
            writer: Box::new(writer),
            child: None,
            next_id: 1,
        })
    }

    /// A client over a started `ssh … hive relay` (its stdin and stdout
    /// piped), named `what`.
    pub(crate) fn over_ssh(
        mut child: std::process::Child,
        what: &str,
    ) -> Result<Self, ClientError> {
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Unreachable(format!(
                "{what}: ssh's pipes are missing"
            )));
        };
        Ok(Self {
            path: what.to_owned(),
            reader: BufReader::new(Box::new(stdout)),
            writer: Box::new(stdin),
            child: Some(child),
            next_id: 1,
        })
    }

    fn lost(&self, e: impl std::fmt::Display) -> ClientError {
        ClientError::Unreachable(format!("lost the hive at {}: {e}", self.path))
    }

    /// Sends `call` and returns its result.
    pub(crate) fn call(&mut self, call: Call) -> Result<Value, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let line = serde_json::to_string(&Request { id, call }).map_err(|e| self.lost(e))?;
        if let Err(e) = writeln!(self.writer, "{line}") {
            // A hive that refuses us says why and hangs up at once.
            return match self.read_reply() {
                Ok(Reply { error: Some(e), .. }) => Err(ClientError::Ctl(e)),
                _ => Err(self.lost(e)),
            };
        }
        loop {
            let reply = self.read_reply()?;
            if reply.id.is_some() && reply.id != Some(id) {
                continue;
            }
            return match (reply.result, reply.error) {
                (_, Some(e)) => Err(ClientError::Ctl(e)),
                (Some(v), None) => Ok(v),
                (None, None) => Ok(Value::Null),
            };
        }
    }

    fn read_reply(&mut self) -> Result<Reply, ClientError> {
        let line = self
            .next_line()?
            .ok_or_else(|| self.lost("it closed the connection"))?;
        serde_json::from_str(&line).map_err(|e| self.lost(format!("unreadable reply: {e}")))
    }

    /// The next raw line (a `watch` event); `None` when the hive hung up.
    pub(crate) fn next_line(&mut self) -> Result<Option<String>, ClientError> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => Ok(Some(line.trim_end_matches('\n').to_owned())),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Some(String::new())),
            Err(e) => Err(self.lost(e)),
        }
    }
}
