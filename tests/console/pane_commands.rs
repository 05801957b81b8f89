#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic
//! Slash commands in a pane: the completion menu, the `/model` and `/effort`
//! pickers, refusals, and the runner carrying a new model into the next
//! turn (issue 14). Widget states are insta snapshots on ratatui's
//! `TestBackend`, drawn exactly as the console draws them.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use hive::app::state::App;
use hive::config::AgentConfig;
use hive::event::Origin;
use hive::provider::script::ScriptFactory;
use hive::provider::{Capabilities, ProviderSpec, SessionInfo};
use hive::runner::{PaneEvent, RunnerCommand, RunnerOptions, SubmitMode, spawn_runner};
use hive::upsert::{TurnEvent, UpsertKind};

use crate::support;
use support::console::{Console, pane_event as ev};

fn console(caps: Capabilities) -> Console {
    Console::one(caps)
}

fn switchable() -> Console {
    console(Capabilities {
        set_model: true,
        set_effort: true,
        ..Capabilities::default()
    })
}

fn render(c: &mut Console, w: u16, h: u16) -> String {
    c.render(w, h)
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn typ(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

fn agent_commands(app: &mut App) {
    app.apply(ev(PaneEvent::Session(SessionInfo {
        commands: vec!["/review".into(), "/compact".into(), "init".into()],
        ..SessionInfo::default()
    })));
}

/// The notices in the pane's transcript, oldest first.
fn notices(app: &App) -> String {
    format!("{:?}", app.panes[0].conversation.transcript.entries)
}

#[test]
fn slash_opens_one_menu_of_hive_and_agent_commands() {
    let mut c = switchable();
    agent_commands(&mut c.app);
    typ(&mut c.app, "/");
    let out = render(&mut c, 70, 20);
    assert!(out.contains("/model") && out.contains("/help"), "{out}");
    insta::assert_snapshot!("slash_menu", out);
    // The agent's own commands are in the same list.
    typ(&mut c.app, "r");
    let out = render(&mut c, 70, 20);
    assert!(out.contains("/resume") && out.contains("/review"), "{out}");
    insta::assert_snapshot!("slash_menu_narrowed", out);
    c.app.on_key(key(KeyCode::Backspace));
    // Tab walks the list, inserting each command; the menu follows.
    c.app.on_key(key(KeyCode::Tab));
    assert_eq!(c.app.panes[0].composer.text(), "/model");
    c.app.on_key(key(KeyCode::Tab));
    assert_eq!(c.app.panes[0].composer.text(), "/effort");
    insta::assert_snapshot!("slash_menu_second_selected", render(&mut c, 70, 20));
    // Esc closes the menu without interrupting anything; typing reopens it.
    c.app.on_key(key(KeyCode::Esc));
    assert!(c.app.panes[0].composer.menu.is_none());
    assert!(c.app.outbox.runner_commands().is_empty());
    c.app.on_key(key(KeyCode::Backspace));
    assert!(c.app.panes[0].composer.menu.is_some());
}

#[test]
fn tab_with_nothing_to_complete_inserts_nothing() {
    let mut c = switchable();
    typ(&mut c.app, "hello");
    c.app.on_key(key(KeyCode::Tab));
    assert_eq!(c.app.panes[0].composer.text(), "hello");
    c.app.panes[0].composer.set("");
    c.app.on_key(key(KeyCode::Tab));
    assert_eq!(c.app.panes[0].composer.text(), "");
    typ(&mut c.app, "/zz");
    c.app.on_key(key(KeyCode::Tab));
    assert_eq!(c.app.panes[0].composer.text(), "/zz");
}

#[test]
fn model_by_name_goes_to_the_runner_not_the_model() {
    let mut c = switchable();
    typ(&mut c.app, "/model gpt-5.4");
    c.app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(c.app.outbox.runner_commands().as_slice(), [(0, RunnerCommand::SetModel(m))] if m == "gpt-5.4"),
        "{:?}",
        c.app.outbox
    );
    c.app.outbox.clear_runner_commands();
    typ(&mut c.app, "/thinking high");
    c.app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(c.app.outbox.runner_commands().as_slice(), [(0, RunnerCommand::SetEffort(e))] if e == "high"),
        "{:?}",
        c.app.outbox
    );
}

