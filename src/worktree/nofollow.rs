//! Deleting and copying files of a worktree without leaving it (#53 items
//! 4 and 8). A path comes from a diff or a listing read earlier, or from a
//! socket client: by the time it is used an agent may have swapped a
//! directory on it for a symlink to somewhere else. So the path is checked
//! when it is used, not before: each directory is opened from the one above
//! with `O_NOFOLLOW` (`openat`), and the last component is unlinked, read or
//! created in the directory so opened. A symlink anywhere but the last
//! component is refused; a symlink there is removed or copied itself, never
//! its target.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
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
    let parts = components(rel).map_err(&refused)?;
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
    let st = match stat_at(&dir, &name) {
        Ok(st) => st,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(Removed::Nothing),
        Err(e) => return Err(io(e)),
    };
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        return Ok(Removed::Nothing);
    }
    // SAFETY: as above; flags 0 unlinks a non-directory entry of `dir`.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(io(std::io::Error::last_os_error()));
    }
    Ok(Removed::File)
}

/// What [`open_entry`] found at a path.
#[derive(Debug)]
pub(crate) enum Found {
    /// A regular file, opened, and its permission bits.
    File(std::fs::File, u32),
    /// A symlink, and what it points to (never followed).
    Link(OsString),
    /// Nothing, or something not to copy (a directory, a FIFO, a device).
    Other,
}

/// Opens `rel` in `root` for reading without following a link on the way
/// or at the end: a regular file is opened (`O_NOFOLLOW | O_NONBLOCK`, so
/// a FIFO swapped in cannot block, checked again with `fstat`), a symlink
/// is read as a link.
pub(crate) fn open_entry(root: &Path, rel: &str) -> Result<Found, WorktreeError> {
    let refused = |why: &str| WorktreeError::Refused(format!("{rel}: {why}; not copied"));
    let parts = components(rel).map_err(&refused)?;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(refused("an empty path"));
    };
    let io = |source: std::io::Error| WorktreeError::Io {
        path: root.join(rel),
        source,
    };
    let mut dir = open_dir(None, root.as_os_str().as_bytes()).map_err(io)?;
    for d in dirs {
        dir = open_dir(Some(&dir), d.as_bytes()).map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP | libc::ENOTDIR) => refused(&format!(
                "`{}` is a symlink or not a directory",
                d.to_string_lossy()
            )),
            _ => io(e),
        })?;
    }
    let name = c_name(last.as_bytes()).map_err(io)?;
    let st = match stat_at(&dir, &name) {
        Ok(st) => st,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(Found::Other),
        Err(e) => return Err(io(e)),
    };
    match st.st_mode & libc::S_IFMT {
        libc::S_IFLNK => read_link_at(&dir, &name).map(Found::Link).map_err(io),
        libc::S_IFREG => {
            let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
            let file = std::fs::File::from(open_at(&dir, &name, flags, 0).map_err(io)?);
            let meta = file.metadata().map_err(io)?;
            if !meta.is_file() {
                return Ok(Found::Other);
            }
            Ok(Found::File(file, st.st_mode & 0o7777))
        }
        _ => Ok(Found::Other),
    }
}

/// Writes `what` as `rel` in `root`, creating the directories on the way
/// and never writing through a link: a symlink on the way is refused, one
/// at the end is not opened (`O_NOFOLLOW`).
pub(crate) fn create_entry(root: &Path, rel: &str, what: Found) -> Result<(), WorktreeError> {
    let refused = |why: &str| WorktreeError::Refused(format!("{rel}: {why}; not copied"));
    let parts = components(rel).map_err(&refused)?;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(refused("an empty path"));
    };
    let io = |source: std::io::Error| WorktreeError::Io {
        path: root.join(rel),
        source,
    };
    let mut dir = open_dir(None, root.as_os_str().as_bytes()).map_err(io)?;
    for d in dirs {
        let name = c_name(d.as_bytes()).map_err(io)?;
        // SAFETY: `dir` is an open directory, `name` NUL-terminated.
        if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(io(e));
            }
        }
        dir = open_dir(Some(&dir), d.as_bytes()).map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP | libc::ENOTDIR) => refused(&format!(
                "`{}` is a symlink or not a directory",
                d.to_string_lossy()
            )),
            _ => io(e),
        })?;
    }
    let name = c_name(last.as_bytes()).map_err(io)?;
    match what {
        Found::File(mut from, mode) => {
            let flags =
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            let to = open_at(&dir, &name, flags, mode & 0o777).map_err(io)?;
            std::io::copy(&mut from, &mut std::fs::File::from(to)).map_err(io)?;
        }
        Found::Link(target) => {
            let target = c_name(target.as_bytes()).map_err(io)?;
            // SAFETY: both strings NUL-terminated, `dir` an open directory.
            if unsafe { libc::symlinkat(target.as_ptr(), dir.as_raw_fd(), name.as_ptr()) } != 0 {
                return Err(io(std::io::Error::last_os_error()));
            }
        }
        Found::Other => {}
    }
    Ok(())
}

/// `rel`'s names, refusing `..`, a root or a prefix.
fn components(rel: &str) -> Result<Vec<&std::ffi::OsStr>, &'static str> {
    let mut parts = Vec::new();
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::CurDir => {}
            _ => return Err("not a path inside the worktree"),
        }
    }
    Ok(parts)
}

/// `lstat` of `name` in `dir`.
fn stat_at(dir: &OwnedFd, name: &CString) -> std::io::Result<libc::stat> {
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
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// What the symlink `name` in `dir` points to.
fn read_link_at(dir: &OwnedFd, name: &CString) -> std::io::Result<OsString> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `buf` is writable for its length; `dir` open, `name` NUL-terminated.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).map_err(|_| std::io::Error::last_os_error())?;
    buf.truncate(n);
    Ok(OsString::from_vec(buf))
}

/// `openat(dir, name, flags, mode)` as an owned descriptor.
fn open_at(dir: &OwnedFd, name: &CString, flags: i32, mode: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: `dir` is an open directory, `name` NUL-terminated; `mode` is
    // read only with O_CREAT.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
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
