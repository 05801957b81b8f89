//! What a console on another machine (issue 30) cannot read on its own:
//! a pane's files (`@` completion) and its history sessions (`/resume`),
//! which are on this machine. The server lists them off its loop and sends
//! the list to the client that asked: the files as the console's own finder
//! would list them (`files::list`), only the pane's own working directory,
//! never a path a client names; the sessions of the pane's agent from this
//! machine's history.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::clients::ClientId;
use crate::config::AgentConfig;
use crate::history::sessions;
use crate::wire::ServerMsg;

/// Files sent at most (a home directory must not make one huge frame).
const MAX_SENT: usize = 100_000;

pub(super) struct Listings {
    /// The project's history.
    store: crate::history::Store,
    tx: mpsc::UnboundedSender<(ClientId, ServerMsg)>,
    rx: mpsc::UnboundedReceiver<(ClientId, ServerMsg)>,
}

impl Listings {
    pub(super) fn new(store: crate::history::Store) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self { store, tx, rx }
    }

    pub(super) fn store(&self) -> &crate::history::Store {
        &self.store
    }

    /// Lists pane `pane`'s files for client `to` on the blocking pool.
    /// `cwd`: the pane's working directory (`Some(None)`: the server's);
    /// `None`: no such pane, which gets an empty list.
    pub(super) fn files(&self, to: ClientId, pane: usize, cwd: Option<Option<PathBuf>>) {
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let root = cwd.map(|c| c.or_else(|| std::env::current_dir().ok()));
            let (paths, complete) = match root.flatten() {
                Some(root) => crate::files::list(&root, MAX_SENT),
                None => (Vec::new(), true),
            };
            let msg = ServerMsg::Files {
                pane,
                paths,
                complete,
            };
            let _ = tx.send((to, msg));
        });
    }

    /// Lists the history sessions of pane `pane`'s agent (`None`: no such
    /// pane: an empty list) for client `to`, newest first.
    pub(super) fn sessions(&self, to: ClientId, pane: usize, agent: Option<String>) {
        let tx = self.tx.clone();
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            let list = agent.map_or_else(Vec::new, |a| sessions::list(&store, &a, None));
            let _ = tx.send((to, ServerMsg::Sessions { pane, list }));
        });
    }

    /// The next list made, and whom it is for.
    pub(super) async fn next(&mut self) -> Option<(ClientId, ServerMsg)> {
        self.rx.recv().await
    }
}

/// The resume handle to switch `agent` to its session `session` with:
/// `None` when there is no such session in this machine's history (the
/// request is dropped), `Some(None)` when the agent starts a new agent
/// session on it (hive kept no handle, or the agent cannot resume).
pub(super) fn handle(
    store: &crate::history::Store,
    agent: &AgentConfig,
    session: &str,
    can_resume: bool,
) -> Option<Option<String>> {
    if !store
        .sessions(&agent.id)
        .iter()
        .any(|s| s.session == session)
    {
        tracing::warn!(agent = %agent.id, "resume of an unknown session {session:?} dropped");
        return None;
    }
    let opened = sessions::open(store, agent, session, crate::history::DEFAULT_TAIL_RECORDS);
    Some(opened.resume.filter(|_| can_resume))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panes_files_go_to_the_client_that_asked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        let mut l = Listings::new(crate::history::Store::at(dir.path()));
        l.files(4, 1, Some(Some(dir.path().to_owned())));
        let (to, msg) = l.next().await.unwrap();
        assert_eq!(to, 4);
        assert_eq!(
            msg,
            ServerMsg::Files {
                pane: 1,
                paths: vec!["README.md".into(), "src/main.rs".into()],
                complete: true
            }
        );
        // No such pane: nothing listed.
        l.files(5, 9, None);
        let (to, msg) = l.next().await.unwrap();
        assert_eq!(to, 5);
        assert!(matches!(msg, ServerMsg::Files { paths, .. } if paths.is_empty()));
    }
}
