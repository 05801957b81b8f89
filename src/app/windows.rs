//! Windows of panes, as tmux's (issue 32): the server puts each pane in a
//! window (nine to a window unless the user moves them); the console shows
//! the window of the focused pane, so whatever focuses a pane (the inbox,
//! search, overview, a new pane) also shows its window. `Ctrl+B n/p` step
//! through windows, each coming back to the pane last focused there;
//! `Alt+1..9` and the arrows stay inside the window.

use super::state::App;

impl App {
    /// The windows there are, in order.
    pub fn windows(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.panes.iter().map(|p| p.window).collect();
        w.sort_unstable();
        w.dedup();
        w
    }

    /// The window shown: the focused pane's.
    pub fn window(&self) -> usize {
        self.focused().map_or(1, |p| p.window)
    }

    /// Whether anything on screen draws pane `i` itself: it is in the
    /// window shown (the zoomed pane alone when zoomed), or an overlay is
    /// up (the overview, search and inbox show every pane's news).
    pub(crate) fn shows(&self, i: usize) -> bool {
        if self.overlay != super::state::Overlay::None {
            return true;
        }
        if self.zoom {
            return i == self.focus;
        }
        self.panes.get(i).is_some_and(|p| p.window == self.window())
    }

    /// The panes of window `w`, in order.
    pub fn panes_in(&self, w: usize) -> Vec<usize> {
        (0..self.panes.len())
            .filter(|&i| self.panes[i].window == w)
            .collect()
    }

    /// The `n`th pane (0-based) of the window shown.
    pub(crate) fn focus_in_window(&mut self, n: usize) {
        if let Some(&i) = self.panes_in(self.window()).get(n) {
            self.set_focus(i);
        }
    }

    /// The next (`delta` 1) or previous (-1) pane of the window shown.
    pub(crate) fn step_pane(&mut self, delta: isize) {
        let panes = self.panes_in(self.window());
        let Some(at) = panes.iter().position(|&i| i == self.focus) else {
            return;
        };
        let next = (at as isize + delta).rem_euclid(panes.len() as isize) as usize;
        self.set_focus(panes[next]);
    }

    /// The next or previous window, at the pane last focused there.
    pub(crate) fn step_window(&mut self, delta: isize) {
        let windows = self.windows();
        if windows.len() < 2 {
            return self.set_status("one window: /window new moves a pane to a second one");
        }
        let here = self.window();
        if let Some(p) = self.focused() {
            self.window_focus.insert(here, p.agent.id.clone());
        }
        let at = windows.iter().position(|&w| w == here).unwrap_or(0);
        let to = windows[(at as isize + delta).rem_euclid(windows.len() as isize) as usize];
        let remembered = self
            .window_focus
            .get(&to)
            .and_then(|id| self.panes.iter().position(|p| &p.agent.id == id))
            .filter(|&i| self.panes[i].window == to);
        if let Some(i) = remembered.or_else(|| self.panes_in(to).first().copied()) {
            self.set_focus(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigSource};
    use crate::protocol::pane::{PaneEvent, PaneUpdate, TurnState};

    /// Twelve panes, nine in window 1 and three in window 2; pane 10
    /// (window 2) is busy.
    fn app() -> super::App {
        let text: String = (0..12)
            .map(|i| format!("[[agent]]\nid = \"a{i}\"\nprovider = \"script\"\n\n"))
            .collect();
        let config = Config::parse(&text, ConfigSource::Builtin).unwrap_or_else(|e| panic!("{e}"));
        let (mut app, _) = crate::app::build_app(&config);
        for (i, p) in app.panes.iter_mut().enumerate() {
            p.window = 1 + i / 9;
        }
        app.apply(PaneUpdate {
            pane: 10,
            event: PaneEvent::State(TurnState::Streaming),
        });
        app
    }

    /// A busy pane out of view turns no spinner (the console drew ten
    /// frames a second for it); shown, or zoomed on, it does.
    #[test]
    fn only_a_busy_pane_on_screen_animates() {
        let mut app = app();
        assert!(app.panes[10].is_busy());
        assert!(!app.shows(10) && app.shows(0));
        assert!(!app.animating(), "window 2's spinner is not on screen");
        app.set_focus(9);
        assert!(app.shows(10) && !app.shows(0));
        assert!(app.animating());
        app.zoom = true;
        assert!(!app.shows(10), "beside the zoomed pane");
        assert!(!app.animating());
        app.overlay = super::super::state::Overlay::Overview;
        assert!(
            app.shows(0) && app.animating(),
            "the overview shows them all"
        );
    }
}
