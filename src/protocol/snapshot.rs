//! A pane as the server holds it, for a client that attaches: what was
//! restored from history when the pane started, then the runner's events
//! since, compacted (one entry per item, the latest of each state), each
//! with when it happened and its sequence number.
//!
//! A client rebuilds its `App` from this exactly as it would have from the
//! live stream (`App::load_snapshot`); events newer than `away_since`
//! happened while no client was attached and count as unread.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::protocol::git::Worktree;
use crate::protocol::history::{OlderPage, Totals, TurnEnd};
use crate::protocol::pane::PaneEvent;
use crate::protocol::upsert::Upsert;

/// The provider of the pane a console shows for a host whose server it is
/// not connected to (src/client/mux.rs).
pub const UNREACHABLE: &str = "remote";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub server: ServerInfo,
    /// The pane the last client looked at (a new client starts there).
    pub focus: usize,
    /// Events with a larger `seq` happened while no client was attached.
    pub away_since: Option<u64>,
    pub panes: Vec<PaneSnapshot>,
}

/// What `hive ls` and the help show about a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub pid: u32,
    /// Where its config came from (`ConfigSource::describe`).
    pub config: String,
    /// Its config file (`None`: the built-in one); a client that attaches
    /// by name loads its keys and theme from there.
    pub config_path: Option<std::path::PathBuf>,
    /// Its socket (also its name: the file stem).
    pub socket: std::path::PathBuf,
    /// Seconds since the Unix epoch when it started.
    pub started: i64,
}

/// A pane's agent as a console sees it (issue 44): what it shows and
/// checks, never how the server starts it. No env, command line, system
/// prompt, settings, budgets or MCP server cross: a console needs none of
/// them, and secrets live there (`config::AgentConfig::card` makes one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaneCard {
    pub id: String,
    /// Its title (`None`: the id).
    #[serde(default)]
    pub name: Option<String>,
    pub provider: String,
    /// The configured model and effort (the agent reports what it runs).
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub effort: Option<String>,
    /// Where the agent runs, on the server's machine (`@` completion reads
    /// it only when that is this machine).
    #[serde(default)]
    pub cwd: Option<std::path::PathBuf>,
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Past these the pane's title warns (`max_cpu_percent`, `max_rss_mb`).
    #[serde(default)]
    pub max_cpu_percent: Option<f64>,
    #[serde(default)]
    pub max_rss_mb: Option<u64>,
    /// A scripted agent's words that show its features, offered while the
    /// pane is empty (read on the server, where the script is).
    #[serde(default)]
    pub try_words: Vec<String>,
}

impl PaneCard {
    /// A card with nothing but its id and provider.
    pub fn new(id: &str, provider: &str) -> Self {
        Self {
            id: id.to_owned(),
            provider: provider.to_owned(),
            ..Self::default()
        }
    }

    /// Its title: the name, else the id.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaneSnapshot {
    /// The agent as a console sees it (its cwd in its worktree).
    pub agent: PaneCard,
    pub worktree: Option<Worktree>,
    /// Why the pane could not start, when it could not.
    pub failed: Option<String>,
    pub restored: Restored,
    /// The runner's events since the pane started, compacted, in order.
    pub events: Vec<Logged>,
    /// The composer text a client left there.
    pub draft: String,
    /// Its window (1-based; issue 32): a console shows one window's panes
    /// at a time.
    #[serde(default = "first_window")]
    pub window: usize,
    /// The agent that spawned it (`agent.spawn`): the overview shows it
    /// under that one.
    #[serde(default)]
    pub parent: Option<String>,
    /// The host the pane runs on, set by a console that reached its server
    /// over ssh (never sent by a server).
    #[serde(skip)]
    pub host: Option<String>,
    /// The last event (`seq`) a console saw of this pane (protocol 7, #46
    /// item 8): those after came while no console looked at it, and are
    /// applied as unread (the inbox, `●`, the digest), as a console
    /// attached then would have. `None`: the snapshot's `away_since`.
    #[serde(default)]
    pub seen: Option<u64>,
    /// The inbox entries of this pane the client dismissed (`d`), as the
    /// server keeps them for it (protocol 9, #46 item 8): an entry they
    /// name, made by an event up to `up_to`, stays out of its inbox.
    #[serde(default)]
    pub dismissed: Vec<Dismissed>,
}

