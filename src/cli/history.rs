//! `hive history list|show|export` and `hive import`: the history store for
//! scripts and sharing (docs/history.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::history::import;
use crate::history::store::{self, SessionEntry, Store};
use crate::history::{PaneState, assemble, render};
use crate::provider::import::Format;
use clap::builder::TypedValueParser;

#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// List history sessions (the current one of each agent is marked `*`).
    List {
        #[arg(long)]
        agent: Option<String>,
    },
    /// Print a session as plain text: an agent id (its current session) or a session id.
    Show { target: String },
    /// Export a session for sharing.
    Export {
        /// Write Markdown (the only format so far).
        #[arg(long, required = true)]
        markdown: bool,
        /// An agent id (its current session) or a session id.
        target: String,
        /// Write to this file instead of stdout.
        #[arg(long, short, value_name = "PATH")]
        output: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The transcript's format: the provider that wrote it.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(Format::names())
        .try_map(|name| name.parse::<Format>()))]
    pub format: Format,
    /// The agent's own transcript file.
    pub path: PathBuf,
    /// The hive agent whose history receives it.
    #[arg(long)]
    pub agent: String,
    /// Make it the agent's current session (hive then resumes the agent's own session id).
    #[arg(long)]
    pub activate: bool,
}

/// The history store of the project `hive` would open here.
fn project_store(cli: &super::Cli) -> anyhow::Result<Store> {
    let config =
        crate::config::Config::load(cli.config.as_deref(), &crate::provider::Registry::builtin())?;
    Ok(crate::project::Project::open(&config).store())
}

pub(super) fn history(cli: &super::Cli, cmd: &HistoryCommand) -> anyhow::Result<ExitCode> {
    let store = project_store(cli)?;
    let mut out = std::io::stdout().lock();
    // Agent text reaches a terminal only with its control characters shown.
    let tty = std::io::IsTerminal::is_terminal(&out);
    match cmd {
        HistoryCommand::List { agent } => {
            let agents = match agent {
                Some(a) => vec![a.clone()],
                None => store.agents(),
            };
            for a in agents {
                let current = current_session(&store, &a);
                for s in store.sessions(&a) {
                    let mark = if Some(&s.session) == current.as_ref() {
                        "*"
                    } else {
                        " "
                    };
                    let when = s
                        .modified
                        .map(|m| {
                            chrono::DateTime::<chrono::Utc>::from(m)
                                .format("%Y-%m-%d %H:%M")
                                .to_string()
                        })
                        .unwrap_or_default();
                    let records = count_lines(&s.path);
                    writeln!(
                        out,
                        "{mark} {a:<16} {:<44} {records:>6} records  {when}",
                        s.session
                    )?;
                }
            }
        }
        HistoryCommand::Show { target } => {
            let s = resolve(&store, target)?;
            let (records, items) = load(&s)?;
            let _ = records;
            let text = render::plain(&items);
            out.write_all(crate::sanitize::for_output(&text, tty).as_bytes())?;
        }
        HistoryCommand::Export { target, output, .. } => {
            let s = resolve(&store, target)?;
            let (records, items) = load(&s)?;
            let md = render::markdown(&format!("{} · {}", s.agent, s.session), &records, &items);
            match output {
                Some(p) => {
                    std::fs::write(p, md).with_context(|| format!("writing {}", p.display()))?
                }
                None => out.write_all(md.as_bytes())?,
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn import_cmd(cli: &super::Cli, args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let store = project_store(cli)?;
    let r = import::import(&store, args.format, &args.path, &args.agent, args.activate)?;
    if r.already_imported {
        println!(
            "already imported as session {} ({}); nothing written",
            r.session,
            r.path.display()
        );
    } else {
        println!(
            "imported {} records into session {} ({})",
            r.records,
            r.session,
            r.path.display()
        );
        if r.skipped_lines > 0 {
            eprintln!("hive: skipped {} lines that were not JSON", r.skipped_lines);
        }
    }
    if args.activate {
        println!(
            "agent `{}` continues this session next time{}",
            args.agent,
            r.native_session
                .as_deref()
                .map(|h| format!(", resuming {h}"))
                .unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn current_session(store: &Store, agent: &str) -> Option<String> {
    PaneState::load(&store.state_path(agent))
        .ok()
        .flatten()
        .map(|s| s.session)
}

/// An agent id (its current session, else its newest) or a session id.
fn resolve(store: &Store, target: &str) -> anyhow::Result<SessionEntry> {
    if let Some(s) = crate::history::agent_session(store, target) {
        return Ok(s);
    }
    if let Some(s) = store.find_session(target) {
        return Ok(s);
    }
    let agents = store.agents();
    bail!(
        "no history for `{target}` (an agent id or session id) in {}; agents with history: {}",
        store.root().display(),
        if agents.is_empty() {
            "none".into()
        } else {
            agents.join(", ")
        }
    )
}

fn load(
    s: &SessionEntry,
) -> anyhow::Result<(
    Vec<crate::history::record::Record>,
    Vec<crate::upsert::Upsert>,
)> {
    let loaded = store::read_all(&s.path)?;
    for w in &loaded.warnings {
        eprintln!("hive: {w}");
    }
    let items = assemble::items_from(&loaded.records);
    Ok((loaded.records.into_iter().map(|(_, r)| r).collect(), items))
}

fn count_lines(path: &std::path::Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}
