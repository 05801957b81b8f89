//! Creating, reusing, listing, removing and pruning agents' worktrees.

use std::path::{Path, PathBuf};

use super::git::Git;
use super::{DEFAULT_ROOT, Worktree, WorktreeError, WorktreeRequestSpec, branch_for};

/// The top level of the repository containing `dir`.
pub(crate) fn find_repo(dir: &Path) -> Result<PathBuf, WorktreeError> {
    let top = Git::at(dir)
        .line(&["rev-parse", "--show-toplevel"])
        .map_err(|_| WorktreeError::NotARepo(dir.to_owned()))?;
    if top.is_empty() {
        return Err(WorktreeError::NotARepo(dir.to_owned()));
    }
    // A hive worktree is itself a checkout; its repository is the main one.
    let common = Git::at(dir).line(&["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
    let common = PathBuf::from(common);
    if common.file_name().is_some_and(|n| n == ".git")
        && let Some(main) = common.parent()
    {
        return Ok(main.to_owned());
    }
    Ok(PathBuf::from(top))
}

/// The directory that holds a repository's hive worktrees.
pub(crate) fn root_dir(repo: &Path, root: Option<&Path>) -> PathBuf {
    repo.join(root.unwrap_or(Path::new(DEFAULT_ROOT)))
}

/// Creates the agent's worktree, or reuses the one a previous run made.
pub fn ensure(cwd: &Path, spec: &WorktreeRequestSpec) -> Result<Worktree, WorktreeError> {
    let cwd = canonical(cwd)?;
    let repo = canonical(&find_repo(&cwd)?)?;
    let root = root_dir(&repo, spec.root.as_deref());
    let path = root.join(&spec.agent_id);
    let branch = branch_for(&spec.agent_id, spec.branch.as_deref());
    let main = Git::at(&repo);
    main.run(&["check-ref-format", "--branch", &branch])
        .map_err(|_| WorktreeError::Refused(format!("`{branch}` is not a valid branch name")))?;
    // The agent works in the same subdirectory it was configured for.
    let sub = cwd
        .strip_prefix(&repo)
        .ok()
        .filter(|s| !s.starts_with(DEFAULT_ROOT))
        .map(Path::to_owned)
        .unwrap_or_default();
    if is_worktree_top(&path) {
        let current = Git::at(&path).line(&["branch", "--show-current"])?;
        return Ok(Worktree {
            agent_id: spec.agent_id.clone(),
            repo,
            cwd: path.join(&sub),
            path,
            branch: if current.is_empty() { branch } else { current },
            created: false,
            setup_output: None,
            name: String::new(),
            repos: Vec::new(),
        });
    }
    if path.exists() {
        let empty = std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none());
        if !empty {
            return Err(WorktreeError::PathTaken { path });
        }
        let _ = std::fs::remove_dir(&path);
    }
    create_root(&root)?;
    exclude_root(&repo, &root)?;
    // A worktree of ours whose directory vanished still holds its branch;
    // forget that one (never the repository's others).
    forget_missing(&repo, &path)?;
    add_at(&repo, &path, &branch)?;
    if spec.copy_uncommitted {
        copy_uncommitted(&repo, &path, &root)?;
    }
    Ok(Worktree {
        agent_id: spec.agent_id.clone(),
        repo,
        cwd: path.join(&sub),
        path,
        branch,
        created: true,
        setup_output: None,
        name: String::new(),
        repos: Vec::new(),
    })
}

/// `git worktree add` at `path`: on `branch` if it exists, else on a new
/// `branch` from the main checkout's HEAD.
pub(crate) fn add_at(repo: &Path, path: &Path, branch: &str) -> Result<(), WorktreeError> {
    let main = Git::at(repo);
    let p = path.to_string_lossy();
    if main.succeeds(&[
        "show-ref",
        "--verify",
        "--quiet",
        &format!("refs/heads/{branch}"),
    ]) {
        main.run(&["worktree", "add", &p, branch])?;
    } else {
        main.run(&["worktree", "add", "-b", branch, &p, "HEAD"])?;
    }
    Ok(())
}

pub(crate) fn canonical(p: &Path) -> Result<PathBuf, WorktreeError> {
    std::fs::canonicalize(p).map_err(|source| WorktreeError::Io {
        path: p.to_owned(),
        source,
    })
}

pub(crate) fn is_worktree_top(path: &Path) -> bool {
    path.join(".git").exists()
        && Git::at(path)
            .line(&["rev-parse", "--show-toplevel"])
            .is_ok_and(|top| canonical(Path::new(&top)).ok() == canonical(path).ok())
}

pub(crate) fn create_root(root: &Path) -> Result<(), WorktreeError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(root)
        .map_err(|source| WorktreeError::Io {
            path: root.to_owned(),
            source,
        })
}

