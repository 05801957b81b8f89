//! Console rendering and input, without a terminal: an `App` built from the
//! built-in config is fed runner events and keys, drawn on ratatui's
//! `TestBackend`, and compared with insta snapshots (`tests/console/snapshots/`).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use hive::app::state::{App, Overlay};
use hive::app::{build_app, frame};
use hive::config::{Config, ConfigSource};
use hive::event::{Origin, Usage};
use hive::provider::display::{COMMON, describe};
use hive::provider::{
    Capabilities, DiagnosticLevel, PermissionDecision, PermissionOption, PermissionRequest,
    SessionInfo,
};
use hive::runner::{PaneEvent, PaneUpdate, QueueEdit, RunnerCommand, SubmitMode, TurnState};
use hive::text::TextBuffer;
use hive::ui::ViewState;
use hive::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};

const TWO: &str = r#"
[[agent]]
id = "demo"
name = "Architect"
provider = "script"
model = "demo-1"

[[agent]]
id = "rev"
name = "Reviewer"
provider = "script"
"#;

fn config_with(n: usize) -> Config {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "[[agent]]\nid = \"a{i}\"\nname = \"Agent {}\"\nprovider = \"script\"\n\n",
            i + 1
        ));
    }
    Config::parse(&text, ConfigSource::Builtin).unwrap()
}

/// An app with the view state the console keeps for it between frames.
struct Console {
    app: App,
    view: ViewState,
}

impl std::ops::Deref for Console {
    type Target = App;
    fn deref(&self) -> &App {
        &self.app
    }
}

impl std::ops::DerefMut for Console {
    fn deref_mut(&mut self) -> &mut App {
        &mut self.app
    }
}

fn app_from(config: &Config) -> Console {
    let (mut app, warnings) = build_app(config);
    assert!(warnings.is_empty(), "{warnings:?}");
    app.now = app.started;
    for i in 0..app.panes.len() {
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
    Console {
        app,
        view: ViewState::default(),
    }
}

fn two() -> Console {
    app_from(&Config::parse(TWO, ConfigSource::Builtin).unwrap())
}

fn ev(pane: usize, event: PaneEvent) -> PaneUpdate {
    PaneUpdate { pane, event }
}

fn upsert(item: &str, status: UpsertStatus, kind: UpsertKind) -> PaneEvent {
    PaneEvent::Upsert(Upsert {
        turn_id: "turn-1".into(),
        session_id: "s".into(),
        item_id: item.into(),
        source_timestamp: chrono::DateTime::UNIX_EPOCH,
        emitted_at: chrono::DateTime::UNIX_EPOCH,
        status,
        error_code: None,
        error_message: None,
        kind,
    })
}

fn message(item: &str, origin: Origin, text: &str, status: UpsertStatus) -> PaneEvent {
    upsert(
        item,
        status,
        UpsertKind::Message {
            content: text.into(),
            origin,
        },
    )
}

fn thinking(item: &str, text: &str, status: UpsertStatus) -> PaneEvent {
    upsert(
        item,
        status,
        UpsertKind::Thinking {
            content: text.into(),
            provider_id: "script".into(),
        },
    )
}

fn tool(
    item: &str,
    name: &str,
    args: serde_json::Value,
    output: Option<&str>,
    error: bool,
) -> PaneEvent {
    let status = if output.is_some() {
        UpsertStatus::Complete
    } else {
        UpsertStatus::Create
    };
    upsert(
        item,
        status,
        UpsertKind::ToolCall {
            tool_name: name.into(),
            // As a provider describes it (the script provider uses the common names).
            display: Some(Box::new(describe(&args, &COMMON))),
            arguments: args,
            call_id: format!("call-{item}"),
            output: output.map(str::to_owned),
            output_is_error: output.map(|_| error),
        },
    )
}

fn started() -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnStarted {
        turn_id: "turn-1".into(),
        session_id: "s".into(),
        model_id: "demo-1".into(),
        provider_id: "script".into(),
    })
}

fn completed(status: TurnStatus, cost: Option<f64>) -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnComplete {
        turn_id: "turn-1".into(),
        session_id: "s".into(),
        status,
        usage: Some(Usage {
            input_tokens: 1234,
            output_tokens: 567,
            cost_usd: cost,
            ..Usage::default()
        }),
        finish_reason: None,
    })
}

