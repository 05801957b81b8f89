//! What the server keeps of one pane for the clients that attach later: the
//! history restored when the pane (re)started and the runner's events
//! since, compacted so that memory and a snapshot's size follow the
//! conversation, not the number of updates (a 150k-delta answer is one
//! entry, not 150k).
//!
//! The rules, each so that replaying the log through `App::apply` draws
//! what the live stream drew:
//! - an item's upserts and live tails collapse into one slot at its first
//!   appearance: its latest upsert, then a live tail newer than it (never
//!   one after the item closed); a tool call first seen running keeps that
//!   first sight too, so the digest can tell how long it ran;
//! - turns, notices and "history not saved" lines stay, in order;
//! - state, queue, provider attached, terminal screen, models, effort,
//!   stall, a held queue, the process sample and session switch keep only their latest event, at its place
//!   in the stream (so the `Attached` a newer `Terminal` follows comes
//!   first); a session's model and its slash commands each keep their
//!   latest (the app keeps one when the agent tells only the other);
//! - an approval stays until `PermissionSettled` names it;
//! - a bell keeps its latest, so a console attaching later has it in its
//!   inbox when no console looked at the pane since (#46 item 8);
//! - a recalled message and a terminal selection answer one client at one
//!   moment, and are not logged.
//!
//! Upserts are cloned whole, but their text is a `SharedText` handle, so
//! logging an update copies no text.

use std::collections::HashMap;
use std::time::Instant;

use crate::provider::SessionInfo;
use crate::runner::PaneEvent;
use crate::upsert::{TurnEvent, Upsert, UpsertKind};
use crate::wire::snapshot::{Logged, Restored};

/// One place in the log.
#[derive(Debug)]
enum Slot {
    Item(Box<Item>),
    Event(Box<Logged>),
    /// Superseded or settled (swept out by `compact`).
    Gone,
}

/// An item: its latest upsert, then a live tail newer than it; for a tool
/// call first seen running, that first sight too (the digest tells how
/// long a tool took).
/// Each one boxed: most items have only their upsert, and an event inline
/// is the size of the largest (three of them made every item ~1 KB).
#[derive(Debug, Default)]
struct Item {
    first: Option<Box<Logged>>,
    upsert: Option<Box<Logged>>,
    live: Option<Box<Logged>>,
}

/// The events of which only the latest counts.
#[derive(Debug, Clone, Copy)]
enum Latest {
    State,
    Queue,
    Attached,
    Terminal,
    Models,
    Effort,
    Stalled,
    Switched,
    /// A `Session` that named the model.
    Model,
    /// A `Session` that listed slash commands.
    Commands,
    Held,
    Process,
    Bell,
    Idle,
}

const LATEST: usize = 14;

/// Swept when at least this many slots are gone (and half of all).
const SWEEP_AFTER: usize = 64;

/// Items a pane keeps for consoles that attach later (a restart shows the
/// newest 400 history records the same way): older ones are trimmed, with
/// their turns' usage kept in the totals, once a quarter more have come.
/// They stay in the history file (`hive history show`).
pub const KEEP_ITEMS: usize = 2_000;

/// The same bound in bytes of item text (issue 53 item 13: eight 48 MB
/// answers took a server to 405 MB): past a quarter more, the oldest items
/// go until this much is left, the newest always kept.
pub const KEEP_BYTES: usize = 32 << 20;

/// One pane's restored history and compacted events.
#[derive(Debug)]
pub struct PaneLog {
    restored: Restored,
    slots: Vec<Slot>,
    /// Item id → its slot.
    items: HashMap<String, usize>,
    /// Approval request id → its slot.
    permissions: HashMap<String, usize>,
    latest: [Option<usize>; LATEST],
    gone: usize,
    /// Items trimmed from the front so far (restored ones included).
    trimmed: usize,
    /// Bytes of text the logged items hold (their kept upserts and tails).
    text: usize,
}

impl PaneLog {
    pub fn new(restored: Restored) -> Self {
        Self {
            restored,
            slots: Vec::new(),
            items: HashMap::new(),
            permissions: HashMap::new(),
            latest: [None; LATEST],
            gone: 0,
            trimmed: 0,
            text: 0,
        }
    }

    /// The pane starts over (`/resume`, `/clear`): only `restored` counts.
    pub fn reset(&mut self, restored: Restored) {
        *self = Self::new(restored);
    }

    pub fn restored(&self) -> &Restored {
        &self.restored
    }

