//! What the server's loop holds of the socket: the accept loop, the hub
//! that answers `hive ctl`, and the console clients waiting to be taken.
//!
//! The socket is bound before the agents start, so `hive_tools` agents can
//! be told where it is (`hive mcp --socket …`); the hub learns how each
//! runner came up afterwards, from the pane registry (src/panes/).

use std::path::Path;

use tokio::sync::mpsc;

use super::hub::{ControlRequest, Hub};
use super::server::Server;
use crate::config::Config;
use crate::panes::{PaneRecord, Panes};
use crate::runner::{PaneUpdate, RunnerCommand};

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
    pub(crate) fn start(config: &Config) -> anyhow::Result<Self> {
        let hub = Hub::new();
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

    /// Pane `slot` (its record `p`) was closed: whoever waits on it is told.
    pub(crate) fn close_pane(&mut self, slot: usize, p: &PaneRecord) {
        self.hub.close(slot, p);
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

    /// Sees one runner event, after the registry took it in.
    pub(crate) fn observe<X>(&mut self, panes: &Panes<X>, update: &PaneUpdate) {
        self.hub.observe(panes, update);
    }

    /// Answers a verb of `hive ctl`; the returned command is for the
    /// server's door to send to the pane's runner.
    pub(crate) fn answer<X>(
        &mut self,
        panes: &Panes<X>,
        verb: crate::protocol::verb::Verb,
        reply: super::hub::Responder,
        events: Option<crate::control::hub::Watch>,
    ) -> Option<(usize, RunnerCommand)> {
        self.hub.answer(panes, verb, reply, events)
    }
}
