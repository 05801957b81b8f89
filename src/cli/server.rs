//! The console and its server (issue 29): `hive` attaches to the server of
//! the config it would load, starting it first if none runs; `hive attach`,
//! `hive ls`, `hive kill`, `hive serve`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use clap::Args;

use super::Cli;
use crate::client::{AttachError, Endpoint};
use crate::config::Config;
use crate::provider::Registry;
use crate::remote;
use crate::server::daemon;

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// Servers to attach to, one grid for all: names (`hive ls`) or remote
    /// hives as `ssh://[user@]host[:port]/path/to/project`; default: this
    /// config's server, else the only one running.
    pub names: Vec<String>,
    /// Copy this hive to a remote host that has none of this protocol,
    /// without asking.
    #[arg(long, conflicts_with = "no_install")]
    pub install: bool,
    /// Never copy hive to a remote host.
    #[arg(long)]
    pub no_install: bool,
    /// Only look: for sharing a live pane without control. The server
    /// refuses every change from this console (a message, a key, an
    /// approval's answer, an edit, a stop); leaving detaches.
    #[arg(long)]
    pub read_only: bool,
}

#[derive(Debug, Args)]
pub struct RelayArgs {
    /// Start the server when none runs.
    #[arg(long)]
    pub start: bool,
    /// Print the protocol version this hive speaks, and exit.
    #[arg(long)]
    pub protocol: bool,
}

#[derive(Debug, Args)]
pub struct KillArgs {
    /// The server's name (`hive ls`); default: the one for this config.
    pub name: Option<String>,
    /// Every running server.
    #[arg(long, conflicts_with = "name")]
    pub all: bool,
}

/// `hive`: attach to this config's server, starting it if none runs.
pub(crate) fn console(cli: &Cli) -> anyhow::Result<ExitCode> {
    crate::app::tty::check_tty()?;
    let config = Config::load(cli.config.as_deref(), &Registry::builtin())?;
    let mut socket = daemon::socket_for(&config);
    if daemon::is_live(&socket) {
        if cli.fresh {
            eprintln!(
                "hive: `{}` already runs, so its panes keep their sessions (--fresh applies when a server starts: `hive kill` first)",
                daemon::name_of(&socket)
            );
        }
    } else {
        socket = daemon::start(&config, cli.fresh)?;
    }
    let mut endpoints = vec![Endpoint::Local(socket)];
    for host in config.hosts.iter().filter(|h| h.serves()) {
        let target = host.target()?;
        let ssh = remote::Ssh::prepared(&target)?;
        endpoints.push(Endpoint::Ssh {
            ssh,
            target,
            bin: None,
        });
    }
    // `hive` again, where it finds this config (its hosts come with it:
    // `hive attach` of an unreachable one would fail).
    let again = match config.source.canonical_path() {
        Some(p) if cli.config.is_some() => format!("hive --config {}", p.display()),
        Some(p) => match p.parent() {
            Some(dir) => format!("hive` in `{}", dir.display()),
            None => "hive".to_owned(),
        },
        None => "hive".to_owned(),
    };
    attach_to(endpoints, Some(config), Restart::Config(cli), &again)
}

/// `hive attach [NAME | ssh://…]…`.
pub(crate) fn attach(cli: &Cli, args: &AttachArgs) -> anyhow::Result<ExitCode> {
    crate::app::tty::check_tty()?;
    if args.read_only {
        crate::client::identity::set_read_only();
    }
    let mut endpoints = Vec::new();
    let mut remote_only = true;
    for name in &args.names {
        if name.starts_with("ssh://") {
            endpoints.push(remote_endpoint(name, args)?);
        } else {
            endpoints.push(Endpoint::Local(live_socket(daemon::socket_named(name))?));
            remote_only = false;
        }
    }
    if endpoints.is_empty() {
        endpoints.push(Endpoint::Local(live_socket(default_server(cli)?)?));
        remote_only = false;
    }
    // A remote's config path is a path on its host: the console takes its
    // keys and theme from the local config then.
    let config = if remote_only || endpoints.len() > 1 {
        Some(Config::load(cli.config.as_deref(), &Registry::builtin())?)
    } else {
        None
    };
    let mut again = Endpoint::attach_command(&endpoints);
    if args.read_only {
        again = again.replacen("hive attach", "hive attach --read-only", 1);
    }
    attach_to(endpoints, config, Restart::Unknown, &again)
}