    /// What the restored turns of the pane's history session used.
    pub fn restored_usage(&self) -> crate::event::Usage {
        match &self.restored.totals {
            Some(t) => t.usage.clone(),
            None => ends_totals(&self.restored.ends).usage,
        }
    }

    /// What `hive ctl list` says of the restored session before its next
    /// turn: its usage, its finished turns and the model it last ran on.
    pub(crate) fn restoring(&self) -> crate::panes::Restoring {
        let turns = match &self.restored.totals {
            Some(t) => t.turns,
            None => self.restored.ends.len() as u64,
        };
        crate::panes::Restoring {
            usage: self.restored_usage(),
            turns,
            model: self.restored.model.clone(),
        }
    }

    /// Takes in event number `seq`, which the runner sent at `at`.
    pub fn push(&mut self, seq: u64, at: Instant, event: &PaneEvent) {
        let logged = |event: PaneEvent| Logged {
            seq,
            at: Some(at),
            event,
        };
        match event {
            PaneEvent::Upsert(u) => self.upsert(u, logged(event.clone())),
            PaneEvent::Live(u) => self.live(u, || logged(event.clone())),
            PaneEvent::Turn(_) | PaneEvent::Notice { .. } | PaneEvent::HistoryNotSaved(_) => {
                self.slots
                    .push(Slot::Event(Box::new(logged(event.clone()))));
            }
            PaneEvent::Permission(req) => {
                let i = self.slots.len();
                self.slots
                    .push(Slot::Event(Box::new(logged(event.clone()))));
                if let Some(old) = self.permissions.insert(req.request_id.clone(), i) {
                    self.drop_slot(old);
                }
            }
            PaneEvent::PermissionSettled { request_id } => {
                if let Some(i) = self.permissions.remove(request_id) {
                    self.drop_slot(i);
                }
            }
            PaneEvent::Session(info) => {
                if info.model.is_some() {
                    let model = SessionInfo {
                        commands: Vec::new(),
                        ..info.clone()
                    };
                    self.latest(Latest::Model, logged(PaneEvent::Session(model)));
                }
                if !info.commands.is_empty() {
                    let commands = SessionInfo {
                        resume_handle: None,
                        model: None,
                        commands: info.commands.clone(),
                    };
                    self.latest(Latest::Commands, logged(PaneEvent::Session(commands)));
                }
            }
            PaneEvent::State(_) => self.latest(Latest::State, logged(event.clone())),
            PaneEvent::Queue(_) => self.latest(Latest::Queue, logged(event.clone())),
            PaneEvent::Attached { .. } => self.latest(Latest::Attached, logged(event.clone())),
            PaneEvent::Terminal(_) => self.latest(Latest::Terminal, logged(event.clone())),
            PaneEvent::Models(_) => self.latest(Latest::Models, logged(event.clone())),
            PaneEvent::Effort(_) => self.latest(Latest::Effort, logged(event.clone())),
            PaneEvent::Stalled(_) => self.latest(Latest::Stalled, logged(event.clone())),
            PaneEvent::Held(_) => self.latest(Latest::Held, logged(event.clone())),
            PaneEvent::Process(_) => self.latest(Latest::Process, logged(event.clone())),
            PaneEvent::SessionSwitched { .. } => {
                self.latest(Latest::Switched, logged(event.clone()))
            }
            PaneEvent::Bell => self.latest(Latest::Bell, logged(event.clone())),
            PaneEvent::Idle => self.latest(Latest::Idle, logged(event.clone())),
            PaneEvent::Recalled(_) | PaneEvent::TerminalText(_) => {}
        }
        if self.items.len() > KEEP_ITEMS + KEEP_ITEMS / 4 {
            self.trim(self.cut_for_items());
        }
        if self.text > KEEP_BYTES + KEEP_BYTES / 4
            && let Some(cut) = self.cut_for_bytes()
            // One answer over the bound alone: nothing older to drop.
            && self.items.values().any(|&i| i < cut)
        {
            self.trim(Some(cut));
        }
        self.compact();
    }

