//! A pane's conversation: entries in display order, items keyed by `item_id`
//! and replaced in place by each upsert (never appended as deltas).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::event::Usage;
use crate::protocol::history::{Outcome, TurnEnd};
use crate::protocol::upsert::{ToolClock, TurnEvent, TurnStatus, Upsert, UpsertKind};

/// Bytes of item text a console keeps per pane, as the server's pane log
/// does (src/server/log.rs `KEEP_BYTES`): past it and a quarter, the oldest
/// entries go (the newest item stays whatever its size). A console must not
/// grow without bound on what another machine sends (issue 53 item 13).
pub const KEEP_BYTES: usize = 32 << 20;

/// The notice that says entries were dropped ends with this.
const TRIMMED_NOTE: &str = "not kept in this console; `hive history show` has the whole session";

#[derive(Debug)]
pub enum EntryKind {
    Item(Box<Upsert>),
    /// Model, duration, tokens and cost of a finished turn.
    Footer {
        model: String,
        duration: Option<Duration>,
        usage: Option<Usage>,
        cancelled: bool,
    },
    TurnError {
        code: String,
        message: String,
    },
    Notice {
        level: DiagnosticLevel,
        text: String,
    },
}

#[derive(Debug)]
pub struct Entry {
    pub kind: EntryKind,
    /// Bumped on every change; the view's layout caches compare it.
    pub rev: u64,
    /// A tool call's time from its first sight to its result, when this
    /// console saw both (a delegation's wait, the digest's "Bash 2.0s").
    pub took: Option<Duration>,
}

impl Entry {
    fn new(kind: EntryKind) -> Self {
        Self {
            kind,
            rev: 0,
            took: None,
        }
    }
}

#[derive(Debug, Default)]
pub struct Transcript {
    pub entries: Vec<Entry>,
    index: HashMap<String, usize>,
    /// Turns in flight: model and start time, for the footer.
    turns: HashMap<String, (String, Instant)>,
    /// Times the tool calls (`Entry::took`).
    tools: ToolClock,
    /// Bumped on any change (the pane's "something new" marker).
    pub rev: u64,
    /// Bumped when every layout must be redone (theme or view changed);
    /// the view drops its caches when it sees a new epoch.
    pub epoch: u64,
    /// Bytes of text its items hold (what [`KEEP_BYTES`] bounds).
    text: usize,
    /// Items dropped to stay within it.
    trimmed: usize,
}

impl Transcript {
    pub fn upsert(&mut self, u: Upsert) {
        self.put(u);
        self.bound();
    }

    /// The item in place (or new at the end), its bytes counted.
    fn put(&mut self, u: Upsert) {
        self.rev += 1;
        self.text += upsert_bytes(&u);
        match self.index.get(&u.item_id) {
            Some(&i) => {
                let e = &mut self.entries[i];
                self.text -= entry_bytes(&e.kind);
                e.kind = EntryKind::Item(Box::new(u));
                e.rev += 1;
            }
            None => {
                self.index.insert(u.item_id.clone(), self.entries.len());
                self.entries.push(Entry::new(EntryKind::Item(Box::new(u))));
            }
        }
    }