/// An inbox entry a client dismissed: its type and line (`Reason::kind`,
/// `Reason::describe`), and the last event (`seq`) the server had when it
/// heard of it. A later entry of the same words is news again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dismissed {
    pub kind: crate::protocol::mutes::ReasonKind,
    pub what: String,
    pub up_to: u64,
}

/// Panes per window, whoever makes the pane (the server places them, a
/// console of several servers lays theirs out by the same rule): a grid of
/// 3 × 3 stays readable on a laptop's terminal.
pub const PANES_PER_WINDOW: usize = 9;

fn first_window() -> usize {
    1
}

impl PaneSnapshot {
    /// `agent`'s pane with nothing in it yet (in window 1, started).
    pub fn empty(agent: PaneCard) -> Self {
        Self {
            agent,
            worktree: None,
            failed: None,
            restored: Restored::default(),
            events: Vec::new(),
            draft: String::new(),
            window: first_window(),
            parent: None,
            host: None,
            seen: None,
            dismissed: Vec::new(),
        }
    }
}

/// One pane of the panes after a layout edit (`ServerMsg::Layout`): one
/// the client shows already, by id, with what an edit can change of it
/// (its title, window and parent); or one new to it, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LayoutPane {
    Kept {
        id: String,
        name: Option<String>,
        window: usize,
        parent: Option<String>,
    },
    New(Box<PaneSnapshot>),
}

/// One runner event as the server logged it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Logged {
    pub seq: u64,
    /// When it happened (crosses as milliseconds ago).
    #[serde(with = "crate::protocol::pane::ago")]
    pub at: Option<Instant>,
    pub event: PaneEvent,
}

/// A pane's history as loaded when it started (`history::PaneHistory`
/// without its recorder, which stays with the runner).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Restored {
    pub items: Vec<Upsert>,
    pub ends: Vec<TurnEnd>,
    /// How long tool calls among `items` ran (item id, ms).
    #[serde(default)]
    pub took: Vec<(String, u64)>,
    pub totals: Option<Totals>,
    pub model: Option<String>,
    pub queue: Vec<String>,
    pub warnings: Vec<String>,
    pub session: String,
    pub older: Option<OlderPage>,
}

/// Roughly how many bytes of events go in one frame of a snapshot.
const BATCH_BYTES: usize = 4 << 20;

impl Snapshot {
    /// The snapshot as the messages that carry it: a start, each pane with
    /// its events in batches of about [`BATCH_BYTES`], an end.
    pub fn into_messages(self) -> Vec<super::ServerMsg> {
        use super::ServerMsg;
        let mut out = vec![ServerMsg::SnapshotStart {
            server: self.server,
            focus: self.focus,
            away_since: self.away_since,
            panes: self.panes.len(),
        }];
        for mut pane in self.panes {
            let mut batches = batches(std::mem::take(&mut pane.events)).into_iter();
            pane.events = batches.next().unwrap_or_default();
            out.push(ServerMsg::SnapshotPane(Box::new(pane)));
            out.extend(batches.map(ServerMsg::SnapshotEvents));
        }
        out.push(ServerMsg::SnapshotEnd);
        out
    }
}

/// Events cut into runs of about [`BATCH_BYTES`] (text counted, plus a
/// little for the rest of each event).
fn batches(events: Vec<Logged>) -> Vec<Vec<Logged>> {
    let mut out = vec![Vec::new()];
    let mut bytes = 0;
    for e in events {
        let size = 256 + event_text(&e.event);
        if bytes + size > BATCH_BYTES && out.last().is_some_and(|b| !b.is_empty()) {
            out.push(Vec::new());
            bytes = 0;
        }
        bytes += size;
        if let Some(b) = out.last_mut() {
            b.push(e);
        }
    }
    out
}

fn event_text(event: &PaneEvent) -> usize {
    match event {
        PaneEvent::Upsert(u) | PaneEvent::Live(u) => {
            u.text().map_or(0, |t| t.len())
                + match &u.kind {
                    crate::protocol::upsert::UpsertKind::ToolCall { output, .. } => {
                        output.as_ref().map_or(0, String::len)
                    }
                    _ => 0,
                }
        }
        _ => 0,
    }
}
