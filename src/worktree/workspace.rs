//! Workspaces (issue 52): one task across several repositories. An agent
//! with `repos = ["../api", "../web"]` and `worktree = true` gets one root
//! in hive's data directory, `<data>/workspaces/<id>-<hash>/`, holding a
//! real worktree of each repository (`api/`, `web/`; not symlinks, so a
//! sandbox's file discovery sees them), each on the pane's branch. The
//! agent runs at the root. The pane's [`Worktree`] is the root, its
//! `repos` the members; everything that works on one worktree walks
//! [`Worktree::members`], which is the worktree itself for a pane of one
//! repository.
//!
//! Creation is crash-safe. The workspace's marker (`.hive-workspace.json`,
//! written atomically first) says which repository each directory is; a
//! member is built as `.building-<name>` and renamed into place by
//! `git worktree move` only once its checkout is whole. At the next start a
//! `.building-*` left by a kill is removed (worktree, registration and
//! all) and built again, and every member is `git worktree repair`ed, so a
//! kill in the middle of a move leaves no broken link behind.

use std::path::{Path, PathBuf};

use super::git::Git;
use super::manage::{add_at, canonical, copy_uncommitted, find_repo, forget_missing};
use super::marker::{BUILDING, Marker, Member, io_err, read_marker, root_for, write_marker};
use super::{Worktree, WorktreeError, WorktreeRequestSpec, branch_for};

pub use super::marker::{MARKER, owner_of, tidy, workspaces_dir};

impl Worktree {
    /// The worktrees this pane works in: a workspace's repositories, or
    /// this worktree alone.
    pub fn members(&self) -> &[Worktree] {
        if self.repos.is_empty() {
            std::slice::from_ref(self)
        } else {
            &self.repos
        }
    }

    /// Whether it is a workspace of several repositories.
    pub fn is_workspace(&self) -> bool {
        !self.repos.is_empty()
    }

    /// The member named `name` (`""`: the only one of a single worktree).
    pub fn member(&self, name: &str) -> Option<&Worktree> {
        self.members().iter().find(|m| m.name == name)
    }

    /// `path` as the pane sees it: `api/src/lib.rs` in a workspace.
    pub fn label(&self, path: &str) -> String {
        if self.name.is_empty() {
            path.to_owned()
        } else {
            format!("{}/{path}", self.name)
        }
    }
}

/// A directory name for a repository: its top level's name, without
/// leading dots (the marker and members being built start with one).
fn base_name(repo: &Path) -> String {
    let name = repo
        .file_name()
        .map(|n| n.to_string_lossy().trim_start_matches('.').to_owned())
        .unwrap_or_default();
    if name.is_empty() { "repo".into() } else { name }
}

/// Each repository's name in the workspace: the one the marker gave it,
/// else its directory's name, `-2`, `-3`… when another repository has it.
fn assign(marker: &mut Marker, repos: &[PathBuf]) -> Vec<Member> {
    let mut out = Vec::new();
    for repo in repos {
        if let Some(m) = marker.repos.iter().find(|m| &m.repo == repo) {
            out.push(m.clone());
            continue;
        }
        let base = base_name(repo);
        let taken = |n: &str| marker.repos.iter().any(|m| m.name == n);
        let name = std::iter::once(base.clone())
            .chain((2..).map(|i| format!("{base}-{i}")))
            .find(|n| !taken(n))
            .unwrap_or(base);
        let m = Member {
            name,
            repo: repo.clone(),
        };
        marker.repos.push(m.clone());
        out.push(m);
    }
    out
}

/// Creates or reuses the workspace of the agent `spec` names over `repos`
/// (directories inside git repositories, in order), finishing one a kill
/// left half made.
pub fn ensure(spec: &WorktreeRequestSpec, repos: &[PathBuf]) -> Result<Worktree, WorktreeError> {
    let mains = repos
        .iter()
        .map(|r| canonical(&find_repo(&canonical(r)?)?))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, a) in mains.iter().enumerate() {
        if let Some(j) = mains[..i].iter().position(|b| b == a) {
            return Err(WorktreeError::Refused(format!(
                "`{}` and `{}` are one repository ({}): a workspace has one worktree of each",
                repos[j].display(),
                repos[i].display(),
                a.display()
            )));
        }
    }
    let Some(first) = mains.first() else {
        return Err(WorktreeError::Refused(
            "a workspace needs a repository".into(),
        ));
    };
    let root = root_for(&spec.agent_id, first);
    ensure_at(&root, spec, &mains)
}

/// [`ensure`] at a chosen root, over main checkouts' top levels.
pub fn ensure_at(
    root: &Path,
    spec: &WorktreeRequestSpec,
    mains: &[PathBuf],
) -> Result<Worktree, WorktreeError> {
    let branch = branch_for(&spec.agent_id, spec.branch.as_deref());
    for repo in mains {
        Git::at(repo)
            .run(&["check-ref-format", "--branch", &branch])
            .map_err(|_| {
                WorktreeError::Refused(format!("`{branch}` is not a valid branch name"))
            })?;
    }
    crate::private::create_dir(root).map_err(io_err(root))?;
    // git records members by their real paths.
    let root = &canonical(root)?;
    let mut marker = read_marker(root);
    marker.agent_id.clone_from(&spec.agent_id);
    marker.branch.clone_from(&branch);
    let members = assign(&mut marker, mains);
    // The intent first: a kill from here on leaves what recovery reads.
    write_marker(root, &marker)?;
    recover(root, &marker)?;
    let mut out = Vec::new();
    let mut created = false;
    for m in &members {
        let path = root.join(&m.name);
        let fresh = !super::manage::is_worktree_top(&path);
        if fresh {
            build(root, m, &branch, spec.copy_uncommitted)?;
            created = true;
        }
        let current = Git::at(&path).line(&["branch", "--show-current"])?;
        out.push(Worktree {
            agent_id: spec.agent_id.clone(),
            repo: m.repo.clone(),
            cwd: path.clone(),
            path,
            branch: if current.is_empty() {
                branch.clone()
            } else {
                current
            },
            created: fresh,
            setup_output: None,
            name: m.name.clone(),
            repos: Vec::new(),
        });
    }
    Ok(Worktree {
        agent_id: spec.agent_id.clone(),
        repo: root.to_owned(),
        path: root.to_owned(),
        cwd: root.to_owned(),
        branch,
        created,
        setup_output: None,
        name: String::new(),
        repos: out,
    })
}

