//! `fs/read_text_file` and `fs/write_text_file` served for the agent, confined
//! to its working directory.
//!
//! Paths are normalized lexically first (so `..` cannot climb out), then the
//! deepest existing ancestor is canonicalized (so a symlink inside the tree
//! cannot point out of it either). Anything that resolves outside the root is
//! refused.

use std::io;
use std::path::{Component, Path, PathBuf};

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
            FsError::Outside { .. } => -32602,
            // ACP's "resource not found".
            FsError::NotFound(_) => -32002,
            FsError::Io { .. } => -32603,
        }
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

    /// Resolves `path` (absolute, or relative to the root) to a path inside
    /// the root, or refuses it.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, FsError> {
        let raw = Path::new(path);
        let joined = if raw.is_absolute() {
            raw.to_path_buf()
        } else {
            self.root.join(raw)
        };
        let lexical = normalize(&joined);
        // Canonicalize the deepest ancestor that exists, keep the rest as is.
        let mut existing = lexical.as_path();
        let mut rest = Vec::new();
        let resolved = loop {
            match existing.canonicalize() {
                Ok(c) => break rest.iter().rev().fold(c, |acc: PathBuf, p| acc.join(p)),
                Err(_) => match (existing.parent(), existing.file_name()) {
                    (Some(parent), Some(name)) => {
                        rest.push(name.to_owned());
                        existing = parent;
                    }
                    _ => break lexical.clone(),
                },
            }
        };
        if resolved.starts_with(&self.root) {
            Ok(resolved)
        } else {
            Err(FsError::Outside {
                path: path.to_owned(),
                root: self.root.display().to_string(),
            })
        }
    }

    /// `line` is 1-based; `limit` counts lines.
    pub fn read(
        &self,
        path: &str,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, FsError> {
        let resolved = self.resolve(path)?;
        let text = match std::fs::read(&resolved) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return match self.missing {
                    MissingFile::Empty => Ok(String::new()),
                    MissingFile::Error => Err(FsError::NotFound(path.to_owned())),
                };
            }
            Err(source) => {
                return Err(FsError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        if line.is_none() && limit.is_none() {
            return Ok(text);
        }
        let skip = line.map(|l| l.saturating_sub(1) as usize).unwrap_or(0);
        let take = limit.map(|l| l as usize).unwrap_or(usize::MAX);
        Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
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
        std::fs::write(&resolved, content).map_err(io_err)
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
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, FsRoot) {
        let dir = tempfile::tempdir().unwrap();
        let root = FsRoot::new(dir.path(), MissingFile::Empty);
        (dir, root)
    }

    #[test]
    fn inside_paths_resolve_and_outside_are_refused() {
        let (dir, root) = root();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let inside = dir.path().join("a.txt");
        assert_eq!(
            root.read(inside.to_str().unwrap(), None, None).unwrap(),
            "one\ntwo\nthree\n"
        );
        assert_eq!(root.read("a.txt", Some(2), Some(1)).unwrap(), "two\n");
        let escape = format!("{}/../etc/passwd", dir.path().display());
        assert!(matches!(
            root.read(&escape, None, None),
            Err(FsError::Outside { .. })
        ));
        assert!(matches!(
            root.write("/etc/hive-test", "x"),
            Err(FsError::Outside { .. })
        ));
    }

    #[test]
    fn symlink_out_of_the_root_is_refused() {
        let (dir, root) = root();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let err = root.read("link/secret", None, None).unwrap_err();
        assert_eq!(err.code(), -32602);
        assert!(root.write("link/new.txt", "x").is_err());
        assert!(!outside.path().join("new.txt").exists());
    }

    #[test]
    fn missing_files_follow_the_configured_answer() {
        let (dir, root) = root();
        assert_eq!(root.read("nope.txt", None, None).unwrap(), "");
        let strict = FsRoot::new(dir.path(), MissingFile::Error);
        assert_eq!(
            strict.read("nope.txt", None, None).unwrap_err().code(),
            -32002
        );
        root.write("sub/dir/new.txt", "hello").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/dir/new.txt")).unwrap(),
            "hello"
        );
    }
}
