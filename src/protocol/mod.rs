//! The console protocol (issue 29): what a hive server and its clients say
//! to each other over the server's Unix socket.
//!
//! The server owns the agents; a console is a client that attaches, gets a
//! [`snapshot::Snapshot`] of every pane, then live events, and sends the
//! runner commands its keys make. The messages are the runner ↔ app
//! boundary that existed inside one process (`RunnerCommand` in,
//! `PaneEvent` out) plus what only a client has to say (its focus, a draft,
//! detach). Text that grows is sent as what was appended ([`delta`]), never
//! the whole message again per update.
//!
//! Framing ([`frame`]): a client first writes [`MAGIC`] (its first byte,
//! NUL, tells the server this is not a `hive ctl` JSON line), then both
//! sides send frames, a 4-byte big-endian length then the payload. The
//! first frame each way is a [`Hello`] in JSON, which every version can
//! read, so a client and server of different versions can say so; after
//! matching hellos the payloads are MessagePack (`rmp-serde`, with field
//! names). docs/protocol.md describes it for other clients.

pub mod agent;
pub mod carry;
pub mod delta;
pub mod display;
pub mod edit;
pub mod event;
pub mod forge;
pub mod frame;
pub mod git;
pub mod history;
pub mod hold;
pub mod image;
pub mod mutes;
pub mod pane;
pub mod parts;
pub mod screen;
pub mod snapshot;
pub mod text;
pub mod upsert;
pub mod verb;

#[cfg(test)]
pub(crate) mod samples;
#[cfg(test)]
mod shape;

use serde::{Deserialize, Serialize};

use crate::protocol::pane::RunnerCommand;

/// Bumped whenever a message changes shape: a client and a server of
/// different protocols refuse each other with a clear reason. The shape of
/// each version is pinned (tests/fixtures/protocol/v<N>.json, `shape`): a
/// change without a bump fails the tests. 5: `PaneCard` instead of the
/// whole agent config (issue 44). 6:
/// runner events in batches, `Events` instead of `Event` (issue 45). 7: a
/// snapshot's pane says what a console saw of it, `PaneSnapshot::seen`
/// (issue 46 item 8: the inbox outlives a console). 8: an approval
/// request says what its tool does and where (`PermissionRequest::kind`,
/// `locations`, ACP's; issue 47). 9: a console asks the forge
/// (`ClientMsg::Forge`) and hears back (`ServerMsg::Forge`; issue 48); a pane's worktree may be a
/// workspace of several repositories (`Worktree::repos`, issue 52); a
/// pane goes on under another account (`RunnerCommand::SwitchAccount`,
/// issue 51); a console says who it is (`ClientMsg::Identify`) and
/// dismisses entries up to the last event it had (`ClientMsg::Dismiss`,
/// `PaneSnapshot::dismissed`, `ServerMsg::Events`' seq), a
/// terminal pane's idle is the server's (`PaneEvent::Idle`) (#46 item 8);
/// `PaneEdit::Handoff` and `PaneEdit::Relocate` (`/move @HOST`; issue 50);
/// `PaneEdit::AddRepo` (issue 52); a console only looks (`ClientMsg::ReadOnly`,
/// `hive attach --read-only`, issue 47).
pub const PROTOCOL_VERSION: u32 = 9;

/// `ClientMsg::Focus(NO_PANE)`: the client looks at none of the server's
/// panes (#46 item 8: a console of several servers looking at a remote pane
/// left the local server thinking its last pane was looked at, and its
/// events were never unread).
pub const NO_PANE: usize = usize::MAX;

/// What a console writes first on the socket; `hive ctl` writes JSON lines,
/// which never start with NUL.
pub const MAGIC: &[u8; 5] = b"\0HIVE";

/// The first frame each way, in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// hive's version (`CARGO_PKG_VERSION`), for the user to read.
    pub hive: String,
}

