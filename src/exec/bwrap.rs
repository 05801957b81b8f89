//! The bwrap kind: the agent's whole process tree in a bubblewrap sandbox
//! on this machine. Its working directory (a worktree, or its cwd) is
//! read-write; the system is read-only; the home directory, /tmp, hive's
//! own runtime, state and data directories and container engines' sockets
//! are hidden; the vendor's config files are seeded into a home of the
//! pane's own (never a bind of the whole `~/.claude`); it has its own PID,
//! IPC and UTS namespaces, no network unless the host allows it, and dies
//! with hive (`--die-with-parent`, and hive's process-group and orphan
//! rules, which reach into the box). What it does not isolate: the kernel
//! (no seccomp filter of hive's), and what the network lets it reach when
//! allowed (docs/sandbox.md).

use std::fmt;
use std::path::{Path, PathBuf};

use super::{ExecError, Inner, Pane, Wrapped, find_program};

/// Whether the box has a network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// A network namespace of its own with only a loopback that is down:
    /// nothing outside the box is reachable, 127.0.0.1 of the machine
    /// included.
    #[default]
    None,
    /// The machine's network.
    Host,
}

impl Network {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(Self::None),
            "host" => Some(Self::Host),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Host => "host",
        }
    }
}

/// A bubblewrap sandbox's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bwrap {
    /// `bwrap`, or a path to it.
    pub program: String,
    pub network: Network,
    /// The user's home directory: hidden, but for what is seeded.
    pub home: PathBuf,
    /// Where each pane's own home lives (`<state>/sandbox/<pane>`).
    pub homes: PathBuf,
    /// More to hide: hive's runtime, state and data dirs, the user's
    /// runtime dir (sockets: hive's own, the session bus), engines' sockets.
    pub hide: Vec<PathBuf>,
    /// More to show, read-only (tools installed under the home).
    pub read_only: Vec<PathBuf>,
    /// More to share read-write (a cache).
    pub read_write: Vec<PathBuf>,
}

/// One mount of the box, for the command line and the pane's details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mount {
    ReadOnly(PathBuf, PathBuf),
    ReadWrite(PathBuf, PathBuf),
    /// An empty, private directory over what was there.
    Hidden(PathBuf),
    /// A file (a socket) shadowed by /dev/null.
    Shadowed(PathBuf),
}

impl fmt::Display for Mount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |from: &Path, to: &Path| {
            if from == to {
                to.display().to_string()
            } else {
                format!("{} (from {})", to.display(), from.display())
            }
        };
        match self {
            Mount::ReadOnly(from, to) => write!(f, "read-only  {}", show(from, to)),
            Mount::ReadWrite(from, to) => write!(f, "read-write {}", show(from, to)),
            Mount::Hidden(p) => write!(f, "hidden     {}", p.display()),
            Mount::Shadowed(p) => write!(f, "hidden     {} (socket)", p.display()),
        }
    }
}

/// Sockets of container engines: a box that reached one could start a
/// privileged container, and so leave the box.
pub const ENGINE_SOCKETS: &[&str] = &[
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
];

impl Bwrap {
    /// The pane's own home directory.
    pub fn pane_home(&self, pane: &Pane) -> PathBuf {
        self.homes.join(&pane.id)
    }

