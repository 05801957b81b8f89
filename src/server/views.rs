//! Each console's own view of each terminal pane (issue 44 item 8).
//!
//! A pane's runner draws its screen at one view at a time (its vt100
//! emulator is one). Consoles may look at it differently: one scrolled back
//! or in copy mode, another on the live screen. The server keeps the view
//! each console last asked for, sends a screen only to the consoles whose
//! view it is, and after answering a console that scrolled back puts the
//! runner back on the live screen when another console watches it live.
//! A scrolled-back view stays on its lines as output arrives (the runner
//! and the console count the same history), so it needs nothing new until
//! its console scrolls again: as tmux's copy mode, it is frozen. Before,
//! every answer went to every console and two of them asked for their own
//! view in turn, forever.
//!
//! Sizes are not views: a terminal pane has one size, the latest
//! console's (src/server/sizes.rs; docs/architecture.md, "Terminal panes
//! and several consoles").

use std::collections::HashMap;

use super::clients::ClientId;
use crate::protocol::screen::ScreenUpdate;

/// A scrolled-back view: `scroll` lines up when the history was `seen`
/// lines long, held on its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    scroll: usize,
    seen: usize,
}

#[derive(Debug, Default)]
pub(crate) struct TermViews {
    /// By (client, slot): the consoles not on the live screen.
    held: HashMap<(ClientId, usize), Held>,
}

impl TermViews {
    /// Client `id` asked for a view of slot `slot`
    /// (`RunnerCommand::TermView`).
    pub(crate) fn asked(
        &mut self,
        id: ClientId,
        slot: usize,
        scroll: usize,
        seen: usize,
        hold: bool,
    ) {
        if hold {
            self.held.insert((id, slot), Held { scroll, seen });
        } else {
            self.held.remove(&(id, slot));
        }
    }

    /// Whether another of `clients` than `id` watches slot `slot` live:
    /// after answering `id`'s scrolled-back view the runner goes back to it.
    pub(crate) fn live_elsewhere(
        &self,
        id: ClientId,
        slot: usize,
        mut clients: impl Iterator<Item = ClientId>,
    ) -> bool {
        self.held.contains_key(&(id, slot))
            && clients.any(|c| c != id && !self.held.contains_key(&(c, slot)))
    }

    /// Whether `screen` of slot `slot` is the view client `id` shows.
    pub(crate) fn wants(&self, id: ClientId, slot: usize, screen: &ScreenUpdate) -> bool {
        match self.held.get(&(id, slot)) {
            None => !screen.hold && screen.scroll == 0,
            Some(v) => {
                let now = v.scroll + screen.history.saturating_sub(v.seen);
                screen.hold && screen.scroll == now.min(screen.history)
            }
        }
    }

    /// A client went away.
    pub(crate) fn forget(&mut self, id: ClientId) {
        self.held.retain(|(c, _), _| *c != id);
    }

    /// Slot `slot` started again or closed: every view of it is live.
    pub(crate) fn reset(&mut self, slot: usize) {
        self.held.retain(|(_, s), _| *s != slot);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::app::pane::Terminal;
    use crate::protocol::pane::RunnerCommand;
    use crate::provider::TerminalScreen;
    use crate::runner::screen::TermOwner;

    fn owner() -> (TermOwner, ScreenUpdate) {
        let mut parser = tui_term::vt100::Parser::new(24, 80, 1000);
        for i in 0..200 {
            parser.process(format!("line {i}\r\n").as_bytes());
        }
        let mut owner = TermOwner::new(TerminalScreen(Arc::new(Mutex::new(parser))));
        let first = owner.update();
        (owner, first)
    }

    /// Two consoles (ids 1 and 2) on one terminal pane, console 1 scrolled
    /// back ten lines; rounds of their view requests until none is left.
    /// `routed`: the server's routing by view; else every screen goes to
    /// both, as before.
    fn settle(routed: bool) -> (usize, Terminal, Terminal) {
        let (mut owner, first) = owner();
        let (mut a, mut b) = (Terminal::default(), Terminal::default());
        a.attach(Some(first.clone()));
        b.attach(Some(first));
        assert!(a.scroll_by(10));
        let mut views = TermViews::default();
        let mut rounds = 0;
        for _ in 0..50 {
            let asked: Vec<_> = [(1, a.view_request()), (2, b.view_request())]
                .into_iter()
                .filter_map(|(id, c)| c.map(|c| (id, c)))
                .collect();
            if asked.is_empty() {
                break;
            }
            rounds += 1;
            for (id, cmd) in asked {
                let RunnerCommand::TermView { scroll, seen, hold } = cmd else {
                    continue;
                };
                views.asked(id, 0, scroll, seen, hold);
                let mut screens = vec![owner.set_view(scroll, seen, hold)];
                if routed && views.live_elsewhere(id, 0, [1, 2].into_iter()) {
                    screens.push(owner.set_view(0, 0, false));
                }
                for u in screens {
                    if !routed || views.wants(1, 0, &u) {
                        a.update(u.clone());
                    }
                    if !routed || views.wants(2, 0, &u) {
                        b.update(u);
                    }
                }
            }
        }
        (rounds, a, b)
    }

    #[test]
    fn two_consoles_one_scrolled_back_settle_in_one_round() {
        // The appendix's probe of the review (routing to every console):
        // it never settles.
        let (rounds, ..) = settle(false);
        assert_eq!(rounds, 50);
        let (rounds, a, b) = settle(true);
        assert_eq!(rounds, 1);
        let shown = |t: &Terminal| t.screen.as_ref().map(|s| (s.scroll, s.hold));
        assert_eq!((a.scroll, shown(&a)), (10, Some((10, true))));
        assert_eq!((b.scroll, shown(&b)), (0, Some((0, false))));
    }

    #[test]
    fn output_goes_live_to_the_live_console_and_leaves_a_held_view_alone() {
        let (mut owner, first) = owner();
        let mut views = TermViews::default();
        views.asked(1, 0, 10, first.history, true);
        let _ = owner.set_view(0, 0, false);
        let u = owner.update();
        assert!(views.wants(2, 0, &u) && !views.wants(1, 0, &u));
        // Console 1 alone: the runner stays on its view as lines arrive,
        // which console 1 still takes for its own.
        let held = owner.set_view(10, first.history, true);
        assert!(views.wants(1, 0, &held));
        if let Ok(mut p) = owner.screen().0.lock() {
            p.process(b"more\r\nand more\r\n");
        }
        let moved = owner.update();
        assert_eq!(moved.scroll, 12);
        assert!(views.wants(1, 0, &moved) && !views.wants(2, 0, &moved));
        views.forget(1);
        assert!(!views.wants(1, 0, &moved));
    }
}
