//! One console over several servers (issue 30): the local one and each
//! `[[host]]` (or every name given to `hive attach A B`). Each server has
//! its own link (src/client/link.rs); the mux lays their panes out one
//! after another in one grid, numbers them for the console, and routes
//! what the console says about pane `g` to the server that runs it, as
//! that server's own pane number.
//!
//! The layout changes only at a merge: when any server sends a snapshot
//! (it connected, reconnected, or resynced), the mux asks every other
//! connected server for a fresh one too and hands the console one merged
//! snapshot once all are in (events that come meanwhile from a server
//! already in are held and re-numbered after it; those from one still
//! awaited are in its coming snapshot). So the mux keeps no copy of any
//! conversation. A server not reachable shows as one pane saying why,
//! until it is; it never holds up the others.
//!
//! Every message keeps the bytes it holds of its server's budget
//! (src/client/inflight.rs) while the mux holds it, and a merged snapshot
//! holds each server's share, so a merge that waits bounds what it holds.

use std::collections::BTreeSet;
use std::ops::Range;

use tokio::sync::mpsc;

use super::inflight::{Delivery, Permit};
use super::{FromServer, LinkState};

#[path = "mux_layout.rs"]
mod layout;
use crate::protocol::ClientMsg;
use crate::protocol::pane::PaneUpdate;
use crate::protocol::snapshot::PaneCard;
use crate::protocol::snapshot::{PaneSnapshot, Snapshot};

/// One server as the mux sees it.
pub(super) struct Member {
    pub(super) name: String,
    /// Reached over ssh: a console's "stop" detaches from it instead (its
    /// agents are that machine's; `hive kill` there stops them).
    remote: bool,
    /// It was connected once: its link's ups and downs are news.
    was_up: bool,
    pub(super) tx: mpsc::UnboundedSender<ClientMsg>,
    /// Its panes' numbers in the console's layout.
    range: Range<usize>,
    state: State,
    /// Its git state, for the console's union (src/client/mux_git.rs).
    git: super::mux_git::GitState,
    /// Its windows in the console's (src/client/mux_windows.rs).
    windows: super::mux_windows::WindowMap,
    /// Its panes as it placed them (a layout change keeps them by id).
    panes: Vec<layout::Placed>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Connected; its panes are in the layout.
    Up,
    /// Not (yet, or no longer) connected, and why: one placeholder pane.
    Down(String),
    /// Stopped or refused for good.
    Gone(String),
}

impl Member {
    pub(super) fn new(
        name: String,
        tx: mpsc::UnboundedSender<ClientMsg>,
        remote: bool,
        up: bool,
    ) -> Self {
        Self {
            name,
            remote,
            was_up: up,
            tx,
            range: 0..0,
            git: Default::default(),
            windows: Vec::new(),
            panes: Vec::new(),
            state: if up {
                State::Up
            } else {
                State::Down("connecting…".into())
            },
        }
    }
}

/// A merge in progress.
#[derive(Default)]
struct Merge {
    /// Fresh snapshots so far, by member.
    got: Vec<Option<Snapshot>>,
    /// Members whose snapshot is still awaited.
    waiting: BTreeSet<usize>,
    /// Events from members already in, to re-number after the merge.
    held: Vec<Held>,
    /// What the snapshots so far hold of their servers' budgets.
    permit: Permit,
}

/// A member's message the mux holds for later.
type Held = (usize, FromServer, Permit);

pub(super) struct Mux {
    members: Vec<Member>,
    out: mpsc::Sender<Delivery>,
    merge: Option<Merge>,
    /// The pane the console looks at, in its numbering.
    focus: usize,
    /// Events held while the first snapshot was made.
    early: Vec<Held>,
    /// The console was last sent some git state (so an empty one is news).
    git_shown: bool,
}

impl Mux {
    pub(super) fn new(members: Vec<Member>, out: mpsc::Sender<Delivery>) -> Self {
        Self {
            members,
            out,
            merge: None,
            focus: 0,
            early: Vec::new(),
            git_shown: false,
        }
    }

