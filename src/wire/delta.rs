//! Growing text sent as what was appended.
//!
//! Every upsert carries its item's whole text so far (DESIGN §3); inside
//! one process that costs nothing (`SharedText` is a view of one growing
//! buffer), but over a socket it would send a long answer once per update,
//! O(n²) bytes. The server's [`DeltaEncoder`] (one per client) remembers
//! what it last sent of each open text item and, when the new text is the
//! same buffer grown (bytes below a snapshot's length never change,
//! src/text.rs), sends only the tail. The client's [`DeltaDecoder`] appends
//! tails to a `TextBuffer` per open item and hands the app snapshots of
//! it, so the app sees what it would have seen in-process, down to
//! `same_buffer` (its layout then handles only the new bytes).
//!
//! Both sides apply the same rules to the same event stream, so they agree
//! on which items are open: an item is forgotten once it is closed, when
//! its turn ends, or on `reset` (a snapshot was sent / received). A delta
//! that does not fit the client's copy is an error; the client then asks
//! for a fresh snapshot (`ClientMsg::Resync`). Neither side does I/O.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::runner::PaneEvent;
use crate::text::{SharedText, TextBuffer};
use crate::upsert::{TurnEvent, Upsert, UpsertKind};

/// A `PaneEvent` as it crosses the socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WireEvent {
    /// The event as the runner sent it.
    Whole(PaneEvent),
    /// An `Upsert` (or, with `live`, a `Live`) of a message or thinking
    /// item whose content is only the text after the first `base` bytes,
    /// which the receiver already has.
    Grown {
        live: bool,
        upsert: Upsert,
        base: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeltaError {
    #[error("pane {pane}, item {item}: text from byte {base}, but this client has {have:?}")]
    Base {
        pane: usize,
        item: String,
        base: usize,
        have: Option<usize>,
    },
    #[error("pane {pane}, item {item}: appended text for an item without text")]
    NotText { pane: usize, item: String },
}

/// The server side, one per client.
#[derive(Debug, Default)]
pub struct DeltaEncoder {
    /// Per pane, per open text item: its turn and the text last sent.
    sent: HashMap<usize, HashMap<String, (String, SharedText)>>,
}

impl DeltaEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// `event` as this client should get it.
    pub fn encode(&mut self, pane: usize, event: &PaneEvent) -> WireEvent {
        let (upsert, live) = match event {
            PaneEvent::Upsert(u) => (u, false),
            PaneEvent::Live(u) => (u, true),
            PaneEvent::Turn(turn) => {
                forget_turn(&mut self.sent, pane, turn);
                return WireEvent::Whole(event.clone());
            }
            _ => return WireEvent::Whole(event.clone()),
        };
        let items = self.sent.entry(pane).or_default();
        let Some(text) = upsert.text() else {
            items.remove(&upsert.item_id);
            return WireEvent::Whole(event.clone());
        };
        let before = if upsert.is_closed() {
            items.remove(&upsert.item_id).map(|(_, t)| t)
        } else if let Some((_, last)) = items.get_mut(&upsert.item_id) {
            Some(std::mem::replace(last, text.clone()))
        } else {
            let entry = (upsert.turn_id.clone(), text.clone());
            items.insert(upsert.item_id.clone(), entry);
            None
        };
        match before.and_then(|before| appended(&before, text)) {
            Some((base, tail)) => {
                let mut upsert = upsert.clone();
                if let Some(content) = text_mut(&mut upsert) {
                    *content = SharedText::from(tail);
                }
                WireEvent::Grown { live, upsert, base }
            }
            None => WireEvent::Whole(event.clone()),
        }
    }

    /// This client was just sent a snapshot: it has every text whole.
    pub fn reset(&mut self) {
        self.sent.clear();
    }
}

/// The client side.
#[derive(Debug, Default)]
pub struct DeltaDecoder {
    /// Per pane, per open text item: its turn and its text so far.
    open: HashMap<usize, HashMap<String, (String, TextBuffer)>>,
}

impl DeltaDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The runner's event again, texts whole.
    pub fn decode(&mut self, pane: usize, event: WireEvent) -> Result<PaneEvent, DeltaError> {
        match event {
            WireEvent::Whole(PaneEvent::Upsert(u)) => Ok(PaneEvent::Upsert(self.whole(pane, u))),
            WireEvent::Whole(PaneEvent::Live(u)) => Ok(PaneEvent::Live(self.whole(pane, u))),
            WireEvent::Whole(event) => {
                if let PaneEvent::Turn(turn) = &event {
                    forget_turn(&mut self.open, pane, turn);
                }
                Ok(event)
            }
            WireEvent::Grown { live, upsert, base } => {
                let upsert = self.grown(pane, upsert, base)?;
                Ok(match live {
                    true => PaneEvent::Live(upsert),
                    false => PaneEvent::Upsert(upsert),
                })
            }
        }
    }

    /// A snapshot replaced everything this client had.
    pub fn reset(&mut self) {
        self.open.clear();
    }

    fn whole(&mut self, pane: usize, mut upsert: Upsert) -> Upsert {
        let items = self.open.entry(pane).or_default();
        if upsert.is_closed() {
            items.remove(&upsert.item_id);
            return upsert;
        }
        let Some(content) = text_mut(&mut upsert) else {
            items.remove(&upsert.item_id);
            return upsert;
        };
        let buf = TextBuffer::from_shared(std::mem::take(content));
        *content = buf.snapshot();
        let entry = (upsert.turn_id.clone(), buf);
        items.insert(upsert.item_id.clone(), entry);
        upsert
    }

    fn grown(
        &mut self,
        pane: usize,
        mut upsert: Upsert,
        base: usize,
    ) -> Result<Upsert, DeltaError> {
        let items = self.open.entry(pane).or_default();
        let closed = upsert.is_closed();
        let Some((_, buf)) = items
            .get_mut(&upsert.item_id)
            .filter(|(_, b)| b.len() == base)
        else {
            let have = items.get(&upsert.item_id).map(|(_, b)| b.len());
            let item = upsert.item_id;
            return Err(DeltaError::Base {
                pane,
                item,
                base,
                have,
            });
        };
        let Some(content) = text_mut(&mut upsert) else {
            let item = upsert.item_id;
            return Err(DeltaError::NotText { pane, item });
        };
        content.with_str(|tail| buf.push_str(tail));
        *content = buf.snapshot();
        if closed {
            items.remove(&upsert.item_id);
        }
        Ok(upsert)
    }
}

/// Where `now` goes on from `before` and what it added, when it only grew.
fn appended(before: &SharedText, now: &SharedText) -> Option<(usize, String)> {
    if !before.same_buffer(now) || now.len() < before.len() {
        return None;
    }
    let base = before.len();
    now.with_str(|s| s.get(base..).map(|tail| (base, tail.to_owned())))
}

fn text_mut(upsert: &mut Upsert) -> Option<&mut SharedText> {
    match &mut upsert.kind {
        UpsertKind::Message { content, .. } | UpsertKind::Thinking { content, .. } => Some(content),
        UpsertKind::ToolCall { .. } => None,
    }
}

/// A turn that ended closes what it left open (an item a crashed agent
/// never finished), on both sides alike.
fn forget_turn<T>(
    open: &mut HashMap<usize, HashMap<String, (String, T)>>,
    pane: usize,
    turn: &TurnEvent,
) {
    if !turn.is_terminal() {
        return;
    }
    if let Some(items) = open.get_mut(&pane) {
        items.retain(|_, (turn_id, _)| turn_id != turn.turn_id());
    }
}