impl Hello {
    pub fn ours() -> Self {
        Self {
            protocol: PROTOCOL_VERSION,
            hive: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// Why this peer (a `peer_is`) and we (a `we_are`) cannot talk, if we
    /// cannot, naming which side runs which version (#46 item 16: "this
    /// server is hive …, and this hive is …" left the reader to guess
    /// which "this" was which); the peer's version (its words) is quoted
    /// as one visible line.
    pub fn mismatch(&self, peer_is: &str, we_are: &str) -> Option<String> {
        (self.protocol != PROTOCOL_VERSION).then(|| {
            format!(
                "the {peer_is} runs hive {} (protocol {}), this {we_are} hive {} (protocol {})",
                crate::sanitize::peer_line(&self.hive),
                self.protocol,
                env!("CARGO_PKG_VERSION"),
                PROTOCOL_VERSION
            )
        })
    }
}

/// What a client tells the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ClientMsg {
    /// After the hello: send a snapshot, then live events.
    Attach,
    /// A runner command from this client's keys (or its fan-out).
    Command { pane: usize, cmd: RunnerCommand },
    /// The pane this client now looks at (runners of panes nobody looks at
    /// show their text on the slower background tick). A number that is no
    /// pane ([`NO_PANE`]): it looks at none of this server's panes (a
    /// console of several servers looking at another's), so what they do
    /// is unread.
    Focus(usize),
    /// The pane's composer holds this half-typed text (kept for the next
    /// attach; not sent to the other clients).
    Draft { pane: usize, text: String },
    /// This client's copy went wrong (a delta that did not fit): send a
    /// fresh snapshot.
    Resync,
    /// A change to the server's panes (new, close, rename, move).
    Edit(edit::PaneEdit),
    /// Going away; the agents keep working.
    Detach,
    /// Stop every agent and the server.
    Stop,
    /// For the server's git service: a diff, a merge, a review step
    /// (src/server/worktrees.rs).
    Worktree(git::WorktreeRequest),
    /// List the files of the pane's working directory, for `@` completion
    /// in a console on another machine (src/server/lists.rs).
    Files { pane: usize },
    /// List the pane's history sessions (`/resume` in a console on another
    /// machine, whose own history does not have them).
    Sessions { pane: usize },
    /// `/mute` (or unmute) a pane or a type: the server keeps it, runs
    /// `notify_command` by it and tells every client.
    Mute(mutes::Mute),
    /// Switch the pane to its history session `session`, the server
    /// finding the agent's resume handle in its own history; every client,
    /// this one too, gets the pane's `Reset`.
    Resume { pane: usize, session: String },
    /// `/issue`, `/pr`, `/checks` typed in pane `pane` (issue 48): the
    /// forge verb, its pane named by the server (an issue's new pane by
    /// its own id); the answer comes back as `ServerMsg::Forge`.
    Forge { pane: usize, ask: forge::ForgeAsk },
    /// Who this console is, across its connections (before `Attach`;
    /// protocol 9, #46 item 8): the server keeps what each console saw and
    /// dismissed under it, so a console that comes back (a detach, a `kill
    /// -9`, a reconnect) finds its own unread marks and inbox, and another
    /// console its own. Without it a connection is a console of its own.
    Identify(String),
    /// The user dismissed an inbox entry of the pane (`d`): kept for this
    /// console (`PaneSnapshot::dismissed`), up to event `up_to`, the last
    /// one this console had of the server when it dismissed (the `seq` of
    /// its last `Events`, or of its snapshot's events): a later entry of the
    /// same words that was still on its way is news, not dismissed with it
    /// (#46: the server took its own latest event, and a new entry of the
    /// same words in flight was lost with the old one).
    Dismiss {
        pane: usize,
        kind: mutes::ReasonKind,
        what: String,
        up_to: u64,
    },
    /// This console only looks (`hive attach --read-only`, before `Attach`;
    /// protocol 9, issue 47): from now on the server refuses every request
    /// of it that changes anything, with a `Notice` saying so. There is no
    /// way back on this connection.
    ReadOnly,
}

impl ClientMsg {
    /// What this session message would change that is not the console's
    /// own (a mute, a draft, a merge, a resume, a forge action), in a few
    /// words; `None`: it looks, or changes only this console's view (its
    /// focus, its dismissals) — or it is a request (`into_verb`), which
    /// the door judges. A read-only console is refused these.
    pub fn changes(&self) -> Option<&'static str> {
        use git::WorktreeRequest as W;
        match self {
            Self::Draft { .. } => Some("keep a draft"),
            Self::Mute(_) => Some("mute"),
            Self::Resume { .. } => Some("switch sessions"),
            Self::Worktree(W::Diff { .. } | W::CheckOverlaps) => None,
            Self::Worktree(_) => Some("change a worktree"),
            Self::Forge {
                ask: forge::ForgeAsk::PrStatus { .. } | forge::ForgeAsk::PrLog { .. },
                ..
            } => None,
            Self::Forge { .. } => Some("use the forge"),
            // Requests: judged at the door (`verb::Caller::may`).
            Self::Command { .. }
            | Self::Edit(_)
            | Self::Stop
            | Self::Attach
            | Self::Focus(_)
            | Self::Resync
            | Self::Detach
            | Self::Files { .. }
            | Self::Sessions { .. }
            | Self::Identify(_)
            | Self::Dismiss { .. }
            | Self::ReadOnly => None,
        }
    }
}

