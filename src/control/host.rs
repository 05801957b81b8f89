//! What the server's loop holds of the socket: the accept loop, the hub
//! that answers `hive ctl`, and the console clients waiting to be taken.
//!
//! The socket is bound before the agents start, so `hive_tools` agents can
//! be told where it is (`hive mcp --socket …`); the hub learns how each
//! runner came up afterwards (`set_started`).

use std::path::Path;

use tokio::sync::mpsc;

use super::hub::{ControlRequest, Hub, Started};
use super::server::Server;
use crate::config::Config;
use crate::runner::{PaneUpdate, RunnerCommand};

/// What a pane's restored history session tells `hive ctl list`.
pub(crate) struct Restoring {
    pub(crate) usage: crate::event::Usage,
    pub(crate) turns: u64,
    pub(crate) model: Option<String>,
}

pub(crate) struct Host {
    hub: Hub,
    requests: mpsc::Receiver<ControlRequest>,
    consoles: Option<mpsc::Receiver<tokio::net::UnixStream>>,
    server: Server,
    /// Which project the socket serves, for clients choosing a server.
    _owner: Option<super::OwnerFile>,
}

impl Host {
    /// Binds the socket for `config` (its panes in order). Must run inside
    /// a tokio runtime. Without a socket there is no server: the error says
    /// where and why.
    pub(crate) fn start(
        config: &Config,
        agents: &[crate::config::AgentConfig],
    ) -> anyhow::Result<Self> {
        let starting = || Started::Failed("starting".into());
        let hub = Hub::new(agents.iter().map(|a| (a.clone(), starting())));
        let dir = super::socket_dir();
        let project = crate::project::Project::of(&config.source);
        let label = super::server_name(&dir, &project);
        let owner = super::OwnerFile::write(&dir, &label, &project)
            .map_err(|e| anyhow::anyhow!("cannot serve on {}: {e}", dir.display()))?;
        let (server, requests, consoles) = Server::start(&dir, &label)
            .map_err(|e| anyhow::anyhow!("cannot serve on {}: {e}", dir.display()))?;
        tracing::info!(socket = %server.path().display(), "socket listening");
        Ok(Self {
            hub,
            requests,
            consoles: Some(consoles),
            server,
            _owner: owner,
        })
    }

    /// How each pane's runner came up, in pane order.
    pub(crate) fn set_started(&mut self, started: Vec<Started>) {
        self.hub.set_started(started);
    }

    /// A pane added at runtime (the next slot), as its runner came up.
    pub(crate) fn add(
        &mut self,
        agent: crate::config::AgentConfig,
        started: Started,
        parent: Option<String>,
    ) {
        self.hub.add(agent, started, parent);
    }

    pub(crate) fn set_parent(&mut self, slot: usize, parent: Option<String>) {
        self.hub.set_parent(slot, parent);
    }

    /// Pane `slot` was closed: calls no longer find it.
    pub(crate) fn close_pane(&mut self, slot: usize) {
        self.hub.close(slot);
    }

    pub(crate) fn rename(&mut self, slot: usize, name: &str) {
        self.hub.rename(slot, name);
    }

    /// What pane `slot` has spent (USD).
    pub(crate) fn cost_of(&self, slot: usize) -> Option<f64> {
        self.hub.cost_of(slot)
    }

    pub(crate) fn set_started_at(&mut self, slot: usize, started: Started) {
        self.hub.set_started_at(slot, started);
    }

    pub(crate) fn set_order(&mut self, order: &[usize]) {
        self.hub.set_order(order);
    }

    /// Pane `i`'s history session had used `totals` before (its restored
    /// turns), for `status` and `list`.
    pub(crate) fn set_restored(&mut self, i: usize, log: Restoring) {
        self.hub.set_restored(i, log.usage, log.turns, log.model);
    }

    /// Stops accepting connections and removes the socket: a server that
    /// is stopping takes no new client.
    pub(crate) fn close(&mut self) {
        self.server.close();
    }

    pub(crate) fn socket(&self) -> &Path {
        self.server.path()
    }

    /// The next request from a `hive ctl` or `hive mcp` client.
    pub(crate) async fn next(&mut self) -> Option<ControlRequest> {
        self.requests.recv().await
    }

    /// Where console clients arrive (their first byte already read), for
    /// the server loop to take once.
    pub(crate) fn take_consoles(&mut self) -> Option<mpsc::Receiver<tokio::net::UnixStream>> {
        self.consoles.take()
    }

    pub(crate) fn observe(&mut self, update: &PaneUpdate) {
        self.hub.observe(update);
    }

    /// Answers a verb of `hive ctl`; the returned command is for the
    /// server's door to send to the pane's runner.
    pub(crate) fn answer(
        &mut self,
        verb: crate::protocol::verb::Verb,
        reply: super::hub::Responder,
        events: Option<mpsc::Sender<std::sync::Arc<str>>>,
    ) -> Option<(usize, RunnerCommand)> {
        self.hub.answer(verb, reply, events)
    }
}
