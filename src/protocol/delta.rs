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

use crate::protocol::pane::PaneEvent;
use crate::protocol::text::{SharedText, TextBuffer};
use crate::protocol::upsert::{TurnEvent, Upsert, UpsertKind};

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

/// What one watcher last got of each open text item: the one
/// appended-text encoder, which a console's [`DeltaEncoder`] and each
/// `hive ctl watch` stream (src/control/hub_watch.rs) keep one of, so that
/// both send a growing text by the same rule (issue 44).
#[derive(Debug, Default)]
pub struct TextSent {
    /// Per pane, per open text item: its turn and the text last sent.
    sent: HashMap<usize, HashMap<String, (String, SharedText)>>,
}

impl TextSent {
    /// `upsert` goes to this watcher now: `Some(base)` when the watcher has
    /// its text's first `base` bytes (it needs only what follows), `None`
    /// when it needs the text whole (first seen, replaced, or no text).
    pub fn grown(&mut self, pane: usize, upsert: &Upsert) -> Option<usize> {
        let items = self.sent.entry(pane).or_default();
        let Some(text) = upsert.text() else {
            items.remove(&upsert.item_id);
            return None;
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
        // The same buffer grown: bytes below a snapshot's length never
        // change (src/text.rs), so no text is read to compare.
        before
            .filter(|b| b.same_buffer(text) && text.len() >= b.len())
            .map(|b| b.len())
    }

    /// A turn event of pane `pane`: an ended turn closes what it left open
    /// (an item a crashed agent never finished).
    pub fn turn(&mut self, pane: usize, turn: &TurnEvent) {
        forget_turn(&mut self.sent, pane, turn);
    }

    /// The watcher has every text whole again (a snapshot), or starts over.
    pub fn reset(&mut self) {
        self.sent.clear();
    }
}

/// The server side, one per client.
#[derive(Debug, Default)]
pub struct DeltaEncoder {
    sent: TextSent,
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
                self.sent.turn(pane, turn);
                return WireEvent::Whole(event.clone());
            }
            _ => return WireEvent::Whole(event.clone()),
        };
        let tail = self.sent.grown(pane, upsert).and_then(|base| {
            let text = upsert.text()?;
            text.with_str(|s| s.get(base..).map(|tail| (base, tail.to_owned())))
        });
        match tail {
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
        self.sent.reset();
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

/// Where a stream that last carried `before` for an item can go on from
/// when the item's text is now `now`: the byte offset of the appended text,
/// or `None` when `now` must go whole. The processor appends an item's text
/// to one buffer and swaps in a fresh one when it replaces it (text.rs), so
/// text that only grew shares `before`'s buffer and is at least as long; the
/// check reads no text, so a long answer's updates stay cheap to compare.
pub fn appended_from(before: &SharedText, now: &SharedText) -> Option<usize> {
    (now.same_buffer(before) && now.len() >= before.len()).then(|| before.len())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::frame::{decode, encode};
    use crate::protocol::upsert::{TurnStatus, UpsertStatus};
    use crate::protocol::{PaneWire, ServerMsg};

    fn upsert(item: &str, status: UpsertStatus, content: SharedText) -> Upsert {
        Upsert {
            turn_id: "t1".into(),
            ..Upsert::test_message(item, status, content)
        }
    }

    /// Server to client through the frames: the bytes sent and what the
    /// client's app gets.
    struct Link {
        enc: DeltaEncoder,
        dec: DeltaDecoder,
        bytes: usize,
        wire: Vec<WireEvent>,
    }

    impl Link {
        fn new() -> Self {
            Self {
                enc: DeltaEncoder::new(),
                dec: DeltaDecoder::new(),
                bytes: 0,
                wire: Vec::new(),
            }
        }

        fn send(&mut self, pane: usize, event: &PaneEvent) -> PaneEvent {
            let event = self.enc.encode(pane, event);
            self.wire.push(event.clone());
            let msg = ServerMsg::Events(vec![PaneWire { pane, event }], Some(1));
            let frame = encode(&msg).expect("encodes");
            self.bytes += frame.len();
            let Ok(ServerMsg::Events(mut events, _)) = decode(&frame[4..]) else {
                panic!("not an event");
            };
            let Some(PaneWire { pane, event }) = events.pop() else {
                panic!("no event");
            };
            self.dec.decode(pane, event).expect("fits")
        }

        fn grown(&self) -> usize {
            let grown = |e: &&WireEvent| matches!(e, WireEvent::Grown { .. });
            self.wire.iter().filter(grown).count()
        }
    }

    /// The frame of an empty tail: what each update costs besides its text.
    fn overhead() -> usize {
        let upsert = upsert("item-0", UpsertStatus::Update, "".into());
        let event = WireEvent::Grown {
            live: true,
            upsert,
            base: 1 << 30,
        };
        encode(&ServerMsg::Events(
            vec![PaneWire { pane: 0, event }],
            Some(1 << 30),
        ))
        .expect("encodes")
        .len()
    }

    #[test]
    fn grown_text_goes_on_from_where_it_was_and_replaced_text_goes_whole() {
        let mut buf = TextBuffer::new();
        buf.push_str("hello");
        let before = buf.snapshot();
        buf.push_str(" world");
        assert_eq!(appended_from(&before, &buf.snapshot()), Some(5));
        assert_eq!(appended_from(&buf.snapshot(), &before), None, "shorter");
        buf.replace("hello world!".into());
        assert_eq!(appended_from(&before, &buf.snapshot()), None, "replaced");
    }

    #[test]
    fn a_growing_message_costs_its_length_once() {
        let mut link = Link::new();
        let mut buf = TextBuffer::new();
        let mut previous: Option<SharedText> = None;
        for i in 0..2000 {
            buf.push_str(&format!("word{i} and some more text, "));
            let status = match i {
                0 => UpsertStatus::Create,
                1999 => UpsertStatus::Complete,
                _ => UpsertStatus::Update,
            };
            let sent = PaneEvent::Upsert(upsert("item-0", status, buf.snapshot()));
            let got = link.send(0, &sent);
            assert_eq!(got, sent);
            let PaneEvent::Upsert(got) = got else {
                panic!("an upsert")
            };
            let text = got.text().expect("text").clone();
            if let Some(previous) = &previous {
                assert!(
                    text.same_buffer(previous),
                    "the client's text grows in place"
                );
            }
            previous = Some(text);
        }
        let text = buf.len();
        let bound = 2 * text + 2000 * overhead();
        assert!(
            link.bytes < bound,
            "{} bytes for {text} of text",
            link.bytes
        );
        assert_eq!(link.grown(), 1999);
        assert!(link.dec.open.values().all(HashMap::is_empty));
        assert!(link.enc.sent.sent.values().all(HashMap::is_empty));
    }

    /// Live snapshots between gradient upserts, of two items growing at
    /// once (a thinking item and a message).
    #[test]
    fn live_and_upserts_interleave() {
        use UpsertStatus::{Complete, Create, Update};
        let mut link = Link::new();
        let (mut thinking, mut message) = (TextBuffer::new(), TextBuffer::new());
        let steps = [
            (false, Create),
            (true, Update),
            (true, Update),
            (false, Update),
            (true, Update),
            (false, Update),
            (true, Update),
            (false, Complete),
        ];
        for (i, (live, status)) in steps.into_iter().enumerate() {
            thinking.push_str(&format!("hmm {i} "));
            message.push_str(&format!("{i} ü "));
            let mut deep = upsert("th", status, "".into());
            deep.kind = UpsertKind::Thinking {
                content: thinking.snapshot(),
                provider_id: "p".into(),
            };
            for u in [deep, upsert("m", status, message.snapshot())] {
                let sent = match live {
                    true => PaneEvent::Live(u),
                    false => PaneEvent::Upsert(u),
                };
                assert_eq!(link.send(2, &sent), sent);
            }
        }
        assert_eq!(link.grown(), 2 * (steps.len() - 1));
        let live = |e: &&WireEvent| matches!(e, WireEvent::Grown { live: true, .. });
        assert_eq!(link.wire.iter().filter(live).count(), 8);
        assert!(link.enc.sent.sent[&2].is_empty() && link.dec.open[&2].is_empty());
    }

    #[test]
    fn a_closed_item_then_a_new_one_with_its_id() {
        let mut link = Link::new();
        for round in 0..3 {
            let mut buf = TextBuffer::new();
            buf.push_str(&format!("round {round}"));
            let first = PaneEvent::Upsert(upsert("i", UpsertStatus::Create, buf.snapshot()));
            assert_eq!(link.send(0, &first), first);
            assert!(matches!(link.wire.last(), Some(WireEvent::Whole(_))));
            buf.push_str(" more");
            let last = PaneEvent::Upsert(upsert("i", UpsertStatus::Complete, buf.snapshot()));
            assert_eq!(link.send(0, &last), last);
            assert!(matches!(link.wire.last(), Some(WireEvent::Grown { base, .. }) if *base == 7));
        }
    }

    #[test]
    fn replaced_text_is_sent_whole() {
        let mut link = Link::new();
        let mut buf = TextBuffer::new();
        buf.push_str("a long draft");
        link.send(
            0,
            &PaneEvent::Live(upsert("i", UpsertStatus::Update, buf.snapshot())),
        );
        buf.replace("final".into());
        let sent = PaneEvent::Upsert(upsert("i", UpsertStatus::Update, buf.snapshot()));
        assert_eq!(link.send(0, &sent), sent);
        assert!(matches!(link.wire.last(), Some(WireEvent::Whole(_))));
        buf.push_str("!");
        let sent = PaneEvent::Upsert(upsert("i", UpsertStatus::Update, buf.snapshot()));
        assert_eq!(link.send(0, &sent), sent);
        assert!(matches!(
            link.wire.last(),
            Some(WireEvent::Grown { base: 5, .. })
        ));
    }

    #[test]
    fn panes_and_turn_ends_keep_their_items_apart() {
        let mut link = Link::new();
        let mut buf = TextBuffer::new();
        buf.push_str("x");
        let sent = PaneEvent::Upsert(upsert("i", UpsertStatus::Create, buf.snapshot()));
        link.send(0, &sent);
        // The same item id in another pane starts whole.
        assert_eq!(link.send(1, &sent), sent);
        assert!(matches!(link.wire.last(), Some(WireEvent::Whole(_))));
        let end = PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: "t1".into(),
            session_id: "s".into(),
            status: TurnStatus::Cancelled,
            usage: None,
            finish_reason: None,
        });
        link.send(0, &end);
        assert!(link.enc.sent.sent[&0].is_empty() && link.dec.open[&0].is_empty());
        assert_eq!(link.enc.sent.sent[&1].len(), 1);
        assert_eq!(link.dec.open[&1].len(), 1);
    }

    #[test]
    fn a_delta_that_does_not_fit_is_an_error() {
        let mut enc = DeltaEncoder::new();
        let mut dec = DeltaDecoder::new();
        let mut buf = TextBuffer::new();
        buf.push_str("hello");
        let first = enc.encode(
            0,
            &PaneEvent::Upsert(upsert("i", UpsertStatus::Create, buf.snapshot())),
        );
        buf.push_str(" world");
        let second = enc.encode(
            0,
            &PaneEvent::Upsert(upsert("i", UpsertStatus::Update, buf.snapshot())),
        );
        // The first was lost: the client has nothing to append to.
        let err = dec.decode(0, second.clone()).expect_err("no base");
        assert!(
            matches!(
                err,
                DeltaError::Base {
                    base: 5,
                    have: None,
                    ..
                }
            ),
            "{err}"
        );
        // After a reset (a snapshot came) the same.
        dec.decode(0, first).expect("whole");
        dec.reset();
        assert!(dec.decode(0, second.clone()).is_err());
        // A base off by one byte.
        let WireEvent::Grown { live, upsert, .. } = second else {
            panic!("grown")
        };
        let mut dec = DeltaDecoder::new();
        let mut shorter = upsert.clone();
        if let Some(content) = text_mut(&mut shorter) {
            *content = "hell".into();
        }
        dec.decode(0, WireEvent::Whole(PaneEvent::Upsert(shorter)))
            .expect("whole");
        let err = dec
            .decode(
                0,
                WireEvent::Grown {
                    live,
                    upsert,
                    base: 5,
                },
            )
            .expect_err("off by one");
        assert!(
            matches!(err, DeltaError::Base { have: Some(4), .. }),
            "{err}"
        );
    }

    #[test]
    fn other_events_pass_whole() {
        let mut link = Link::new();
        for event in crate::protocol::samples::sample_events() {
            if matches!(event, PaneEvent::Stalled(_)) {
                continue; // an Instant comes back a few ms off
            }
            assert_eq!(link.send(0, &event), event);
        }
        assert_eq!(link.grown(), 0);
    }
}