    /// The first snapshot: the servers already connected (`got`) and those
    /// that answer (a snapshot, or a failure) before `deadline`; the rest
    /// join the layout when they connect.
    pub(super) async fn first(
        &mut self,
        got: Vec<Option<Snapshot>>,
        from_members: &mut mpsc::Receiver<(usize, Delivery)>,
        deadline: tokio::time::Instant,
    ) -> Snapshot {
        let waiting = (0..self.members.len())
            .filter(|&i| got[i].is_none())
            .collect();
        self.merge = Some(Merge {
            got,
            waiting,
            ..Merge::default()
        });
        while self.merge.as_ref().is_some_and(|m| !m.waiting.is_empty()) {
            let next = tokio::time::timeout_at(deadline, from_members.recv()).await;
            let Ok(Some((i, Delivery { msg, permit }))) = next else {
                break;
            };
            match msg {
                FromServer::Snapshot(snap) => self.take_in(i, *snap, permit),
                FromServer::Link(LinkState::Reconnecting { why, .. }) => {
                    self.members[i].state = State::Down(why);
                    if let Some(m) = self.merge.as_mut() {
                        m.waiting.remove(&i);
                    }
                }
                other => {
                    let _ = self.on_member(i, other, permit).await;
                }
            }
        }
        let merge = self.merge.take().unwrap_or_default();
        let snap = self.merged(merge.got);
        // Forwarded once the console reads (`run`): it does not yet, and
        // the way to it is bounded.
        self.early = merge.held;
        snap
    }

    /// Runs until the console is gone or every server is.
    pub(super) async fn run(
        mut self,
        mut from_console: mpsc::UnboundedReceiver<ClientMsg>,
        mut from_members: mpsc::Receiver<(usize, Delivery)>,
    ) {
        for (i, msg, permit) in std::mem::take(&mut self.early) {
            self.forward(i, msg, permit).await;
        }
        loop {
            tokio::select! {
                msg = from_console.recv() => match msg {
                    Some(m) => self.on_console(m).await,
                    None => return,
                },
                msg = from_members.recv() => match msg {
                    Some((i, d)) => {
                        if !self.on_member(i, d.msg, d.permit).await {
                            return;
                        }
                    }
                    None => return,
                },
            }
        }
    }

    /// The member running console pane `g`, and its own number for it.
    fn owner(&self, g: usize) -> Option<(usize, usize)> {
        self.members
            .iter()
            .position(|m| m.range.contains(&g))
            .map(|i| (i, g - self.members[i].range.start))
    }

    async fn on_console(&mut self, mut msg: ClientMsg) {
        // A message about one pane goes to its server, renumbered there.
        if let Some(&mut g) = one_pane(&mut msg) {
            if let Some((i, p)) = self.owner(g) {
                if let Some(pane) = one_pane(&mut msg) {
                    *pane = p;
                }
                let _ = self.members[i].tx.send(msg);
            }
            return;
        }
        match msg {
            ClientMsg::Command { pane, cmd } => match self.owner(pane) {
                Some((i, p)) if self.members[i].state == State::Up => {
                    let _ = self.members[i].tx.send(ClientMsg::Command { pane: p, cmd });
                }
                Some((i, _)) => {
                    let why = format!("not sent: {} is not connected", self.members[i].name);
                    self.say(FromServer::NotSent(why)).await;
                }
                None => {}
            },
            ClientMsg::Focus(g) => {
                self.focus = g;
                // The others are told the console looks at none of theirs:
                // what their panes do now is unread (#46 item 8).
                let owner = self.owner(g);
                for (j, m) in self.members.iter().enumerate() {
                    let p = match owner {
                        Some((i, p)) if i == j => p,
                        _ => crate::protocol::NO_PANE,
                    };
                    let _ = m.tx.send(ClientMsg::Focus(p));
                }
            }
            // Panes are named by id; the console names the server by the
            // pane it asked from (its focus).
            ClientMsg::Edit(mut edit) => {
                if let Some((i, _)) = self.owner(self.focus) {
                    // A console window is one of the server's, or new there.
                    if let crate::wire::edit::PaneEdit::Window { window, .. } = &mut edit {
                        *window = super::mux_windows::to_member(&self.members[i].windows, *window);
                    }
                    let _ = self.members[i].tx.send(ClientMsg::Edit(edit));
                }
            }
            // `/mute` mutes the focused pane; a type is muted everywhere.
            ClientMsg::Mute(m @ crate::protocol::mutes::Mute::Pane { .. }) => {
                if let Some((i, _)) = self.owner(self.focus) {
                    let _ = self.members[i].tx.send(ClientMsg::Mute(m));
                }
            }
            ClientMsg::Worktree(req) => self.git_request(req).await,
            ClientMsg::Stop => {
                for m in &self.members {
                    let msg = if m.remote {
                        ClientMsg::Detach
                    } else {
                        ClientMsg::Stop
                    };
                    let _ = m.tx.send(msg);
                }
            }
            // Leaving, and anything else, concerns every server.
            other => {
                for m in &self.members {
                    let _ = m.tx.send(other.clone());
                }
            }
        }
    }

