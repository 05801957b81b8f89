//! The server's loop: starts every pane's runner, then answers runner
//! events (logged, mirrored to `hive ctl` and the operations host, sent to
//! each attached client), client messages, control requests and signals,
//! until a client or `hive kill` stops it.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::json;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::clients::{ClientEvent, ClientId, Clients};
use super::log::PaneLog;
use crate::config::{AgentConfig, Config};
use crate::control::protocol::Call;
use crate::provider::{ProviderSpec, Registry};
use crate::runner::{
    PaneEvent, PaneUpdate, QueueEdit, RunnerCommand, RunnerHandle, RunnerOptions, TurnState,
    spawn_runner,
};
use crate::wire::snapshot::{PaneSnapshot, Restored, ServerInfo, Snapshot};
use crate::wire::{ClientMsg, ServerMsg};
use crate::worktree::Worktree;

/// `hive serve`: runs a server for the config in this process until it is
/// stopped. Started by a console (`server::daemon::start`) it runs in a
/// session of its own with its output in hive.log.
pub fn run(config_path: Option<&Path>, fresh: bool) -> anyhow::Result<ExitCode> {
    let mut config = Config::load(config_path, &Registry::builtin())?;
    let _log = crate::app::init_logging();
    let worktrees = crate::worktree::prepare(&mut config.agents, config.worktrees.root.as_deref());
    tracing::info!(config = %config.source.describe(), agents = config.agents.len(), "server starting");
    install_panic_hook();
    let rt = crate::runtime::build()?;
    let result = rt.block_on(async {
        let mut server = Server::start(config, worktrees, fresh)?;
        let why = server.run().await?;
        tracing::info!("server stopping: {why}");
        server.stop(&why).await;
        anyhow::Ok(())
    });
    rt.shutdown_timeout(Duration::from_millis(300));
    crate::provider::process::kill_all();
    result?;
    tracing::info!("server stopped");
    Ok(ExitCode::SUCCESS)
}

/// A panic ends every agent before the server goes (the supervisor, when
/// there is one, sweeps again).
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        crate::provider::process::kill_all();
        tracing::error!("panic: {info}");
        previous(info);
    }));
}

/// One pane as the server keeps it.
struct Pane {
    agent: AgentConfig,
    worktree: Option<Worktree>,
    failed: Option<String>,
    log: PaneLog,
    /// The composer text a client left in it.
    draft: String,
    /// The client a reply (a recalled message, a terminal selection) is for.
    reply_to: Option<ClientId>,
    /// What the runner was last told about the focus.
    focused: bool,
    /// The turn state last reported (`hive ls` counts running turns).
    state: TurnState,
}

struct Server {
    info: ServerInfo,
    panes: Vec<Pane>,
    runners: Vec<Option<RunnerHandle>>,
    updates: mpsc::UnboundedReceiver<PaneUpdate>,
    ops: crate::ops::OpsHost,
    ops_rx: mpsc::UnboundedReceiver<crate::ops::HiveRequest>,
    /// Operations for agents on other machines (`host:agent`).
    across: crate::ops::across::Across,
    control: crate::control::Host,
    /// Console clients as they connect.
    consoles: mpsc::Receiver<tokio::net::UnixStream>,
    clients: Clients,
    /// Numbers every runner event, so a snapshot can tell which happened
    /// while nobody was attached.
    seq: u64,
    /// The last `seq` a client saw before the last one left.
    away_since: Option<u64>,
    /// The pane the last client looked at.
    last_focus: usize,
    _pid_file: PidFile,
}

