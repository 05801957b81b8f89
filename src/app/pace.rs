//! When the console draws its next frame.
//!
//! A frame follows any visible change at most `ui.max_fps` times a second.
//! Streaming text in a pane that is not focused is the exception: it waits
//! up to four live-tail intervals (`ui.display_latency_ms`) for a frame,
//! and shows with the next frame any pane draws, so background panes share
//! a smaller budget while the focused pane keeps the smooth path. Their
//! runners send the live tail, and read their agents, on that longer tick
//! too (`RunnerCommand::Focused`): three panes streaming side by side wrote
//! 30 % fewer bytes for ~10 % less CPU than with every pane on the live tick
//! (`console pipe`, `PANES=3`). A background pane's text is so at most two
//! such ticks (~270 ms) behind, the focused pane's still one live tick. State
//! changes and finished items draw at the next frame slot. Input (keys,
//! mouse, paste) draws at once, outside the frame cap: waiting for the slot
//! cost up to a whole interval (16.7 ms at 60 fps) per keypress while a pane
//! streamed, and people type far below the cap's rate.
//!
//! With the live tail on, a gradient batch of streaming text asks for no
//! frame: the runner's live tail follows every batch within the display
//! latency (`Processor::live_tail`), so streaming text is drawn once per
//! live tick instead of once per tick and once per batch.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::protocol::pane::{PaneEvent, PaneUpdate};
use crate::protocol::upsert::{Upsert, UpsertKind};

#[derive(Debug, Clone)]
pub struct Pace {
    interval: Duration,
    /// How long a streaming update of a background pane may wait.
    background: Duration,
    /// Whether runners send a live tail (`ui.display_latency_ms` > 0).
    live: bool,
    last: Instant,
    due: Option<Instant>,
}

impl Pace {
    pub fn new(config: &Config, now: Instant) -> Self {
        let interval = Duration::from_secs_f64(1.0 / f64::from(config.ui.max_fps.clamp(1, 240)));
        let live_every = crate::config::live_every(config);
        Self {
            interval,
            background: crate::config::background_every(config).unwrap_or_default(),
            live: live_every.is_some(),
            last: now.checked_sub(interval).unwrap_or(now),
            due: None,
        }
    }

    /// Something visible changed: draw at the next frame slot.
    pub(crate) fn soon(&mut self) {
        self.want(self.last + self.interval);
    }

    /// The user typed, clicked or pasted: draw now.
    pub fn input(&mut self, now: Instant) {
        self.want(now);
    }

    /// A runner update for a pane; `focus` is the focused pane.
    pub fn update(&mut self, u: &PaneUpdate, focus: usize, now: Instant) {
        let wait = match &u.event {
            PaneEvent::Upsert(x) if self.live && streaming_text(x) => return,
            _ if u.pane == focus => Duration::ZERO,
            PaneEvent::Upsert(x) if x.is_closed() => Duration::ZERO,
            PaneEvent::Live(_) | PaneEvent::Upsert(_) => self.background,
            _ => Duration::ZERO,
        };
        self.want((now + wait).max(self.last + self.interval));
    }

    /// A runner update for a pane nothing on screen draws (a window out
    /// of view, or beside the zoomed pane): its streaming text changes no
    /// cell, not even its tab's mark (a running turn's text is not news
    /// until it ends), so it asks for no frame; anything else may change
    /// the tab bar and draws as a background pane's would. Twenty-one
    /// streaming panes in three hidden windows kept the console drawing
    /// the shown window at the background rate (issue 45 item 3).
    pub fn unseen(&mut self, u: &PaneUpdate, now: Instant) {
        match &u.event {
            PaneEvent::Live(_) => {}
            PaneEvent::Upsert(x) if !x.is_closed() => {}
            _ => self.update(u, usize::MAX, now),
        }
    }

    fn want(&mut self, at: Instant) {
        self.due = Some(self.due.map_or(at, |d| d.min(at)));
    }

    /// When the next frame is due, if one is.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// Whether a frame is due at `now`.
    pub fn ready(&self, now: Instant) -> bool {
        self.due.is_some_and(|d| now >= d)
    }

    /// A frame was drawn at `now`.
    pub fn drawn(&mut self, now: Instant) {
        self.last = now;
        self.due = None;
    }
}