    /// Tells the console something of the mux's own.
    async fn say(&self, msg: FromServer) {
        let _ = self.out.send(Delivery::local(msg)).await;
    }

    /// False when every server is gone (the console's session is over).
    async fn on_member(&mut self, i: usize, msg: FromServer, permit: Permit) -> bool {
        match msg {
            FromServer::Snapshot(snap) => self.snapshot(i, *snap, permit).await,
            FromServer::Link(state) => {
                // A host never reached has its pane saying so: no banner.
                let news = self.members[i].was_up;
                match &state {
                    LinkState::Up { .. } => {
                        self.members[i].state = State::Up;
                        self.members[i].was_up = true;
                    }
                    LinkState::Reconnecting { why, .. } => {
                        let down = State::Down(why.clone());
                        if self.members[i].state != State::Up && self.members[i].state != down {
                            // Never connected yet: its placeholder says why.
                            self.members[i].state = down;
                            self.relayout().await;
                        }
                    }
                }
                if news {
                    self.say(FromServer::Link(state)).await;
                }
            }
            FromServer::Bye(why) | FromServer::Lost(why) => {
                let name = self.members[i].name.clone();
                let others = (self.members.iter().enumerate())
                    .any(|(j, m)| j != i && !matches!(m.state, State::Gone(_)));
                if !others {
                    self.members[i].state = State::Gone(why.clone());
                    self.say(FromServer::Lost(why)).await;
                    return false;
                }
                self.gone(i, &why).await;
                self.say(FromServer::NotSent(format!("{name}: {why}")))
                    .await;
            }
            msg @ (FromServer::Update(_)
            | FromServer::Reset { .. }
            | FromServer::Notice { .. }
            | FromServer::Worktree(_)
            | FromServer::Files { .. }
            | FromServer::Mutes { .. }
            | FromServer::Sessions { .. }
            | FromServer::Forge { .. }
            | FromServer::Heard { .. }) => {
                if let Some(merge) = self.merge.as_mut() {
                    // Awaited: its snapshot has this; in: after the merge.
                    if !merge.waiting.contains(&i) {
                        merge.held.push((i, msg, permit));
                    }
                    return true;
                }
                self.forward(i, msg, permit).await;
            }
            FromServer::NotSent(why) => self.say(FromServer::NotSent(why)).await,
            // This server's panes changed: moved by id (mux_layout.rs), or
            // at a merge, with its snapshot, when ids are shared.
            FromServer::Layout(layout) => match self.merge.as_mut() {
                None => {
                    if !self.moved(i, layout).await {
                        self.start_merge(None);
                    }
                }
                Some(m) => {
                    if m.waiting.insert(i) {
                        let _ = self.members[i].tx.send(ClientMsg::Resync);
                    }
                }
            },
        }
        true
    }

