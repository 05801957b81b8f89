//! Command line: `hive` opens the console; subcommands run headless.

mod ctl;
mod ctl_approvals;
mod ctl_carry;
mod ctl_forge;
mod ctl_hosts;
mod ctl_panes;
mod ctl_text;
mod doctor;
mod history;
mod init;
mod mcp;
mod run;
mod server;
mod web;
mod worktree;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "hive",
    version,
    about = "A terminal console for running several AI coding agents side by side"
)]
pub struct Cli {
    /// Config file (default: ./hive.toml, then ~/.config/hive/config.toml, then built-in).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Start every pane on a new session instead of resuming the last one,
    /// and with the config's panes as written (panes added, closed or moved
    /// at runtime are forgotten).
    #[arg(long, global = true)]
    pub fresh: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one turn headless through the same runner and processor as the console.
    Run(run::RunArgs),
    /// Read the history store: list sessions, show or export a transcript.
    #[command(subcommand)]
    History(history::HistoryCommand),
    /// Import an agent's own transcript (Claude Code, Codex, pi) into the history store.
    Import(history::ImportArgs),
    /// Drive a running hive through its control socket.
    Ctl(ctl::CtlArgs),
    /// Check the config and that every agent can start.
    Doctor(doctor::DoctorArgs),
    /// Find the agents installed here and write a commented hive.toml for them.
    Init(init::InitArgs),
    /// Manage the agents' git worktrees: list, remove ID, prune.
    Worktree(worktree::WorktreeArgs),
    /// Serve hive's operations over MCP (stdio) to an agent, through the
    /// running hive's control socket.
    Mcp(mcp::McpArgs),
    /// Attach this terminal to a running hive server (default: this
    /// config's, else the only one).
    Attach(server::AttachArgs),
    /// List the running hive servers.
    Ls,
    /// Stop a hive server and every agent it runs.
    Kill(server::KillArgs),
    /// Pair browsers with the server's web client, list and revoke them
    /// (docs/web.md).
    Web(web::WebArgs),
    /// Run a hive server for the config without a console (e.g. from a
    /// systemd user unit); `hive` and `hive attach` connect to it.
    Serve,
    /// The far end of `hive attach ssh://…`: relays the ssh channel to the
    /// server of the config in the current directory.
    #[command(hide = true)]
    Relay(server::RelayArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Run(ref args)) => run::run(&cli, args),
        Some(Command::History(ref cmd)) => history::history(&cli, cmd),
        Some(Command::Import(ref args)) => history::import_cmd(&cli, args),
        Some(Command::Ctl(ref args)) => ctl::ctl(&cli, args),
        Some(Command::Doctor(ref args)) => doctor::doctor(&cli, args),
        Some(Command::Init(ref args)) => init::init_cmd(args),
        Some(Command::Worktree(ref args)) => worktree::worktree_cmd(&cli, args),
        Some(Command::Mcp(ref args)) => mcp::mcp(args),
        Some(Command::Attach(ref args)) => server::attach(&cli, args),
        Some(Command::Ls) => server::ls(),
        Some(Command::Kill(ref args)) => server::kill(&cli, args),
        Some(Command::Serve) => server::serve(&cli),
        Some(Command::Web(ref args)) => web::web(&cli, args),
        Some(Command::Relay(ref args)) => server::relay(&cli, args),
        None => server::console(&cli),
    };
    match result {
        Ok(code) => code,
        // `hive run … | head`: the reader has what it wanted.
        Err(e) if output_closed(&e) => ExitCode::SUCCESS,
        // An error may quote a peer (a remote hive, a model server, a
        // socket client): whatever path built it, no escape reaches stderr.
        Err(e) => {
            eprintln!("hive: {}", crate::sanitize::neutralize(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// Whether `e` is a write to a closed stdout (a broken pipe), which ends a
/// command quietly, as other CLIs do.
fn output_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A multi-threaded runtime for the headless commands.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(crate::runtime::build()?)
}
