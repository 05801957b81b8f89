//! Deleting a file in a pane's worktree without leaving it (#53 item 4).
//! The path comes from a diff read earlier, or from a socket client: by
//! the time it is deleted an agent may have swapped a directory on it for
//! a symlink to somewhere else. So the path is checked when the deletion
//! happens, not before: each directory is opened from the one above with
//! `O_NOFOLLOW` (`openat`), and the last component is unlinked from the
//! directory so opened (`unlinkat`). A symlink anywhere but the last
//! component is refused; a symlink there is removed itself, never its
//! target.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use super::WorktreeError;

/// What [`remove_file`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removed {
    /// A file (or a symlink itself) was unlinked.
    File,
    /// Nothing was there, or a directory (left as it is).
    Nothing,
}

/// Removes `rel` (relative to `root`, the worktree) if it is a file or a
/// symlink, opening every directory on the way without following links.
pub(crate) fn remove_file(root: &Path, rel: &str) -> Result<Removed, WorktreeError> {
    let refused = |why: &str| WorktreeError::Refused(format!("{rel}: {why}; not removed"));
    let mut parts = Vec::new();
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::CurDir => {}
            _ => return Err(refused("not a path inside the worktree")),
        }
    }
    let Some((last, dirs)) = parts.split_last() else {
        return Err(refused("an empty path"));
    };
    let io = |source: std::io::Error| WorktreeError::Io {
        path: root.join(rel),
        source,
    };
    let mut dir = open_dir(None, root.as_os_str().as_bytes()).map_err(io)?;
    for d in dirs {
        dir = match open_dir(Some(&dir), d.as_bytes()) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(Removed::Nothing),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                return Err(refused(&format!(
                    "`{}` is a symlink or not a directory",
                    d.to_string_lossy()
                )));
            }
            Err(e) => return Err(io(e)),
        };
    }
    let name = c_name(last.as_bytes()).map_err(io)?;
    // SAFETY: a zeroed `stat` is a valid out-parameter for fstatat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is an open directory, `name` a NUL-terminated string,
    // `st` a valid `stat` to write; AT_SYMLINK_NOFOLLOW stats a link itself.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOENT) => Ok(Removed::Nothing),
            _ => Err(io(e)),
        };
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        return Ok(Removed::Nothing);
    }
    // SAFETY: as above; flags 0 unlinks a non-directory entry of `dir`.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(io(std::io::Error::last_os_error()));
    }
    Ok(Removed::File)
}

fn c_name(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
}

/// Opens directory `name` (in `at`, or from the current directory) never
/// through a symlink.
fn open_dir(at: Option<&OwnedFd>, name: &[u8]) -> std::io::Result<OwnedFd> {
    let name = c_name(name)?;
    let at = at.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `at` is AT_FDCWD or an open directory, `name` NUL-terminated.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlinked_directory_is_refused_and_its_target_kept() {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("precious"), "keep").expect("write");
        std::os::unix::fs::symlink(outside.path(), root.path().join("sub")).expect("link");
        let e = remove_file(root.path(), "sub/precious").expect_err("refused");
        assert!(e.to_string().contains("symlink"), "{e}");
        assert!(outside.path().join("precious").exists());
        for bad in ["../x", "/etc/passwd", ""] {
            assert!(remove_file(root.path(), bad).is_err(), "{bad}");
        }
        // The link itself, as the last component, is what goes.
        assert!(matches!(remove_file(root.path(), "sub"), Ok(Removed::File)));
        assert!(outside.path().join("precious").exists());
        assert!(matches!(
            remove_file(root.path(), "sub/none"),
            Ok(Removed::Nothing)
        ));
    }
}