    /// Every mount, in the order bubblewrap applies them (a later one
    /// wins): the system read-only, then what is hidden, then the pane's
    /// home, the extras, the repository's git dir, the program, the cwd.
    pub fn mounts(&self, pane: &Pane, cwd: Option<&Path>) -> Vec<Mount> {
        let root = PathBuf::from("/");
        let mut m = vec![Mount::ReadOnly(root.clone(), root)];
        let mut hidden = vec![PathBuf::from("/tmp"), self.home.clone()];
        hidden.extend(self.hide.iter().cloned());
        for h in hidden {
            match std::fs::symlink_metadata(&h) {
                Ok(md) if md.is_dir() => m.push(Mount::Hidden(h)),
                Ok(_) => m.push(Mount::Shadowed(h)),
                Err(_) => {}
            }
        }
        let own = self.pane_home(pane);
        for top in seed_tops(&pane.seed) {
            if own.join(&top).exists() {
                m.push(Mount::ReadWrite(own.join(&top), self.home.join(&top)));
            }
        }
        for p in self.read_only.iter().filter(|p| p.exists()) {
            m.push(Mount::ReadOnly(p.clone(), p.clone()));
        }
        for p in self.read_write.iter().filter(|p| p.exists()) {
            m.push(Mount::ReadWrite(p.clone(), p.clone()));
        }
        if let Some(cwd) = cwd {
            m.extend(git_mounts(cwd));
            // A workspace (issue 52): each repository's worktree under it.
            for member in workspace_members(cwd) {
                m.extend(git_mounts(&member));
            }
        }
        if let Some(cwd) = cwd {
            m.push(Mount::ReadWrite(cwd.to_owned(), cwd.to_owned()));
        }
        m
    }

    /// `bwrap … -- program args`; seeds the pane's home first.
    pub fn wrap(&self, host: &str, pane: &Pane, inner: &Inner) -> Result<Wrapped, ExecError> {
        let invalid = |message: String| ExecError::Invalid {
            host: host.to_owned(),
            message,
        };
        let cwd = inner.cwd.filter(|c| c.is_absolute()).ok_or_else(|| {
            invalid("a sandboxed agent needs an absolute working directory".into())
        })?;
        if !valid_pane_id(&pane.id) {
            return Err(invalid(format!("`{}` cannot name a pane's home", pane.id)));
        }
        self.seed(pane)
            .map_err(|e| invalid(format!("seeding the pane's home: {e}")))?;
        let mut args: Vec<String> = [
            "--die-with-parent",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
        .map(str::to_owned)
        .to_vec();
        if self.network == Network::None {
            args.push("--unshare-net".into());
        }
        let mut mounts = self.mounts(pane, Some(cwd));
        // The program itself, where it lives in a hidden place (a CLI
        // installed under the home): its directory, read-only, before the cwd.
        let at = mounts.len() - 1;
        for dir in program_dirs(inner.program, &self.hidden_roots()) {
            mounts.insert(at, Mount::ReadOnly(dir.clone(), dir));
        }
        let path = |p: &Path| p.display().to_string();
        for mount in &mounts {
            match mount {
                Mount::ReadOnly(from, to) => {
                    args.extend(["--ro-bind".into(), path(from), path(to)])
                }
                Mount::ReadWrite(from, to) => args.extend(["--bind".into(), path(from), path(to)]),
                Mount::Hidden(p) => args.extend(["--tmpfs".into(), path(p)]),
                Mount::Shadowed(p) => {
                    args.extend(["--ro-bind".into(), "/dev/null".into(), path(p)])
                }
            }
            // /dev and /proc of the box's own, right after the root.
            if matches!(mount, Mount::ReadOnly(f, _) if f == Path::new("/")) {
                args.extend(["--dev", "/dev", "--proc", "/proc"].map(str::to_owned));
            }
        }
        args.extend(["--chdir".into(), path(cwd)]);
        args.extend(["--setenv".into(), "HIVE_SANDBOX".into(), "bwrap".into()]);
        args.push("--".into());
        args.push(inner.program.to_owned());
        args.extend(inner.args.iter().cloned());
        Ok(Wrapped {
            program: self.program.clone(),
            args,
            cwd: Some(cwd.to_owned()),
            env: inner.env.clone(),
        })
    }

    fn hidden_roots(&self) -> Vec<PathBuf> {
        let mut roots = vec![PathBuf::from("/tmp"), self.home.clone()];
        roots.extend(self.hide.iter().cloned());
        roots
    }

    /// Copies each seeded file from the home into the pane's home (0600,
    /// dirs 0700) when the pane's copy is missing or older: credentials a
    /// vendor refreshed at home come in; what the agent wrote stays its own.
    pub fn seed(&self, pane: &Pane) -> std::io::Result<()> {
        let own = self.pane_home(pane);
        crate::private::create_dir(&own)?;
        for rel in &pane.seed {
            if rel.is_absolute() || rel.components().any(|c| c.as_os_str() == "..") {
                continue;
            }
            let dst = own.join(rel);
            if let Some(parent) = dst.parent() {
                create_private_dirs(&own, parent)?;
            }
            let src = self.home.join(rel);
            let Ok(md) = std::fs::metadata(&src) else {
                continue;
            };
            if !md.is_file() {
                continue;
            }
            let newer = match std::fs::metadata(&dst).and_then(|d| d.modified()) {
                Ok(d) => md.modified().is_ok_and(|s| s > d),
                Err(_) => true,
            };
            if newer {
                let bytes = std::fs::read(&src)?;
                crate::private::write_own(&dst, &bytes)?;
            }
        }
        Ok(())
    }
}

/// A pane id names a directory: letters, digits, `-` and `_` (as the
/// config's ids).
fn valid_pane_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Makes `dir` and its parents below `root`, each 0700.
fn create_private_dirs(root: &Path, dir: &Path) -> std::io::Result<()> {
    let mut missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|d| *d != root && d.starts_with(root))
        .filter(|d| !d.exists())
        .collect();
    missing.reverse();
    for d in missing {
        crate::private::create_dir(d)?;
    }
    Ok(())
}

