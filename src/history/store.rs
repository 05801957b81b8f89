//! Files of the history store: where they live, appending, and reading them
//! back — whole, or only the newest records (read backwards from the end so a
//! long history opens in time proportional to what is shown, not to its size).
//!
//! Layout under a project's data dir (`<data dir>/projects/<key>/`, see
//! `crate::project`):
//! - `history/<agent>/<session>.jsonl`: one append-only JSONL file per session;
//! - `state/<agent>.json`: the pane's session state (see `state.rs`).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::record::{Record, Role};

/// Problems of the store's own files.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl StoreError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// The store rooted at a data dir.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// One session file.
#[derive(Debug, Clone)]
pub struct SessionEntry {
    pub agent: String,
    pub session: String,
    pub path: PathBuf,
    pub bytes: u64,
    pub modified: Option<SystemTime>,
}

/// Records read from a file, each with the byte offset of its line.
#[derive(Debug, Default)]
pub struct Loaded {
    pub records: Vec<(u64, Record)>,
    /// Byte offset of the first record read; 0 when the window reaches the
    /// start of the file (nothing older left).
    pub start: u64,
    pub warnings: Vec<String>,
}

/// Agent ids are validated by the config; this keeps a hand-built id from
/// escaping the store directory all the same.
pub(crate) fn safe_name(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    match s.as_str() {
        "" | "." | ".." => format!("_{s}"),
        _ => s,
    }
}

impl Store {
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The user's store (`$XDG_DATA_HOME/hive`, or `HIVE_DATA_DIR`). The
    /// first call in a process makes existing files private (0700/0600).
    pub fn user() -> Self {
        let root = crate::paths::data_dir();
        static TIGHTENED: std::sync::Once = std::sync::Once::new();
        TIGHTENED.call_once(|| {
            crate::private::tighten_tree(&root);
        });
        Self::at(root)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn agent_dir(&self, agent: &str) -> PathBuf {
        self.root.join("history").join(safe_name(agent))
    }

    pub fn session_path(&self, agent: &str, session: &str) -> PathBuf {
        self.agent_dir(agent)
            .join(format!("{}.jsonl", safe_name(session)))
    }

    pub fn state_path(&self, agent: &str) -> PathBuf {
        self.root
            .join("state")
            .join(format!("{}.json", safe_name(agent)))
    }

    /// Agents that have a history directory, sorted.
    pub fn agents(&self) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(self.root.join("history"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .collect();
        out.sort();
        out
    }

    /// Sessions of one agent, oldest first (by modification time, then name).
    pub fn sessions(&self, agent: &str) -> Vec<SessionEntry> {
        let mut out: Vec<SessionEntry> = std::fs::read_dir(self.agent_dir(agent))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let path = e.path();
                let session = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".jsonl")?
                    .to_owned();
                let meta = e.metadata().ok();
                Some(SessionEntry {
                    agent: agent.to_owned(),
                    session,
                    bytes: meta.as_ref().map_or(0, |m| m.len()),
                    modified: meta.and_then(|m| m.modified().ok()),
                    path,
                })
            })
            .collect();
        out.sort_by(|a, b| (a.modified, &a.session).cmp(&(b.modified, &b.session)));
        out
    }

    /// Finds a session by id across all agents.
    pub(crate) fn find_session(&self, session: &str) -> Option<SessionEntry> {
        self.agents()
            .iter()
            .flat_map(|a| self.sessions(a))
            .find(|s| s.session == session)
    }
}

pub use crate::protocol::history::new_session_id;

/// Appends records to one session file. Opened lazily on the first write;
/// a failed write closes it so the next one retries from a clean open.
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    file: Option<File>,
}

impl SessionWriter {
    pub fn new(path: PathBuf) -> Self {
        Self { path, file: None }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the records in one `write` call: a crash leaves either all of
    /// them or, at worst, a torn last line that loading skips.
    pub fn append(&mut self, records: &[Record]) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let mut batch = String::new();
        for r in records {
            batch.push_str(&r.to_line());
        }
        let path = self.path.clone();
        let result = self.open().and_then(|f| {
            f.write_all(batch.as_bytes())
                .map_err(|e| StoreError::io(&path, e))
        });
        if result.is_err() {
            self.file = None;
        }
        result
    }

    fn open(&mut self) -> Result<&mut File, StoreError> {
        if self.file.is_none() {
            let path = &self.path;
            if let Some(dir) = path.parent() {
                crate::private::create_dir(dir).map_err(|e| StoreError::io(dir, e))?;
            }
            // No-follow, regular, ours: a planted link must not receive
            // the conversation.
            let mut file = crate::private::open_own_file(
                crate::private::file_options()
                    .create(true)
                    .read(true)
                    .append(true),
                path,
            )
            .map_err(|e| StoreError::io(path, e))?;
            repair_tail(path, &mut file).map_err(|e| StoreError::io(path, e))?;
            self.file = Some(file);
        }
        // Set just above.
        self.file.as_mut().ok_or_else(|| StoreError::Invalid {
            path: self.path.display().to_string(),
            message: "not open".into(),
        })
    }
}