    /// Drops what comes before the newest `KEEP_ITEMS` items (items, turns,
    /// notices; not an approval that waits nor the latest states) and the
    /// restored history, which is older still. The usage of the turns
    /// dropped goes into the restored totals, so the pane's totals stay
    /// whole; a line at the top says how much is not shown.
    fn trim(&mut self, cut: Option<usize>) {
        let Some(cut) = cut else {
            return;
        };
        let kept: std::collections::HashSet<usize> = self
            .latest
            .iter()
            .flatten()
            .chain(self.permissions.values())
            .copied()
            .collect();
        let mut totals = self
            .restored
            .totals
            .take()
            .unwrap_or_else(|| ends_totals(&self.restored.ends));
        let mut dropped = std::mem::take(&mut self.restored.items).len();
        self.restored.ends.clear();
        for i in (0..cut).filter(|i| !kept.contains(i)) {
            match self.slots.get(i) {
                Some(Slot::Item(item)) => {
                    dropped += 1;
                    self.text -= item_bytes(item);
                }
                Some(Slot::Event(e)) => {
                    if let PaneEvent::Turn(TurnEvent::TurnComplete { usage, .. }) = &e.event {
                        totals.turns += 1;
                        if let Some(u) = usage {
                            totals.usage.accumulate(u);
                        }
                    }
                }
                _ => continue,
            }
            self.drop_slot(i);
        }
        self.items.retain(|_, i| *i >= cut);
        self.restored.totals = Some(totals);
        self.trimmed += dropped;
        let note = format!(
            "{} earlier items are not kept for consoles that attach; `hive history show` has the whole session",
            self.trimmed
        );
        self.restored
            .warnings
            .retain(|w| !w.ends_with("has the whole session"));
        self.restored.warnings.push(note);
    }

    /// The slot before which all but the newest `KEEP_ITEMS` items are.
    fn cut_for_items(&self) -> Option<usize> {
        let mut at: Vec<usize> = self.items.values().copied().collect();
        at.sort_unstable();
        at.get(at.len().saturating_sub(KEEP_ITEMS)).copied()
    }

    /// The slot before which the items beyond the newest `KEEP_BYTES` of
    /// text are (the newest item is kept whatever its size).
    fn cut_for_bytes(&self) -> Option<usize> {
        let mut at: Vec<usize> = self.items.values().copied().collect();
        at.sort_unstable_by(|a, b| b.cmp(a));
        let mut kept = 0;
        let mut cut = None;
        for i in at {
            let Some(Slot::Item(item)) = self.slots.get(i) else {
                continue;
            };
            kept += item_bytes(item);
            if kept > KEEP_BYTES && cut.is_some() {
                break;
            }
            cut = Some(i);
        }
        cut
    }

    /// Bytes of text the logged items hold (what `KEEP_BYTES` bounds).
    pub fn text_bytes(&self) -> usize {
        self.text
    }

    /// A line of hive's in the pane (an info notice), logged before its
    /// agent's events.
    pub fn note(&mut self, text: String) {
        let notice = PaneEvent::Notice {
            level: crate::provider::DiagnosticLevel::Info,
            text,
        };
        self.push(0, Instant::now(), &notice);
    }

    /// How much it holds: its entries and the restored items.
    pub fn size(&self) -> usize {
        self.slots.len().saturating_sub(self.gone) + self.restored.items.len()
    }

