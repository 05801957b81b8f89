//! A workspace branched from another (issue 52, `/handoff … branched` of
//! a workspace pane): a new workspace root with, for each repository of
//! the source, a worktree on a new branch at that member's HEAD carrying
//! its uncommitted work (as src/worktree/branch.rs does for one worktree).
//! Made as any workspace is: the marker first, each member built as
//! `.building-<name>` and moved into place, so a kill halfway is finished
//! or cleaned at the next start; a step that fails takes everything made
//! so far away again. The source is only read.

use std::path::Path;

use super::git::Git;
use super::manage::{copy_uncommitted, forget_missing};
use super::marker::{BUILDING, Marker, Member, io_err, root_for, write_marker};
use super::{Worktree, WorktreeError};

/// How many `-2`, `-3`… names are tried before giving up.
const NAMES: usize = 50;

/// A new workspace named after `id` (the first free `id`, `id-2`, …: no
/// root of that name and no repository with its branch) on branch
/// `hive/<name>` in every repository, branched from `source`'s members.
pub fn branch_workspace(source: &Worktree, id: &str) -> Result<Worktree, WorktreeError> {
    let Some(first) = source.repos.first() else {
        return Err(WorktreeError::Refused("not a workspace".into()));
    };
    let free = |name: &str| {
        let branch = format!("hive/{name}");
        !root_for(name, &first.repo).exists()
            && source.repos.iter().all(|m| {
                !Git::at(&m.repo).succeeds(&[
                    "show-ref",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{branch}"),
                ])
            })
    };
    let name = (1..=NAMES)
        .map(|n| match n {
            1 => id.to_owned(),
            n => format!("{id}-{n}"),
        })
        .find(|n| free(n))
        .ok_or_else(|| WorktreeError::Refused(format!("no free workspace name for `{id}`")))?;
    let branch = format!("hive/{name}");
    Git::at(&first.repo)
        .run(&["check-ref-format", "--branch", &branch])
        .map_err(|_| WorktreeError::Refused(format!("`{branch}` is not a valid branch name")))?;
    let root = root_for(&name, &first.repo);
    crate::private::create_dir(&root).map_err(io_err(&root))?;
    let root = super::manage::canonical(&root)?;
    let marker = Marker {
        agent_id: name.clone(),
        branch: branch.clone(),
        repos: (source.repos.iter())
            .map(|m| Member {
                name: m.name.clone(),
                repo: m.repo.clone(),
            })
            .collect(),
    };
    write_marker(&root, &marker)?;
    let mut out = Vec::new();
    for m in &source.repos {
        match member(&root, m, (&name, &branch)) {
            Ok(w) => out.push(w),
            Err(e) => {
                undo(&root, &out, &branch);
                return Err(e);
            }
        }
    }
    Ok(Worktree {
        agent_id: name,
        repo: root.clone(),
        path: root.clone(),
        cwd: root,
        branch,
        created: true,
        setup_output: None,
        name: String::new(),
        repos: out,
    })
}

/// Member `m` of the new workspace `id` at `root`: `branch` at `m`'s HEAD
/// with its uncommitted work, built aside and moved into place.
fn member(
    root: &Path,
    m: &Worktree,
    (id, branch): (&str, &str),
) -> Result<Worktree, WorktreeError> {
    let path = root.join(&m.name);
    let tmp = root.join(format!("{BUILDING}{}", m.name));
    let main = Git::at(&m.repo);
    let head = Git::at(&m.path).line(&["rev-parse", "HEAD"])?;
    let t = tmp.to_string_lossy();
    main.run(&["worktree", "add", "-b", branch, &t, &head])?;
    // The member's untracked files are its own (no worktrees under it).
    let made = copy_uncommitted(&m.path, &tmp, &m.path.join(super::DEFAULT_ROOT)).and_then(|()| {
        main.run(&["worktree", "move", &t, &path.to_string_lossy()])
            .map(drop)
    });
    if let Err(e) = made {
        let _ = main.output(&["worktree", "remove", "--force", &t]);
        let _ = forget_missing(&m.repo, &tmp);
        let _ = main.output(&["branch", "-D", branch]);
        return Err(e);
    }
    Ok(Worktree {
        agent_id: id.to_owned(),
        repo: m.repo.clone(),
        cwd: path.clone(),
        path,
        branch: branch.to_owned(),
        created: true,
        setup_output: None,
        name: m.name.clone(),
        repos: Vec::new(),
    })
}

/// Takes the members made so far, their branches and the root away.
fn undo(root: &Path, made: &[Worktree], branch: &str) {
    for w in made {
        let main = Git::at(&w.repo);
        let _ = main.output(&["worktree", "remove", "--force", &w.path.to_string_lossy()]);
        let _ = main.output(&["branch", "-D", branch]);
    }
    let _ = std::fs::remove_dir_all(root);
}
