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
use super::layout::Placed;
pub(super) use super::pane::{Pane, pane_snapshot};
pub(super) use super::starter::{SetupDone, Starter};
use crate::config::{AgentConfig, Config};
use crate::panes::Started;
use crate::provider::Registry;
use crate::runner::{PaneEvent, PaneUpdate, QueueEdit, RunnerCommand, RunnerHandle};
use crate::wire::snapshot::{PaneSnapshot, ServerInfo, Snapshot};
use crate::wire::{ClientMsg, ServerMsg};
use crate::worktree::Worktree;

/// `hive serve`: runs a server for the config in this process until it is
/// stopped. Started by a console (`server::daemon::start`) it runs in a
/// session of its own with its output in hive.log.
pub fn run(config_path: Option<&Path>, fresh: bool) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path, &Registry::builtin())?;
    let _log = crate::log::init_logging();
    let project = crate::project::Project::open(&config);
    crate::project::serve(&project);
    let layout = super::layout::LayoutFile::of(&project);
    let placed = layout.placed(&config, fresh);
    tracing::info!(config = %config.source.describe(), panes = placed.len(), "server starting");
    install_panic_hook();
    let rt = crate::runtime::build()?;
    // The loop is a task on the runtime's one worker, beside the runners
    // and the clients' writers: an event goes from runner to loop to
    // writer on one thread. Run by `block_on` on this thread instead, each
    // hand-off woke the other thread (issue 45: 8,300 context switches
    // for the reference answer).
    let result = rt.block_on(async {
        let served = tokio::spawn(async move {
            let mut server = Server::start(config, placed, layout, fresh)?;
            let why = server.run().await?;
            tracing::info!("server stopping: {why}");
            server.stop(&why).await;
            anyhow::Ok(())
        });
        served.await.context("the server's loop")?
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
        if crate::contain::panicking_contained() {
            // One pane's emulator: caught, that pane alone ends.
            tracing::error!("contained panic: {info}");
            return;
        }
        crate::provider::process::kill_all();
        tracing::error!("panic: {info}");
        previous(info);
    }));
}

pub(super) struct Server {
    pub(super) info: ServerInfo,
    /// The one pane registry (src/panes/), by slot: a pane's slot never
    /// changes while the server runs (its runner, the ops host and the hub
    /// know it by it); closed panes keep theirs. Its `order` is the open
    /// panes' slots as clients show them: a client's pane `n` is slot
    /// `order[n]`.
    pub(super) panes: crate::panes::Panes<Pane>,
    pub(super) runners: Vec<Option<RunnerHandle>>,
    /// What starting a pane needs (at start and at runtime).
    pub(super) starter: Starter,
    pub(super) layout: super::layout::LayoutFile,
    updates: mpsc::UnboundedReceiver<PaneUpdate>,
    /// Worktree setups run in the background, as they end.
    setups: mpsc::UnboundedReceiver<SetupDone>,
    pub(super) ops: crate::ops::OpsHost,
    ops_rx: mpsc::UnboundedReceiver<crate::ops::HiveRequest>,
    /// Operations for agents on other machines (`host:agent`).
    pub(super) across: crate::ops::across::Across,
    pub(super) control: crate::control::Host,
    /// Each console's view of each terminal pane.
    views: super::views::TermViews,
    /// Each terminal pane's size, the latest console's (src/server/sizes.rs).
    sizes: super::sizes::TermSizes,
    /// Console clients as they connect.
    consoles: mpsc::Receiver<tokio::net::UnixStream>,
    pub(super) clients: Clients,
    /// Runner events logged and not yet sent: the loop sends what it took
    /// in at once as one frame per client (`send_events`).
    outbox: Vec<PaneUpdate>,
    /// The slot of each event in `outbox`.
    outbox_slots: Vec<usize>,
    /// The git service of the worktree panes (src/server/worktrees.rs).
    pub(super) worktrees: super::worktrees::Worktrees,
    /// Panes' files and sessions for consoles elsewhere (src/server/lists.rs).
    pub(super) lists: super::lists::Listings,
    /// The forge's jobs and watched pull requests (src/server/forge.rs).
    pub(super) forges: super::forge::Forges,
    /// The moves of panes to other hosts under way (src/server/relocate.rs).
    pub(super) moves: super::moves::Moves<Server>,
    /// Numbers every runner event, so a snapshot can tell which happened
    /// while nobody was attached.
    pub(super) seq: u64,
    /// The last `seq` a client saw before the last one left.
    away_since: Option<u64>,
    /// The slot of the pane the last client looked at.
    last_focus: usize,
    /// `notify_command` and the mutes (src/server/notifier.rs).
    pub(super) notifier: super::notifier::Notifier,
    /// What each console saw and dismissed (src/server/seen.rs).
    pub(super) memory: super::seen::Consoles,
    /// Terminal panes going quiet (src/server/idle.rs).
    pub(super) idle: super::idle::IdleWatch,
    /// The slots as the attached clients last got them (`order`, as of
    /// the last snapshot or layout): an edit sends them what changed.
    pub(super) shown: Vec<usize>,
    /// The web client, when `[web] listen` is set (src/web/).
    pub(super) web: Option<crate::web::Web>,
    _pid_file: PidFile,
}