fn live_socket(socket: PathBuf) -> anyhow::Result<PathBuf> {
    if !daemon::is_live(&socket) {
        bail!(
            "no hive server `{}` is running (`hive ls` lists them; `hive` starts one)",
            daemon::name_of(&socket)
        );
    }
    Ok(socket)
}

/// `ssh://…`: finds (or copies) hive on the host before the console takes
/// the terminal (ssh may ask for a password or passphrase here).
fn remote_endpoint(addr: &str, args: &AttachArgs) -> anyhow::Result<Endpoint> {
    let target = remote::Target::parse(addr)?;
    let ssh = remote::Ssh::prepared(&target)?;
    let install = if args.install {
        remote::Install::Yes
    } else if args.no_install {
        remote::Install::No
    } else {
        remote::Install::Ask
    };
    let bin = remote::install::locate(&ssh, &target, install)?;
    Ok(Endpoint::Ssh {
        ssh,
        target,
        bin: Some(bin),
    })
}

/// This config's server if it runs, else the only one running.
fn default_server(cli: &Cli) -> anyhow::Result<PathBuf> {
    let config = Config::load(cli.config.as_deref(), &Registry::builtin())?;
    let own = daemon::socket_for(&config);
    if daemon::is_live(&own) || cli.config.is_some() {
        return Ok(own);
    }
    let running = daemon::list();
    match running.as_slice() {
        [one] => Ok(one.socket.clone()),
        [] => bail!("no hive server is running (`hive` starts one)"),
        many => bail!(
            "{} hive servers are running ({}): name one, `hive attach NAME`",
            many.len(),
            many.iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How a server of another version may be replaced.
enum Restart<'a> {
    /// With this command line's config and flags.
    Config(&'a Cli),
    /// Not known here (`hive attach NAME`): say how instead.
    Unknown,
}

/// `again`: the command that attaches to these servers again, for the
/// detach message.
fn attach_to(
    endpoints: Vec<Endpoint>,
    config: Option<Config>,
    restart: Restart<'_>,
    again: &str,
) -> anyhow::Result<ExitCode> {
    let _log = crate::log::init_logging();
    let rt = crate::runtime::build()?;
    let Some(endpoint) = endpoints.first().cloned() else {
        bail!("no server to attach to");
    };
    let name = endpoints
        .iter()
        .map(Endpoint::name)
        .collect::<Vec<_>>()
        .join(" + ");
    let several = endpoints.len() > 1;
    let stopped = crate::sanitize::neutralize(&Endpoint::stop_line(&endpoints)).into_owned();
    let asked = std::time::Instant::now();
    let attached = if several {
        rt.block_on(crate::client::attach_many(endpoints))
    } else {
        rt.block_on(crate::client::attach(&endpoint))
    };
    tracing::info!(ms = asked.elapsed().as_millis() as u64, "snapshot received");
    let (conn, snapshot) = match attached {
        Ok(ok) => ok,
        Err(AttachError::Skew { why, .. }) => {
            drop(rt);
            // Only a local server is checked before the console starts.
            let Endpoint::Local(socket) = &endpoint else {
                bail!("cannot attach to {name}: {why}");
            };
            return skew(socket, &daemon::name_of(socket), &why, restart);
        }
        Err(e) => return Err(e.into()),
    };
    let config = match config {
        // A remote's config path is a path on its host, not here; several
        // servers have several configs: the console's own is the local one.
        Some(c) if endpoint.host().is_some() || several => c,
        Some(c) => {
            let ours = c.source.canonical_path();
            // Two projects' `hive.toml`s in directories of the same name
            // share a server name: never show one the other's agents.
            if snapshot.server.config_path != ours {
                bail!(
                    "the hive server `{name}` runs another config ({}), not {}: stop it with `hive kill {name}`, or move or rename this project",
                    snapshot.server.config,
                    c.source.describe()
                );
            }
            c
        }
        None => match &snapshot.server.config_path {
            Some(p) => Config::load(Some(p), &Registry::builtin())?,
            None => Config::builtin(),
        },
    };
    let ended = crate::app::console::run(&rt, &config, conn, snapshot)?;
    rt.shutdown_timeout(Duration::from_millis(300));
    let again = crate::sanitize::neutralize(again);
    Ok(crate::app::console::report(&ended, &name, &again, &stopped))
}

/// A server of another protocol: never a garbled screen, but the reason
/// and the way out (its sessions resume after a restart).
fn skew(socket: &Path, name: &str, why: &str, restart: Restart<'_>) -> anyhow::Result<ExitCode> {
    eprintln!("hive: cannot attach to `{name}`: {why}.");
    let Restart::Config(cli) = restart else {
        eprintln!(
            "`hive kill {name}` stops it and its agents (their sessions resume on the next start), then `hive` starts this version."
        );
        return Ok(ExitCode::FAILURE);
    };
    eprint!(
        "Stop `{name}` and its agents, and start a server of this version? Their sessions resume. [y/N] "
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().is_terminal() {
        let _ = std::io::stdin().lock().read_line(&mut answer);
    } else {
        // Nobody to answer: what follows goes on a line of its own.
        eprintln!();
    }
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        eprintln!("Left running. `hive kill {name}` stops it.");
        return Ok(ExitCode::FAILURE);
    }
    daemon::kill(socket)?;
    console(cli)
}

/// `hive relay`: the far end of an ssh link (src/remote/relay.rs).
pub(crate) fn relay(cli: &Cli, args: &RelayArgs) -> anyhow::Result<ExitCode> {
    if args.protocol {
        println!("{}", crate::wire::PROTOCOL_VERSION);
        return Ok(ExitCode::SUCCESS);
    }
    remote::relay::run(cli.config.as_deref(), args.start)?;
    Ok(ExitCode::SUCCESS)
}

/// `hive serve`: a server without a console (e.g. from a systemd unit).
pub(crate) fn serve(cli: &Cli) -> anyhow::Result<ExitCode> {
    crate::server::run(cli.config.as_deref(), cli.fresh)
}

/// `hive ls`: the running servers.
pub(crate) fn ls() -> anyhow::Result<ExitCode> {
    let running = daemon::list();
    if running.is_empty() {
        println!("no hive server is running");
        return Ok(ExitCode::SUCCESS);
    }
    let now = chrono::Utc::now().timestamp();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<16} {:>6} {:>5} {:>7} {:>7} {:>8}  CONFIG",
        "NAME", "PID", "PANES", "RUNNING", "CLIENTS", "UPTIME"
    )?;
    for r in running {
        let num = |k: &str| {
            r.info
                .get(k)
                .and_then(serde_json::Value::as_i64)
                .unwrap_or(0)
        };
        // The config's whole path: two projects' `hive.toml`s told apart.
        let config = r
            .info
            .get("config_path")
            .and_then(|v| v.as_str())
            .or_else(|| r.info.get("config").and_then(|v| v.as_str()))
            .unwrap_or("<built-in default>");
        writeln!(
            out,
            "{:<16} {:>6} {:>5} {:>7} {:>7} {:>8}  {}",
            r.name,
            num("pid"),
            num("panes"),
            num("running"),
            num("clients"),
            uptime(now - num("started")),
            crate::sanitize::neutralize(config)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn uptime(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s if s < 86_400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// `hive kill [NAME | --all]`: stop servers and every agent they run.
pub(crate) fn kill(cli: &Cli, args: &KillArgs) -> anyhow::Result<ExitCode> {
    let sockets: Vec<PathBuf> = if args.all {
        daemon::list().into_iter().map(|r| r.socket).collect()
    } else {
        match &args.name {
            Some(name) => vec![daemon::socket_named(name)],
            None => {
                let config = Config::load(cli.config.as_deref(), &Registry::builtin())?;
                vec![daemon::socket_for(&config)]
            }
        }
    };
    for socket in &sockets {
        daemon::kill(socket)?;
        println!("stopped {}", daemon::name_of(socket));
    }
    Ok(ExitCode::SUCCESS)
}