fn render(c: &mut Console, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| frame(&mut c.app, &mut c.view, f.area(), f.buffer_mut()))
        .unwrap();
    term.backend().to_string()
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn alt(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::ALT)
}

fn typ(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

const TOUR: &str = "## Repository tour\n\nYou asked: *hello*\n\n1. **providers** drive agents;\n2. the **processor** batches.\n\n| layer | file |\n|---|---|\n| runner | `runner.rs` |\n\n```rust\nlet outs = processor.process(&event);\n```\n\n> Try a second prompt.\n\nSee [the docs](https://example.com/docs).";

/// A full conversation in pane 0: every widget kind once.
fn conversation(app: &mut App) {
    for e in [
        started(),
        message("u1", Origin::User, "give me a tour", UpsertStatus::Complete),
        thinking(
            "t1",
            "The user wants a tour. I should look at the repository first.",
            UpsertStatus::Complete,
        ),
        tool(
            "c1",
            "Bash",
            json!({"command": "ls -la src/"}),
            Some("total 48\napp.rs\nprocessor.rs\nrunner.rs\nprovider\nui"),
            false,
        ),
        message("m1", Origin::Agent, TOUR, UpsertStatus::Complete),
    ] {
        app.apply(ev(0, e));
    }
    app.now += Duration::from_millis(4200);
    app.apply(ev(0, completed(TurnStatus::Completed, Some(0.0123))));
}

#[test]
fn conversation_widgets() {
    let mut app = two();
    conversation(&mut app);
    app.zoom = true;
    insta::assert_snapshot!(render(&mut app, 80, 60));
}

#[test]
fn streaming_message_thinking_and_running_tool() {
    let mut app = two();
    app.apply(ev(0, PaneEvent::State(TurnState::Streaming)));
    app.apply(ev(0, started()));
    app.apply(ev(
        0,
        message(
            "u1",
            Origin::User,
            "fix the greeting",
            UpsertStatus::Complete,
        ),
    ));
    app.apply(ev(
        0,
        thinking(
            "t1",
            "Line one of thought.\nLine two.\nLine three.\nLine four.\nLine five, the latest.",
            UpsertStatus::Update,
        ),
    ));
    app.apply(ev(
        0,
        tool(
            "c1",
            "Edit",
            json!({"file_path": "src/greet.rs", "old_string": "Hello", "new_string": "Hello!"}),
            None,
            false,
        ),
    ));
    app.apply(ev(
        0,
        message(
            "m1",
            Origin::Agent,
            "Fixed the greeting in `src/gr",
            UpsertStatus::Update,
        ),
    ));
    app.zoom = true;
    insta::assert_snapshot!(render(&mut app, 70, 24));
}

#[test]
fn streaming_updates_replace_items_in_place() {
    let mut app = two();
    let mut buf = TextBuffer::new();
    let mut frames = Vec::new();
    for chunk in [
        "# Plan\n\n",
        "First paragraph ",
        "goes on.\n\n- a\n",
        "- b\n\n```rust\nfn x() {}\n",
        "```\n\nDone.",
    ] {
        buf.push_str(chunk);
        app.apply(ev(
            0,
            upsert(
                "m1",
                UpsertStatus::Update,
                UpsertKind::Message {
                    content: buf.snapshot(),
                    origin: Origin::Agent,
                },
            ),
        ));
        frames.push(render(&mut app, 60, 20));
    }
    app.apply(ev(
        0,
        upsert(
            "m1",
            UpsertStatus::Complete,
            UpsertKind::Message {
                content: buf.snapshot(),
                origin: Origin::Agent,
            },
        ),
    ));
    let last = render(&mut app, 60, 20);
    assert_eq!(
        app.panes[0].conversation.transcript.len(),
        1,
        "one item, updated in place"
    );
    // The incremental result equals a fresh render of the same text.
    let mut fresh = two();
    fresh.apply(ev(
        0,
        message(
            "m1",
            Origin::Agent,
            &buf.snapshot().to_string(),
            UpsertStatus::Complete,
        ),
    ));
    assert_eq!(last, render(&mut fresh, 60, 20));
    insta::assert_snapshot!(last);
}

#[test]
fn thinking_and_tools_expand_and_simple_view_hides_them() {
    let mut app = two();
    app.zoom = true;
    conversation(&mut app);
    let long: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    app.apply(ev(
        0,
        tool(
            "c2",
            "Bash",
            json!({"command": "seq 12"}),
            Some(&long),
            false,
        ),
    ));
    let collapsed = render(&mut app, 80, 30);
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let expanded = render(&mut app, 80, 30);
    assert_ne!(collapsed, expanded);
    insta::assert_snapshot!("expanded", expanded);
    app.on_key(key(KeyCode::F(2)));
    assert!(!app.full_view);
    let simple = render(&mut app, 80, 30);
    assert!(!simple.contains("ls -la"), "{simple}");
    insta::assert_snapshot!("simple_view", simple);
}

#[test]
fn tool_error_and_diff_output() {
    let mut app = two();
    app.zoom = true;
    app.apply(ev(
        0,
        tool(
            "c1",
            "Bash",
            json!({"command": "cargo test"}),
            Some("error[E0425]: cannot find value `x`\n  --> src/lib.rs:3:5"),
            true,
        ),
    ));
    app.apply(ev(0, tool("c2", "Edit", json!({"file_path": "src/greet.rs"}), Some("--- a/src/greet.rs\n+++ b/src/greet.rs\n@@ -1,3 +1,3 @@\n pub fn greet() {\n-    \"Hello\"\n+    \"Hello!\"\n }"), false)));
    let mut failed = Upsert {
        turn_id: "t".into(),
        session_id: "s".into(),
        item_id: "c3".into(),
        source_timestamp: chrono::DateTime::UNIX_EPOCH,
        emitted_at: chrono::DateTime::UNIX_EPOCH,
        status: UpsertStatus::Error,
        error_code: Some("agent_exited".into()),
        error_message: Some("the agent exited mid-call".into()),
        kind: UpsertKind::ToolCall {
            tool_name: "Read".into(),
            arguments: json!({"file_path": "a.rs"}),
            call_id: "x".into(),
            output: None,
            output_is_error: None,
            display: Some(Box::new(describe(&json!({"file_path": "a.rs"}), &COMMON))),
        },
    };
    app.apply(ev(0, PaneEvent::Upsert(failed.clone())));
    failed.item_id = "m9".into();
    failed.kind = UpsertKind::Message {
        content: "Partial ans".into(),
        origin: Origin::Agent,
    };
    app.apply(ev(0, PaneEvent::Upsert(failed)));
    insta::assert_snapshot!(render(&mut app, 70, 26));
}

#[test]
fn footers_errors_and_notices() {
    let mut app = two();
    app.zoom = true;
    app.apply(ev(0, started()));
    app.apply(ev(0, completed(TurnStatus::Cancelled, None)));
    app.apply(ev(
        0,
        PaneEvent::Turn(TurnEvent::TurnError {
            turn_id: "t2".into(),
            session_id: "s".into(),
            error_code: "rate_limit".into(),
            error_message: "429 Too Many Requests: retry in 30 s".into(),
        }),
    ));
    app.apply(ev(
        0,
        PaneEvent::Notice {
            level: DiagnosticLevel::Info,
            text: "agent restarted".into(),
        },
    ));
    app.apply(ev(
        0,
        PaneEvent::Notice {
            level: DiagnosticLevel::Warn,
            text: "malformed line from the agent skipped".into(),
        },
    ));
    app.apply(ev(
        0,
        PaneEvent::Notice {
            level: DiagnosticLevel::Error,
            text: "agent stopped: exit status 3".into(),
        },
    ));
    app.apply(ev(
        0,
        message(
            "s1",
            Origin::System,
            "Compacting the conversation…",
            UpsertStatus::Complete,
        ),
    ));
    insta::assert_snapshot!(render(&mut app, 60, 20));
}

#[test]
fn permission_cards_and_answers() {
    let mut app = two();
    app.zoom = true;
    app.apply(ev(0, PaneEvent::State(TurnState::Streaming)));
    app.apply(ev(0, PaneEvent::Permission(PermissionRequest {
        request_id: "p1".into(),
        tool_name: "Edit".into(),
        input: json!({"file_path": "src/greet.rs", "old_string": "Hello", "new_string": "Hello!"}),
        display: Some(describe(&json!({"file_path": "src/greet.rs", "old_string": "Hello", "new_string": "Hello!"}), &COMMON)),
        description: Some("Edit a file in the workspace".into()),
        options: vec![], ..Default::default()
    })));
    app.apply(ev(
        0,
        PaneEvent::Permission(PermissionRequest {
            request_id: "p2".into(),
            tool_name: "Bash".into(),
            input: json!({"command": "rm -rf build"}),
            display: Some(describe(&json!({"command": "rm -rf build"}), &COMMON)),
            description: None,
            options: vec![
                PermissionOption {
                    option_id: "allow".into(),
                    label: "Allow".into(),
                    kind: "allow_once".into(),
                },
                PermissionOption {
                    option_id: "reject".into(),
                    label: "Reject".into(),
                    kind: "reject_once".into(),
                },
            ],
            ..Default::default()
        }),
    ));
    insta::assert_snapshot!("card_default", render(&mut app, 70, 22));
    app.on_key(key(KeyCode::Char('n')));
    typ(&mut app, "not now");
    insta::assert_snapshot!("card_deny_reason", render(&mut app, 70, 22));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.outbox.runner_commands().len(), 1);
    match &app.outbox.runner_commands()[0].1 {
        RunnerCommand::Permission {
            request_id,
            decision,
            ..
        } => {
            assert_eq!(request_id, "p1");
            assert_eq!(
                decision,
                &PermissionDecision::Deny {
                    reason: "not now".into()
                }
            );
        }
        other => panic!("{other:?}"),
    }
    insta::assert_snapshot!("card_options", render(&mut app, 70, 22));
    app.on_key(key(KeyCode::Char('2')));
    match &app.outbox.runner_commands()[1].1 {
        RunnerCommand::Permission {
            request_id,
            decision,
            ..
        } => {
            assert_eq!(request_id, "p2");
            assert_eq!(
                decision,
                &PermissionDecision::Option {
                    option_id: "reject".into()
                }
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(app.panes[0].pending.permissions.is_empty());
}

#[test]
fn allow_keys_only_act_on_an_empty_composer() {
    let mut app = two();
    app.apply(ev(
        0,
        PaneEvent::Permission(PermissionRequest {
            request_id: "p1".into(),
            tool_name: "Bash".into(),
            input: json!({"command": "ls"}),
            display: Some(describe(&json!({"command": "ls"}), &COMMON)),
            description: None,
            options: vec![],
            ..Default::default()
        }),
    ));
    typ(&mut app, "okay");
    assert!(app.outbox.runner_commands().is_empty());
    assert_eq!(app.panes[0].composer.text(), "okay");
    app.panes[0].composer.set("");
    app.on_key(key(KeyCode::Char('a')));
    assert!(matches!(
        &app.outbox.runner_commands()[0].1,
        RunnerCommand::Permission {
            decision: PermissionDecision::AllowAlways,
            ..
        }
    ));
}

#[test]
fn queue_is_visible_and_editable() {
    let mut app = two();
    app.zoom = true;
    app.apply(ev(0, PaneEvent::State(TurnState::Streaming)));
    app.apply(ev(
        0,
        PaneEvent::Queue(vec![
            "second prompt".into(),
            "third\nwith two lines".into(),
            "fourth".into(),
            "fifth".into(),
        ]),
    ));
    insta::assert_snapshot!("queue", render(&mut app, 70, 16));
    app.on_key(alt(KeyCode::Char('q')));
    app.on_key(key(KeyCode::Up));
    insta::assert_snapshot!("queue_manage", render(&mut app, 70, 16));
    app.on_key(KeyEvent::new(KeyCode::Up, KeyModifiers::SHIFT));
    app.on_key(key(KeyCode::Char('d')));
    let cmds: Vec<_> = app
        .outbox
        .take_runner_commands()
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert!(
        matches!(
            cmds[0],
            RunnerCommand::Queue(QueueEdit::Move { from: 2, to: 1 })
        ),
        "{cmds:?}"
    );
    assert!(
        matches!(cmds[1], RunnerCommand::Queue(QueueEdit::Remove(1))),
        "{cmds:?}"
    );
    app.on_key(key(KeyCode::Esc));
    assert!(app.panes[0].pending.selected.is_none());
    app.on_key(alt(KeyCode::Up));
    assert!(matches!(
        app.outbox.runner_commands()[0].1,
        RunnerCommand::Queue(QueueEdit::PopLast)
    ));
    app.apply(ev(0, PaneEvent::Recalled("fifth".into())));
    assert_eq!(app.panes[0].composer.text(), "fifth");
}

#[test]
fn restored_queue_waits_for_enter_on_an_empty_composer() {
    let mut app = two();
    app.zoom = true;
    let history = hive::history::PaneHistory {
        queue: vec!["left over".into()],
        ..Default::default()
    };
    app.restore(0, &mut hive::wire::snapshot::Restored::of(&history));
    insta::assert_snapshot!(render(&mut app, 70, 12));
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(
        app.outbox.runner_commands()[0].1,
        RunnerCommand::DrainQueue
    ));
}

#[test]
fn submit_steer_interrupt_and_newlines() {
    let mut app = two();
    typ(&mut app, "hello");
    app.on_key(alt(KeyCode::Enter));
    typ(&mut app, "world");
    app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(&app.outbox.runner_commands()[0].1, RunnerCommand::Submit { text, mode: SubmitMode::Auto } if text == "hello\nworld")
    );
    app.apply(ev(0, PaneEvent::State(TurnState::Streaming)));
    typ(&mut app, "now");
    app.on_key(alt(KeyCode::Char('s')));
    assert!(
        matches!(&app.outbox.runner_commands()[1].1, RunnerCommand::Submit { text, mode: SubmitMode::Steer } if text == "now")
    );
    app.on_key(key(KeyCode::Esc));
    assert!(matches!(
        app.outbox.runner_commands()[2].1,
        RunnerCommand::Interrupt
    ));
    assert_eq!(
        app.status.as_ref().map(|s| s.0.as_str()),
        Some("interrupting…")
    );
    // The turn ends: the status says so no longer (#34 item 9).
    app.apply(ev(0, completed(TurnStatus::Cancelled, None)));
    assert_eq!(app.status, None);
    // Up at the top of the composer walks the input history.
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.panes[0].composer.text(), "now");
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.panes[0].composer.text(), "hello\nworld");
}