/// Adds the repository of `dir` to the workspace `w` (`/repo add`): a
/// worktree of it on the workspace's branch, built as any member is
/// (crash-safe, the marker first). Refused for a pane of one worktree and
/// for a repository the workspace has already. The workspace as it is now.
pub fn add(w: &Worktree, dir: &Path, copy_uncommitted: bool) -> Result<Worktree, WorktreeError> {
    if !w.is_workspace() {
        return Err(WorktreeError::Refused(
            "this pane works in one worktree; a repository joins a workspace \
             (a pane made with --repo, or an agent with repos = [...])"
                .into(),
        ));
    }
    let main = canonical(&find_repo(&canonical(dir)?)?)?;
    if let Some(m) = w.repos.iter().find(|m| m.repo == main) {
        return Err(WorktreeError::Refused(format!(
            "{} is in this workspace already (as {}/)",
            main.display(),
            m.name
        )));
    }
    let mut mains: Vec<PathBuf> = w.repos.iter().map(|m| m.repo.clone()).collect();
    mains.push(main);
    let spec = WorktreeRequestSpec {
        agent_id: w.agent_id.clone(),
        // The branch its members are on, whatever named it.
        branch: Some(w.branch.clone()),
        copy_uncommitted,
        root: None,
    };
    ensure_at(&w.path, &spec, &mains)
}

/// Builds member `m` as `.building-<name>`, then moves it into place.
fn build(root: &Path, m: &Member, branch: &str, copy: bool) -> Result<(), WorktreeError> {
    let path = root.join(&m.name);
    let tmp = root.join(format!("{BUILDING}{}", m.name));
    if path.exists() {
        let empty = std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none());
        if !empty {
            return Err(WorktreeError::PathTaken { path });
        }
        std::fs::remove_dir(&path).map_err(io_err(&path))?;
    }
    // A member whose directory vanished still holds the branch.
    forget_missing(&m.repo, &path)?;
    add_at(&m.repo, &tmp, branch)?;
    if copy {
        copy_uncommitted(&m.repo, &tmp, root)?;
    }
    Git::at(&m.repo).run(&[
        "worktree",
        "move",
        &tmp.to_string_lossy(),
        &path.to_string_lossy(),
    ])?;
    Ok(())
}

/// Removes what a kill left half made (`.building-*`: its worktree, its
/// registration) and repairs the links of the members in place (a kill
/// inside `git worktree move`).
fn recover(root: &Path, marker: &Marker) -> Result<(), WorktreeError> {
    let entries = std::fs::read_dir(root).map_err(io_err(root))?;
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(name) = file.strip_prefix(BUILDING) else {
            continue;
        };
        let path = e.path();
        tracing::warn!(path = %path.display(), "removing a workspace member a stop left half made");
        let repo = marker
            .repos
            .iter()
            .find(|m| m.name == name)
            .map(|m| &m.repo);
        let removed = repo.is_some_and(|r| {
            Git::at(r)
                .run(&["worktree", "remove", "--force", &path.to_string_lossy()])
                .is_ok()
        });
        if !removed && path.exists() {
            std::fs::remove_dir_all(&path).map_err(io_err(&path))?;
        }
        if let Some(r) = repo {
            forget_missing(r, &path)?;
        }
    }
    for m in &marker.repos {
        let path = root.join(&m.name);
        if path.join(".git").exists() {
            let _ = Git::at(&m.repo).run(&["worktree", "repair", &path.to_string_lossy()]);
        }
    }
    Ok(())
}

/// Removes the workspace `w`: each member's worktree and `hive/` branch
/// (refused with unmerged work unless `force`, always while a running
/// hive uses it), then the root. What could not go is said, the rest gone.
pub fn remove(w: &Worktree, force: bool) -> Result<Vec<String>, WorktreeError> {
    let mut removed = Vec::new();
    for m in w.members() {
        super::manage::remove(&m.repo, Some(&w.path), &m.name, force)?;
        removed.push(m.name.clone());
    }
    let marker = w.path.join(MARKER);
    let _ = std::fs::remove_file(&marker);
    // Only an empty root goes (a member no longer configured stays).
    let _ = std::fs::remove_dir(&w.path);
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kept_and_clashes_numbered() {
        let mut marker = Marker::default();
        let a = PathBuf::from("/x/app");
        let b = PathBuf::from("/y/app");
        let c = PathBuf::from("/z/.web");
        let got = assign(&mut marker, &[a.clone(), b.clone(), c]);
        let names: Vec<&str> = got.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["app", "app-2", "web"]);
        // Asked again in the other order: the same directories.
        let again = assign(&mut marker, &[b, a]);
        let names: Vec<&str> = again.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["app-2", "app"]);
    }
}