    /// An event of member `i`, its pane re-numbered for the console, with
    /// the bytes it holds.
    async fn forward(&mut self, i: usize, msg: FromServer, permit: Permit) {
        let range = &self.members[i].range.clone();
        let global = |p: usize| (p < range.len()).then_some(range.start + p);
        let msg = match msg {
            FromServer::Update(PaneUpdate { pane, event }) => match global(pane) {
                Some(pane) => FromServer::Update(PaneUpdate { pane, event }),
                None => return,
            },
            FromServer::Reset { pane, snapshot } => match global(pane) {
                Some(pane) => FromServer::Reset { pane, snapshot },
                None => return,
            },
            FromServer::Notice { text, focus } => FromServer::Notice {
                text,
                focus: focus.and_then(global),
            },
            FromServer::Worktree(ev) => match self.members[i].git.take(ev) {
                Some(answer) => match super::mux_git::answer_for_console(answer, range) {
                    Some(ev) => FromServer::Worktree(ev),
                    None => return,
                },
                None => return self.git_state().await,
            },
            FromServer::Files {
                pane,
                paths,
                complete,
            } => match global(pane) {
                Some(pane) => FromServer::Files {
                    pane,
                    paths,
                    complete,
                },
                None => return,
            },
            FromServer::Sessions { pane, list } => match global(pane) {
                Some(pane) => FromServer::Sessions { pane, list },
                None => return,
            },
            FromServer::Forge { pane, news } => match global(pane) {
                Some(pane) => FromServer::Forge { pane, news },
                None => return,
            },
            FromServer::Mutes { mutes, .. } => FromServer::Mutes {
                mutes,
                panes: Some(range.clone().collect()),
            },
            FromServer::Heard { seq, .. } => FromServer::Heard {
                seq,
                panes: Some(range.clone()),
            },
            other => other,
        };
        let _ = self.out.send(Delivery { msg, permit }).await;
    }

    /// A git request about one pane goes to its server (said not sent when
    /// that server is not connected), one about all of them to each.
    async fn git_request(&mut self, req: crate::protocol::git::WorktreeRequest) {
        use super::mux_git::{Route, route};
        let answered = req.is_answered();
        match route(req, |g| self.owner(g)) {
            Route::One(i, req) if self.members[i].state == State::Up => {
                let _ = self.members[i].tx.send(ClientMsg::Worktree(req));
            }
            Route::One(i, _) if answered => {
                let why = format!("not sent: {} is not connected", self.members[i].name);
                self.say(FromServer::NotSent(why)).await;
            }
            Route::All(req) => {
                for m in self.members.iter().filter(|m| m.state == State::Up) {
                    let _ = m.tx.send(ClientMsg::Worktree(req.clone()));
                }
            }
            Route::One(..) | Route::Nowhere => {}
        }
    }

    /// Every server's git state, as one, to the console.
    async fn git_state(&mut self) {
        let empty = self.members.iter().all(|m| m.git.is_empty());
        let shown = std::mem::replace(&mut self.git_shown, !empty);
        if empty && !shown {
            return;
        }
        let members = self.members.iter().map(|m| (&m.git, &m.range));
        for ev in super::mux_git::merged(members) {
            self.say(FromServer::Worktree(ev)).await;
        }
    }

    /// Member `i` sent a fresh snapshot: start or advance a merge.
    async fn snapshot(&mut self, i: usize, snap: Snapshot, permit: Permit) {
        if self.merge.is_none() {
            // A new merge: every other connected server resends.
            self.start_merge(Some(i));
        }
        self.take_in(i, snap, permit);
        if self.merge.as_ref().is_some_and(|m| m.waiting.is_empty()) {
            self.finish().await;
        }
    }

    /// Member `i`'s snapshot joins the merge in progress: it is connected,
    /// no longer awaited, and what it sent before is in it.
    fn take_in(&mut self, i: usize, snap: Snapshot, permit: Permit) {
        self.members[i].state = State::Up;
        self.members[i].was_up = true;
        if let Some(m) = self.merge.as_mut() {
            m.waiting.remove(&i);
            m.held.retain(|(j, _, _)| *j != i);
            m.got[i] = Some(snap);
            m.permit.merge(permit);
        }
    }

    /// A merge that awaits a fresh snapshot from every connected member
    /// but `except` (asked for one now).
    fn start_merge(&mut self, except: Option<usize>) {
        let mut merge = Merge {
            got: (0..self.members.len()).map(|_| None).collect(),
            ..Merge::default()
        };
        for (j, m) in self.members.iter().enumerate() {
            if Some(j) != except && m.state == State::Up {
                merge.waiting.insert(j);
                let _ = m.tx.send(ClientMsg::Resync);
            }
        }
        self.merge = Some(merge);
    }