#[test]
fn paste_never_sends() {
    let mut app = two();
    app.on_paste("line one\r\nline two\nline three");
    assert!(app.outbox.runner_commands().is_empty());
    assert_eq!(
        app.panes[0].composer.text(),
        "line one\nline two\nline three"
    );
    app.zoom = true;
    insta::assert_snapshot!(render(&mut app, 50, 12));
}

#[test]
fn focus_keys_mouse_and_attention() {
    let mut app = app_from(&config_with(4));
    render(&mut app, 120, 40);
    app.on_key(alt(KeyCode::Char('3')));
    assert_eq!(app.focus, 2);
    app.on_key(alt(KeyCode::Right));
    assert_eq!(app.focus, 3);
    app.on_key(alt(KeyCode::Right));
    assert_eq!(app.focus, 0);
    app.on_key(KeyEvent::new(
        KeyCode::Down,
        KeyModifiers::ALT | KeyModifiers::SHIFT,
    ));
    assert_eq!(app.focus, 2);
    app.on_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL));
    app.on_key(key(KeyCode::Char('2')));
    assert_eq!(app.focus, 1);
    // Pane 4 finishes a turn while unfocused: marked until visited.
    app.apply(ev(3, completed(TurnStatus::Completed, None)));
    assert!(app.panes[3].attention.flagged);
    insta::assert_snapshot!("attention", render(&mut app, 120, 30));
    let r = app.geometry.panes[3].rect;
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: r.x + 2,
        row: r.y + 2,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(app.focus, 3);
    assert!(!app.panes[3].attention.flagged);
}