/// Keeps the worktrees out of the main checkout's `git status`.
pub(crate) fn exclude_root(repo: &Path, root: &Path) -> Result<(), WorktreeError> {
    let Ok(rel) = root.strip_prefix(repo) else {
        return Ok(());
    };
    let common =
        Git::at(repo).line(&["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
    let info = Path::new(&common).join("info");
    let file = info.join("exclude");
    let line = format!("/{}/", rel.to_string_lossy().trim_end_matches('/'));
    let current = std::fs::read_to_string(&file).unwrap_or_default();
    if current.lines().any(|l| l.trim() == line) {
        return Ok(());
    }
    let io = |source| WorktreeError::Io {
        path: file.clone(),
        source,
    };
    std::fs::create_dir_all(&info).map_err(io)?;
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("# hive: agents' worktrees\n{line}\n"));
    std::fs::write(&file, text).map_err(io)
}

/// Brings the main checkout's uncommitted changes (tracked edits and
/// untracked files) into a fresh worktree.
pub(crate) fn copy_uncommitted(repo: &Path, path: &Path, root: &Path) -> Result<(), WorktreeError> {
    let main = Git::at(repo);
    let patch = main.run(&["diff", "HEAD", "--binary", "--no-ext-diff", "--no-color"])?;
    if !patch.trim().is_empty() {
        Git::at(path).run_with_input(&["apply", "--whitespace=nowarn", "-"], patch.as_bytes())?;
    }
    let untracked = main.run(&["ls-files", "--others", "--exclude-standard", "-z"])?;
    // Read and written without following links (#53): a planted symlink
    // comes along as a link, never as its target's content.
    for rel in untracked.split('\0').filter(|s| !s.is_empty()) {
        if repo.join(rel).starts_with(root) {
            continue;
        }
        let copied = super::nofollow::open_entry(repo, rel)
            .and_then(|found| super::nofollow::create_entry(path, rel, found));
        match copied {
            Err(WorktreeError::Refused(why)) => tracing::warn!("{why}"),
            other => other?,
        }
    }
    Ok(())
}

/// One hive worktree as `hive worktree list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    pub agent_id: String,
    pub path: PathBuf,
    pub branch: Option<String>,
    pub head: String,
    /// The directory is gone (git still lists it until pruned).
    pub missing: bool,
    /// Uncommitted changes in the worktree.
    pub dirty: usize,
    /// Commits on its branch the main checkout's HEAD does not have.
    pub ahead: usize,
    /// A running hive has a pane in it (why, for messages): never removed.
    pub in_use: Option<String>,
}

impl WorktreeInfo {
    pub fn has_unmerged_work(&self) -> bool {
        self.dirty > 0 || self.ahead > 0
    }

    pub(crate) fn describe_work(&self) -> String {
        match (self.dirty, self.ahead) {
            (0, 0) => "nothing unmerged".into(),
            (d, 0) => format!("{d} uncommitted change(s)"),
            (0, a) => format!("{a} commit(s) not in the main checkout"),
            (d, a) => format!("{d} uncommitted change(s), {a} commit(s) not in the main checkout"),
        }
    }
}

/// The repository's hive worktrees (those under the root).
pub fn list(repo: &Path, root: Option<&Path>) -> Result<Vec<WorktreeInfo>, WorktreeError> {
    let repo = canonical(repo)?;
    let root = root_dir(&repo, root);
    let root = canonical(&root).unwrap_or(root);
    let main = Git::at(&repo);
    let text = main.run(&["worktree", "list", "--porcelain"])?;
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut path = None;
        let mut head = String::new();
        let mut branch = None;
        let mut prunable = false;
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let Some(h) = line.strip_prefix("HEAD ") {
                head = h.to_owned();
            } else if let Some(b) = line.strip_prefix("branch ") {
                branch = Some(b.trim_start_matches("refs/heads/").to_owned());
            } else if line.starts_with("prunable") {
                prunable = true;
            }
        }
        let Some(path) = path else { continue };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Under the root, or a member of a workspace (issue 52): `fs/api`.
        let agent_id = if path.parent() == Some(root.as_path()) {
            name
        } else if let Some(owner) = super::marker::owner_of(&path) {
            format!("{owner}/{name}")
        } else {
            continue;
        };
        let missing = prunable || !path.exists();
        let dirty = if missing {
            0
        } else {
            Git::at(&path)
                .run(&["status", "--porcelain"])?
                .lines()
                .filter(|l| !l.is_empty())
                .count()
        };
        let ahead = match &branch {
            Some(b) => main
                .line(&["rev-list", "--count", &format!("HEAD..{b}")])?
                .parse()
                .unwrap_or(0),
            None => 0,
        };
        let in_use = if missing {
            None
        } else {
            super::live::in_use(&path)
        };
        out.push(WorktreeInfo {
            agent_id,
            path,
            branch,
            head,
            missing,
            dirty,
            ahead,
            in_use,
        });
    }
    Ok(out)
}