impl Server {
    fn start(
        config: Config,
        worktrees: Vec<(usize, Result<Worktree, crate::worktree::WorktreeError>)>,
        fresh: bool,
    ) -> anyhow::Result<Self> {
        let (tx, updates) = mpsc::unbounded_channel();
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let mut ops = crate::ops::OpsHost::new(&config.agents);
        // Bound first: agents with `hive_tools` are told where it is.
        let mut control = crate::control::Host::start(&config, ops_tx.clone())?;
        let socket = control.socket().to_owned();
        let consoles = control
            .take_consoles()
            .context("the socket's console channel")?;
        let pid_file = PidFile::write(&socket)?;
        let mut panes: Vec<Pane> = config
            .agents
            .iter()
            .map(|agent| Pane {
                agent: agent.clone(),
                worktree: None,
                failed: None,
                log: PaneLog::new(Restored::default()),
                draft: String::new(),
                reply_to: None,
                focused: false,
                state: TurnState::Idle,
            })
            .collect();
        for (i, result) in worktrees {
            if let Some(p) = panes.get_mut(i) {
                match result {
                    Ok(w) => p.worktree = Some(w),
                    Err(e) => p.failed = Some(format!("worktree: {e}")),
                }
            }
        }
        let registry = Registry::builtin().with_toolbox(crate::ops::meta::toolbox_factory(ops_tx));
        let mut runners = Vec::new();
        let hive_budget =
            crate::runner::budget::HiveBudget::new(config.budget.usd, config.budget.tokens);
        for (i, pane) in panes.iter_mut().enumerate() {
            let start = (fresh, hive_budget.clone());
            runners.push(start_pane(
                i, pane, &config, start, &registry, &tx, &socket, &mut ops,
            ));
        }
        let started = runners.iter().zip(&panes).map(|(r, p)| match r {
            Some(h) => crate::control::Started::Running(h.capabilities),
            None => crate::control::Started::Failed(p.failed.clone().unwrap_or_default()),
        });
        control.set_started(started.collect());
        for (i, p) in panes.iter().enumerate() {
            control.set_usage(i, p.log.restored_usage());
        }
        let info = ServerInfo {
            pid: std::process::id(),
            config: config.source.describe(),
            config_path: config.source.canonical_path(),
            socket,
            started: chrono::Utc::now().timestamp(),
        };
        Ok(Self {
            info,
            panes,
            runners,
            updates,
            ops,
            ops_rx,
            across: crate::ops::across::Across::new(&config),
            control,
            consoles,
            clients: Clients::new(),
            seq: 0,
            away_since: None,
            last_focus: 0,
            _pid_file: pid_file,
        })
    }

    /// Serves until stopped; returns why.
    async fn run(&mut self) -> anyhow::Result<String> {
        let mut term = signal(SignalKind::terminate()).context("SIGTERM handler")?;
        let mut int = signal(SignalKind::interrupt()).context("SIGINT handler")?;
        // No terminal to lose: a hangup means nothing to a server.
        let mut hup = signal(SignalKind::hangup()).context("SIGHUP handler")?;
        loop {
            tokio::select! {
                Some(update) = self.updates.recv() => {
                    self.on_update(update);
                    while let Ok(more) = self.updates.try_recv() {
                        self.on_update(more);
                    }
                }
                Some(req) = self.ops_rx.recv() => {
                    let ops = &mut self.ops;
                    let gate = |c: &crate::ops::Caller, t: &str, sends: bool| {
                        crate::ops::across::gate(ops, c, t, sends)
                    };
                    if let Some(req) = self.across.take(req, gate) {
                        self.ops.handle(req, &self.runners);
                    }
                }
                Some(req) = self.control.next() => {
                    if let Some(why) = self.on_control(req) {
                        return Ok(why);
                    }
                }
                Some(stream) = self.consoles.recv() => self.clients.accept(stream),
                Some(ev) = self.clients.next() => {
                    if let Some(why) = self.on_client(ev) {
                        return Ok(why);
                    }
                }
                _ = term.recv() => return Ok("SIGTERM".into()),
                _ = int.recv() => return Ok("SIGINT".into()),
                _ = hup.recv() => tracing::debug!("SIGHUP ignored"),
            }
        }
    }

    /// Says goodbye to every client, then ends the agents.
    async fn stop(&mut self, why: &str) {
        self.control.close();
        let bye = ServerMsg::Bye {
            reason: format!("the hive server stopped ({why})"),
        };
        self.clients.broadcast(&bye, None);
        let flushed = async {
            while !self.clients.flushed() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_millis(500), flushed).await;
        let stops = futures::future::join_all(self.runners.iter().flatten().map(|r| r.shutdown()));
        let _ = tokio::time::timeout(Duration::from_millis(1500), stops).await;
    }

    fn on_update(&mut self, update: PaneUpdate) {
        self.seq += 1;
        self.ops.observe(&update);
        self.control.observe(&update);
        let Some(pane) = self.panes.get_mut(update.pane) else {
            return;
        };
        match &update.event {
            // Answers to one client's request.
            PaneEvent::Recalled(_) | PaneEvent::TerminalText(_) => {
                if let Some(id) = pane.reply_to.take() {
                    self.clients.event(&update, Some(id));
                }
                return;
            }
            PaneEvent::Attached { .. } => pane.failed = None,
            PaneEvent::State(s) => pane.state = *s,
            _ => {}
        }
        pane.log.push(self.seq, Instant::now(), &update.event);
        self.clients.event(&update, None);
    }