#[test]
fn grid_at_many_sizes_never_panics() {
    for n in 0..=9 {
        for (w, h) in [
            (200, 50),
            (120, 40),
            (80, 24),
            (40, 12),
            (20, 6),
            (8, 3),
            (1, 1),
        ] {
            let mut app = app_from(&config_with(n));
            if n > 0 {
                conversation(&mut app);
                app.apply(ev(0, PaneEvent::Queue(vec!["q".into()])));
            }
            let out = render(&mut app, w, h);
            assert!(!out.is_empty());
        }
    }
}

#[test]
fn grids() {
    for (n, w, h) in [
        (2, 100, 20),
        (3, 120, 30),
        (4, 100, 24),
        (6, 160, 40),
        (9, 150, 36),
        (3, 40, 12),
    ] {
        let mut app = app_from(&config_with(n));
        conversation(&mut app);
        insta::assert_snapshot!(format!("grid_{n}_{w}x{h}"), render(&mut app, w, h));
    }
}

#[test]
fn zoom_toggles() {
    let mut app = app_from(&config_with(3));
    app.on_key(alt(KeyCode::Char('2')));
    app.on_key(alt(KeyCode::Char('z')));
    assert!(app.zoom);
    let zoomed = render(&mut app, 80, 16);
    assert!(app.geometry.panes[0].rect.width == 0 && app.geometry.panes[1].rect.width == 80);
    insta::assert_snapshot!(zoomed);
    app.on_key(alt(KeyCode::Char('z')));
    assert!(!app.zoom);
}