#[test]
fn model_picker_lists_what_the_agent_offers() {
    let mut c = switchable();
    c.app.apply(ev(PaneEvent::Models(vec![
        "demo-1".into(),
        "demo-2".into(),
        "demo-mini".into(),
    ])));
    typ(&mut c.app, "/model");
    c.app.on_key(key(KeyCode::Enter));
    assert!(c.app.outbox.runner_commands().is_empty());
    insta::assert_snapshot!("model_picker", render(&mut c, 70, 16));
    // Typing filters; Enter picks.
    typ(&mut c.app, "mini");
    insta::assert_snapshot!("model_picker_filtered", render(&mut c, 70, 16));
    c.app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(c.app.outbox.runner_commands().as_slice(), [(0, RunnerCommand::SetModel(m))] if m == "demo-mini"),
        "{:?}",
        c.app.outbox
    );
    assert!(c.app.panes[0].composer.picker.is_none());
    // The runner's answer: the title and the status bar show the new model.
    c.app.apply(ev(PaneEvent::Session(SessionInfo {
        model: Some("demo-mini".into()),
        ..SessionInfo::default()
    })));
    let out = render(&mut c, 70, 16);
    let status = out.lines().last().unwrap_or_default();
    assert!(
        out.lines().next().unwrap_or_default().contains("demo-mini"),
        "{out}"
    );
    assert!(status.contains("demo-mini"), "{status}");
}

#[test]
fn effort_picker_and_esc() {
    let mut c = switchable();
    typ(&mut c.app, "/effort");
    c.app.on_key(key(KeyCode::Enter));
    insta::assert_snapshot!("effort_picker", render(&mut c, 60, 14));
    c.app.on_key(key(KeyCode::Esc));
    assert!(c.app.panes[0].composer.picker.is_none());
    assert!(c.app.outbox.runner_commands().is_empty());
    typ(&mut c.app, "/effort");
    c.app.on_key(key(KeyCode::Enter));
    c.app.on_key(key(KeyCode::Down));
    c.app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(c.app.outbox.runner_commands().as_slice(), [(0, RunnerCommand::SetEffort(e))] if e == "low"),
        "{:?}",
        c.app.outbox
    );
}

#[test]
fn commands_the_agent_cannot_take_are_refused_in_the_pane() {
    let mut c = console(Capabilities::default());
    agent_commands(&mut c.app);
    for cmd in ["/model gpt-5.4", "/effort high", "/nosuch thing"] {
        typ(&mut c.app, cmd);
        c.app.on_key(key(KeyCode::Enter));
    }
    assert!(
        c.app.outbox.runner_commands().is_empty(),
        "{:?}",
        c.app.outbox
    );
    let text = notices(&c.app);
    assert!(text.contains("cannot switch models"), "{text}");
    assert!(text.contains("no effort setting"), "{text}");
    assert!(text.contains("/nosuch is not a hive command"), "{text}");
    insta::assert_snapshot!("refusals", render(&mut c, 80, 16));
    // The agent's own commands, and `//` escapes, go to the agent as text.
    for (typed, sent) in [("/review now", "/review now"), ("//nosuch", "/nosuch")] {
        typ(&mut c.app, typed);
        c.app.on_key(key(KeyCode::Enter));
        assert!(
            matches!(c.app.outbox.runner_commands().last(), Some((0, RunnerCommand::Submit { text, .. })) if text == sent),
            "{:?}",
            c.app.outbox
        );
    }
}

/// The runner hands `SetModel` to the provider and the next turn carries
/// the model (the script provider reports it in `response_start` and says
/// it in its answer).
#[tokio::test]
async fn the_next_turn_carries_the_new_model_and_effort() {
    let mut agent = AgentConfig::new("demo", "script");
    agent.script = Some("demo:tour".into());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let spec = ProviderSpec {
        agent,
        resume: None,
    };
    let runner = spawn_runner(
        0,
        Arc::new(ScriptFactory),
        spec,
        RunnerOptions::default(),
        tx,
    )
    .unwrap();
    runner.send(RunnerCommand::SetModel("demo-architect-2".into()));
    runner.send(RunnerCommand::SetEffort("high".into()));
    runner.send(RunnerCommand::Submit {
        text: "which model are you?".into(),
        mode: SubmitMode::Auto,
    });
    let mut started_with = None;
    let mut answer = String::new();
    let mut offered = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while let Ok(Some(u)) = tokio::time::timeout_at(deadline, rx.recv()).await {
        match u.event {
            PaneEvent::Models(list) => offered = list,
            PaneEvent::Turn(TurnEvent::TurnStarted { model_id, .. }) => {
                started_with = Some(model_id)
            }
            PaneEvent::Upsert(u) => {
                if let UpsertKind::Message { content, .. } = u.kind {
                    answer = content.to_string();
                }
            }
            PaneEvent::Turn(t) if t.is_terminal() => break,
            _ => {}
        }
    }
    runner.shutdown().await;
    assert_eq!(started_with.as_deref(), Some("demo-architect-2"));
    assert!(
        answer.contains("demo-architect-2") && answer.contains("high"),
        "{answer}"
    );
    assert!(
        offered.contains(&"demo-architect-mini".to_owned()),
        "{offered:?}"
    );
}