impl Server {
    fn start(
        config: Config,
        placed: Vec<Placed>,
        layout: super::layout::LayoutFile,
        fresh: bool,
    ) -> anyhow::Result<Self> {
        let (tx, updates) = mpsc::unbounded_channel();
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let mutes = layout.mutes(fresh);
        let mut agents: Vec<AgentConfig> = placed.iter().map(|p| p.agent.clone()).collect();
        let worktrees =
            crate::worktree::prepare_without_setup(&mut agents, config.worktrees.root.as_deref());
        let mut ops = crate::ops::OpsHost::new();
        // Bound first: agents with `hive_tools` are told where it is.
        let mut control = crate::control::Host::start(&config)?;
        let socket = control.socket().to_owned();
        let consoles = control
            .take_consoles()
            .context("the socket's console channel")?;
        let pid_file = PidFile::write(&socket)?;
        let web = crate::web::Web::start(&config.web, &socket)?;
        let mut panes = panes_of(placed, agents, worktrees);
        let (setups_tx, setups) = mpsc::unbounded_channel();
        let starter = Starter::new(config, ops_tx, (tx, setups_tx), socket.clone());
        let runners: Vec<_> = panes
            .iter_mut()
            .enumerate()
            .map(|(i, pane)| starter.start_or_set_up(i, pane, fresh, &mut ops))
            .collect();
        let info = ServerInfo {
            pid: std::process::id(),
            config: starter.config.source.describe(),
            config_path: starter.config.source.canonical_path(),
            socket,
            started: chrono::Utc::now().timestamp(),
        };
        Ok(Self {
            notifier: super::notifier::Notifier::new(&starter.config.ui, mutes),
            worktrees: super::worktrees::Worktrees::start(panes.iter().map(|p| p.worktree.clone())),
            lists: super::lists::Listings::new(starter.store.clone()),
            forges: super::forge::Forges::new(),
            moves: super::moves::Moves::new(),
            info,
            shown: (0..panes.len()).collect(),
            panes,
            runners,
            across: crate::ops::across::Across::new(&starter.config),
            starter,
            layout,
            updates,
            setups,
            ops,
            ops_rx,
            control,
            views: super::views::TermViews::default(),
            sizes: super::sizes::TermSizes::default(),
            consoles,
            clients: Clients::new(),
            outbox: Vec::new(),
            outbox_slots: Vec::new(),
            seq: 0,
            away_since: None,
            last_focus: 0,
            memory: super::seen::Consoles::default(),
            idle: super::idle::IdleWatch::default(),
            web,
            _pid_file: pid_file,
        })
    }

