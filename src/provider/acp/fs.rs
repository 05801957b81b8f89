//! `fs/read_text_file` and `fs/write_text_file` served for the agent, confined
//! to its working directory.
//!
//! An agent's file requests are untrusted: the repository it works in may ship
//! symlinks pointing anywhere, and the agent chooses the paths. So:
//! - paths are normalized lexically (`..` cannot climb out), then walked one
//!   component at a time from the root: a symlinked directory is followed only
//!   when its target stays inside the root;
//! - the final component is never followed (`symlink_metadata`, then
//!   `O_NOFOLLOW` on open), so a dangling `cwd/link -> /outside/file` is
//!   refused rather than written through;
//! - only regular files are read or written (opened `O_NONBLOCK` and checked
//!   with `fstat`, so a FIFO or device can neither block nor be touched);
//! - reads stream: `line`/`limit` are applied while reading and at most
//!   [`MAX_READ_BYTES`] are returned, so a huge file never lands in memory.
//!
//! All of this blocks, so the engine hands it out as an [`FsJob`] that the
//! provider task runs on tokio's blocking pool.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use super::client;

/// The most a single read returns; beyond it the agent gets an error telling
/// it to read in parts with `line`/`limit`.
pub(crate) const MAX_READ_BYTES: usize = 16 << 20;

/// What a read of a file that does not exist returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingFile {
    /// `{"content": ""}`. Gemini CLI needs this: it checks for "not found" with
    /// `err instanceof Error`, which a JSON-RPC error object never is, so a
    /// not-found error makes every write of a new file fail.
    #[default]
    Empty,
    /// A JSON-RPC "resource not found" error.
    Error,
}

/// Why a request was refused; maps onto a JSON-RPC error.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error("path is outside the agent's working directory {root}: {path}")]
    Outside { path: String, root: String },
    #[error("refused to follow a symbolic link: {0}")]
    Symlink(String),
    #[error("not a regular file ({kind}): {path}")]
    NotRegular { path: String, kind: &'static str },
    #[error(
        "{path}: the requested range is larger than {limit} bytes; read it in parts with `line` and `limit`"
    )]
    TooLarge { path: String, limit: usize },
    #[error("Resource not found: {0}")]
    NotFound(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl FsError {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            FsError::Outside { .. }
            | FsError::Symlink(_)
            | FsError::NotRegular { .. }
            | FsError::TooLarge { .. } => client::INVALID_PARAMS,
            // ACP's "resource not found".
            FsError::NotFound(_) => -32002,
            FsError::Io { .. } => -32603,
        }
    }

    /// A refusal the user should hear about (the agent tried to reach past
    /// what it was given), as opposed to an ordinary I/O failure.
    pub(crate) fn is_refusal(&self) -> bool {
        matches!(
            self,
            FsError::Outside { .. } | FsError::Symlink(_) | FsError::NotRegular { .. }
        )
    }
}

/// The directory an agent may read and write.
#[derive(Debug, Clone)]
pub struct FsRoot {
    root: PathBuf,
    missing: MissingFile,
}

impl FsRoot {
    /// `root` is canonicalized when it exists.
    pub fn new(root: &Path, missing: MissingFile) -> Self {
        let root = root.canonicalize().unwrap_or_else(|_| normalize(root));
        Self { root, missing }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn outside(&self, path: &str) -> FsError {
        FsError::Outside {
            path: path.to_owned(),
            root: self.root.display().to_string(),
        }
    }

    /// Resolves `path` (absolute, or relative to the root) to a path inside
    /// the root whose final component is not a symlink, or refuses it.
    pub(crate) fn resolve(&self, path: &str) -> Result<PathBuf, FsError> {
        let raw = Path::new(path);
        let lexical = normalize(&self.root.join(raw));
        let rel = match lexical.strip_prefix(&self.root) {
            Ok(rel) => rel.to_path_buf(),
            // The root named through another route (a symlinked ancestor).
            Err(_) => {
                let parent = lexical.parent().and_then(|p| p.canonicalize().ok());
                match (parent, lexical.file_name()) {
                    (Some(p), Some(name)) => p
                        .join(name)
                        .strip_prefix(&self.root)
                        .map(Path::to_path_buf)
                        .map_err(|_| self.outside(path))?,
                    _ => return Err(self.outside(path)),
                }
            }
        };
        let mut names: Vec<&std::ffi::OsStr> = rel.iter().collect();
        let Some(last) = names.pop() else {
            return Ok(self.root.clone());
        };
        let mut cur = self.root.clone();
        let mut exists = true;
        for name in names {
            cur.push(name);
            if !exists {
                continue;
            }
            match std::fs::symlink_metadata(&cur) {
                Ok(m) if m.file_type().is_symlink() => {
                    // Followed only while it stays inside.
                    let target = cur.canonicalize().map_err(|_| self.outside(path))?;
                    if !target.starts_with(&self.root) {
                        return Err(self.outside(path));
                    }
                    cur = target;
                }
                Ok(_) => {}
                Err(_) => exists = false,
            }
        }
        let full = cur.join(last);
        if exists && std::fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(FsError::Symlink(path.to_owned()));
        }
        Ok(full)
    }

