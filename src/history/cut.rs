//! The turn in flight, kept on disk while it runs (issue 46 item 18). The
//! recorder writes a turn's agent side when the turn ends, so a `kill -9`
//! of the server mid-turn lost everything the pane had shown but the
//! prompt. A checkpoint beside the session file (`<session>.jsonl.open`)
//! holds the open turns' records, ended `cut`; the recorder rewrites it as
//! the turn goes (once a tenth of the turn's items started or finished
//! since the last rewrite, else at most once a second) and removes it when
//! the turn ends. The next start of the pane appends what it holds to the
//! session, where it shows what was there and says the turn was cut. The
//! writer holds an exclusive lock on the file while it lives, so a pane
//! opened beside a running one (a second `hive run`) leaves a live turn
//! alone; a killed process's lock is gone.

use std::fs::{File, TryLockError};
use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};

use super::record::Record;
use super::store::{SessionWriter, StoreError};

/// How a cut turn ends in the history (`Meta::stop_reason`).
pub(crate) const STOP_CUT: &str = "cut";

/// What the pane says of a cut turn.
pub(crate) const CUT_NOTE: &str =
    "turn cut: hive stopped mid-turn (killed); what it had shown is kept";

/// The checkpoint of the session file at `session`.
pub(crate) fn path_of(session: &Path) -> PathBuf {
    let mut name = session.as_os_str().to_owned();
    name.push(".open");
    PathBuf::from(name)
}

/// The open turns' checkpoint of one session, locked while it exists.
#[derive(Debug)]
pub(crate) struct Checkpoint {
    path: PathBuf,
    file: Option<File>,
    /// Records written over its life (the tests count the rewrites' cost).
    #[cfg(test)]
    pub(crate) written: usize,
}

impl Checkpoint {
    pub(crate) fn of(session: &Path) -> Self {
        Self {
            path: path_of(session),
            file: None,
            #[cfg(test)]
            written: 0,
        }
    }

    /// Replaces what the checkpoint holds with `records` (rewritten in
    /// place under the lock; a torn line is dropped when it is read).
    pub(crate) fn write(&mut self, records: &[Record]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let io = |e| StoreError::io(&path, e);
        if self.file.is_none() {
            if let Some(dir) = path.parent() {
                crate::private::create_dir(dir).map_err(|e| StoreError::io(dir, e))?;
            }
            let file = crate::private::open_own_file(
                crate::private::file_options()
                    .create(true)
                    .read(true)
                    .write(true),
                &path,
            )
            .map_err(io)?;
            file.try_lock().map_err(|e| match e {
                TryLockError::WouldBlock => StoreError::Invalid {
                    path: path.display().to_string(),
                    message: "another hive is recording this session".into(),
                },
                TryLockError::Error(e) => io(e),
            })?;
            self.file = Some(file);
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        #[cfg(test)]
        {
            self.written += records.len();
        }
        let mut text = String::new();
        for r in records {
            text.push_str(&r.to_line());
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)
    }

    /// Removes the checkpoint (its turns ended): nothing to recover.
    pub(crate) fn clear(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Moves a checkpoint left by a killed hive into its session file; the
/// number of records moved. One still locked belongs to a live pane and
/// is left alone. Lines that do not parse (a torn write) are dropped: the
/// rest still shows.
pub(crate) fn recover(session: &Path) -> Result<usize, StoreError> {
    let path = path_of(session);
    // A FIFO planted as the checkpoint would hang the open; a link is not ours.
    let file = match crate::private::open_own_file(File::options().read(true), &path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(0),
        Err(TryLockError::Error(e)) => return Err(StoreError::io(&path, e)),
    }
    let records: Vec<Record> = std::io::BufReader::new(&file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect();
    SessionWriter::new(session.to_owned()).append(&records)?;
    let _ = std::fs::remove_file(&path);
    Ok(records.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::record::Role;

    /// A live pane's checkpoint is not taken; once its writer is gone (a
    /// killed hive's lock goes with it) the next open moves it, once.
    #[test]
    fn a_checkpoint_is_recovered_only_when_its_writer_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.jsonl");
        let mut cp = Checkpoint::of(&session);
        let rec = Record::new("a", "s", 1, Role::Assistant);
        cp.write(std::slice::from_ref(&rec)).unwrap();
        cp.write(&[rec.clone(), rec]).unwrap();
        assert_eq!(recover(&session).unwrap(), 0, "live: left alone");
        drop(cp);
        assert_eq!(recover(&session).unwrap(), 2);
        assert!(!path_of(&session).exists());
        assert_eq!(recover(&session).unwrap(), 0);
        let lines = std::fs::read_to_string(&session).unwrap();
        assert_eq!(lines.lines().count(), 2);
    }
}
