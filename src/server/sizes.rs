//! The size of each terminal pane seen by several consoles (issue 46 item 10).
//!
//! A pane's program has one size, and consoles of different sizes may show
//! it. As tmux's `window-size latest`, the size is the one of the console
//! that most recently resized or typed into the pane, among those still
//! attached; when that console leaves, the next most recent one's size comes
//! back. Before, the pane kept the size of the last console that resized,
//! even after it left, and a bigger console still attached showed it cut.
//! A console smaller than the program marks the cut in the pane's border
//! (src/ui/pane.rs).

use std::collections::HashMap;

use super::clients::ClientId;
use crate::protocol::pane::RunnerCommand;

/// One console's size for one pane, and when it last resized or typed there.
#[derive(Debug, Clone, Copy)]
struct Seen {
    size: (u16, u16),
    at: u64,
}

#[derive(Debug, Default)]
pub(crate) struct TermSizes {
    /// By (client, slot).
    seen: HashMap<(ClientId, usize), Seen>,
    /// By slot: the size the runner was last told.
    sent: HashMap<usize, (u16, u16)>,
    /// Orders the consoles' acts.
    tick: u64,
}

impl TermSizes {
    /// A command from console `id` for slot `slot`, as the runner gets it:
    /// its `Resize` only when the pane's size changes by it, its input after
    /// the pane takes its size.
    pub(crate) fn route(
        &mut self,
        id: ClientId,
        slot: usize,
        cmd: RunnerCommand,
    ) -> Vec<RunnerCommand> {
        match cmd {
            RunnerCommand::Resize { cols, rows } => {
                self.tick += 1;
                let at = self.tick;
                self.seen.insert(
                    (id, slot),
                    Seen {
                        size: (cols, rows),
                        at,
                    },
                );
                self.settle(slot).into_iter().collect()
            }
            RunnerCommand::Input(bytes) => {
                self.tick += 1;
                let at = self.tick;
                if let Some(s) = self.seen.get_mut(&(id, slot)) {
                    s.at = at;
                }
                let mut out: Vec<_> = self.settle(slot).into_iter().collect();
                out.push(RunnerCommand::Input(bytes));
                out
            }
            other => vec![other],
        }
    }

    /// Console `id` went away: the `Resize` each pane it sized now needs.
    pub(crate) fn forget(&mut self, id: ClientId) -> Vec<(usize, RunnerCommand)> {
        let mut slots: Vec<usize> = self
            .seen
            .keys()
            .filter(|(c, _)| *c == id)
            .map(|&(_, s)| s)
            .collect();
        slots.sort_unstable();
        self.seen.retain(|(c, _), _| *c != id);
        slots
            .into_iter()
            .filter_map(|s| Some((s, self.settle(s)?)))
            .collect()
    }

    /// Slot `slot` has a new program: it is told its size again, whatever
    /// the old one was told.
    pub(crate) fn reset(&mut self, slot: usize) {
        self.sent.remove(&slot);
    }

    /// The `Resize` that puts slot `slot` at its latest console's size, if
    /// the runner was told another.
    fn settle(&mut self, slot: usize) -> Option<RunnerCommand> {
        let (cols, rows) = self
            .seen
            .iter()
            .filter(|((_, s), _)| *s == slot)
            .max_by_key(|(_, v)| v.at)
            .map(|(_, v)| v.size)?;
        if self.sent.insert(slot, (cols, rows)) == Some((cols, rows)) {
            return None;
        }
        Some(RunnerCommand::Resize { cols, rows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resize(cols: u16, rows: u16) -> RunnerCommand {
        RunnerCommand::Resize { cols, rows }
    }

    fn sizes(cmds: &[RunnerCommand]) -> Vec<(u16, u16)> {
        cmds.iter()
            .filter_map(|c| match c {
                RunnerCommand::Resize { cols, rows } => Some((*cols, *rows)),
                _ => None,
            })
            .collect()
    }

    /// The size the runner of slot 0 was told last, after `acts` by
    /// consoles (id, command; `None`: the console detached). `latest`: this
    /// module's rule; else every console's `Resize` goes through, as before.
    fn runner_size(latest: bool, acts: Vec<(ClientId, Option<RunnerCommand>)>) -> (u16, u16) {
        let mut t = TermSizes::default();
        let mut told = Vec::new();
        for (id, cmd) in acts {
            match (cmd, latest) {
                (Some(cmd), true) => told.extend(t.route(id, 0, cmd)),
                (Some(cmd), false) => told.push(cmd),
                (None, true) => told.extend(t.forget(id).into_iter().map(|(_, c)| c)),
                (None, false) => {}
            }
        }
        sizes(&told).last().copied().unwrap_or_default()
    }

    #[test]
    fn the_size_goes_back_to_the_console_left_when_the_latest_one_detaches() {
        // A big console (1), then a small one (2) attaches and resizes; the
        // small one detaches: the big one's size comes back.
        let acts = || {
            vec![
                (1, Some(resize(120, 40))),
                (2, Some(resize(80, 24))),
                (2, None),
            ]
        };
        assert_eq!(runner_size(false, acts()), (80, 24), "as before: cut");
        assert_eq!(runner_size(true, acts()), (120, 40));
    }

    #[test]
    fn typing_into_the_pane_makes_a_console_the_latest() {
        let mut t = TermSizes::default();
        assert_eq!(sizes(&t.route(1, 0, resize(120, 40))), [(120, 40)]);
        assert_eq!(sizes(&t.route(2, 0, resize(80, 24))), [(80, 24)]);
        // The same size again tells the runner nothing.
        assert!(t.route(2, 0, resize(80, 24)).is_empty());
        // Console 1 types: its size first, then its keys.
        let typed = t.route(1, 0, RunnerCommand::Input(b"x".to_vec()));
        assert_eq!(sizes(&typed), [(120, 40)]);
        assert!(matches!(typed.last(), Some(RunnerCommand::Input(b)) if b == b"x"));
        // Console 1 (the latest) leaves: console 2's size is back.
        let back = t.forget(1);
        assert_eq!(back.len(), 1);
        assert_eq!(sizes(&[back[0].1.clone()]), [(80, 24)]);
        // Another slot is not touched, and the last console leaving tells
        // the runner nothing (no console: the size stays).
        assert!(t.forget(2).is_empty());
        // A new program in the slot is told its size even if it is the same.
        let mut t = TermSizes::default();
        let _ = t.route(1, 0, resize(100, 30));
        t.reset(0);
        assert_eq!(sizes(&t.route(1, 0, resize(100, 30))), [(100, 30)]);
    }
}
