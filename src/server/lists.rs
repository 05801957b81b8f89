//! What a console cannot read on its own, here or on another machine
//! (issue 30): a pane's files (`@` completion) and its history sessions
//! (`/resume`), which are the server's. The server lists them off its loop
//! and sends the list to the client that asked: the files as the console's
//! own finder would list them (`files::list`), only the pane's own working
//! directory, never a path a client names; the sessions of the pane's agent
//! from this machine's history; a session to switch to, opened off the loop.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::clients::ClientId;
use crate::config::AgentConfig;
use crate::history::{PaneHistory, sessions};
use crate::wire::ServerMsg;

/// What the blocking pool made, for the loop.
pub(super) enum Listed {
    /// A list (or a refusal) for client `0`.
    Answer(ClientId, ServerMsg),
    /// Session `session` of the agent in slot `slot`, opened for a switch.
    Opened {
        slot: usize,
        agent: String,
        session: String,
        opened: Box<PaneHistory>,
        /// The agent resumes its own session with this handle.
        resume: Option<String>,
        /// A new session (`/clear`), not one from the history.
        new: bool,
    },
}

/// A `/resume` of pane `slot` asked for by a client.
pub(super) struct ResumeAsk {
    pub(super) to: ClientId,
    pub(super) slot: usize,
    pub(super) agent: AgentConfig,
    pub(super) session: String,
    /// The agent can resume a session of its own.
    pub(super) can_resume: bool,
    /// A new session (`/clear`): opened whether the history knows it or
    /// not, and nothing of the agent's resumed.
    pub(super) new: bool,
}

/// Files sent at most (a home directory must not make one huge frame).
const MAX_SENT: usize = 100_000;

pub(super) struct Listings {
    /// The project's history.
    store: crate::history::Store,
    tx: mpsc::UnboundedSender<Listed>,
    rx: mpsc::UnboundedReceiver<Listed>,
}

impl Listings {
    pub(super) fn new(store: crate::history::Store) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self { store, tx, rx }
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
            let _ = tx.send(Listed::Answer(to, msg));
        });
    }

    /// Lists the history sessions of pane `pane`'s agent (`None`: no such
    /// pane: an empty list) for client `to`, newest first.
    pub(super) fn sessions(&self, to: ClientId, pane: usize, agent: Option<String>) {
        let tx = self.tx.clone();
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            let list = agent.map_or_else(Vec::new, |a| sessions::list(&store, &a, None));
            let _ = tx.send(Listed::Answer(to, ServerMsg::Sessions { pane, list }));
        });
    }

    /// Opens the session a client asked pane `ask.slot` to switch to, or
    /// tells that client there is no such session here.
    pub(super) fn resume(&self, ask: ResumeAsk) {
        let tx = self.tx.clone();
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            let ResumeAsk {
                to,
                slot,
                agent,
                session,
                can_resume,
                new,
            } = ask;
            let known = new
                || store
                    .sessions(&agent.id)
                    .iter()
                    .any(|s| s.session == session);
            let listed = if known {
                let mut opened = sessions::open(
                    &store,
                    &agent,
                    &session,
                    crate::history::DEFAULT_TAIL_RECORDS,
                );
                let resume = opened.resume.take().filter(|_| can_resume && !new);
                Listed::Opened {
                    slot,
                    agent: agent.id,
                    session,
                    opened: Box::new(opened),
                    resume,
                    new,
                }
            } else {
                let name = crate::sanitize::peer_line(&session);
                let text = format!(
                    "{} has no session `{name}` in hive's history",
                    agent.display_name()
                );
                Listed::Answer(to, ServerMsg::Notice { text, focus: None })
            };
            let _ = tx.send(listed);
        });
    }

    /// The next thing made off the loop.
    pub(super) async fn next(&mut self) -> Option<Listed> {
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
        let mut l = Listings::new(crate::history::Store::at(dir.path()));
        l.files(4, 1, Some(Some(dir.path().to_owned())));
        let Some(Listed::Answer(to, msg)) = l.next().await else {
            panic!("no answer")
        };
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
        let Some(Listed::Answer(to, msg)) = l.next().await else {
            panic!("no answer")
        };
        assert_eq!(to, 5);
        assert!(matches!(msg, ServerMsg::Files { paths, .. } if paths.is_empty()));
    }

    /// A `/resume` of a session this machine's history does not have is
    /// refused to the client that asked, its name shown as text.
    #[tokio::test]
    async fn a_resume_of_an_unknown_session_is_refused_to_the_asker() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = Listings::new(crate::history::Store::at(dir.path()));
        let agent = crate::config::Config::builtin().agents.remove(0);
        l.resume(ResumeAsk {
            to: 7,
            slot: 0,
            agent,
            session: "nope\u{1b}]0;x\u{7}".into(),
            can_resume: true,
            new: false,
        });
        let Some(Listed::Answer(to, ServerMsg::Notice { text, .. })) = l.next().await else {
            panic!("no refusal");
        };
        assert_eq!(to, 7);
        assert!(text.contains("has no session"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
    }

    /// A new session (`/clear`) is opened off the loop too, whether the
    /// history knows it or not, and resumes nothing of the agent's.
    #[tokio::test]
    async fn a_new_session_is_opened_off_the_loop_and_resumes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = Listings::new(crate::history::Store::at(dir.path()));
        let agent = crate::config::Config::builtin().agents.remove(0);
        l.resume(ResumeAsk {
            to: 7,
            slot: 3,
            agent,
            session: "s-new".into(),
            can_resume: true,
            new: true,
        });
        let Some(Listed::Opened {
            slot,
            session,
            resume,
            new,
            opened,
            ..
        }) = l.next().await
        else {
            panic!("not opened");
        };
        assert_eq!((slot, session.as_str(), new), (3, "s-new", true));
        assert!(resume.is_none());
        assert!(opened.items.is_empty());
    }
}