    /// All snapshots are in: one merged snapshot, then the held events.
    async fn finish(&mut self) {
        let Some(merge) = self.merge.take() else {
            return;
        };
        let snap = self.merged(merge.got);
        let msg = FromServer::Snapshot(Box::new(snap));
        let permit = merge.permit;
        let _ = self.out.send(Delivery { msg, permit }).await;
        // The layout moved: the git state in the console's new numbers.
        self.git_state().await;
        for (i, msg, permit) in merge.held {
            self.forward(i, msg, permit).await;
        }
    }

    /// A member went down before it was ever up: its placeholder changes,
    /// which needs every other server's fresh snapshot too.
    async fn relayout(&mut self) {
        if self.merge.is_some() {
            return;
        }
        self.start_merge(None);
        if self.merge.as_ref().is_some_and(|m| m.waiting.is_empty()) {
            self.finish().await;
        }
    }

    /// The console's snapshot: each member's panes in order (a placeholder
    /// for one without a snapshot), with ranges recorded for routing.
    fn merged(&mut self, got: Vec<Option<Snapshot>>) -> Snapshot {
        let mut panes = Vec::new();
        let mut server = None;
        let mut focus = None;
        let mut any_away = false;
        for (m, snap) in self.members.iter_mut().zip(got) {
            let start = panes.len();
            match snap {
                Some(mut s) => {
                    // Each server numbers its events; the console only asks
                    // whether one came while no console looked at the pane.
                    for p in &mut s.panes {
                        let seen = p.seen.or(s.away_since);
                        for e in &mut p.events {
                            let away = seen.is_some_and(|seen| e.seq > seen);
                            any_away |= away;
                            e.seq = u64::from(away);
                        }
                        p.seen = Some(0);
                    }
                    if focus.is_none() && !s.panes.is_empty() {
                        focus = Some(start + s.focus.min(s.panes.len() - 1));
                    }
                    server.get_or_insert(s.server);
                    panes.extend(s.panes);
                }
                None => {
                    panes.push(placeholder(&m.name, &m.state));
                    m.git = Default::default();
                }
            }
            m.range = start..panes.len();
            m.panes = panes[start..].iter().map(layout::Placed::of).collect();
        }
        let ranges: Vec<_> = self.members.iter().map(|m| m.range.clone()).collect();
        let maps = super::mux_windows::pack(&mut panes, &ranges);
        for (m, map) in self.members.iter_mut().zip(maps) {
            m.windows = map;
        }
        let focus = if self.focus < panes.len() && self.focus != 0 {
            self.focus
        } else {
            focus.unwrap_or(0)
        };
        Snapshot {
            server: server.unwrap_or_else(|| crate::protocol::snapshot::ServerInfo {
                pid: 0,
                config: String::new(),
                config_path: None,
                socket: Default::default(),
                started: 0,
            }),
            focus,
            away_since: any_away.then_some(0),
            panes,
        }
    }
}

/// The pane of a server not connected: its name, and why, as a pane that
/// could not start.
fn placeholder(name: &str, state: &State) -> PaneSnapshot {
    let why = match state {
        State::Up => "connecting…".to_owned(),
        State::Down(w) => format!("not connected: {w} (retrying)"),
        State::Gone(w) => format!("gone: {w}"),
    };
    let mut agent = PaneCard::new(name, crate::protocol::snapshot::UNREACHABLE);
    agent.name = Some(name.to_owned());
    PaneSnapshot {
        failed: Some(why),
        host: Some(name.to_owned()),
        ..PaneSnapshot::empty(agent)
    }
}

/// The console's pane a message about one pane names (a draft, a file or
/// session list, a dismissal, a resume, a forge ask): the mux renumbers it
/// for the server that runs the pane.
fn one_pane(msg: &mut ClientMsg) -> Option<&mut usize> {
    match msg {
        ClientMsg::Draft { pane, .. }
        | ClientMsg::Files { pane }
        | ClientMsg::Sessions { pane }
        | ClientMsg::Dismiss { pane, .. }
        | ClientMsg::Resume { pane, .. }
        | ClientMsg::Forge { pane, .. } => Some(pane),
        _ => None,
    }
}