/// Serializes this process's removals (see [`remove`]).
static REMOVING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Removes an agent's worktree (and its `hive/` branch). Unmerged work is
/// refused unless `force`; a worktree a running hive uses is refused always.
pub fn remove(
    repo: &Path,
    root: Option<&Path>,
    id: &str,
    force: bool,
) -> Result<WorktreeInfo, WorktreeError> {
    // Two panes closed at once remove at once: git's own ref and
    // packed-refs locks refuse a second writer rather than wait, and each
    // listing probes the other's lock.
    let _one_at_a_time = REMOVING.lock().unwrap_or_else(|e| e.into_inner());
    let info = list(repo, root)?
        .into_iter()
        .find(|w| w.agent_id == id)
        .ok_or_else(|| WorktreeError::Unknown(id.to_owned()))?;
    if let Some(why) = &info.in_use {
        return Err(WorktreeError::Live {
            id: id.to_owned(),
            why: why.clone(),
        });
    }
    if info.has_unmerged_work() && !force {
        return Err(WorktreeError::Unmerged {
            id: id.to_owned(),
            detail: info.describe_work(),
        });
    }
    let main = Git::at(repo);
    if info.missing {
        forget_missing(repo, &info.path)?;
    } else {
        main.run(&[
            "worktree",
            "remove",
            "--force",
            &info.path.to_string_lossy(),
        ])?;
    }
    if let Some(b) = info.branch.as_deref().filter(|b| b.starts_with("hive/")) {
        main.run(&["branch", "-D", b])?;
    }
    // A workspace's last member gone: its root goes too.
    if let Some(ws) = info.path.parent().filter(|_| id.contains('/')) {
        super::marker::tidy(ws);
    }
    Ok(info)
}

/// What `prune` did: worktrees removed and the ones kept, with why.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PruneReport {
    pub removed: Vec<String>,
    pub kept: Vec<(String, String)>,
}

/// Forgets hive's worktrees whose directories are gone and removes the ones
/// with nothing left to bring home, one by one; keeps the rest (always
/// those a running hive has a pane in). Only
/// entries under the root are touched: a user's own worktree (even one on
/// a drive that is not mounted now) keeps its registration.
pub fn prune(repo: &Path, root: Option<&Path>) -> Result<PruneReport, WorktreeError> {
    let mut report = PruneReport::default();
    for w in list(repo, root)? {
        if let Some(why) = &w.in_use {
            report.kept.push((w.agent_id.clone(), why.clone()));
            continue;
        }
        if w.has_unmerged_work() {
            // A vanished directory still leaves its branch with the commits.
            report.kept.push((w.agent_id.clone(), w.describe_work()));
            continue;
        }
        // Ignored files (`.env`, local settings) are work git does not see.
        let ignored = if w.missing {
            Vec::new()
        } else {
            ignored_files(&w.path)?
        };
        if let Some(first) = ignored.first() {
            report.kept.push((
                w.agent_id.clone(),
                format!(
                    "{} ignored file(s), such as {first} (`hive worktree remove {} --force` removes it)",
                    ignored.len(),
                    w.agent_id
                ),
            ));
            continue;
        }
        remove(repo, root, &w.agent_id, false)?;
        report.removed.push(w.agent_id);
    }
    Ok(report)
}

/// Files in the worktree at `path` that git ignores (directories end in `/`).
fn ignored_files(path: &Path) -> Result<Vec<String>, WorktreeError> {
    let text = Git::at(path).run(&["status", "--porcelain", "--ignored", "-z"])?;
    Ok(text
        .split('\0')
        .filter_map(|e| e.strip_prefix("!! "))
        .map(str::to_owned)
        .collect())
}

/// Forgets the registration of the worktree at `path` if its directory is
/// gone: that entry's admin directory only, as `git worktree prune` would
/// for it, never the repository's other entries. A locked entry is kept.
pub(crate) fn forget_missing(repo: &Path, path: &Path) -> Result<(), WorktreeError> {
    if path.exists() {
        return Ok(());
    }
    let common =
        Git::at(repo).line(&["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
    let admin = Path::new(&common).join("worktrees");
    let Ok(entries) = std::fs::read_dir(&admin) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let gitdir = std::fs::read_to_string(e.path().join("gitdir")).unwrap_or_default();
        let points_here = Path::new(gitdir.trim()).parent() == Some(path);
        if points_here && !e.path().join("locked").exists() {
            std::fs::remove_dir_all(e.path()).map_err(|source| WorktreeError::Io {
                path: e.path(),
                source,
            })?;
        }
    }
    Ok(())
}
