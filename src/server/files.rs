//! `@` file completion for a console on another machine (issue 30): the
//! pane's files are on this machine, so the server lists them (as the
//! console's own finder would, `files::list`) and sends the list to the
//! client that asked, whose finder matches in it. Only the pane's own
//! working directory is listed, never a path a client names.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::clients::ClientId;
use crate::wire::ServerMsg;

/// Files sent at most (a home directory must not make one huge frame).
const MAX_SENT: usize = 100_000;

pub(super) struct Listings {
    tx: mpsc::UnboundedSender<(ClientId, ServerMsg)>,
    rx: mpsc::UnboundedReceiver<(ClientId, ServerMsg)>,
}

impl Listings {
    pub(super) fn new() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self { tx, rx }
    }

    /// Lists pane `pane`'s files for client `to` on the blocking pool.
    /// `cwd`: the pane's working directory (`Some(None)`: the server's);
    /// `None`: no such pane, which gets an empty list.
    pub(super) fn list(&self, to: ClientId, pane: usize, cwd: Option<Option<PathBuf>>) {
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

    /// The next list made, and whom it is for.
    pub(super) async fn next(&mut self) -> Option<(ClientId, ServerMsg)> {
        self.rx.recv().await
    }
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
        let mut l = Listings::new();
        l.list(4, 1, Some(Some(dir.path().to_owned())));
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
        l.list(5, 9, None);
        let (to, msg) = l.next().await.unwrap();
        assert_eq!(to, 5);
        assert!(matches!(msg, ServerMsg::Files { paths, .. } if paths.is_empty()));
    }
}
