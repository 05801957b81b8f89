//! A trigram index over transcript items, so each keystroke of a search
//! intersects a few posting lists instead of rescanning every item.
//!
//! Text is matched ASCII-case-insensitively (lowercasing ASCII keeps byte
//! offsets, so a hit's offset points into the original text). An item that
//! changes (a streaming message) gets a new slot; the old one is marked
//! dead and skipped.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::text::SharedText;

/// One searchable item: pane, entry index in its transcript, revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    pub pane: usize,
    pub entry: usize,
    pub rev: u64,
    /// "you", "agent", "thinking", "tool Bash", "error", "notice".
    pub label: String,
    pub time: Option<DateTime<Utc>>,
    /// The item's text, shared with the transcript (not copied).
    pub text: SharedText,
}

/// One match: where, and a line of context around it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub pane: usize,
    pub entry: usize,
    pub label: String,
    pub time: Option<DateTime<Utc>>,
    /// Byte offset of the match in the item's text.
    pub(crate) offset: usize,
    pub context: String,
}

struct Slot {
    doc: Doc,
    lower: Vec<u8>,
    live: bool,
}

#[derive(Default)]
pub(crate) struct Index {
    slots: Vec<Slot>,
    by_entry: HashMap<(usize, usize), u32>,
    postings: HashMap<u32, Vec<u32>>,
}

/// Characters of context on each side of a match.
const CONTEXT: usize = 40;

fn trigram(w: &[u8]) -> u32 {
    u32::from(w[0]) << 16 | u32::from(w[1]) << 8 | u32::from(w[2])
}

impl Index {
    /// Adds `doc`, replacing the entry's previous version.
    pub(crate) fn add(&mut self, doc: Doc) {
        let id = self.slots.len() as u32;
        if let Some(old) = self.by_entry.insert((doc.pane, doc.entry), id) {
            // Its postings stay (skipped); its text goes: a streaming
            // answer indexed at every search would otherwise keep a copy
            // per version.
            let old = &mut self.slots[old as usize];
            old.live = false;
            old.doc.text = SharedText::default();
            old.lower = Vec::new();
        }
        let lower = doc.text.with_str(|t| t.as_bytes().to_ascii_lowercase());
        for g in grams(&lower) {
            self.postings.entry(g).or_default().push(id);
        }
        self.slots.push(Slot {
            doc,
            lower,
            live: true,
        });
    }

    /// Bytes of text the index holds: each live item's lowercase copy
    /// (its text is shared with the transcript).
    #[cfg(test)]
    pub(crate) fn held_bytes(&self) -> usize {
        self.slots.iter().map(|s| s.lower.len()).sum()
    }

    /// Live items.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_entry.len()
    }

    /// Slots that may contain `q` (lowercase): the intersection of its
    /// trigrams' postings, or every slot for queries under three bytes.
    fn candidates(&self, q: &[u8]) -> Vec<u32> {
        if q.len() < 3 {
            return (0..self.slots.len() as u32).collect();
        }
        let mut lists: Vec<&Vec<u32>> = Vec::new();
        for w in q.windows(3) {
            match self.postings.get(&trigram(w)) {
                Some(l) => lists.push(l),
                None => return Vec::new(),
            }
        }
        lists.sort_by_key(|l| l.len());
        let mut out = lists[0].clone();
        for l in &lists[1..] {
            out.retain(|id| l.binary_search(id).is_ok());
            if out.is_empty() {
                break;
            }
        }
        out
    }

    /// Calls `each` with every match of `query`, items in the order they
    /// were indexed; stops when `each` returns false.
    pub(crate) fn search(&self, query: &str, mut each: impl FnMut(Hit) -> bool) {
        let q = query.as_bytes().to_ascii_lowercase();
        if q.is_empty() {
            return;
        }
        let mut ids = self.candidates(&q);
        // Pane, then transcript order: a stable, readable result list.
        ids.sort_by_key(|&id| {
            let d = &self.slots[id as usize].doc;
            (d.pane, d.entry)
        });
        for id in ids {
            let slot = &self.slots[id as usize];
            if !slot.live {
                continue;
            }
            let mut from = 0;
            while let Some(pos) = find(&slot.lower[from..], &q) {
                let offset = from + pos;
                if !each(hit(&slot.doc, offset, q.len())) {
                    return;
                }
                from = offset + q.len();
            }
        }
    }
}