#[test]
fn help_overlay_lists_the_configured_keys() {
    let mut config = Config::parse(TWO, ConfigSource::Builtin).unwrap();
    config.keys.insert(
        "zoom".into(),
        hive::config::KeyBinding::One("ctrl+z".into()),
    );
    let mut app = app_from(&config);
    app.on_key(key(KeyCode::F(1)));
    assert_eq!(app.overlay, Overlay::Help);
    let out = render(&mut app, 110, 60);
    assert!(out.contains("Ctrl+Z"), "{out}");
    insta::assert_snapshot!(out);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
    // `?` types into a non-empty composer instead of opening help.
    typ(&mut app, "why?");
    assert_eq!(app.overlay, Overlay::None);
}

fn ctrl_q() -> KeyEvent {
    KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL)
}

#[test]
fn ctrl_q_asks_detach_or_stop() {
    // Idle: Ctrl+Q still asks (leaving may mean detaching or stopping).
    let mut app = two();
    app.on_key(ctrl_q());
    assert_eq!(app.leave, None);
    assert_eq!(app.overlay, Overlay::Leave);
    insta::assert_snapshot!("leave_idle", render(&mut app, 60, 14));
    // Clicks, paste and other keys neither leave nor close the question.
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 45,
        row: 3,
        modifiers: KeyModifiers::NONE,
    });
    app.on_paste("hello");
    app.on_key(key(KeyCode::Char('x')));
    app.on_key(key(KeyCode::Char('y')));
    assert_eq!(
        (app.overlay, app.leave, app.focus),
        (Overlay::Leave, None, 0)
    );
    app.on_key(key(KeyCode::Esc));
    assert_eq!((app.overlay, app.leave), (Overlay::None, None));
    assert!(app.panes[0].composer.is_empty());

    // Running turns are counted; n cancels too.
    let mut app = two();
    app.apply(ev(1, PaneEvent::State(TurnState::Streaming)));
    app.on_key(ctrl_q());
    insta::assert_snapshot!("leave_running", render(&mut app, 60, 14));
    app.on_key(key(KeyCode::Char('n')));
    assert_eq!((app.overlay, app.leave), (Overlay::None, None));
}

