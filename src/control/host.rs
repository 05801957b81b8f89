//! What the console's loop holds: the socket server and the hub, joined by
//! the request channel. Without a socket (it could not be bound) the
//! console runs on, and `next` never yields.
//!
//! The socket is bound before the agents start, so `hive_tools` agents can
//! be told where it is (`hive mcp --socket …`); the hub learns how each
//! runner came up afterwards (`set_started`).

use std::path::Path;

use tokio::sync::mpsc;

use super::hub::{ControlRequest, Hub, Started};
use super::protocol::Call;
use super::server::Server;
use crate::config::Config;
use crate::ops::HiveRequest;
use crate::runner::{PaneUpdate, RunnerCommand};

pub(crate) struct Host {
    hub: Hub,
    requests: Option<mpsc::Receiver<ControlRequest>>,
    server: Option<Server>,
    /// Where `op` calls go: the ops host on the same loop.
    ops: mpsc::UnboundedSender<HiveRequest>,
    /// Why there is no socket, when there is none.
    failure: Option<String>,
}

impl Host {
    /// Binds the socket for `config` (its panes in order). Must run inside
    /// a tokio runtime.
    pub(crate) fn start(config: &Config, ops: mpsc::UnboundedSender<HiveRequest>) -> Self {
        let starting = || Started::Failed("starting".into());
        let hub = Hub::new(config.agents.iter().map(|a| (a.clone(), starting())));
        let dir = super::socket_dir();
        let label = super::socket_label(&config.source);
        let (requests, server, failure) = match Server::start(&dir, &label) {
            Ok((server, rx)) => {
                tracing::info!(socket = %server.path().display(), "control socket listening");
                (Some(rx), Some(server), None)
            }
            Err(e) => {
                tracing::warn!("no control socket in {}: {e}", dir.display());
                (None, None, Some(format!("{}: {e}", dir.display())))
            }
        };
        Self {
            hub,
            requests,
            server,
            ops,
            failure,
        }
    }

    /// What each pane should say when the socket could not be made (the
    /// refusal is not only for hive.log): `hive ctl` cannot reach this hive,
    /// and a `hive_tools` agent that reaches hive through `hive mcp` gets
    /// none of its operations. Empty with a socket.
    pub(crate) fn failure_notices(
        &self,
        agents: &[crate::config::AgentConfig],
        wants_hive_mcp: impl Fn(&crate::config::AgentConfig) -> bool,
    ) -> Vec<(usize, String)> {
        let Some(why) = &self.failure else {
            return Vec::new();
        };
        agents
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut text =
                    format!("no control socket ({why}): `hive ctl` cannot reach this hive");
                if wants_hive_mcp(a) {
                    text.push_str("; hive_tools: this agent gets no hive operations");
                }
                (i, text)
            })
            .collect()
    }

    /// How each pane's runner came up, in pane order.
    pub(crate) fn set_started(&mut self, started: Vec<Started>) {
        self.hub.set_started(started);
    }

    pub(crate) fn socket(&self) -> Option<&Path> {
        self.server.as_ref().map(Server::path)
    }

    /// The next request from a client (pending forever without a socket).
    pub(crate) async fn next(&mut self) -> Option<ControlRequest> {
        match &mut self.requests {
            Some(rx) => rx.recv().await,
            None => std::future::pending().await,
        }
    }

    pub(crate) fn observe(&mut self, update: &PaneUpdate) {
        self.hub.observe(update);
    }

    /// Answers a request; the returned command is for the pane's runner.
    pub(crate) fn handle(&mut self, req: ControlRequest) -> Option<(usize, RunnerCommand)> {
        if let Call::Op { agent, op, args } = req.call {
            crate::ops::remote::serve(&self.ops, agent, op, args, req.reply);
            return None;
        }
        self.hub.handle(req)
    }
}
