//! `hive worktree list | remove ID | prune`: manage the agents' git
//! worktrees (docs/worktrees.md) without opening the console.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Subcommand};

use super::Cli;
use crate::config::Config;
use crate::worktree::{self, WorktreeError};

#[derive(Debug, Args)]
pub struct WorktreeArgs {
    /// The repository (default: the current directory's, plus those of the
    /// configured agents with `worktree` set).
    #[arg(long, global = true, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    #[command(subcommand)]
    pub command: WorktreeCommand,
}

#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// List the agents' worktrees with their branch and unmerged work.
    List,
    /// Remove an agent's worktree and its `hive/` branch (asks first when it
    /// holds work the main checkout does not have).
    Remove {
        /// The agent id.
        id: String,
        /// Remove even with unmerged work, without asking.
        #[arg(long, short)]
        force: bool,
    },
    /// Forget worktrees whose directory is gone and remove the ones with
    /// nothing left to bring home.
    Prune,
}

pub(super) fn worktree_cmd(cli: &Cli, args: &WorktreeArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(cli.config.as_deref(), &crate::provider::Registry::builtin())?;
    let root = config.worktrees.root.clone();
    let repos = repos(&config, args.repo.as_deref())?;
    let mut out = std::io::stdout().lock();
    match &args.command {
        WorktreeCommand::List => {
            let mut any = false;
            for repo in &repos {
                for w in worktree::list(repo, root.as_deref())? {
                    any = true;
                    let branch = w.branch.as_deref().unwrap_or("(detached)");
                    let state = if w.missing {
                        "directory missing (prune forgets it)".to_owned()
                    } else if let Some(why) = &w.in_use {
                        format!("{}, {why}", w.describe_work())
                    } else {
                        w.describe_work()
                    };
                    writeln!(
                        out,
                        "{:<16} {:<24} {}  ({})",
                        w.agent_id,
                        branch,
                        w.path.display(),
                        state
                    )?;
                }
            }
            if !any {
                writeln!(out, "no hive worktrees")?;
            }
        }
        WorktreeCommand::Remove { id, force } => {
            let repo = repos
                .iter()
                .find(|r| {
                    worktree::list(r, root.as_deref())
                        .is_ok_and(|l| l.iter().any(|w| &w.agent_id == id))
                })
                .ok_or_else(|| WorktreeError::Unknown(id.clone()))?;
            let removed = match worktree::remove(repo, root.as_deref(), id, *force) {
                Err(WorktreeError::Unmerged { detail, .. }) => {
                    if !confirm(&format!(
                        "worktree of `{id}` has {detail}. Remove it anyway? [y/N] "
                    ))? {
                        bail!("kept the worktree of `{id}` ({detail}); `--force` removes it");
                    }
                    worktree::remove(repo, root.as_deref(), id, true)?
                }
                other => other?,
            };
            writeln!(out, "removed {}", removed.path.display())?;
        }
        WorktreeCommand::Prune => {
            for repo in &repos {
                let report = worktree::prune(repo, root.as_deref())?;
                for id in &report.removed {
                    writeln!(out, "removed {id}")?;
                }
                for (id, why) in &report.kept {
                    writeln!(out, "kept {id}: {why}")?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks on the terminal; without one the answer is no.
fn confirm(question: &str) -> anyhow::Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Ok(false);
    }
    eprint!("{question}");
    std::io::stderr().flush()?;
    let mut line = String::new();
    stdin.lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

/// The repositories to look in, each once.
fn repos(config: &Config, explicit: Option<&std::path::Path>) -> anyhow::Result<Vec<PathBuf>> {
    if let Some(p) = explicit {
        return Ok(vec![worktree::find_repo(p)?]);
    }
    let here = std::env::current_dir()?;
    let mut dirs = vec![here.clone()];
    for a in config
        .agents
        .iter()
        .filter(|a| a.worktree_spec(None).is_some())
    {
        dirs.push(
            a.cwd
                .as_ref()
                .map_or_else(|| here.clone(), |c| here.join(c)),
        );
        // A workspace's repositories (issue 52): their members are listed.
        dirs.extend(a.repos.iter().cloned());
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        if let Ok(r) = worktree::find_repo(&d).and_then(|r| {
            std::fs::canonicalize(&r).map_err(|source| WorktreeError::Io { path: r, source })
        }) && !out.contains(&r)
        {
            out.push(r);
        }
    }
    if out.is_empty() {
        bail!(
            "{} is not inside a git repository (use --repo PATH)",
            here.display()
        );
    }
    Ok(out)
}