    /// A control request; `Some(why)` when it stops the server.
    fn on_control(&mut self, req: crate::control::hub::ControlRequest) -> Option<String> {
        match req.call {
            Call::Server => {
                let _ = req.reply.send(Ok(self.describe()));
                None
            }
            Call::Kill => {
                let _ = req.reply.send(Ok(json!({ "stopping": true })));
                Some("hive kill".into())
            }
            _ => {
                if let Some((pane, cmd)) = self.control.handle(req) {
                    self.command(pane, cmd, None);
                }
                None
            }
        }
    }

    /// What `hive ls` shows.
    fn describe(&self) -> serde_json::Value {
        let running = self.panes.iter().filter(|p| p.state.is_busy()).count();
        json!({
            "pid": self.info.pid,
            "config": self.info.config,
            "socket": self.info.socket,
            "started": self.info.started,
            "panes": self.panes.len(),
            "running": running,
            "clients": self.clients.count(),
            "protocol": crate::wire::PROTOCOL_VERSION,
            "hive": env!("CARGO_PKG_VERSION"),
        })
    }

    /// A client's event; `Some(why)` when it stops the server.
    fn on_client(&mut self, ev: ClientEvent) -> Option<String> {
        match ev {
            ClientEvent::Joined(link) => self.clients.join(link),
            ClientEvent::Said(id, msg) => return self.on_message(id, msg),
            ClientEvent::Left(id, why) => self.left(id, &why),
            ClientEvent::Drained(id) => {
                tracing::info!(client = id, "a client caught up: fresh snapshot");
                let snap = self.snapshot();
                self.clients.send_snapshot(id, snap);
            }
        }
        None
    }

    fn on_message(&mut self, id: ClientId, msg: ClientMsg) -> Option<String> {
        match msg {
            ClientMsg::Attach | ClientMsg::Resync => {
                let first = self.clients.count() == 0;
                let snap = self.snapshot();
                self.clients.send_snapshot(id, snap);
                if let Some(link) = self.clients.get_mut(id) {
                    link.attached = true;
                }
                if first {
                    self.away_since = None;
                }
                tracing::info!(
                    client = id,
                    clients = self.clients.count(),
                    "client attached"
                );
            }
            ClientMsg::Command { pane, cmd } => self.command(pane, cmd, Some(id)),
            ClientMsg::Focus(pane) => {
                if let Some(link) = self.clients.get_mut(id) {
                    link.focus = Some(pane);
                }
                self.last_focus = pane;
                self.refocus();
            }
            ClientMsg::Draft { pane, text } => {
                if let Some(p) = self.panes.get_mut(pane) {
                    p.draft = text;
                }
            }
            ClientMsg::Detach => self.left(id, "detached"),
            ClientMsg::Stop => return Some("stopped from a console".into()),
        }
        None
    }

    fn left(&mut self, id: ClientId, why: &str) {
        let Some(link) = self.clients.remove(id) else {
            return;
        };
        tracing::info!(client = id, "client left: {why}");
        if link.attached && self.clients.count() == 0 {
            self.away_since = Some(self.seq);
        }
        self.refocus();
    }

    /// Tells each runner whether any client looks at its pane.
    fn refocus(&mut self) {
        let looked_at: Vec<usize> = self.clients.attached().filter_map(|l| l.focus).collect();
        for (i, pane) in self.panes.iter_mut().enumerate() {
            let focused = looked_at.contains(&i);
            if focused != pane.focused {
                pane.focused = focused;
                if let Some(r) = self.runners.get(i).and_then(Option::as_ref) {
                    r.send(RunnerCommand::Focused(focused));
                }
            }
        }
    }

