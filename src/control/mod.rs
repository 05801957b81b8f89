//! Reaching a running hive from outside (issue 18): the server's Unix
//! socket, a line-delimited JSON protocol, and `hive ctl` as its client
//! (consoles share the socket: their first byte is NUL, src/protocol/).
//!
//! The server hosts the socket ([`server`]); requests travel to the
//! server's loop as typed commands and are answered there by the [`hub`],
//! which owns no runner and reads the pane registry (src/panes/).
//! The [`protocol`] module has no socket or app types, so the MCP server
//! (issue 16) can reuse it.

pub(crate) mod client;
mod host;
pub mod hub;

pub mod protocol;
pub mod server;

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub use crate::panes::Started;
pub(crate) use host::Host;

use crate::config::ConfigSource;

/// Environment variable naming the socket `hive ctl` talks to.
pub(crate) const SOCKET_ENV: &str = "HIVE_SOCKET";

/// Where servers' sockets live (`paths::socket_dir`).
pub fn socket_dir() -> PathBuf {
    crate::paths::socket_dir()
}

/// A socket path must fit in `sockaddr_un` (108 bytes with its NUL); a
/// little is kept spare.
const MAX_SOCKET_PATH: usize = 100;

/// The server's name for `source` in `dir` ([`server_name`]).
pub(crate) fn socket_name(dir: &Path, source: &ConfigSource) -> String {
    server_name(dir, &crate::project::Project::of(source))
}

/// The name of `project`'s server in `dir` (issue 46 item 2): its label
/// (`socket_label`), unless another project's server runs under it; then
/// the label tagged with a hash of the config's path. Which project a
/// server is, its `<name>.project` file says ([`OwnerFile`]); a server of
/// an older hive has none and keeps the label (attaching checks its
/// config). A name too long for a socket path in `dir` is cut short with
/// a hash of the whole name (so two long names stay apart).
pub(crate) fn server_name(dir: &Path, project: &crate::project::Project) -> String {
    let plain = fit_label(dir, project.label());
    let tagged = fit_label(dir, &project.tagged_label());
    let live = |name: &str| std::os::unix::net::UnixStream::connect(sock(dir, name)).is_ok();
    let owner = |name: &str| owner_of(dir, name);
    let ours = |name: &str| owner(name).as_deref() == Some(project.key());
    if tagged != plain && ours(&tagged) && live(&tagged) {
        return tagged;
    }
    if ours(&plain) || !live(&plain) || owner(&plain).is_none() {
        return plain;
    }
    tagged
}

fn sock(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.sock"))
}

/// The project key the server named `name` in `dir` wrote, if any.
pub(crate) fn owner_of(dir: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.project"))).ok()?;
    let key = text.lines().next()?.trim();
    (!key.is_empty()).then(|| key.to_owned())
}

/// `<name>.project` beside a server's socket: its project's key, then its
/// config's path (for people). Written before the socket is bound, removed
/// when the server ends.
pub(crate) struct OwnerFile(PathBuf);

impl OwnerFile {
    /// Writes it for `project`'s server `name` in `dir`, unless a server
    /// answers there (then binding fails and says so; its file stays).
    pub(crate) fn write(
        dir: &Path,
        name: &str,
        project: &crate::project::Project,
    ) -> io::Result<Option<Self>> {
        use std::io::Write;
        if std::os::unix::net::UnixStream::connect(sock(dir, name)).is_ok() {
            return Ok(None);
        }
        prepare_dir(dir)?;
        let path = dir.join(format!("{name}.project"));
        let mut options = crate::private::file_options();
        options.write(true).create(true).truncate(true);
        let mut f = crate::private::open_own_file(&mut options, &path)?;
        writeln!(f, "{}\n{}", project.key(), project.describe())?;
        Ok(Some(Self(path)))
    }
}

impl Drop for OwnerFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn fit_label(dir: &Path, label: &str) -> String {
    let room = MAX_SOCKET_PATH.saturating_sub(dir.as_os_str().len() + "/.sock".len());
    if label.len() <= room {
        return label.to_owned();
    }
    // Stable across builds: the name must not change between the server
    // that made it and the client that looks for it.
    let hash = crate::project::fnv1a(label.as_bytes());
    let tag = format!("-{:08x}", hash as u32);
    let keep = room.saturating_sub(tag.len()).min(label.len());
    // Labels are ASCII (`socket_label` keeps only ASCII).
    format!("{}{tag}", &label[..keep])
}

/// A `--socket` / `HIVE_SOCKET` value: a path when it has a slash, else a
/// name in the socket dir.
pub(crate) fn socket_path_for(arg: &str, dir: &Path) -> PathBuf {
    if arg.contains('/') {
        PathBuf::from(arg)
    } else {
        dir.join(format!("{}.sock", arg.trim_end_matches(".sock")))
    }
}

/// Creates the socket dir (0700) or checks one that exists: ours, and no
/// one else's to read or enter.
pub(crate) fn prepare_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::metadata(dir)?;
    if meta.uid() != current_uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to another user; set XDG_RUNTIME_DIR to a directory of yours",
                dir.display()
            ),
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

pub(crate) fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The SO_PEERCRED rule: only the user running hive may drive it.
pub fn peer_allowed(peer_uid: u32, own_uid: u32) -> bool {
    peer_uid == own_uid
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::socket_label;

    #[test]
    fn labels_name_the_project() {
        assert_eq!(socket_label(&ConfigSource::Builtin), "default");
        // A label too long for a socket path in its dir is cut, with a hash.
        let deep = Path::new(
            "/root/.cache/peerbench/run-hive-claude-stream_long-r0-quick/xdg-state/hive/run",
        );
        let long = "run-hive-claude-stream_long-r0-quick";
        let fitted = fit_label(deep, long);
        assert!(
            fitted.starts_with("run-hiv") && fitted.len() < long.len(),
            "{fitted}"
        );
        assert!(deep.join(format!("{fitted}.sock")).as_os_str().len() <= MAX_SOCKET_PATH);
        assert_ne!(
            fitted,
            fit_label(deep, "run-hive-claude-stream_long-r1-quick")
        );
        assert_eq!(fit_label(Path::new("/run/user/0/hive"), long), long);
        assert_eq!(
            socket_label(&ConfigSource::File("/src/my app/hive.toml".into())),
            "my_app"
        );
        assert_eq!(
            socket_label(&ConfigSource::File(
                "/home/u/.config/hive/config.toml".into()
            )),
            "hive"
        );
        assert_eq!(
            socket_label(&ConfigSource::File("/x/review.toml".into())),
            "review"
        );
        assert_eq!(
            socket_label(&ConfigSource::File("/x/.hidden.toml".into())),
            "hidden"
        );
    }

    #[test]
    fn socket_arg_is_a_path_or_a_name() {
        let dir = Path::new("/run/user/1/hive");
        assert_eq!(
            socket_path_for("work", dir),
            Path::new("/run/user/1/hive/work.sock")
        );
        assert_eq!(
            socket_path_for("work.sock", dir),
            Path::new("/run/user/1/hive/work.sock")
        );
        assert_eq!(socket_path_for("./a.sock", dir), Path::new("./a.sock"));
    }

    #[test]
    fn only_the_same_user_is_let_in() {
        assert!(peer_allowed(1000, 1000));
        assert!(!peer_allowed(1001, 1000));
        assert!(!peer_allowed(0, 1000));
    }

    #[test]
    fn socket_dir_is_made_private() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("hive");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        prepare_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let fresh = tmp.path().join("a/b");
        prepare_dir(&fresh).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