    /// Serves until stopped; returns why.
    async fn run(&mut self) -> anyhow::Result<String> {
        let mut term = signal(SignalKind::terminate()).context("SIGTERM handler")?;
        let mut int = signal(SignalKind::interrupt()).context("SIGINT handler")?;
        // No terminal to lose: a hangup means nothing to a server.
        let mut hup = signal(SignalKind::hangup()).context("SIGHUP handler")?;
        // Watched pull requests outlive a restart (src/server/forge_keep.rs).
        self.resume_forge();
        self.start_triggers();
        loop {
            tokio::select! {
                Some(update) = self.updates.recv() => {
                    self.on_update(update);
                    // The other runners woken by the same tick (their pipes
                    // are read on one grid, `timer::next_tick`) run first: a
                    // yield waits until the worker has nothing else to run.
                    // Their events then leave with this one, one frame per
                    // client a tick, not one per pane (issue 45 item 2).
                    tokio::task::yield_now().await;
                    while let Ok(more) = self.updates.try_recv() {
                        self.on_update(more);
                    }
                    self.send_events();
                }
                Some(req) = self.ops_rx.recv() => self.on_op(req),
                Some(done) = self.setups.recv() => self.set_up(done),
                Some(req) = self.control.next() => {
                    if let Some(why) = self.on_control(req) {
                        return Ok(why);
                    }
                }
                Some(stream) = self.consoles.recv() => self.clients.accept(stream),
                Some(req) = crate::web::next(&mut self.web) => self.on_web(req),
                Some(ev) = self.worktrees.next() => self.worktrees.deliver(ev, &mut self.clients, &self.panes.order),
                Some(listed) = self.lists.next() => self.listed(listed),
                Some(done) = self.forges.next() => self.forge_done(done),
                Some(later) = self.moves.next() => later(self),
                Some(ev) = self.clients.next() => {
                    if let Some(why) = self.on_client(ev) {
                        return Ok(why);
                    }
                }
                () = super::idle::idle_at(self.idle.deadline()) => self.idle_due(),
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

    pub(super) fn on_update(&mut self, update: PaneUpdate) {
        self.seq += 1;
        // The registry first: every door's answer reads it.
        self.panes.observe(&update);
        self.ops.observe(&update);
        self.control.observe(&self.panes, &update);
        self.worktrees.observe(&update);
        let slot = update.pane;
        // Clients number the open panes in their order.
        let position = self.position(slot);
        let Some(pane) = self.panes.get_mut(slot).filter(|p| !p.record.closed) else {
            return;
        };
        let Some(position) = position else {
            return;
        };
        match &update.event {
            // Answers to one client's request.
            PaneEvent::Recalled(_) | PaneEvent::TerminalText(_) => {
                if let Some(id) = pane.reply_to.take() {
                    let update = PaneUpdate {
                        pane: position,
                        ..update
                    };
                    // After the events before it.
                    self.send_events();
                    self.clients.events(&[update], self.seq, Some(id));
                }
                return;
            }
            PaneEvent::Attached { .. } => {
                // A new emulator: every console starts on its live screen.
                self.views.reset(slot);
                self.sizes.reset(slot);
            }
            _ => {}
        }
        let now = Instant::now();
        if let PaneEvent::Terminal(_) = &update.event {
            self.idle.output(slot, now, pane.focused);
        }
        let of = super::notifier::Of {
            slot,
            id: &pane.record.agent.id,
            title: pane.record.agent.display_name(),
            parent: pane.record.parent.as_deref(),
            looked_at: pane.focused,
        };
        if let Some(argv) = self.notifier.event(&of, &update.event, now) {
            crate::notify::run(argv);
        }
        // The paired phones that asked for Web Push (src/web/push.rs).
        if let Some(web) = &self.web {
            let consoles = self.clients.count() > 0;
            if let Some(msg) = crate::web::push::message(&update.event, of.id, of.parent, consoles)
            {
                web.push(&msg);
            }
        }
        pane.log.push(self.seq, now, &update.event);
        self.outbox.push(PaneUpdate {
            pane: position,
            ..update
        });
        self.outbox_slots.push(slot);
    }

    /// The events taken in since the last call, to every client at once
    /// (a terminal screen only to the clients whose view it is).
    pub(super) fn send_events(&mut self) {
        let events = std::mem::take(&mut self.outbox);
        let views = &self.views;
        let slots = &self.outbox_slots;
        self.clients.events_to(&events, self.seq, |id, i| {
            match events.get(i).map(|u| &u.event) {
                Some(PaneEvent::Terminal(screen)) => slots
                    .get(i)
                    .is_some_and(|&slot| views.wants(id, slot, screen)),
                _ => true,
            }
        });
        // The buffers are kept for the next batch (their memory only).
        self.outbox = events;
        self.outbox.clear();
        self.outbox_slots.clear();
    }

    /// Where clients show slot `slot` (none: it is closed).
    pub(super) fn position(&self, slot: usize) -> Option<usize> {
        self.panes.order.iter().position(|&s| s == slot)
    }

    /// The slot of the pane clients show at `position`.
    fn slot(&self, position: usize) -> Option<usize> {
        self.panes.order.get(position).copied()
    }

    /// What `hive ls` shows.
    pub(super) fn describe(&self) -> serde_json::Value {
        let running = self.panes.open().filter(|p| p.live.state.is_busy()).count();
        json!({
            "pid": self.info.pid,
            "config": self.info.config,
            "config_path": self.info.config_path,
            "socket": self.info.socket,
            "started": self.info.started,
            "panes": self.panes.order.len(),
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
                let snap = self.snapshot(id);
                self.send_snapshot(id, snap);
            }
        }
        None
    }

    /// A console's message: a request goes in by the door (src/server/
    /// door.rs), the rest is the console's session.
    fn on_message(&mut self, id: ClientId, msg: ClientMsg) -> Option<String> {
        let msg = match msg.into_verb() {
            Ok(verb) => return self.console_request(id, verb),
            Err(msg) => msg,
        };
        if self.viewer_refused(id, &msg) {
            return None;
        }
        match msg {
            ClientMsg::Attach | ClientMsg::Resync => {
                let first = self.clients.count() == 0;
                let snap = self.snapshot(id);
                self.send_snapshot(id, snap);
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
            ClientMsg::Focus(pane) => {
                // No pane (`NO_PANE`): this client looks at none of ours.
                let slot = self.slot(pane);
                self.focus_moves(id, slot);
                if let Some(slot) = slot {
                    self.last_focus = slot;
                }
                self.refocus();
            }
            ClientMsg::Draft { pane, text } => {
                if let Some(p) = self.slot(pane).and_then(|s| self.panes.get_mut(s)) {
                    p.draft = text;
                }
            }
            ClientMsg::Mute(change) => self.mute(&change),
            ClientMsg::Detach => self.left(id, "detached"),
            ClientMsg::Worktree(req) => self.worktrees.request(id, req, &self.panes.order),
            msg @ (ClientMsg::Files { .. } | ClientMsg::Sessions { .. }) => self.list_for(id, msg),
            ClientMsg::Resume { pane, session } => self.resume(id, pane, session),
            ClientMsg::Forge { pane, ask } => self.console_forge(id, pane, ask),
            ClientMsg::Identify(who) => self.identify(id, &who),
            ClientMsg::Dismiss {
                pane,
                kind,
                what,
                up_to,
            } => self.dismiss(id, pane, kind, what, up_to),
            ClientMsg::ReadOnly => self.only_looks(id),
            // Requests: through the door above.
            ClientMsg::Command { .. } | ClientMsg::Edit(_) | ClientMsg::Stop => {}
        }
        None
    }

    fn left(&mut self, id: ClientId, why: &str) {
        let Some(link) = self.clients.remove(id) else {
            return;
        };
        let sent = link.sent;
        tracing::info!(
            client = id,
            batches = sent.batches,
            events = sent.events,
            pane_batches = sent.pane_batches,
            "client left: {why}"
        );
        self.saw_until_now(&link);
        self.views.forget(id);
        for (slot, resize) in self.sizes.forget(id) {
            self.command_one(slot, resize, None);
        }
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
                if focused {
                    self.notifier.looked_at(i);
                    self.idle.looked_at(i);
                }
                if let Some(r) = self.runners.get(i).and_then(Option::as_ref) {
                    r.send(RunnerCommand::Focused(focused));
                }
            }
        }
    }

    /// A runner command from a client (`from`) or `hive ctl`; a client's
    /// sizes and input go by the latest console's size first.
    pub(super) fn command(&mut self, i: usize, cmd: RunnerCommand, from: Option<ClientId>) {
        let Some(id) = from else {
            return self.command_one(i, cmd, None);
        };
        for cmd in self.sizes.route(id, i, cmd) {
            self.command_one(i, cmd, from);
        }
    }

    fn command_one(&mut self, i: usize, cmd: RunnerCommand, from: Option<ClientId>) {
        if matches!(cmd, RunnerCommand::Restart) && self.retry_setup(i) {
            return;
        }
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
            // Typed by a user: what it prints next may be worth telling.
            RunnerCommand::Input(_) if from.is_some() => self.idle.typed(i),
            RunnerCommand::SwitchSession { session, .. } => {
                // A new session (`/clear`): opened off the loop like a
                // `/resume` (src/server/lists.rs), then the runner is told
                // and every console gets the pane's `Reset` (`listed`).
                self.lists.resume(super::lists::ResumeAsk {
                    to: from.unwrap_or_default(),
                    slot: i,
                    agent: pane.record.agent.clone(),
                    session: session.clone(),
                    can_resume: false,
                    new: true,
                });
                return;
            }
            _ => {}
        }
        match self.runners.get(i).and_then(Option::as_ref) {
            Some(r) => {
                let view = match (&cmd, from) {
                    (RunnerCommand::TermView { scroll, seen, hold }, Some(id)) => {
                        self.views.asked(id, i, *scroll, *seen, *hold);
                        Some(id)
                    }
                    _ => None,
                };
                r.send(cmd);
                // Back on the live screen for the consoles watching it live.
                let ids = self.clients.attached().map(|l| l.id);
                if view.is_some_and(|id| self.views.live_elsewhere(id, i, ids)) {
                    r.send(RunnerCommand::TermView {
                        scroll: 0,
                        seen: 0,
                        hold: false,
                    });
                }
            }
            // Its agent starts once the worktree's setup is done.
            None if matches!(self.panes[i].record.started, Started::SettingUp) => {
                self.panes[i].waiting.push(cmd);
            }
            None => tracing::debug!(pane = i, "command for a pane without a runner dropped"),
        }
    }

    /// The panes for client `id`, each with what this console saw and
    /// dismissed of it (src/server/seen.rs).
    pub(super) fn snapshot(&self, id: ClientId) -> Snapshot {
        let seen = self.seen_by(id);
        Snapshot {
            server: self.info.clone(),
            focus: self.position(self.last_focus).unwrap_or(0),
            away_since: self.away_since,
            panes: self
                .panes
                .order
                .iter()
                .filter_map(|&slot| Some((slot, self.panes.get(slot)?)))
                .map(|(slot, p)| PaneSnapshot {
                    dismissed: seen.dismissed(slot),
                    ..pane_snapshot(p, Some(seen.seen(slot)))
                })
                .collect(),
        }
    }
}

/// The panes as placed, each with its agent as prepared (its cwd in its
/// worktree) and its worktree, or why it has none.
fn panes_of(
    placed: Vec<Placed>,
    agents: Vec<AgentConfig>,
    worktrees: Vec<(usize, Result<Worktree, crate::worktree::WorktreeError>)>,
) -> crate::panes::Panes<Pane> {
    let mut panes = crate::panes::Panes::default();
    for (placed, agent) in placed.into_iter().zip(agents) {
        let (record, pane) = Pane::slot(placed, agent);
        panes.push(record, pane);
    }
    for (i, result) in worktrees {
        if let Some(p) = panes.get_mut(i) {
            match result {
                Ok(w) => p.worktree = Some(w),
                Err(e) => p.record.started = Started::Failed(format!("worktree: {e}")),
            }
        }
    }
    panes
}

impl Server {
    /// A worktree's setup ended: the pane's agent starts (with what it
    /// was sent meanwhile), or the pane shows why it cannot; every client
    /// gets the pane as it is now.
    pub(super) fn set_up(&mut self, done: SetupDone) {
        let SetupDone {
            slot,
            fresh,
            result,
            note,
        } = done;
        tracing::info!(pane = slot, ok = result.is_ok(), "worktree setup ended");
        let Some(pane) = self
            .panes
            .get_mut(slot)
            .filter(|p| !p.record.closed && matches!(p.record.started, Started::SettingUp))
        else {
            return;
        };
        pane.record.started = Started::Starting;
        let waiting = std::mem::take(&mut pane.waiting);
        match result {
            Ok(output) => {
                if let Some(w) = pane.worktree.as_mut() {
                    w.setup_output = output;
                }
            }
            Err(why) => pane.record.started = Started::Failed(why),
        }
        let runner = self.starter.start(slot, pane, fresh, &mut self.ops);
        if let Some(note) = note {
            pane.log.note(note);
        }
        if let Some(r) = &runner {
            for cmd in waiting {
                r.send(cmd);
            }
        }
        if let Some(place) = self.runners.get_mut(slot) {
            *place = runner;
        }
        // Only this pane changed: each client builds it again, alone.
        self.reset_pane(slot, None);
    }