    /// A terminal pane's latest screen (none: not a terminal pane, or its
    /// program drew nothing yet).
    pub fn screen(&self) -> Option<&crate::protocol::screen::ScreenUpdate> {
        let latest = self.latest[Latest::Terminal as usize].and_then(|i| self.slots.get(i));
        match latest {
            Some(Slot::Event(l)) => match &l.event {
                PaneEvent::Terminal(screen) => Some(screen),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether a turn runs (the latest state is a busy one).
    pub fn busy(&self) -> bool {
        let state = self.latest[Latest::State as usize].and_then(|i| self.slots.get(i));
        matches!(state, Some(Slot::Event(l)) if matches!(l.event, PaneEvent::State(s) if s.is_busy()))
    }

    /// The logged events in the order a client applies them.
    pub fn events(&self) -> Vec<Logged> {
        self.events_since(None)
    }

    /// `events`, for a client that saw everything up to `seen` (`None`:
    /// nothing): a tool call's first sight only serves the digest of what
    /// happened while away, so it is left out when the call ended before.
    pub fn events_since(&self, seen: Option<u64>) -> Vec<Logged> {
        let mut out = Vec::with_capacity(self.slots.len() + 8);
        for slot in &self.slots {
            match slot {
                Slot::Item(item) => {
                    let ended_before = |u: &Logged| seen.is_some_and(|s| u.seq <= s);
                    if !item.upsert.as_deref().is_some_and(ended_before) {
                        out.extend(item.first.as_deref().cloned());
                    }
                    out.extend(item.upsert.as_deref().cloned());
                    out.extend(item.live.as_deref().cloned());
                }
                Slot::Event(e) => out.push((**e).clone()),
                Slot::Gone => {}
            }
        }
        out
    }

    /// The slot of item `id`, made at the end on its first appearance.
    fn item_slot(&mut self, id: &str) -> usize {
        if let Some(&i) = self.items.get(id) {
            return i;
        }
        let i = self.slots.len();
        self.slots.push(Slot::Item(Box::default()));
        self.items.insert(id.to_owned(), i);
        i
    }

    /// An upsert replaces the item's last one and any live tail before it
    /// (the app shows an upsert whatever a tail showed).
    fn upsert(&mut self, u: &Upsert, logged: Logged) {
        let i = self.item_slot(&u.item_id);
        if let Some(Slot::Item(item)) = self.slots.get_mut(i) {
            let before = item_bytes(item);
            let Item {
                first,
                upsert,
                live,
            } = &mut **item;
            if let Some(prev) = upsert.take()
                && first.is_none()
                && opens_a_tool(&prev)
            {
                *first = Some(prev);
            }
            *upsert = Some(Box::new(logged));
            *live = None;
            self.text = self.text - before + item_bytes(item);
        }
    }

    /// A live tail is kept when the app would show it: the item is open and
    /// the tail holds more text than what is kept.
    fn live(&mut self, u: &Upsert, logged: impl FnOnce() -> Logged) {
        let i = self.item_slot(&u.item_id);
        let Some(Slot::Item(item)) = self.slots.get_mut(i) else {
            return;
        };
        let Item { upsert, live, .. } = &mut **item;
        let len = text_len(u);
        let kept = live.as_ref().or(upsert.as_ref()).map(|l| match &l.event {
            PaneEvent::Upsert(k) | PaneEvent::Live(k) => text_len(k),
            _ => 0,
        });
        let closed = upsert.as_ref().is_some_and(|l| match &l.event {
            PaneEvent::Upsert(k) => k.is_closed(),
            _ => false,
        });
        if !closed && kept.is_none_or(|n| n < len) {
            let before = logged_bytes(live.as_deref());
            let tail = logged();
            self.text = self.text - before + logged_bytes(Some(&tail));
            *live = Some(Box::new(tail));
        }
    }

    /// `logged` is now the only event of its kind; it goes at the end.
    fn latest(&mut self, kind: Latest, logged: Logged) {
        if let Some(old) = self.latest[kind as usize].take() {
            self.drop_slot(old);
        }
        self.latest[kind as usize] = Some(self.slots.len());
        self.slots.push(Slot::Event(Box::new(logged)));
    }

    fn drop_slot(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i)
            && !matches!(s, Slot::Gone)
        {
            *s = Slot::Gone;
            self.gone += 1;
        }
    }

    /// Sweeps out gone slots once they are many, renumbering the indexes.
    fn compact(&mut self) {
        if self.gone < SWEEP_AFTER || self.gone * 2 < self.slots.len() {
            return;
        }
        let mut moved = Vec::with_capacity(self.slots.len());
        let mut n = 0;
        for s in &self.slots {
            moved.push(n);
            if !matches!(s, Slot::Gone) {
                n += 1;
            }
        }
        let at = |i: &mut usize| *i = moved[*i];
        self.items.values_mut().for_each(at);
        self.permissions.values_mut().for_each(at);
        self.latest.iter_mut().flatten().for_each(at);
        self.slots.retain(|s| !matches!(s, Slot::Gone));
        self.gone = 0;
    }
}

/// What restored turn ends add up to (history written before totals were
/// kept has only these).
fn ends_totals(ends: &[crate::history::rebuild::TurnEnd]) -> crate::history::state::Totals {
    let mut t = crate::history::state::Totals::default();
    for end in ends {
        t.add_end(end);
    }
    t
}

/// A tool call's upsert from before it finished.
fn opens_a_tool(l: &Logged) -> bool {
    matches!(&l.event, PaneEvent::Upsert(u)
        if matches!(u.kind, UpsertKind::ToolCall { .. }) && !u.is_closed())
}

/// The text an item's kept events hold.
fn item_bytes(item: &Item) -> usize {
    logged_bytes(item.first.as_deref())
        + logged_bytes(item.upsert.as_deref())
        + logged_bytes(item.live.as_deref())
}

fn logged_bytes(l: Option<&Logged>) -> usize {
    match l.map(|l| &l.event) {
        Some(PaneEvent::Upsert(u) | PaneEvent::Live(u)) => {
            text_len(u)
                + match &u.kind {
                    UpsertKind::ToolCall { output, .. } => output.as_ref().map_or(0, String::len),
                    _ => 0,
                }
        }
        _ => 0,
    }
}

fn text_len(u: &Upsert) -> usize {
    u.text().map_or(0, |t| t.len())
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