#[test]
fn leave_dialog_detaches_or_stops() {
    use hive::app::state::Leave;
    let answers = [
        (key(KeyCode::Char('d')), Leave::Detach),
        (key(KeyCode::Enter), Leave::Detach),
        // A second Ctrl+Q is the quick way out and leaves the agents alive.
        (ctrl_q(), Leave::Detach),
        (key(KeyCode::Char('s')), Leave::Stop),
    ];
    for (answer, want) in answers {
        let mut app = two();
        app.apply(ev(0, PaneEvent::State(TurnState::Streaming)));
        app.on_key(ctrl_q());
        app.on_key(answer);
        assert_eq!(app.leave, Some(want), "{answer:?}");
    }
    // Ctrl+B d detaches at once, as in tmux; Ctrl+B q asks.
    let mut app = two();
    app.on_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL));
    app.on_key(key(KeyCode::Char('d')));
    assert_eq!(app.leave, Some(Leave::Detach));
    let mut app = two();
    app.on_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL));
    app.on_key(key(KeyCode::Char('q')));
    assert_eq!((app.overlay, app.leave), (Overlay::Leave, None));
}

#[test]
fn dead_failed_and_empty_panes() {
    let mut app = app_from(&config_with(3));
    app.apply(ev(0, PaneEvent::State(TurnState::Dead)));
    app.panes[1].conversation.failed =
        Some("unknown provider `pty`; known providers: script".into());
    insta::assert_snapshot!(render(&mut app, 120, 16));
    app.on_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL));
    assert!(matches!(
        app.outbox.runner_commands()[0].1,
        RunnerCommand::Restart
    ));
}