    /// The restart key on a pane whose worktree's setup failed: the setup
    /// runs again, then its agent starts (#46 item 22: the key did nothing,
    /// and only a new server ran the setup again). False for any other pane.
    fn retry_setup(&mut self, slot: usize) -> bool {
        let no_runner = self.runners.get(slot).is_some_and(Option::is_none);
        let Some(pane) = self.panes.get_mut(slot) else {
            return false;
        };
        let setup_failed = pane.record.failed().is_some()
            && pane
                .worktree
                .as_ref()
                .is_some_and(|w| crate::worktree::setup_pending(&pane.record.agent, w));
        if !(no_runner && setup_failed) {
            return false;
        }
        tracing::info!(pane = slot, "worktree setup again");
        pane.record.started = Started::Starting;
        // No runner while the setup runs: `set_up` starts it after.
        let runner = self
            .starter
            .start_or_set_up(slot, pane, false, &mut self.ops);
        if let Some(place) = self.runners.get_mut(slot) {
            *place = runner;
        }
        self.reset_pane(slot, None);
        true
    }

    /// Every attached client but `except` builds slot `slot`'s pane again
    /// from its snapshot (`ServerMsg::Reset`).
    pub(super) fn reset_pane(&mut self, slot: usize, except: Option<ClientId>) {
        let (Some(position), Some(pane)) = (self.position(slot), self.panes.get(slot)) else {
            return;
        };
        let reset = ServerMsg::Reset {
            pane: position,
            snapshot: Box::new(pane_snapshot(pane, None)),
        };
        self.clients.broadcast(&reset, except);
    }

    /// Snapshot `snap` to client `id`, then the git state in the panes'
    /// numbers (a snapshot replaces what the client had).
    pub(super) fn send_snapshot(&mut self, id: ClientId, snap: Snapshot) {
        // A deferred snapshot comes with its catch-up once the client drains.
        if self.clients.send_snapshot(id, snap) {
            self.catch_up(id);
        }
    }

    /// After a snapshot or a layout, client `id` gets the git state in
    /// the panes' numbers, and the mutes.
    pub(super) fn catch_up(&mut self, id: ClientId) {
        self.worktrees
            .catch_up(id, &mut self.clients, &self.panes.order);
        let mutes = ServerMsg::Mutes(self.notifier.mutes.clone());
        self.clients.send(id, &mutes);
    }

    /// Every attached client gets the panes as they are now.
    pub(super) fn resnapshot(&mut self) {
        self.shown.clone_from(&self.panes.order);
        let ids: Vec<ClientId> = self.clients.attached().map(|l| l.id).collect();
        for id in ids {
            let snap = self.snapshot(id);
            self.send_snapshot(id, snap);
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
