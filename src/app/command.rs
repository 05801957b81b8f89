//! Everything the app asks of the world outside it, in one queue. The app
//! is pure state: a key press or a runner event may need a runner, the git
//! service, the search worker or the terminal itself, and it says so by
//! pushing an [`AppCommand`]. The event loop drains the queue in one place
//! (`dispatch` in `super`), so there is one way out of the app to follow
//! (as codex-rs's `AppEvent`), and tests read what would have been sent.

use crate::protocol::git::WorktreeRequest;
use crate::protocol::pane::RunnerCommand;
use crate::search::Request;

/// One thing the app wants done outside itself.
#[derive(Debug, Clone)]
pub enum AppCommand {
    /// For pane `pane`'s runner.
    Runner {
        pane: usize,
        cmd: RunnerCommand,
    },
    /// For the server: a pane made, closed, renamed or moved.
    Edit(crate::protocol::edit::PaneEdit),
    /// For the git service (diffs, commits, overlap checks).
    Git(WorktreeRequest),
    /// For the server of a pane on another machine: list its files (`@`).
    ListFiles {
        pane: usize,
    },
    /// For the server of a pane on another machine: list its history
    /// sessions (`/resume`), or switch it to one.
    ListSessions {
        pane: usize,
    },
    Resume {
        pane: usize,
        session: String,
    },
    /// For the search worker.
    Search(Request),
    /// Bytes for the terminal after the next frame (bell, OSC 9 and 52,
    /// mouse capture on and off).
    Terminal(String),
    /// `[ui] notify_command` with its fields filled in.
    Notify(Vec<String>),
    /// For the server, which keeps the mutes: a `/mute`.
    Mute(crate::protocol::mutes::Mute),
    /// For the server that runs pane `pane`: `/issue`, `/pr`, `/checks`.
    Forge {
        pane: usize,
        ask: crate::protocol::forge::ForgeAsk,
    },
    /// For the server, which keeps them per console: an inbox entry
    /// dismissed with `d`.
    Dismiss {
        pane: usize,
        kind: crate::protocol::mutes::ReasonKind,
        what: String,
        /// The last event of its server the console had
        /// (`Attention::heard`).
        up_to: u64,
    },
}

impl AppCommand {
    /// The message for the server this command is, when it is one of the
    /// console's requests that are not runner commands or edits (a git
    /// request, a listing, a resume, a mute, a forge ask, a dismissal);
    /// else the command, handed back.
    #[allow(
        clippy::result_large_err,
        reason = "handed back whole to the caller's next match, never kept or passed on"
    )]
    pub(crate) fn into_request(self) -> Result<crate::protocol::ClientMsg, Self> {
        use crate::protocol::ClientMsg;
        Ok(match self {
            AppCommand::Git(req) => ClientMsg::Worktree(req),
            AppCommand::ListFiles { pane } => ClientMsg::Files { pane },
            AppCommand::ListSessions { pane } => ClientMsg::Sessions { pane },
            AppCommand::Resume { pane, session } => ClientMsg::Resume { pane, session },
            AppCommand::Mute(change) => ClientMsg::Mute(change),
            AppCommand::Forge { pane, ask } => ClientMsg::Forge { pane, ask },
            AppCommand::Dismiss {
                pane,
                kind,
                what,
                up_to,
            } => ClientMsg::Dismiss {
                pane,
                kind,
                what,
                up_to,
            },
            other => return Err(other),
        })
    }
}

/// The app's queue of commands, in the order they were made.
#[derive(Debug, Default)]
pub struct Outbox(Vec<AppCommand>);

impl Outbox {
    pub fn push(&mut self, cmd: AppCommand) {
        self.0.push(cmd);
    }

    pub fn runner(&mut self, pane: usize, cmd: RunnerCommand) {
        self.push(AppCommand::Runner { pane, cmd });
    }

