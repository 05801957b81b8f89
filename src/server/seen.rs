//! What each console saw of each pane and which inbox entries it dismissed,
//! kept by the server under the console's identity (#46 item 8).
//!
//! A console says who it is (`ClientMsg::Identify`: by default its user,
//! machine, terminal and the terminal's session, src/client/identity.rs),
//! so the same console coming back (a detach and `hive attach`, a `kill -9`
//! and a restart in the same shell, a reconnect) finds its own unread marks
//! and inbox, and a console on another terminal finds what *it* has not
//! seen: looking at a pane in one console no longer sees it for all. A
//! connection that never says who it is is a console of its own, forgotten
//! when it leaves.
//!
//! "Seen" is by event number (`Server::seq`): what came after the last
//! event a console saw of a pane while it looked at it is unread to it. A
//! pane it never looked at is unread from the start. Dismissals are by the
//! entry's words and the last event when the server heard of it: an entry
//! of the same words made later is news again. Both are bounded: the
//! consoles heard from least recently go first past [`MAX_CONSOLES`], a
//! pane keeps its newest [`MAX_DISMISSED`] dismissals per console.

use std::collections::HashMap;

use super::clients::ClientId;
use crate::protocol::mutes::ReasonKind;
use crate::protocol::snapshot::Dismissed;

/// The longest dismissed line kept (an inbox line is one short line).
pub(super) const MAX_WHAT: usize = 1024;

/// Consoles remembered at most (each a few numbers per pane).
pub(super) const MAX_CONSOLES: usize = 64;

/// Dismissals kept per console and pane.
pub(super) const MAX_DISMISSED: usize = 64;

/// The longest identity taken (a terminal path, a user and a host fit).
const MAX_IDENTITY: usize = 256;

/// One console's memory.
#[derive(Debug, Default)]
struct Memory {
    /// By slot: the last event it saw of the pane.
    seen: HashMap<usize, u64>,
    /// By slot: the entries it dismissed, oldest first.
    dismissed: HashMap<usize, Vec<Dismissed>>,
    /// When it was last heard from (`Consoles::clock`), for the bound.
    used: u64,
}

/// Every console's memory, by identity.
#[derive(Debug, Default)]
pub(super) struct Consoles {
    by: HashMap<String, Memory>,
    clock: u64,
}

/// The key a client's memory is kept under: its identity, or its
/// connection when it gave none (no one else can name that: an identity
/// holds no control character).
pub(super) fn key(who: Option<&str>, id: ClientId) -> String {
    who.map_or_else(|| format!("\u{1}{id}"), str::to_owned)
}

/// Whether `key` is a connection's own (forgotten when it leaves).
pub(super) fn anonymous(key: &str) -> bool {
    key.starts_with('\u{1}')
}

/// `raw` as an identity, when it is one: 1 to 256 characters, none a
/// control character (a peer's words; a bad one leaves the client a
/// console of its own).
pub(super) fn identity(raw: &str) -> Option<String> {
    let ok = !raw.is_empty()
        && raw.chars().count() <= MAX_IDENTITY
        && !raw.chars().any(char::is_control);
    ok.then(|| raw.to_owned())
}

impl Consoles {
    /// Console `who` saw pane `slot` up to event `seq` (it looked at it
    /// until now, or from now on).
    pub(super) fn saw(&mut self, who: &str, slot: usize, seq: u64) {
        let seen = self.memory(who).seen.entry(slot).or_default();
        *seen = (*seen).max(seq);
    }

    /// The last event console `who` saw of pane `slot` (0: none).
    pub(super) fn seen(&self, who: &str, slot: usize) -> u64 {
        self.by
            .get(who)
            .and_then(|m| m.seen.get(&slot))
            .copied()
            .unwrap_or(0)
    }

    /// Console `who` dismissed the entry `kind`/`what` of pane `slot`,
    /// the server's last event being `seq`.
    pub(super) fn dismiss(
        &mut self,
        who: &str,
        slot: usize,
        kind: ReasonKind,
        what: String,
        seq: u64,
    ) {
        let list = self.memory(who).dismissed.entry(slot).or_default();
        list.retain(|d| !(d.kind == kind && d.what == what));
        list.push(Dismissed {
            kind,
            what,
            up_to: seq,
        });
        if list.len() > MAX_DISMISSED {
            list.remove(0);
        }
    }