/// The first component of each seeded path: what is bound into the home.
fn seed_tops(seed: &[PathBuf]) -> Vec<PathBuf> {
    let mut tops: Vec<PathBuf> = seed
        .iter()
        .filter_map(|p| p.components().next())
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect();
    tops.sort();
    tops.dedup();
    tops
}

/// A worktree's repository: its common git dir read-write (git in the
/// worktree writes objects, refs and the index there), but its hooks and
/// config read-only, since git outside the box runs what they name.
fn git_mounts(cwd: &Path) -> Vec<Mount> {
    let Some(common) = common_git_dir(cwd) else {
        return Vec::new();
    };
    if common.starts_with(cwd) {
        return Vec::new();
    }
    let hooks = common.join("hooks");
    // An absent hooks dir would be the box's to create.
    if !hooks.exists() {
        let _ = crate::private::create_dir(&hooks);
    }
    let mut m = vec![Mount::ReadWrite(common.clone(), common.clone())];
    for p in [hooks, common.join("config")] {
        if p.exists() {
            m.push(Mount::ReadOnly(p.clone(), p));
        }
    }
    m
}

/// The worktrees directly under a workspace root (its marker,
/// `worktree::workspace::MARKER`, says it is one; named here so exec
/// imports nothing of worktree); none for any other directory.
fn workspace_members(cwd: &Path) -> Vec<PathBuf> {
    if !cwd.join(".hive-workspace.json").is_file() {
        return Vec::new();
    }
    std::fs::read_dir(cwd)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.join(".git").is_file())
                .collect()
        })
        .unwrap_or_default()
}

/// `<repo>/.git` of a worktree at `cwd` (its `.git` file names
/// `gitdir: <repo>/.git/worktrees/<name>`, whose `commondir` leads back).
fn common_git_dir(cwd: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(cwd.join(".git")).ok()?;
    let gitdir = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    let gitdir = if gitdir.is_absolute() {
        gitdir
    } else {
        cwd.join(gitdir)
    };
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = gitdir.join(common.trim());
    common.canonicalize().ok()
}

/// The directories of `program` (as PATH finds it, and its symlink's
/// target) that lie in a hidden place.
fn program_dirs(program: &str, hidden: &[PathBuf]) -> Vec<PathBuf> {
    let Some(found) = find_program(program) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = [Some(found.clone()), found.canonicalize().ok()]
        .into_iter()
        .flatten()
        .filter_map(|p| p.parent().map(Path::to_owned))
        .filter(|d| hidden.iter().any(|h| d.starts_with(h)))
        .collect();
    dirs.dedup();
    dirs
}

#[cfg(test)]
#[path = "bwrap_tests.rs"]
mod tests;
