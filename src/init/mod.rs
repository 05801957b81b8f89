//! `hive init`: from the demo to one's own agents in one command. Finds the
//! agents hive can drive (the CLIs as `hive doctor` checks them, the
//! built-in `openai` agent's key or local server), shows them, asks which
//! to use (worktrees in a git repository, a shell pane) and writes a
//! commented `hive.toml` where `hive` looks first: the project directory.
//! Also the hint the demo shows when agents are installed but unused.

mod ask;
pub mod detect;
mod write;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) use ask::Ask;
pub(crate) use detect::{CLIS, Detected, LOCAL_PORTS};
pub use detect::{Cli, detect};
pub use write::Choice;
pub use write::{Plan, render};

use crate::config::{Config, ConfigSource};
use crate::doctor::Env;

/// The file `hive` reads first in its directory (`Config::load`).
pub(crate) const FILE: &str = "hive.toml";

/// How long the demo's status line shows the `hive init` hint.
pub const HINT_FOR: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{0} exists; not overwriting it (--force replaces it)")]
    Exists(PathBuf),
    #[error("{0} exists and was left as it is")]
    Kept(PathBuf),
    #[error(
        "nothing to set up: no agent found (or none chosen); install one \
         (scripts/install-agents.sh), log in, and run `hive init` again"
    )]
    Nothing,
    #[error("{0} is not a directory")]
    NoDir(PathBuf),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The file `hive init` would write in `dir`, or why not (asked first, so no
/// question is answered in vain).
pub fn target(dir: &Path, force: bool, ask: &mut Ask) -> Result<PathBuf, InitError> {
    if !dir.is_dir() {
        return Err(InitError::NoDir(dir.to_owned()));
    }
    let path = dir.join(FILE);
    if !path.exists() || force {
        return Ok(path);
    }
    if !ask.interactive() {
        return Err(InitError::Exists(path));
    }
    let question = format!("{} exists. Replace it?", path.display());
    if ask.yes_no(&question, false)? {
        Ok(path)
    } else {
        Err(InitError::Kept(path))
    }
}

/// What was found, one line each. Paths, versions and labels are what
/// programs and servers said: printed as visible text only.
pub fn show(found: &Detected, out: &mut dyn Write) -> io::Result<()> {
    use crate::sanitize::peer_line;
    for cli in &found.clis {
        let state = match (&cli.path, cli.logged_in, cli.can_start) {
            (None, _, _) => "not found",
            (Some(_), _, false) => "broken",
            (Some(_), true, true) => "found",
            (Some(_), false, true) => "not logged in",
        };
        let detail = match &cli.path {
            // Doctor's advice goes on to `command`; the install is enough here.
            None => cli
                .install
                .as_deref()
                .and_then(|i| i.split(", or set").next())
                .unwrap_or_default()
                .to_owned(),
            Some(path) => format!(
                "{path} {} · {}",
                cli.version.as_deref().unwrap_or("(version unknown)"),
                cli.auth
            ),
        };
        writeln!(
            out,
            "  {state:<14}{:<8}{:<13}{}",
            cli.provider,
            cli.label,
            peer_line(&detail)
        )?;
    }
    for o in &found.openai {
        writeln!(
            out,
            "  {:<14}{:<8}{}",
            "found",
            "openai",
            peer_line(&o.label)
        )?;
    }
    if found.openai.is_empty() {
        writeln!(
            out,
            "  {:<14}{:<8}no OPENAI_API_KEY / OPENROUTER_API_KEY, no local server (Ollama, llama.cpp, LM Studio, vLLM)",
            "not found", "openai"
        )?;
    }
    let git = match (found.git, found.head) {
        (false, _) => "not a git repository",
        (true, false) => "a git repository with no commit yet (worktrees start from one)",
        (true, true) => "a git repository",
    };
    writeln!(out, "  this directory is {git}")
}

/// The questions, in order: each agent found, worktrees (in a git
/// repository, with an agent), a shell pane.
pub fn plan(found: &Detected, ask: &mut Ask) -> io::Result<Plan> {
    let mut plan = Plan::default();
    for cli in found.clis.iter().filter(|c| c.found()) {
        let note = match (cli.can_start, cli.logged_in) {
            (false, _) => " (it did not start: see `hive doctor`)",
            (true, false) => " (not logged in yet)",
            (true, true) => "",
        };
        let question = format!("Add a {} pane{note}?", cli.label);
        if ask.yes_no(&question, cli.can_start)? {
            plan.agents.push(Choice::Cli(cli.clone()));
        }
    }
    for (i, o) in found.openai.iter().enumerate() {
        let question = format!(
            "Add hive's built-in agent on {}?",
            crate::sanitize::peer_line(&o.label)
        );
        if ask.yes_no(&question, i == 0)? {
            plan.agents.push(Choice::OpenAi(o.clone()));
        }
    }
    if found.git && !plan.agents.is_empty() {
        plan.worktrees = ask.yes_no(
            "Run each agent in its own git worktree (.hive/worktrees/<id>, branch hive/<id>)?",
            plan.agents.len() > 1 && found.head,
        )?;
    }
    plan.shell = ask.yes_no("Add a shell pane?", true)?;
    Ok(plan)
}

/// The whole command: the file to write, what was found, the questions,
/// the file. Returns the path written and the plan.
pub fn run(
    dir: &Path,
    force: bool,
    env: &Env,
    ports: &[(u16, &str)],
    ask: &mut Ask,
) -> Result<(PathBuf, Plan), InitError> {
    let path = target(dir, force, ask)?;
    writeln!(ask.out(), "Looking for agents…")?;
    let found = detect(env, dir, ports);
    show(&found, ask.out())?;
    if !found.any() {
        return Err(InitError::Nothing);
    }
    let plan = plan(&found, ask)?;
    if plan.agents.is_empty() {
        return Err(InitError::Nothing);
    }
    std::fs::write(&path, render(&plan))?;
    Ok((path, plan))
}

/// For the demo's status line: the agent CLIs (and API keys) present while
/// hive runs its built-in demo config. PATH lookups only, no process.
pub fn demo_hint(config: &Config, env: &Env) -> Option<String> {
    if config.source != ConfigSource::Builtin {
        return None;
    }
    let mut found: Vec<&str> = CLIS
        .iter()
        .filter(|(p, _)| crate::doctor::find_program(p, env).is_some())
        .map(|(p, _)| *p)
        .collect();
    let key = |k: &str| env.vars.get(k).is_some_and(|v| !v.is_empty());
    if key("OPENAI_API_KEY") || key("OPENROUTER_API_KEY") {
        found.push("an API key");
    }
    if found.is_empty() {
        return None;
    }
    Some(format!(
        "found {}: `hive init` sets them up",
        found.join(", ")
    ))
}