/// A gradient batch of an open message or thinking item: its text is
/// also in the live tail that follows.
fn streaming_text(u: &Upsert) -> bool {
    !u.is_closed()
        && matches!(
            u.kind,
            UpsertKind::Message { .. } | UpsertKind::Thinking { .. }
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigSource;
    use crate::protocol::upsert::UpsertStatus;

    fn config(toml: &str) -> Config {
        Config::parse(toml, ConfigSource::Builtin).unwrap_or_else(|e| panic!("{e}"))
    }

    fn update(pane: usize, status: UpsertStatus, live: bool) -> PaneUpdate {
        let u = Upsert::test_message("i", status, crate::protocol::text::SharedText::default());
        PaneUpdate {
            pane,
            event: if live {
                PaneEvent::Live(u)
            } else {
                PaneEvent::Upsert(u)
            },
        }
    }

    #[test]
    fn background_panes_stream_at_a_lower_rate() {
        let config = config("[ui]\ndisplay_latency_ms = 50\n");
        let t0 = Instant::now();
        let mut pace = Pace::new(&config, t0);
        let stream = crate::config::live_every(&config).unwrap_or_default();
        assert!(stream > Duration::ZERO);

        pace.update(&update(0, UpsertStatus::Update, true), 0, t0);
        assert!(pace.ready(t0), "the focused pane draws at once");
        pace.drawn(t0);

        let mut bg = pace.clone();
        bg.update(&update(1, UpsertStatus::Update, true), 0, t0);
        assert_eq!(bg.due(), Some(t0 + stream * 4));
        bg.update(&update(1, UpsertStatus::Complete, false), 0, t0);
        assert!(
            bg.due() < Some(t0 + stream),
            "a finished item draws at the next slot"
        );
        pace.update(&update(0, UpsertStatus::Update, true), 0, t0);
        assert!(
            pace.due() < Some(t0 + stream),
            "the focused pane's next slot"
        );
    }

    #[test]
    fn a_batch_of_streaming_text_waits_for_the_live_tail() {
        let parse = |ms| config(&format!("[ui]\ndisplay_latency_ms = {ms}\n"));
        let t0 = Instant::now();
        let mut pace = Pace::new(&parse(50), t0);
        pace.update(&update(0, UpsertStatus::Update, false), 0, t0);
        assert_eq!(pace.due(), None, "the live tail that follows draws it");
        pace.update(&update(1, UpsertStatus::Update, false), 0, t0);
        assert_eq!(pace.due(), None, "nor in a background pane");
        pace.update(&update(0, UpsertStatus::Complete, false), 0, t0);
        assert!(pace.ready(t0), "a finished item draws at once");

        // Without a live tail, each batch is what shows the text.
        let mut pace = Pace::new(&parse(0), t0);
        pace.update(&update(0, UpsertStatus::Update, false), 0, t0);
        assert!(pace.ready(t0));
    }

    #[test]
    fn streaming_in_a_pane_out_of_view_draws_nothing() {
        let config = config("[ui]\ndisplay_latency_ms = 50\n");
        let t0 = Instant::now();
        let mut pace = Pace::new(&config, t0);
        pace.unseen(&update(1, UpsertStatus::Update, true), t0);
        pace.unseen(&update(1, UpsertStatus::Update, false), t0);
        assert_eq!(pace.due(), None, "no cell shows that text");
        pace.unseen(&update(1, UpsertStatus::Complete, false), t0);
        assert!(pace.due().is_some(), "a finished item may mark its tab");
        let mut state = Pace::new(&config, t0);
        let busy = PaneUpdate {
            pane: 1,
            event: PaneEvent::State(crate::protocol::pane::TurnState::Idle),
        };
        state.unseen(&busy, t0);
        assert!(state.ready(t0), "a state change marks the tab at once");
    }

    #[test]
    fn input_draws_at_once_while_a_pane_streams() {
        let config = config("[ui]\nmax_fps = 60\n");
        let t0 = Instant::now();
        let mut pace = Pace::new(&config, t0);
        pace.update(&update(0, UpsertStatus::Update, true), 0, t0);
        pace.drawn(t0);
        let t1 = t0 + Duration::from_millis(2);
        pace.update(&update(0, UpsertStatus::Update, true), 0, t1);
        assert!(!pace.ready(t1), "streaming waits for the next slot");
        pace.input(t1);
        assert!(pace.ready(t1), "a key does not");
        pace.soon();
        assert_eq!(pace.due(), Some(t1), "a later slot does not delay it");
    }
}
