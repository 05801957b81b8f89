//! The console's app drawn as the real one draws it (ratatui `TestBackend`),
//! with keys and pastes fed to it: for widget snapshots and input tests.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use hive::app::command::AppCommand;
use hive::app::state::App;
use hive::app::{build_app, frame};
use hive::config::{Config, ConfigSource};
use hive::provider::Capabilities;
use hive::runner::screen::TermOwner;
use hive::runner::{PaneEvent, PaneUpdate, RunnerCommand};
use hive::ui::ViewState;
use hive::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};

/// One scripted agent, `demo` ("Architect").
pub const ONE_AGENT: &str = r#"
[[agent]]
id = "demo"
name = "Architect"
provider = "script"
model = "demo-1"
"#;

pub struct Console {
    pub app: App,
    pub view: ViewState,
    /// Pane 0's terminal screen, for a terminal pane: the runner's side,
    /// answering the app's `TermView` and `CopyTerminal` (`pump`).
    pub term: Option<TermOwner>,
}

impl Console {
    /// `ONE_AGENT`'s console at a pinned clock, its pane attached with `caps`.
    pub fn one(caps: Capabilities) -> Self {
        Self::from_config(ONE_AGENT, caps)
    }

    /// The console of a config text at a pinned clock, pane 0 attached with `caps`.
    pub fn from_config(text: &str, caps: Capabilities) -> Self {
        let config = Config::parse(text, ConfigSource::Builtin).expect("config");
        let (mut app, warnings) = build_app(&config);
        assert!(warnings.is_empty(), "{warnings:?}");
        with_try_words(&mut app);
        app.now = app.started;
        app.apply(pane_event(PaneEvent::Attached {
            capabilities: caps,
            terminal: None,
        }));
        Self {
            app,
            view: ViewState::default(),
            term: None,
        }
    }

    /// Answers the app's terminal-view and copy commands for pane 0 as its
    /// runner would (other commands stay in the outbox).
    pub fn pump(&mut self) {
        let Some(owner) = self.term.as_mut() else {
            return;
        };
        self.app.sync_term_views();
        let term = self.app.outbox.drain_where(|c| {
            matches!(
                c,
                AppCommand::Runner {
                    pane: 0,
                    cmd: RunnerCommand::TermView { .. } | RunnerCommand::CopyTerminal { .. }
                }
            )
        });
        let mut events = Vec::new();
        for c in term {
            let AppCommand::Runner { cmd, .. } = c else {
                continue;
            };
            match cmd {
                RunnerCommand::TermView { scroll, seen, hold } => events.push(PaneEvent::Terminal(
                    Box::new(owner.set_view(scroll, seen, hold)),
                )),
                RunnerCommand::CopyTerminal { from, to } => {
                    events.push(PaneEvent::TerminalText(owner.text(from, to)))
                }
                _ => {}
            }
        }
        for e in events {
            self.app.apply(pane_event(e));
        }
    }

    /// Output from pane 0's terminal program, and the screen update its
    /// runner then sends.
    pub fn term_output(&mut self, bytes: &[u8]) {
        let Some(owner) = self.term.as_mut() else {
            return;
        };
        owner
            .screen()
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .process(bytes);
        let update = owner.update();
        self.app
            .apply(pane_event(PaneEvent::Terminal(Box::new(update))));
    }

    /// The screen as text, `w`×`h`.
    pub fn render(&mut self, w: u16, h: u16) -> String {
        self.pump();
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
        term.draw(|f| frame(&mut self.app, &mut self.view, f.area(), f.buffer_mut()))
            .expect("draw");
        term.backend().to_string()
    }

    pub fn key(&mut self, code: KeyCode) {
        self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    }

    /// Types `text` key by key.
    pub fn typ(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// The first pane's transcript entries, as debug text.
    pub fn transcript(&self) -> String {
        format!("{:?}", self.app.panes[0].conversation.transcript.entries)
    }
}

/// An event for pane 0.
/// A server reads a scripted agent's words and puts them on the pane's
/// card (`PaneCard::try_words`); an app built from a config without a
/// server gets them here.
pub fn with_try_words(app: &mut hive::app::state::App) {
    for p in &mut app.panes {
        p.try_words = hive::provider::script::match_words(&p.agent);
    }
}

pub fn pane_event(event: PaneEvent) -> PaneUpdate {
    PaneUpdate { pane: 0, event }
}

/// An item of turn `turn` at the epoch (snapshots stay stable).
pub fn upsert(turn: &str, item: &str, status: UpsertStatus, kind: UpsertKind) -> Upsert {
    Upsert {
        turn_id: turn.into(),
        session_id: "s".into(),
        item_id: item.into(),
        source_timestamp: chrono::DateTime::UNIX_EPOCH,
        emitted_at: chrono::DateTime::UNIX_EPOCH,
        status,
        error_code: None,
        error_message: None,
        kind,
    }
}

/// A complete item of turn `turn`, at the epoch (snapshots stay stable).
pub fn complete(turn: &str, item: &str, kind: UpsertKind) -> PaneEvent {
    PaneEvent::Upsert(upsert(turn, item, UpsertStatus::Complete, kind))
}

/// Turn `turn` completed, with no usage.
pub fn completed(turn: &str) -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnComplete {
        turn_id: turn.into(),
        session_id: "s".into(),
        status: TurnStatus::Completed,
        usage: None,
        finish_reason: None,
    })
}