fn item(turn: &str, id: &str, kind: UpsertKind) -> PaneEvent {
    support::console::complete(turn, id, kind)
}

fn msg(turn: &str, id: &str, origin: Origin, text: &str) -> PaneEvent {
    item(
        turn,
        id,
        UpsertKind::Message {
            content: text.into(),
            origin,
        },
    )
}

const ANSWER: &str = "Here is the fix, a long line that the pane has to wrap because it is narrow:\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |";

/// Two turns: a question and an answer with a code block and a table,
/// then a tool call and a short answer.
fn copyable_conversation(app: &mut App) {
    for e in [
        msg("t1", "u1", Origin::User, "fix it"),
        msg("t1", "a1", Origin::Agent, ANSWER),
        msg("t2", "u2", Origin::User, "list files"),
        item(
            "t2",
            "c2",
            UpsertKind::ToolCall {
                tool_name: "Bash".into(),
                arguments: serde_json::json!({"command": "ls"}),
                call_id: "c2".into(),
                output: Some("a.rs\nb.rs".into()),
                output_is_error: Some(false),
                display: None,
            },
        ),
        msg("t2", "a2", Origin::Agent, "Two files."),
    ] {
        app.apply(ev(e));
    }
}

/// The text of the OSC 52 sequence the app will write.
fn copied(app: &App) -> String {
    use base64::Engine;
    let seq = app
        .outbox
        .terminal_writes()
        .into_iter()
        .rev()
        .find(|n| n.starts_with("\x1b]52;c;"))
        .expect("an OSC 52 sequence");
    let b64 = seq
        .trim_start_matches("\x1b]52;c;")
        .split('\x07')
        .next()
        .unwrap_or_default();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    String::from_utf8(bytes).expect("utf-8")
}

#[test]
fn copy_takes_the_source_text_never_the_screen() {
    let mut c = switchable();
    copyable_conversation(&mut c.app);
    render(&mut c, 40, 30);
    typ(&mut c.app, "/copy code");
    c.app.on_key(key(KeyCode::Enter));
    assert_eq!(copied(&c.app), "fn main() {\n    println!(\"hi\");\n}");
    let out = render(&mut c, 90, 12);
    let status = out.lines().last().unwrap_or_default().to_owned();
    assert!(status.contains("copied code block"), "{status}");
    insta::assert_snapshot!("copy_confirmation", out);
    typ(&mut c.app, "/copy message");
    c.app.on_key(key(KeyCode::Enter));
    assert_eq!(copied(&c.app), "Two files.");
    typ(&mut c.app, "/copy tool");
    c.app.on_key(key(KeyCode::Enter));
    assert_eq!(copied(&c.app), "a.rs\nb.rs");
    typ(&mut c.app, "/copy turn");
    c.app.on_key(key(KeyCode::Enter));
    assert_eq!(
        copied(&c.app),
        "> list files\n\nBash {\"command\":\"ls\"}\na.rs\nb.rs\n\nTwo files."
    );
    // Nothing copied from what the pane drew: no borders, no wrap breaks.
    for n in &c.app.outbox.terminal_writes() {
        assert!(!n.contains('│') && !n.contains('┃'));
    }
}

#[test]
fn copy_picker_lists_newest_first() {
    let mut c = switchable();
    copyable_conversation(&mut c.app);
    c.app
        .on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::ALT));
    let out = render(&mut c, 80, 20);
    insta::assert_snapshot!("copy_picker", out);
    // Down to the first turn's code block, Enter copies it.
    typ(&mut c.app, "rust");
    c.app.on_key(key(KeyCode::Enter));
    assert_eq!(copied(&c.app), "fn main() {\n    println!(\"hi\");\n}");
}

