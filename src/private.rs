//! hive's own files hold conversations and session handles, so only the user
//! may read them: directories are created 0700 and files 0600, whatever the
//! umask, and [`tighten_tree`] repairs what older versions (or a careless
//! copy) left group- or world-readable.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

pub(crate) const DIR_MODE: u32 = 0o700;
pub(crate) const FILE_MODE: u32 = 0o600;

/// `mkdir -p` whose new directories are 0700; the leaf is made 0700 too
/// when it already existed with more.
pub(crate) fn create_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    restrict(dir, DIR_MODE)
}

/// Open options that create files 0600.
pub(crate) fn file_options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.mode(FILE_MODE);
    o
}

/// Opens `path` with `options`, never through a symlink (`O_NOFOLLOW`),
/// and only if it is a regular file owned by this user: a link or a FIFO
/// planted where hive keeps its files is refused with a clear error, not
/// written through.
pub(crate) fn open_own_file(options: &mut OpenOptions, path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::MetadataExt;
    let file = options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => io::Error::other(
                "a symlink, not a regular file: hive writes its files only in place",
            ),
            _ => e,
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    // SAFETY: geteuid(2) cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(io::Error::other(format!(
            "owned by uid {}, not by this user (uid {me})",
            meta.uid()
        )));
    }
    Ok(file)
}

/// The largest state file hive reads whole (a layout, a pane's state, a
/// port, an MCP config): far above what hive writes, far below what a
/// planted `/dev/zero` would cost.
pub(crate) const MAX_STATE_BYTES: u64 = 16 << 20;

/// Reads hive's own file `path` whole, through [`open_own_file`] (no
/// symlink, no FIFO or device, owned by this user) and at most `max` bytes:
/// a longer file is refused, not read.
pub(crate) fn read_own(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_own_file(OpenOptions::new().read(true), path)?;
    let too_long = || io::Error::other(format!("larger than {max} bytes: not a file hive wrote"));
    if file.metadata()?.len() > max {
        return Err(too_long());
    }
    let mut bytes = Vec::new();
    // The length may grow after the check: the read stops past the cap.
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_long());
    }
    Ok(bytes)
}

/// [`read_own`] as text.
pub(crate) fn read_own_string(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read_own(path, max)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Writes hive's own file `path` atomically and in place: `bytes` go to a
/// new temp file beside it (created exclusively, never through a link),
/// synced, then renamed over `path`. A symlink planted at `path` is
/// replaced, never written through; readers see the old content or the new.
pub(crate) fn write_own(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    create_dir(dir)?;
    let mut name = path.file_name().unwrap_or_default().to_owned();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    name.push(format!(".tmp-{}-{n}", std::process::id()));
    let tmp = dir.join(name);
    let result = (|| {
        let mut f = file_options()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Drops group and other bits from `path` (not following a symlink).
fn restrict(path: &Path, mode: u32) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() || meta.permissions().mode() & 0o077 == 0 {
        return Ok(());
    }
    std::fs::set_permissions(path, Permissions::from_mode(mode))
}

/// Makes `root` and everything under it (to a few levels, never through a
/// symlink) private: directories 0700, files 0600. Returns how many modes it
/// changed; failures (files of another owner) are logged and skipped.
pub(crate) fn tighten_tree(root: &Path) -> usize {
    fn walk(path: &Path, depth: usize, changed: &mut usize) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            return;
        }
        let mode = if ft.is_dir() { DIR_MODE } else { FILE_MODE };
        if meta.permissions().mode() & 0o077 != 0 {
            match std::fs::set_permissions(path, Permissions::from_mode(mode)) {
                Ok(()) => *changed += 1,
                Err(e) => tracing::warn!(path = %path.display(), error = %e, "cannot make private"),
            }
        }
        if ft.is_dir() && depth > 0 {
            for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
                walk(&entry.path(), depth - 1, changed);
            }
        }
    }
    let mut changed = 0;
    // `projects/<project>/history/<agent>/<session>.jsonl` is five deep.
    walk(root, 6, &mut changed);
    if changed > 0 {
        tracing::info!(root = %root.display(), changed, "made hive's files private");
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_dirs_and_files_are_private() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&tmp.path().join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        let f = dir.join("f");
        file_options()
            .create(true)
            .append(true)
            .open(&f)
            .unwrap()
            .write_all(b"x")
            .unwrap();
        assert_eq!(mode(&f), 0o600);
    }

    #[test]
    fn existing_modes_are_tightened_without_following_links() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let other = outside.path().join("keep.txt");
        std::fs::write(&other, "x").unwrap();
        std::fs::set_permissions(&other, Permissions::from_mode(0o644)).unwrap();
        let root = tmp.path().join("data");
        let deep = root.join("history/agent");
        std::fs::create_dir_all(&deep).unwrap();
        let file = deep.join("s.jsonl");
        std::fs::write(&file, "{}\n").unwrap();
        for p in [&root, &root.join("history"), &deep] {
            std::fs::set_permissions(p, Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::set_permissions(&file, Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&other, deep.join("link")).unwrap();
        assert_eq!(tighten_tree(&root), 4);
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&deep), 0o700);
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&other), 0o644, "a link's target is not ours to change");
        assert_eq!(tighten_tree(&root), 0);
    }
}