    pub fn git(&mut self, req: WorktreeRequest) {
        self.push(AppCommand::Git(req));
    }

    pub fn search(&mut self, req: Request) {
        self.push(AppCommand::Search(req));
    }

    pub fn terminal(&mut self, bytes: impl Into<String>) {
        self.push(AppCommand::Terminal(bytes.into()));
    }

    /// Takes the commands `take` accepts, in order; the rest stay queued.
    pub fn drain_where(&mut self, mut take: impl FnMut(&AppCommand) -> bool) -> Vec<AppCommand> {
        let (taken, kept) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|c| take(c));
        self.0 = kept;
        taken
    }

    /// The commands queued for runners, as (pane, command).
    pub fn runner_commands(&self) -> Vec<(usize, &RunnerCommand)> {
        self.0
            .iter()
            .filter_map(|c| match c {
                AppCommand::Runner { pane, cmd } => Some((*pane, cmd)),
                _ => None,
            })
            .collect()
    }

    /// Takes the commands queued for runners.
    pub fn take_runner_commands(&mut self) -> Vec<(usize, RunnerCommand)> {
        self.drain_where(|c| matches!(c, AppCommand::Runner { .. }))
            .into_iter()
            .filter_map(|c| match c {
                AppCommand::Runner { pane, cmd } => Some((pane, cmd)),
                _ => None,
            })
            .collect()
    }

    /// The requests queued for the git service.
    pub fn git_requests(&self) -> Vec<&WorktreeRequest> {
        self.0
            .iter()
            .filter_map(|c| match c {
                AppCommand::Git(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    /// Takes the requests queued for the git service.
    pub fn take_git_requests(&mut self) -> Vec<WorktreeRequest> {
        self.drain_where(|c| matches!(c, AppCommand::Git(_)))
            .into_iter()
            .filter_map(|c| match c {
                AppCommand::Git(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    /// Takes the requests queued for the search worker.
    pub fn take_search_requests(&mut self) -> Vec<Request> {
        self.drain_where(|c| matches!(c, AppCommand::Search(_)))
            .into_iter()
            .filter_map(|c| match c {
                AppCommand::Search(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    /// The bytes queued for the terminal.
    pub fn terminal_writes(&self) -> Vec<&str> {
        self.0
            .iter()
            .filter_map(|c| match c {
                AppCommand::Terminal(s) => Some(s.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The notify commands queued, as their arguments.
    pub fn notify_commands(&self) -> Vec<&[String]> {
        self.0
            .iter()
            .filter_map(|c| match c {
                AppCommand::Notify(argv) => Some(argv.as_slice()),
                _ => None,
            })
            .collect()
    }

    /// Forgets the bytes queued for the terminal.
    pub fn clear_terminal_writes(&mut self) {
        self.0.retain(|c| !matches!(c, AppCommand::Terminal(_)));
    }

    /// Forgets the commands queued for runners.
    pub fn clear_runner_commands(&mut self) {
        self.0.retain(|c| !matches!(c, AppCommand::Runner { .. }));
    }

    /// Forgets the requests queued for the git service.
    pub fn clear_git_requests(&mut self) {
        self.0.retain(|c| !matches!(c, AppCommand::Git(_)));
    }
}

/// The console's way to ask its server (or, through the mux, the server
/// that runs the pane) for what is not a runner command: the git service
/// of the worktree panes (src/server/worktrees.rs), and what only the
/// machine of a remote pane can read, its files and history sessions
/// (src/server/lists.rs). The answers come back with the server's other
/// messages (`FromServer::Worktree`, `Files`, `Sessions`).
pub(crate) struct ServerRequests {
    sender: crate::client::Sender,
}

impl ServerRequests {
    pub(crate) fn new(sender: crate::client::Sender) -> Self {
        Self { sender }
    }

    pub(crate) fn send(&self, msg: crate::protocol::ClientMsg) {
        self.sender.send(&msg);
    }
}