    /// `line` is 1-based; `limit` counts lines.
    pub fn read(
        &self,
        path: &str,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, FsError> {
        let resolved = self.resolve(path)?;
        let file = match open_regular(&resolved, path, OpenOptions::new().read(true)) {
            Err(FsError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                return match self.missing {
                    MissingFile::Empty => Ok(String::new()),
                    MissingFile::Error => Err(FsError::NotFound(path.to_owned())),
                };
            }
            other => other?,
        };
        read_range(file, line, limit, MAX_READ_BYTES).map_err(|e| match e {
            RangeError::TooLarge => FsError::TooLarge {
                path: path.to_owned(),
                limit: MAX_READ_BYTES,
            },
            RangeError::Io(source) => FsError::Io {
                path: path.to_owned(),
                source,
            },
        })
    }

    /// Writes the whole file, creating missing parent directories inside the root.
    pub fn write(&self, path: &str, content: &str) -> Result<(), FsError> {
        let resolved = self.resolve(path)?;
        let io_err = |source| FsError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(parent) = resolved.parent() {
            std::fs::create_dir_all(parent).map_err(io_err)?;
        }
        let mut file = open_regular(&resolved, path, OpenOptions::new().write(true).create(true))?;
        // Truncated only now that it is known to be a regular file.
        file.set_len(0).map_err(io_err)?;
        file.write_all(content.as_bytes()).map_err(io_err)
    }
}

/// Opens without following a final symlink and without blocking on a FIFO,
/// then refuses anything that is not a regular file.
fn open_regular(resolved: &Path, path: &str, opts: &mut OpenOptions) -> Result<File, FsError> {
    let file = opts
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(resolved)
        .map_err(|source| match source.raw_os_error() {
            Some(libc::ELOOP) => FsError::Symlink(path.to_owned()),
            // A FIFO opened for writing with no reader.
            Some(libc::ENXIO) => FsError::NotRegular {
                path: path.to_owned(),
                kind: "fifo",
            },
            _ => FsError::Io {
                path: path.to_owned(),
                source,
            },
        })?;
    let meta = file.metadata().map_err(|source| FsError::Io {
        path: path.to_owned(),
        source,
    })?;
    if meta.is_file() {
        Ok(file)
    } else {
        Err(FsError::NotRegular {
            path: path.to_owned(),
            kind: file_kind(&meta.file_type()),
        })
    }
}

fn file_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else {
        "special file"
    }
}

#[derive(Debug)]
enum RangeError {
    TooLarge,
    Io(io::Error),
}

/// Lines `line..line+limit` of `file`, skipping without buffering and
/// refusing once more than `cap` bytes would be returned.
fn read_range(
    file: File,
    line: Option<u32>,
    limit: Option<u32>,
    cap: usize,
) -> Result<String, RangeError> {
    let mut r = BufReader::with_capacity(64 * 1024, file);
    let mut skip = line.map(|l| l.saturating_sub(1)).unwrap_or(0);
    while skip > 0 {
        let buf = r.fill_buf().map_err(RangeError::Io)?;
        if buf.is_empty() {
            return Ok(String::new());
        }
        let n = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                skip -= 1;
                i + 1
            }
            None => buf.len(),
        };
        r.consume(n);
    }
    let mut want = limit.unwrap_or(u32::MAX);
    let mut out = Vec::new();
    while want > 0 {
        let buf = r.fill_buf().map_err(RangeError::Io)?;
        if buf.is_empty() {
            break;
        }
        let n = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                want -= 1;
                i + 1
            }
            None => buf.len(),
        };
        if out.len() + n > cap {
            return Err(RangeError::TooLarge);
        }
        out.extend_from_slice(&buf[..n]);
        r.consume(n);
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// A file request the engine hands to the provider task, which runs it on
/// the blocking pool and writes the answer.
#[derive(Debug)]
pub struct FsJob {
    rpc_id: Value,
    root: FsRoot,
    op: FsOp,
}

#[derive(Debug)]
pub enum FsOp {
    Read {
        path: String,
        line: Option<u32>,
        limit: Option<u32>,
    },
    Write {
        path: String,
        content: String,
    },
}

/// What a finished job produced.
#[derive(Debug)]
pub struct FsDone {
    /// The JSON-RPC response line for the agent.
    pub line: String,
    /// Set when the agent was refused something it should not have asked for.
    pub refusal: Option<String>,
}

impl FsJob {
    pub fn new(rpc_id: Value, root: FsRoot, op: FsOp) -> Self {
        Self { rpc_id, root, op }
    }

    /// Does the I/O (blocking) and builds the answer.
    pub fn run(self) -> FsDone {
        let result = match &self.op {
            FsOp::Read { path, line, limit } => self
                .root
                .read(path, *line, *limit)
                .map(|content| json!({ "content": content })),
            FsOp::Write { path, content } => self.root.write(path, content).map(|()| Value::Null),
        };
        match result {
            Ok(v) => FsDone {
                line: client::response(&self.rpc_id, v),
                refusal: None,
            },
            Err(e) => FsDone {
                line: client::error_response(&self.rpc_id, e.code(), &e.to_string()),
                refusal: e
                    .is_refusal()
                    .then(|| format!("refused agent file access: {e}")),
            },
        }
    }
}

/// Removes `.` and resolves `..` without touching the filesystem.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
#[path = "fs_tests.rs"]
mod tests;
