//! What the console's loop holds: the socket server and the hub, joined by
//! the request channel. Without a socket (it could not be bound) the
//! console runs on, and `next` never yields.

use std::path::Path;

use tokio::sync::mpsc;

use super::hub::{ControlRequest, Hub, Started};
use super::server::Server;
use crate::config::Config;
use crate::runner::{PaneUpdate, RunnerCommand};

pub struct Host {
    hub: Hub,
    requests: Option<mpsc::Receiver<ControlRequest>>,
    server: Option<Server>,
}

impl Host {
    /// Binds the socket for `config` (its panes in order, how each started).
    /// Must run inside a tokio runtime.
    pub fn start(config: &Config, started: Vec<Started>) -> Self {
        let hub = Hub::new(config.agents.iter().cloned().zip(started));
        let dir = super::socket_dir();
        let label = super::socket_label(&config.source);
        match Server::start(&dir, &label) {
            Ok((server, rx)) => {
                tracing::info!(socket = %server.path().display(), "control socket listening");
                Self {
                    hub,
                    requests: Some(rx),
                    server: Some(server),
                }
            }
            Err(e) => {
                tracing::warn!("no control socket in {}: {e}", dir.display());
                Self {
                    hub,
                    requests: None,
                    server: None,
                }
            }
        }
    }

    pub fn socket(&self) -> Option<&Path> {
        self.server.as_ref().map(Server::path)
    }

    /// The next request from a client (pending forever without a socket).
    pub async fn next(&mut self) -> Option<ControlRequest> {
        match &mut self.requests {
            Some(rx) => rx.recv().await,
            None => std::future::pending().await,
        }
    }

    pub fn observe(&mut self, update: &PaneUpdate) {
        self.hub.observe(update);
    }

    /// Answers a request; the returned command is for the pane's runner.
    pub fn handle(&mut self, req: ControlRequest) -> Option<(usize, RunnerCommand)> {
        self.hub.handle(req)
    }
}