/// A crash can leave the last line without its newline. Appending after it
/// would glue the next record onto the fragment, so before the first append:
/// a fragment that is a whole record gets its newline; anything else is moved
/// to `<file>.torn` (kept for inspection) and cut off.
fn repair_tail(path: &Path, file: &mut File) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(());
    }
    // Find the start of the unterminated line.
    let mut start = len;
    let mut buf = vec![0u8; 64 * 1024];
    while start > 0 {
        let from = start.saturating_sub(buf.len() as u64);
        let n = (start - from) as usize;
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            start = from + i as u64 + 1;
            break;
        }
        start = from;
    }
    let mut fragment = vec![0u8; (len - start) as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut fragment)?;
    if serde_json::from_slice::<Record>(&fragment).is_ok() {
        file.write_all(b"\n")?;
        return Ok(());
    }
    let mut torn_path = path.as_os_str().to_owned();
    torn_path.push(".torn");
    let mut torn = crate::private::open_own_file(
        crate::private::file_options().create(true).append(true),
        &PathBuf::from(torn_path),
    )?;
    fragment.push(b'\n');
    torn.write_all(&fragment)?;
    file.set_len(start)?;
    tracing::warn!(path = %path.display(), bytes = fragment.len(), "torn last record moved aside");
    Ok(())
}

/// Reads every record of a file.
pub fn read_all(path: &Path) -> Result<Loaded, StoreError> {
    read_window(path, u64::MAX, usize::MAX)
}

/// The records `read_window` has collected, newest first.
struct Window {
    name: String,
    min_records: usize,
    out: Loaded,
    rev: Vec<(u64, Record)>,
}

impl Window {
    /// Reads `buf[first_complete..]` (which starts at byte `pos` of the file)
    /// line by line from its end; true once the window is complete.
    fn lines(&mut self, buf: &[u8], pos: u64, first_complete: usize) -> bool {
        let mut line_end = buf.len();
        while line_end > first_complete {
            let line_start = buf[first_complete..line_end]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(first_complete, |i| first_complete + i + 1);
            let line = &buf[line_start..line_end];
            let offset = pos + line_start as u64;
            if !line.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<Record>(line) {
                    Ok(rec) => {
                        let is_user = rec.role == Role::User;
                        self.rev.push((offset, rec));
                        if self.rev.len() >= self.min_records && is_user {
                            self.out.start = offset;
                            return true;
                        }
                    }
                    Err(e) => self.out.warnings.push(format!(
                        "{}: skipped a torn or corrupt record at byte {offset} ({e})",
                        self.name
                    )),
                }
            }
            if line_start == first_complete {
                break;
            }
            line_end = line_start - 1;
        }
        false
    }
}

/// Reads backwards from byte `end` (clamped to the file size) until at least
/// `min_records` records are collected *and* the window starts at a user
/// record (so no turn is cut in half), or the file's start is reached.
pub fn read_window(path: &Path, end: u64, min_records: usize) -> Result<Loaded, StoreError> {
    let opened = crate::private::open_own_file(std::fs::OpenOptions::new().read(true), path);
    let mut file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let len = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
    let end = end.min(len);
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut window = Window {
        name,
        min_records,
        out: Loaded::default(),
        rev: Vec::new(),
    };
    let mut carry: Vec<u8> = Vec::new();
    // Chunks read inside one long line, latest read last: joined once the
    // line's start is found (joining at every chunk copied a long line's
    // bytes once per chunk, which took seconds for a 50 MB answer).
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut pos = end;
    const CHUNK: u64 = 256 * 1024;
    loop {
        if pos == 0 && carry.is_empty() {
            break;
        }
        let from = pos.saturating_sub(CHUNK);
        let mut buf = vec![0u8; (pos - from) as usize];
        if !buf.is_empty() {
            file.seek(SeekFrom::Start(from))
                .and_then(|_| file.read_exact(&mut buf))
                .map_err(|e| StoreError::io(path, e))?;
        }
        pos = from;
        let newline = buf.iter().position(|&b| b == b'\n');
        if pos > 0 && newline.is_none() {
            pieces.push(buf);
            continue;
        }
        for piece in pieces.drain(..).rev() {
            buf.extend_from_slice(&piece);
        }
        buf.extend_from_slice(&carry);
        // Lines wholly inside `buf`; the first one may continue in the previous
        // chunk unless this chunk starts the file.
        let first_complete = match newline {
            Some(i) if pos > 0 => i + 1,
            _ => 0,
        };
        if window.lines(&buf, pos, first_complete) {
            break;
        }
        carry = buf[..first_complete.saturating_sub(1)].to_vec();
        if pos == 0 {
            window.out.start = 0;
            break;
        }
    }
    let Window {
        mut out, mut rev, ..
    } = window;
    rev.reverse();
    out.warnings.reverse();
    out.records = rev;
    Ok(out)
}
