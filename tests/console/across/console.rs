//! A console without a terminal for the cross-pane tests: an `App` from a
//! config of `n` scripted agents, fed runner events and keys, drawn on
//! ratatui's `TestBackend` exactly as the console draws.
#![allow(dead_code)] // each test uses a different subset

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use hive::app::state::App;
use hive::app::{build_app, frame};
use hive::config::{Config, ConfigSource};
use hive::event::{Origin, Usage};
use hive::provider::display::{COMMON, describe};
use hive::provider::{Capabilities, PermissionRequest};
use hive::runner::{PaneEvent, PaneUpdate};
use hive::search::{SearchEvent, Searcher};
use hive::ui::ViewState;
use hive::upsert::{TurnEvent, TurnStatus, UpsertKind, UpsertStatus};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

pub struct Console {
    pub app: App,
    pub view: ViewState,
    /// A real search worker, pumped by `search_results`.
    searcher: Searcher,
    results: Receiver<SearchEvent>,
}

/// `n` scripted agents named "Agent 1"…, plus `extra` config text.
pub fn console(n: usize, extra: &str) -> Console {
    let mut text = extra.to_owned();
    for i in 0..n {
        text.push_str(&format!(
            "\n[[agent]]\nid = \"a{i}\"\nname = \"Agent {}\"\nprovider = \"script\"\nmodel = \"m-{}\"\n",
            i + 1,
            i + 1
        ));
    }
    let config = Config::parse(&text, ConfigSource::Builtin).expect("config");
    let (mut app, warnings) = build_app(&config);
    assert!(warnings.is_empty(), "{warnings:?}");
    app.now = app.started;
    for i in 0..n {
        app.apply(ev(
            i,
            PaneEvent::Attached {
                capabilities: Capabilities {
                    interrupt: true,
                    ..Capabilities::default()
                },
                terminal: None,
            },
        ));
    }
    let (tx, results) = channel();
    let searcher = Searcher::spawn(move |e| {
        let _ = tx.send(e);
    })
    .expect("search worker");
    Console {
        app,
        view: ViewState::default(),
        searcher,
        results,
    }
}

impl Console {
    pub fn render(&mut self, w: u16, h: u16) -> String {
        self.draw(w, h).backend().to_string()
    }

    pub fn draw(&mut self, w: u16, h: u16) -> Terminal<TestBackend> {
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("backend");
        term.draw(|f| frame(&mut self.app, &mut self.view, f.area(), f.buffer_mut()))
            .expect("draw");
        term
    }

    /// Hands the app's search requests to the worker and applies its
    /// events until the current query's full results are in.
    pub fn search_results(&mut self) {
        for r in self.app.outbox.take_search_requests() {
            self.searcher.send(r);
        }
        while !self.app.search.done {
            let ev = self
                .results
                .recv_timeout(Duration::from_secs(20))
                .expect("search results");
            self.app.search_event(ev);
        }
    }

    pub fn send(&mut self, pane: usize, event: PaneEvent) {
        self.app.apply(ev(pane, event));
    }

    pub fn key(&mut self, code: KeyCode) {
        self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    }

    pub fn alt(&mut self, c: char) {
        self.app
            .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT));
    }

    /// The prefix key, then `c`.
    pub fn prefix(&mut self, c: char) {
        self.app
            .on_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL));
        self.key(KeyCode::Char(c));
    }

    pub fn typ(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// One whole turn in `pane`: a prompt, a tool call with its output,
    /// and an answer, finished with usage.
    pub fn turn(&mut self, pane: usize, n: usize, prompt: &str, tool_out: &str, answer: &str) {
        let turn = format!("t{n}");
        self.send(pane, started(&turn));
        self.send(pane, message(&turn, &format!("u{n}"), Origin::User, prompt));
        self.send(
            pane,
            upsert(
                &turn,
                &format!("c{n}"),
                UpsertKind::ToolCall {
                    tool_name: "Bash".into(),
                    arguments: json!({"command": "cargo test"}),
                    call_id: format!("call{n}"),
                    output: Some(tool_out.into()),
                    output_is_error: Some(false),
                    display: Some(Box::new(describe(
                        &json!({"command": "cargo test"}),
                        &COMMON,
                    ))),
                },
            ),
        );
        self.send(
            pane,
            message(&turn, &format!("m{n}"), Origin::Agent, answer),
        );
        self.send(pane, completed(&turn));
    }
}

pub fn ev(pane: usize, event: PaneEvent) -> PaneUpdate {
    PaneUpdate { pane, event }
}

/// A complete item (the shared test-support builder).
pub use crate::support::console::complete as upsert;

/// A tool call still running (no output yet).
pub fn running_tool(turn: &str, item: &str, command: &str) -> PaneEvent {
    let mut ev = upsert(
        turn,
        item,
        UpsertKind::ToolCall {
            tool_name: "Bash".into(),
            arguments: json!({ "command": command }),
            call_id: format!("call-{item}"),
            output: None,
            output_is_error: None,
            display: Some(Box::new(describe(&json!({ "command": command }), &COMMON))),
        },
    );
    if let PaneEvent::Upsert(u) = &mut ev {
        u.status = UpsertStatus::Create;
    }
    ev
}

pub fn message(turn: &str, item: &str, origin: Origin, text: &str) -> PaneEvent {
    upsert(
        turn,
        item,
        UpsertKind::Message {
            content: text.into(),
            origin,
        },
    )
}

pub fn started(turn: &str) -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnStarted {
        turn_id: turn.into(),
        session_id: "s".into(),
        model_id: "demo-1".into(),
        provider_id: "script".into(),
    })
}

pub fn completed(turn: &str) -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnComplete {
        turn_id: turn.into(),
        session_id: "s".into(),
        status: TurnStatus::Completed,
        usage: Some(Usage {
            input_tokens: 1200,
            output_tokens: 300,
            cost_usd: Some(0.01),
            ..Usage::default()
        }),
        finish_reason: None,
    })
}

pub fn failed(turn: &str) -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnError {
        turn_id: turn.into(),
        session_id: "s".into(),
        error_code: "rate_limit".into(),
        error_message: "429".into(),
    })
}

pub fn permission(id: &str, command: &str) -> PaneEvent {
    PaneEvent::Permission(PermissionRequest {
        request_id: id.into(),
        tool_name: "Bash".into(),
        input: json!({ "command": command }),
        description: None,
        options: Vec::new(),
        display: Some(describe(&json!({ "command": command }), &COMMON)),
        ..Default::default()
    })
}
