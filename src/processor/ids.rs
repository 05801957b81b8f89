//! Pane-unique item ids (issue 13 item 2).
//!
//! Agents number their items per run or per turn (`codex exec resume` says
//! `item_0` again every turn), but a pane matches items by id for its whole
//! life: a reused id would overwrite an earlier turn's item. The processor is
//! the one place every provider's events pass, so ids are made unique here,
//! once: an id first used in an earlier turn is renamed for the later turn,
//! and every event of that turn carrying it gets the same new id. Ids seen
//! for the first time are kept as the agent sent them.

use std::collections::{HashMap, HashSet};

#[derive(Debug, Default)]
pub(super) struct ItemIds {
    turn: String,
    /// Ids (as emitted) of the turn in flight.
    current: HashSet<String>,
    /// The turn's renamed ids: the agent's id → the emitted one.
    renamed: HashMap<String, String>,
    /// Ids emitted by earlier turns, by hash: a pane keeps every id it
    /// ever emitted, and a hash is 8 bytes where an id string cost ~70
    /// (10,000 tool calls: 1.2 MB a pane). Two ids of one hash only rename
    /// one more id than needed; a used id is always found.
    used: HashSet<u64>,
}

fn hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

impl ItemIds {
    /// The id to emit for the agent's `id` in `turn`: `None` to keep it.
    pub(super) fn resolve(&mut self, turn: &str, id: &str) -> Option<String> {
        if turn != self.turn {
            self.used.extend(self.current.drain().map(|id| hash(&id)));
            self.renamed.clear();
            turn.clone_into(&mut self.turn);
        }
        if let Some(new) = self.renamed.get(id) {
            return Some(new.clone());
        }
        if self.current.contains(id) {
            return None;
        }
        if !self.used.contains(&hash(id)) {
            self.current.insert(id.to_owned());
            return None;
        }
        let mut new = format!("{turn}/{id}");
        let mut n = 1;
        while self.used.contains(&hash(&new)) || self.current.contains(&new) {
            n += 1;
            new = format!("{turn}/{id}#{n}");
        }
        self.current.insert(new.clone());
        self.renamed.insert(id.to_owned(), new.clone());
        Some(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_until_a_later_turn_reuses_them() {
        let mut ids = ItemIds::default();
        assert_eq!(ids.resolve("t1", "item_0"), None);
        assert_eq!(ids.resolve("t1", "item_0"), None, "same turn, same item");
        let renamed = ids.resolve("t2", "item_0").expect("reused id renamed");
        assert_ne!(renamed, "item_0");
        assert_eq!(ids.resolve("t2", "item_0"), Some(renamed.clone()));
        assert_eq!(ids.resolve("t2", "item_1"), None);
        let third = ids.resolve("t3", "item_0").expect("renamed again");
        assert!(third != renamed && third != "item_0");
    }
}