#[test]
fn status_bar_shows_model_usage_and_session() {
    let mut app = two();
    app.apply(ev(
        0,
        PaneEvent::Session(SessionInfo {
            resume_handle: Some("abc".into()),
            model: Some("claude-x".into()),
            commands: vec!["/review".into(), "/compact".into()],
        }),
    ));
    conversation(&mut app);
    app.apply(ev(0, PaneEvent::Queue(vec!["later".into()])));
    typ(&mut app, "/re");
    let out = render(&mut app, 120, 14);
    let status = out.lines().last().unwrap_or_default().to_owned();
    assert!(
        status.contains("1 queued") && status.contains("↑1.2k") && status.contains("$0.01"),
        "{status}"
    );
    insta::assert_snapshot!(out);
    // "/re" is hive's /resume or the agent's /review: Tab cycles; one
    // more letter leaves one, which Tab inserts whole.
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.panes[0].composer.text(), "/resume");
    app.panes[0].composer.set("");
    typ(&mut app, "/rev");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.panes[0].composer.text(), "/review ");
}

#[test]
fn scrolling_up_and_back() {
    let mut app = two();
    app.zoom = true;
    for i in 0..40 {
        app.apply(ev(
            0,
            message(
                &format!("m{i}"),
                Origin::Agent,
                &format!("message number {i}"),
                UpsertStatus::Complete,
            ),
        ));
    }
    render(&mut app, 60, 16);
    app.on_key(key(KeyCode::PageUp));
    let up = render(&mut app, 60, 16);
    assert!(app.panes[0].scroll > 0);
    insta::assert_snapshot!(up);
    app.on_key(key(KeyCode::Home));
    render(&mut app, 60, 16);
    let top = app.panes[0].scroll;
    assert_eq!(top, app.geometry.panes[0].max_scroll);
    app.on_key(key(KeyCode::End));
    assert_eq!(app.panes[0].scroll, 0);
}

#[test]
fn light_theme_renders() {
    let mut config = Config::parse(TWO, ConfigSource::Builtin).unwrap();
    config.theme = "light".into();
    let mut app = app_from(&config);
    assert_eq!(app.theme.name, "light");
    conversation(&mut app);
    let out = render(&mut app, 100, 30);
    assert!(out.contains("Repository tour"));
}

/// Issue 12 item 13: a multi-line error ("exited with status 1", then the
/// agent's stderr) keeps its lines apart on a tool call and on a message.
#[test]
fn multi_line_errors_keep_their_lines_apart() {
    let mut app = two();
    app.zoom = true;
    let PaneEvent::Upsert(mut failed) =
        tool("c1", "Read", json!({"file_path": "a.rs"}), None, true)
    else {
        unreachable!("tool() makes an upsert")
    };
    failed.status = UpsertStatus::Error;
    failed.error_code = Some("agent_exited".into());
    failed.error_message = Some("exited with status 1\nfatal: toolboom".into());
    app.apply(ev(0, PaneEvent::Upsert(failed.clone())));
    failed.item_id = "m1".into();
    failed.error_message = Some("exited with status 1\nfatal: msgboom".into());
    failed.kind = UpsertKind::Message {
        content: "Partial".into(),
        origin: Origin::Agent,
    };
    app.apply(ev(0, PaneEvent::Upsert(failed)));
    let screen = render(&mut app, 70, 26);
    assert!(!screen.contains("status 1fatal"), "{screen}");
    let rows: Vec<&str> = screen.lines().collect();
    for boom in ["fatal: toolboom", "fatal: msgboom"] {
        let at = rows.iter().position(|r| r.contains(boom)).expect(boom);
        assert!(rows[at - 1].contains("exited with status 1"), "{screen}");
    }
}