/// What the server tells a client.
#[allow(
    clippy::large_enum_variant,
    reason = "one message at a time, encoded or applied at once; events are most of them, \
              and boxing each would cost an allocation per event"
)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ServerMsg {
    /// A snapshot begins: every pane as it is now follows (on attach, and
    /// again when this client fell behind or asked with `Resync`), pane by
    /// pane, so that no frame holds them all ([`parts::Parts`]).
    SnapshotStart {
        server: snapshot::ServerInfo,
        focus: usize,
        away_since: Option<u64>,
        panes: usize,
    },
    /// The next pane of the snapshot (its events may go on in
    /// `SnapshotEvents`).
    SnapshotPane(Box<snapshot::PaneSnapshot>),
    /// More events of the last pane.
    SnapshotEvents(Vec<snapshot::Logged>),
    /// The snapshot is whole: it replaces what the client had.
    SnapshotEnd,
    /// Runner events, in order (protocol 6, issue 45): every event the
    /// server's loop took in at once, of any pane, in one frame; one frame
    /// per event was a frame to encode, queue, write, read and hand on
    /// each. The second field, on a batch's last frame (protocol 9): every
    /// event up to this `seq` has now been sent to this client (what a
    /// dismissal counts up to, `ClientMsg::Dismiss::up_to`).
    Events(Vec<PaneWire>, Option<u64>),
    /// The pane began another history session (`/resume`, `/clear` in
    /// another client), or its worktree's setup ended: it shows this from
    /// now on.
    Reset {
        pane: usize,
        snapshot: Box<snapshot::PaneSnapshot>,
    },
    /// The panes after an edit (new, closed, renamed, moved), in order: the
    /// ones the client has by id, the new ones whole. A fresh snapshot
    /// would cost every pane's history again (issue 32's figure: 1.2 s
    /// with nine long panes, for a rename).
    Layout(Vec<snapshot::LayoutPane>),
    /// A word for this client alone: how its `Edit` went, and the pane to
    /// look at now (a pane it just made).
    Notice { text: String, focus: Option<usize> },
    /// The server is stopping (or dropped this client), and why.
    Bye { reason: String },
    /// The git service's answer to this client's `Worktree` request, or
    /// its state (overlaps, changes, predicted conflicts) for every client.
    Worktree(git::WorktreeEvent),
    /// The files of the pane's working directory (relative paths), to the
    /// client that asked; `complete`: all of them, not the first so many.
    Files {
        pane: usize,
        paths: Vec<String>,
        complete: bool,
    },
    /// What is muted now (after each snapshot, and to every client when it
    /// changes).
    Mutes(mutes::Mutes),
    /// The pane's history sessions, newest first, to the client that asked.
    Sessions {
        pane: usize,
        list: Vec<history::SessionSummary>,
    },
    /// The forge's answer for pane `pane`, to the client that asked (and a
    /// fresh checks view after each poll, to a client that looks at it).
    Forge { pane: usize, news: forge::ForgeNews },
}

/// One runner event of pane `pane`, its growing text as a delta.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaneWire {
    pub pane: usize,
    pub event: delta::WireEvent,
}

impl ServerMsg {
    /// Whether this is one of a snapshot's messages.
    pub fn is_snapshot(&self) -> bool {
        matches!(
            self,
            Self::SnapshotStart { .. }
                | Self::SnapshotPane(_)
                | Self::SnapshotEvents(_)
                | Self::SnapshotEnd
        )
    }
}

#[cfg(test)]
mod hello_tests {
    use super::*;

    /// #46 item 16: the refusal says which side runs which version.
    #[test]
    fn a_mismatch_says_which_side_runs_which_version() {
        let old = Hello {
            protocol: 999,
            hive: "0.0.9".into(),
        };
        assert_eq!(
            old.mismatch("server", "console").as_deref(),
            Some(
                format!(
                    "the server runs hive 0.0.9 (protocol 999), this console hive {} (protocol {PROTOCOL_VERSION})",
                    env!("CARGO_PKG_VERSION")
                )
                .as_str()
            )
        );
        assert_eq!(Hello::ours().mismatch("server", "console"), None);
    }
}