    /// What console `who` dismissed of pane `slot`.
    pub(super) fn dismissed(&self, who: &str, slot: usize) -> Vec<Dismissed> {
        self.by
            .get(who)
            .and_then(|m| m.dismissed.get(&slot))
            .cloned()
            .unwrap_or_default()
    }

    /// Drops console `who`'s memory (a connection of its own that left).
    pub(super) fn forget(&mut self, who: &str) {
        self.by.remove(who);
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.by.len()
    }

    fn memory(&mut self, who: &str) -> &mut Memory {
        self.clock += 1;
        if !self.by.contains_key(who) && self.by.len() >= MAX_CONSOLES {
            let oldest = self
                .by
                .iter()
                .min_by_key(|(_, m)| m.used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.by.remove(&k);
            }
        }
        let m = self.by.entry(who.to_owned()).or_default();
        m.used = self.clock;
        m
    }
}

/// What one client saw and dismissed, as its snapshot tells it.
pub(super) struct SeenBy<'a> {
    pub(super) consoles: &'a Consoles,
    pub(super) who: String,
    /// The slots a connection of this console looks at now: seen to here.
    pub(super) looking: Vec<usize>,
    pub(super) seq: u64,
}

impl SeenBy<'_> {
    pub(super) fn seen(&self, slot: usize) -> u64 {
        if self.looking.contains(&slot) {
            self.seq
        } else {
            self.consoles.seen(&self.who, slot)
        }
    }

    pub(super) fn dismissed(&self, slot: usize) -> Vec<Dismissed> {
        self.consoles.dismissed(&self.who, slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_console_has_its_own_seen() {
        let mut c = Consoles::default();
        c.saw("a", 1, 10);
        assert_eq!(c.seen("a", 1), 10);
        assert_eq!(c.seen("b", 1), 0, "b never looked at pane 1");
        c.saw("a", 1, 4);
        assert_eq!(c.seen("a", 1), 10, "seen never goes back");
    }

    #[test]
    fn a_dismissal_is_the_consoles_and_replaces_the_same_words() {
        let mut c = Consoles::default();
        c.dismiss("a", 2, ReasonKind::Bell, "rang the bell".into(), 5);
        c.dismiss("a", 2, ReasonKind::Bell, "rang the bell".into(), 9);
        let d = c.dismissed("a", 2);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].up_to, 9);
        assert!(c.dismissed("b", 2).is_empty());
        for i in 0..(MAX_DISMISSED as u64 + 5) {
            c.dismiss("a", 2, ReasonKind::Posted, format!("p{i}"), i);
        }
        assert_eq!(c.dismissed("a", 2).len(), MAX_DISMISSED);
    }

    #[test]
    fn the_consoles_heard_from_least_recently_go_first() {
        let mut c = Consoles::default();
        for i in 0..MAX_CONSOLES {
            c.saw(&format!("c{i}"), 0, 1);
        }
        c.saw("c0", 0, 2);
        c.saw("new", 0, 3);
        assert_eq!(c.len(), MAX_CONSOLES);
        assert_eq!(c.seen("c0", 0), 2, "c0 was heard from again");
        assert_eq!(c.seen("c1", 0), 0, "c1 went first");
    }

    #[test]
    fn an_identity_is_one_visible_line_of_bounded_length() {
        assert_eq!(
            identity("me@box:/dev/pts/3").as_deref(),
            Some("me@box:/dev/pts/3")
        );
        assert_eq!(identity(""), None);
        assert_eq!(identity("a\u{1}7"), None, "would name another's connection");
        assert_eq!(identity("a\nb"), None);
        assert_eq!(identity(&"x".repeat(MAX_IDENTITY + 1)), None);
        assert!(anonymous(&key(None, 7)));
        assert!(!anonymous(&key(Some("me"), 7)));
    }
}