    /// A runner command from a client (`from`) or `hive ctl`.
    fn command(&mut self, i: usize, cmd: RunnerCommand, from: Option<ClientId>) {
        let Some(pane) = self.panes.get_mut(i) else {
            return;
        };
        match &cmd {
            // The server decides these: focus is every client's, and a
            // client does not end an agent.
            RunnerCommand::Focused(_) | RunnerCommand::Shutdown => return,
            RunnerCommand::Queue(QueueEdit::PopLast) | RunnerCommand::CopyTerminal { .. } => {
                pane.reply_to = from;
            }
            RunnerCommand::SwitchSession { session, .. } => {
                let store = crate::history::Store::user();
                let opened = crate::history::sessions::open(
                    &store,
                    &pane.agent,
                    session,
                    crate::history::DEFAULT_TAIL_RECORDS,
                );
                pane.log.reset(Restored::of(&opened));
                self.control.set_usage(i, pane.log.restored_usage());
                // The client that asked shows it already.
                let reset = ServerMsg::Reset {
                    pane: i,
                    snapshot: Box::new(pane_snapshot(pane, None)),
                };
                self.clients.broadcast(&reset, from);
            }
            _ => {}
        }
        match self.runners.get(i).and_then(Option::as_ref) {
            Some(r) => {
                r.send(cmd);
            }
            None => tracing::debug!(pane = i, "command for a pane without a runner dropped"),
        }
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            server: self.info.clone(),
            focus: self.last_focus,
            away_since: self.away_since,
            panes: self
                .panes
                .iter()
                .map(|p| pane_snapshot(p, self.away_since.or(Some(self.seq))))
                .collect(),
        }
    }
}

/// Pane `pane` for a client that has seen everything up to `seen`.
fn pane_snapshot(pane: &Pane, seen: Option<u64>) -> PaneSnapshot {
    PaneSnapshot {
        agent: pane.agent.clone(),
        worktree: pane.worktree.clone(),
        failed: pane.failed.clone(),
        restored: pane.log.restored().clone(),
        events: pane.log.events_since(seen),
        draft: pane.draft.clone(),
        host: None,
    }
}

/// Starts pane `i`'s runner on its restored history; a provider that cannot
/// start leaves its error in the pane instead of stopping the server.
#[allow(clippy::too_many_arguments)]
fn start_pane(
    i: usize,
    pane: &mut Pane,
    config: &Config,
    (fresh, hive_budget): (
        bool,
        Option<std::sync::Arc<crate::runner::budget::HiveBudget>>,
    ),
    registry: &Registry,
    tx: &mpsc::UnboundedSender<PaneUpdate>,
    socket: &Path,
    ops: &mut crate::ops::OpsHost,
) -> Option<RunnerHandle> {
    // A pane that failed before starting (no worktree) stays stopped.
    if pane.failed.is_some() {
        return None;
    }
    let agent = &pane.agent;
    let mut history = crate::history::open_pane(agent, fresh);
    // `agent.read` sees the turns from before a restart too.
    ops.restore(i, &history.items);
    pane.log.reset(Restored::of(&history));
    let options = RunnerOptions {
        processor: config.processor_config(),
        interrupt_timeout: Duration::from_millis(config.ui.interrupt_timeout_ms),
        stall_after: Duration::from_secs(config.ui.stall_after_s.max(1)),
        initial_queue: std::mem::take(&mut history.queue),
        recorder: history.recorder.take(),
        live_every: crate::app::live_every(config),
        background_every: crate::app::background_every(config),
        focused: false,
        prices: std::sync::Arc::new(config.prices.clone()),
        sample_every: Some(Duration::from_secs(1)),
        hive_budget,
    };
    let spec = ProviderSpec {
        agent: registry.with_hive_mcp(agent, Some(socket)),
        resume: history.resume.take(),
    };
    let started = registry
        .get(&agent.provider)
        .and_then(|factory| spawn_runner(i, factory, spec, options, tx.clone()));
    match started {
        Ok(h) => Some(h),
        Err(e) => {
            tracing::warn!(agent = %agent.id, "cannot start: {e}");
            pane.failed = Some(e.to_string());
            None
        }
    }
}

/// `<label>.pid` beside the socket: how `hive kill` and the tests find a
/// server that no longer answers. Removed when the server ends.
struct PidFile(std::path::PathBuf);

impl PidFile {
    fn write(socket: &Path) -> anyhow::Result<Self> {
        let path = socket.with_extension("pid");
        use std::io::Write;
        let mut options = crate::private::file_options();
        options.write(true).create(true).truncate(true);
        crate::private::open_own_file(&mut options, &path)
            .and_then(|mut f| f.write_all(std::process::id().to_string().as_bytes()))
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(Self(path))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