/// Issue 12 item 11: a failed history write shows in the pane and in the
/// status bar.
#[test]
fn history_not_saved_shows_in_the_pane_and_the_status_bar() {
    let mut app = two();
    app.apply(ev(
        0,
        PaneEvent::HistoryNotSaved("No space left on device (os error 28)".into()),
    ));
    let screen = render(&mut app, 120, 30);
    let rows: Vec<&str> = screen.lines().collect();
    let status = rows
        .iter()
        .rev()
        .find(|r| !r.trim_matches([' ', '"']).is_empty())
        .unwrap();
    assert!(
        status.contains("history not saved: No space left"),
        "{screen}"
    );
    assert!(
        rows[..rows.len() - 1]
            .iter()
            .any(|r| r.contains("history not saved: No space left")),
        "{screen}"
    );
}

/// Issue 12 item 7: a stalled turn says for how long and which keys help.
#[test]
fn a_stalled_turn_says_so_with_the_keys() {
    let mut app = two();
    app.zoom = true;
    app.apply(ev(0, started()));
    app.apply(ev(0, PaneEvent::State(TurnState::Streaming)));
    let since = app.now;
    app.apply(ev(0, PaneEvent::Stalled(Some(since))));
    app.now = since + Duration::from_secs(75);
    let screen = render(&mut app, 120, 30);
    assert!(
        screen.contains("no output for 75 s · Esc interrupts · Ctrl+R restarts"),
        "{screen}"
    );
    app.apply(ev(0, PaneEvent::Stalled(None)));
    let screen = render(&mut app, 120, 30);
    assert!(!screen.contains("no output for"), "{screen}");
}

#[test]
fn a_running_tool_shows_the_tail_of_its_output() {
    let mut app = two();
    app.zoom = true;
    app.apply(ev(0, started()));
    app.apply(ev(0, PaneEvent::State(TurnState::Streaming)));
    let output: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    let args = json!({"command": "cargo build"});
    app.apply(ev(
        0,
        upsert(
            "c1",
            UpsertStatus::Update,
            UpsertKind::ToolCall {
                tool_name: "Bash".into(),
                display: Some(Box::new(describe(&args, &COMMON))),
                arguments: args,
                call_id: "call-c1".into(),
                output: Some(output),
                output_is_error: None,
            },
        ),
    ));
    let screen = render(&mut app, 60, 16);
    // The last lines, as a terminal shows a running command, under a count.
    assert!(screen.contains("… 6 more lines"), "{screen}");
    assert!(
        screen.contains("line 10") && !screen.contains("line 1 "),
        "{screen}"
    );
    insta::assert_snapshot!("running_tool_tail", screen);
}

/// #46 item 14: at 80x24 with four panes an approval card with a long
/// description still shows the keys that answer it.
#[test]
fn a_cramped_approval_card_keeps_its_keys() {
    let mut app = app_from(&config_with(4));
    let input = json!({"command": "cargo test --workspace --all-features"});
    app.apply(ev(
        0,
        PaneEvent::Permission(PermissionRequest {
            request_id: "p1".into(),
            tool_name: "Bash".into(),
            input: input.clone(),
            display: Some(describe(&input, &COMMON)),
            description: Some("cargo\ntest\n--workspace\n--all-features\n--no-fail-fast".into()),
            options: vec![],
            ..Default::default()
        }),
    ));
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("allow once"), "{screen}");
    assert!(screen.contains("approval needed"), "{screen}");
    assert!(screen.contains("Bash"), "{screen}");
}
