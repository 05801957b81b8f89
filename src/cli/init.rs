//! `hive init [--dir DIR] [--yes] [--force]`: finds the agents installed
//! here and writes a commented `hive.toml` for them (src/init). Questions
//! on a terminal; `--yes`, or stdin that is not a terminal, takes the
//! defaults.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::doctor::Env;
use crate::init::{self, Ask, Choice};

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project directory to write hive.toml in (default: here).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// No questions: take the defaults (never replaces an existing hive.toml).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Replace an existing hive.toml without asking.
    #[arg(long)]
    pub force: bool,
}

/// Ports to probe for a local server: `HIVE_INIT_PORTS="11434,8080"`
/// replaces the usual ones (empty: none), for tests and odd setups.
fn ports(env: &Env) -> Vec<(u16, &'static str)> {
    match env.vars.get("HIVE_INIT_PORTS") {
        None => init::LOCAL_PORTS.to_vec(),
        Some(list) => list
            .split(',')
            .filter_map(|p| p.trim().parse().ok())
            .map(|p| (p, "local server"))
            .collect(),
    }
}

pub(super) fn init_cmd(args: &InitArgs) -> anyhow::Result<ExitCode> {
    let env = Env::current();
    let dir = match &args.dir {
        Some(d) => env.cwd.join(d),
        None => env.cwd.clone(),
    };
    let mut out = std::io::stdout().lock();
    let interactive = !args.yes && std::io::stdin().is_terminal();
    if !args.yes && !interactive {
        writeln!(
            out,
            "stdin is not a terminal: taking the defaults (as with --yes)"
        )?;
    }
    let mut stdin = std::io::stdin().lock();
    let (path, plan) = {
        let mut ask = if interactive {
            Ask::lines(&mut stdin, &mut out)
        } else {
            Ask::defaults(&mut out)
        };
        init::run(&dir, args.force, &env, &ports(&env), &mut ask)?
    };
    let ids: Vec<String> = plan
        .agents
        .iter()
        .map(|c| match c {
            Choice::Cli(cli) => cli.provider.to_owned(),
            Choice::OpenAi(o) => o.id.clone(),
        })
        .chain(plan.shell.then(|| "shell".to_owned()))
        .collect();
    writeln!(out, "Wrote {} ({}).", path.display(), ids.join(", "))?;
    for c in &plan.agents {
        if let Choice::Cli(cli) = c
            && !cli.logged_in
        {
            writeln!(out, "  {}: {}", cli.provider, cli.auth)?;
        }
    }
    let here = if dir == env.cwd {
        String::new()
    } else {
        format!(" in {}", dir.display())
    };
    writeln!(
        out,
        "Next{here}: `hive doctor` checks it, `hive` starts the agents."
    )?;
    Ok(ExitCode::SUCCESS)
}