#[test]
fn mouse_capture_toggles_for_terminal_selection() {
    let mut c = switchable();
    assert!(c.app.mouse_capture);
    c.app
        .on_key(KeyEvent::new(KeyCode::Char('m'), KeyModifiers::ALT));
    assert!(!c.app.mouse_capture);
    assert!(
        c.app
            .outbox
            .terminal_writes()
            .iter()
            .any(|n| n.contains("\x1b[?1000l"))
    );
    let out = render(&mut c, 100, 8);
    assert!(out.contains("mouse off"), "{out}");
    c.app
        .on_key(KeyEvent::new(KeyCode::Char('m'), KeyModifiers::ALT));
    assert!(c.app.mouse_capture);
    assert!(
        c.app
            .outbox
            .terminal_writes()
            .last()
            .is_some_and(|n| n.contains("\x1b[?1000h"))
    );
}

#[test]
fn at_opens_the_file_finder_and_tab_inserts_the_path() {
    use hive::app::command::AppCommand;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/ui")).unwrap();
    std::fs::write(dir.path().join("src/ui/markdown.rs"), "").unwrap();
    std::fs::write(dir.path().join("README.md"), "").unwrap();
    let mut c = switchable();
    c.app.panes[0].agent.cwd = Some(dir.path().to_owned());
    typ(&mut c.app, "look at @mkdn");
    // The pane's server lists its files (issue 44: one path, here as on a
    // host); the console matches in what comes back.
    let asked = c
        .app
        .outbox
        .drain_where(|c| matches!(c, AppCommand::ListFiles { .. }));
    assert!(
        matches!(asked[..], [AppCommand::ListFiles { pane: 0 }]),
        "{asked:?}"
    );
    c.app
        .on_files(0, vec!["README.md".into(), "src/ui/markdown.rs".into()]);
    wait_for_file_menu(&mut c);
    insta::assert_snapshot!("file_menu", render(&mut c, 60, 12));
    c.app.on_key(key(KeyCode::Tab));
    assert_eq!(
        c.app.panes[0].composer.text(),
        "look at @src/ui/markdown.rs "
    );
    assert!(c.app.panes[0].composer.menu.is_none());
    assert!(c.app.outbox.runner_commands().is_empty());
}

/// The file walk and the match run off this thread: waits (up to 2 s)
/// until the first pane's `@` menu shows matches.
fn wait_for_file_menu(c: &mut Console) {
    for _ in 0..200 {
        c.app.tick_files();
        let ready = c.app.panes[0]
            .composer
            .menu
            .as_ref()
            .is_some_and(|m| !m.visible().is_empty());
        if ready {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Issue 30: a pane on another machine has its files there. `@` asks its
/// server for the list instead of walking this machine's directory (which
/// here holds a file the host does not), and matches in what comes back.
#[test]
fn at_in_a_remote_pane_matches_the_files_its_server_lists() {
    use hive::app::command::AppCommand;
    let here = tempfile::tempdir().unwrap();
    std::fs::write(here.path().join("local_secret.rs"), "").unwrap();
    let mut c = switchable();
    c.app.panes[0].agent.cwd = Some(here.path().to_owned());
    c.app.panes[0].host = Some("box".into());
    typ(&mut c.app, "see @mai");
    let asked = c
        .app
        .outbox
        .drain_where(|c| matches!(c, AppCommand::ListFiles { .. }));
    assert!(
        matches!(asked[..], [AppCommand::ListFiles { pane: 0 }]),
        "{asked:?}"
    );
    let menu = |c: &Console| {
        c.app.panes[0]
            .composer
            .menu
            .as_ref()
            .map(|m| m.note.clone())
            .unwrap_or_default()
    };
    assert!(menu(&c).starts_with("listing files"), "{}", menu(&c));
    c.app.on_files(
        0,
        vec![
            "README.md".into(),
            "src/main.rs".into(),
            "src/ui/x.rs".into(),
        ],
    );
    wait_for_file_menu(&mut c);
    c.app.on_key(key(KeyCode::Tab));
    assert_eq!(c.app.panes[0].composer.text(), "see @src/main.rs ");
    // Asked once: the list is the pane's from now on.
    typ(&mut c.app, "@READ");
    assert!(
        c.app
            .outbox
            .drain_where(|c| matches!(c, AppCommand::ListFiles { .. }))
            .is_empty()
    );
}