    /// Past [`KEEP_BYTES`] and a quarter: the entries older than the newest
    /// `KEEP_BYTES` of item text go, a notice at the top says how many items.
    fn bound(&mut self) {
        if self.text <= KEEP_BYTES + KEEP_BYTES / 4 {
            return;
        }
        let mut kept = 0;
        let mut cut = None;
        for (i, e) in self.entries.iter().enumerate().rev() {
            let bytes = entry_bytes(&e.kind);
            if bytes == 0 {
                continue;
            }
            kept += bytes;
            if kept > KEEP_BYTES && cut.is_some() {
                break;
            }
            cut = Some(i);
        }
        let Some(cut) = cut.filter(|&c| c > 0) else {
            return;
        };
        let dropped: Vec<Entry> = self.entries.drain(..cut).collect();
        for e in &dropped {
            self.text -= entry_bytes(&e.kind);
        }
        self.trimmed += dropped
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Item(_)))
            .count();
        self.entries.insert(
            0,
            Entry::new(EntryKind::Notice {
                level: DiagnosticLevel::Info,
                text: format!("{} earlier items are {TRIMMED_NOTE}", self.trimmed),
            }),
        );
        self.index.clear();
        for (i, e) in self.entries.iter().enumerate() {
            if let EntryKind::Item(u) = &e.kind {
                self.index.insert(u.item_id.clone(), i);
            }
        }
        self.invalidate();
    }

    /// Bytes of text its items hold (at most about [`KEEP_BYTES`]).
    pub fn text_bytes(&self) -> usize {
        self.text
    }

    /// `upsert` of an event that arrived at `now`: a tool call is timed
    /// from its first sight to its result, whoever looks at the pane.
    /// Returns the time it took when this upsert is its result.
    pub fn upsert_at(&mut self, u: Upsert, now: Instant) -> Option<Duration> {
        let took = self.clock(&u, now);
        let i = self.slot(&u.item_id);
        self.put(u);
        if let Some(e) = self.entries.get_mut(i).filter(|_| took.is_some()) {
            e.took = took;
        }
        self.bound();
        took
    }

    /// A restored tool call's time, as its pane took it.
    pub(crate) fn set_took(&mut self, item_id: &str, took: Duration) {
        if let Some(e) = self
            .index
            .get(item_id)
            .and_then(|&i| self.entries.get_mut(i))
        {
            e.took = Some(took).filter(|d| !d.is_zero());
        }
    }

    /// `live` of an event that arrived at `now` (a tail opens a tool
    /// call's clock too; it never closes one).
    pub fn live_at(&mut self, u: Upsert, now: Instant) {
        if !u.is_closed() {
            self.clock(&u, now);
        }
        self.live(u);
    }

    fn clock(&mut self, u: &Upsert, now: Instant) -> Option<Duration> {
        self.tools.time(u, now).filter(|d| !d.is_zero())
    }

    /// A live tail: shown like an upsert unless the entry already holds as
    /// much text (an upsert overtook it) or is final.
    pub fn live(&mut self, u: Upsert) {
        let newer = match self.index.get(&u.item_id).map(|&i| &self.entries[i].kind) {
            Some(EntryKind::Item(cur)) => {
                !cur.is_final()
                    && cur.text().map_or(0, |t| t.len()) < u.text().map_or(0, |t| t.len())
            }
            _ => true,
        };
        if newer {
            self.upsert(u);
        }
    }

    pub fn turn(&mut self, t: &TurnEvent, now: Instant) {
        match t {
            TurnEvent::TurnStarted {
                turn_id, model_id, ..
            } => {
                self.turns.insert(turn_id.clone(), (model_id.clone(), now));
            }
            TurnEvent::TurnComplete {
                turn_id,
                status,
                usage,
                ..
            } => {
                let (model, started) = self
                    .turns
                    .remove(turn_id)
                    .map_or((String::new(), None), |(m, t)| (m, Some(t)));
                // The model that answered, where the agent named it at the end.
                let model = usage
                    .as_ref()
                    .and_then(|u| u.model.clone())
                    .unwrap_or(model);
                self.push(EntryKind::Footer {
                    model,
                    duration: started.map(|s| now.saturating_duration_since(s)),
                    usage: usage.clone(),
                    cancelled: *status == TurnStatus::Cancelled,
                });
            }
            TurnEvent::TurnError {
                turn_id,
                error_code,
                error_message,
                ..
            } => {
                self.turns.remove(turn_id);
                self.push(EntryKind::TurnError {
                    code: error_code.clone(),
                    message: error_message.clone(),
                });
            }
        }
    }

    /// How a restored turn ended: the footer or banner it had live.
    pub(crate) fn restored_end(&mut self, end: &TurnEnd) {
        self.push(match &end.outcome {
            Outcome::Failed { code, message } => EntryKind::TurnError {
                code: code.clone(),
                message: message.clone(),
            },
            outcome => EntryKind::Footer {
                model: end.model.clone().unwrap_or_default(),
                duration: end.duration,
                usage: end.usage.clone(),
                cancelled: *outcome == Outcome::Cancelled,
            },
        });
    }

    pub fn notice(&mut self, level: DiagnosticLevel, text: impl Into<String>) {
        self.push(EntryKind::Notice {
            level,
            text: text.into(),
        });
    }

    pub fn push(&mut self, kind: EntryKind) {
        self.rev += 1;
        self.entries.push(Entry::new(kind));
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entry that holds (or will hold, when new) item `item_id`.
    pub fn slot(&self, item_id: &str) -> usize {
        self.index
            .get(item_id)
            .copied()
            .unwrap_or(self.entries.len())
    }

    /// When the running turn started (for the "working" line).
    pub(crate) fn running_since(&self) -> Option<Instant> {
        self.turns.values().map(|(_, t)| *t).min()
    }

    /// Empties the transcript (another session is shown); the view drops
    /// its caches.
    pub fn reset(&mut self) {
        self.entries.clear();
        self.index.clear();
        self.text = 0;
        self.trimmed = 0;
        self.turns.clear();
        self.tools = ToolClock::default();
        self.invalidate();
    }

    /// Asks the view to drop every layout cache (theme or view changed, or
    /// the pane was built again from a snapshot). Epochs come from one
    /// counter, so a transcript built anew never shares one with the
    /// transcript whose caches the view still holds.
    pub(crate) fn invalidate(&mut self) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        self.epoch = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.rev += 1;
    }
}

/// The text an item holds: its message or thought, a tool call's output.
fn upsert_bytes(u: &Upsert) -> usize {
    u.text().map_or(0, |t| t.len())
        + match &u.kind {
            UpsertKind::ToolCall { output, .. } => output.as_ref().map_or(0, String::len),
            _ => 0,
        }
}

fn entry_bytes(kind: &EntryKind) -> usize {
    match kind {
        EntryKind::Item(u) => upsert_bytes(u),
        _ => 0,
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