/// The distinct trigrams of `text`, ascending. A long text marks them in a
/// bitmap (2 MB, every 24-bit trigram) instead of sorting one per byte,
/// which took four times the text in memory.
fn grams(text: &[u8]) -> Vec<u32> {
    if text.len() < 1 << 16 {
        let mut grams: Vec<u32> = text.windows(3).map(trigram).collect();
        grams.sort_unstable();
        grams.dedup();
        return grams;
    }
    let mut seen = vec![0u64; (1 << 24) / 64];
    for w in text.windows(3) {
        let g = trigram(w);
        seen[(g / 64) as usize] |= 1 << (g % 64);
    }
    let mut grams = Vec::new();
    for (i, &word) in seen.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            grams.push(i as u32 * 64 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
    grams
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// The hit at `offset` with context on one line.
fn hit(doc: &Doc, offset: usize, len: usize) -> Hit {
    let context = doc.text.with_str(|text| {
        let floor = |mut i: usize| {
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let start = floor(offset.saturating_sub(CONTEXT));
        let end = floor((offset + len + CONTEXT).min(text.len()));
        let mut context: String = text[start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if start > 0 {
            context.insert(0, '…');
        }
        if end < text.len() {
            context.push('…');
        }
        context
    });
    Hit {
        pane: doc.pane,
        entry: doc.entry,
        label: doc.label.clone(),
        time: doc.time,
        offset,
        context,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(pane: usize, entry: usize, rev: u64, text: &str) -> Doc {
        Doc {
            pane,
            entry,
            rev,
            label: "agent".into(),
            time: None,
            text: text.into(),
        }
    }

    fn all(ix: &Index, q: &str) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        ix.search(q, |h| {
            out.push((h.pane, h.entry, h.offset));
            true
        });
        out
    }

    #[test]
    fn finds_every_occurrence_case_insensitively() {
        let mut ix = Index::default();
        ix.add(doc(0, 0, 0, "The Walnut and the walnut tree"));
        ix.add(doc(1, 3, 0, "no nuts here"));
        ix.add(doc(1, 4, 0, "WALNUT"));
        assert_eq!(all(&ix, "walnut"), [(0, 0, 4), (0, 0, 19), (1, 4, 0)]);
        assert_eq!(
            all(&ix, "nu"),
            [(0, 0, 7), (0, 0, 22), (1, 3, 3), (1, 4, 3)]
        );
        assert!(all(&ix, "pecan").is_empty());
    }

    #[test]
    fn a_changed_item_replaces_its_old_version() {
        let mut ix = Index::default();
        ix.add(doc(0, 0, 0, "stream"));
        ix.add(doc(0, 0, 1, "streaming done"));
        assert_eq!(ix.len(), 1);
        assert_eq!(all(&ix, "stream"), [(0, 0, 0)]);
        assert_eq!(all(&ix, "done"), [(0, 0, 10)]);
    }

    #[test]
    fn an_old_version_keeps_no_text() {
        let mut ix = Index::default();
        ix.add(doc(0, 0, 0, "stream"));
        ix.add(doc(0, 0, 1, "streaming"));
        ix.add(doc(0, 0, 2, "streaming done"));
        assert_eq!(ix.held_bytes(), "streaming done".len());
    }

    #[test]
    fn a_long_item_is_found_anywhere() {
        let mut ix = Index::default();
        let mut long = "plain words, nothing else. ".repeat(4000);
        long.push_str("the Needle at the end");
        ix.add(doc(0, 2, 0, &long));
        ix.add(doc(0, 3, 0, "a needle in a short one"));
        let at = long.len() - "Needle at the end".len();
        assert_eq!(all(&ix, "needle"), [(0, 2, at), (0, 3, 2)]);
        assert_eq!(grams(long.as_bytes()), {
            let mut g: Vec<u32> = long.as_bytes().windows(3).map(trigram).collect();
            g.sort_unstable();
            g.dedup();
            g
        });
    }

    #[test]
    fn context_is_one_line_around_the_match() {
        let mut ix = Index::default();
        let long = format!(
            "{}needle\nin the\nhaystack{}",
            "x".repeat(60),
            "é".repeat(40)
        );
        ix.add(doc(0, 0, 0, &long));
        let mut hits = Vec::new();
        ix.search("needle", |h| {
            hits.push(h);
            true
        });
        let c = &hits[0].context;
        assert!(c.starts_with('…') && c.ends_with('…'), "{c}");
        assert!(c.contains("needle in the haystack"), "{c}");
    }
}
