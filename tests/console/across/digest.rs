//! "Since you looked": the unread tally of unfocused panes, the title's
//! marker and the digest line shown on focus.

use std::time::Duration;

use crossterm::event::KeyCode;
use serde_json::json;

use super::console::*;
use hive::event::Origin;
use hive::provider::DiagnosticLevel;
use hive::provider::display::{COMMON, describe};
use hive::runner::PaneEvent;
use hive::upsert::{UpsertKind, UpsertStatus};

/// A tool call `item` of `tool` with `args`, finished (or still running).
fn tool(turn: &str, item: &str, name: &str, args: serde_json::Value, done: bool) -> PaneEvent {
    let mut ev = upsert(
        turn,
        item,
        UpsertKind::ToolCall {
            tool_name: name.into(),
            arguments: args.clone(),
            call_id: format!("call-{item}"),
            output: done.then(|| "ok".to_owned()),
            output_is_error: done.then_some(false),
            display: Some(Box::new(describe(&args, &COMMON))),
        },
    );
    if let PaneEvent::Upsert(u) = &mut ev
        && !done
    {
        u.status = UpsertStatus::Create;
    }
    ev
}

/// Pane 2 works while pane 1 is focused: a tool that takes 2 s, an edit,
/// an answer, a finished turn.
fn busy_elsewhere() -> Console {
    let mut c = console(2, "");
    c.send(1, started("t1"));
    c.send(1, message("t1", "u1", Origin::User, "fix the bug"));
    c.send(
        1,
        tool("t1", "c1", "Bash", json!({"command": "cargo test"}), false),
    );
    c.app.now += Duration::from_secs(2);
    c.send(
        1,
        tool("t1", "c1", "Bash", json!({"command": "cargo test"}), true),
    );
    let edit = json!({"file_path": "src/lib.rs", "old_string": "a", "new_string": "b"});
    c.send(1, tool("t1", "c2", "Edit", edit, true));
    c.send(
        1,
        message("t1", "m1", Origin::Agent, "Fixed: the test passes."),
    );
    c.send(1, completed("t1"));
    c
}

#[test]
fn what_counts_as_unread() {
    let mut c = busy_elsewhere();
    let u = &c.app.panes[1].attention.unread;
    // Two tool calls and the answer; not the user's own message.
    assert_eq!(u.count, 3);
    assert_eq!(u.first, Some(1), "the first tool call, after the prompt");
    assert_eq!(u.turns, 1);
    let tools: Vec<_> = u.tools.iter().map(|t| (t.name.as_str(), t.took)).collect();
    assert_eq!(
        tools,
        [("Bash", Some(Duration::from_secs(2))), ("Edit", None)]
    );
    assert_eq!(u.files.iter().collect::<Vec<_>>(), ["src/lib.rs"]);
    assert_eq!(u.stop.as_deref(), Some("completed"));
    // An item counted once, however often it changes; hive's own lines and
    // the user's messages never; an error notice and a failed turn do.
    c.send(1, message("t1", "m1", Origin::Agent, "Fixed: all green."));
    c.send(1, message("t2", "u2", Origin::User, "and again"));
    c.send(1, message("t2", "s2", Origin::System, "resumed"));
    assert_eq!(c.app.panes[1].attention.unread.count, 3);
    c.send(
        1,
        PaneEvent::Notice {
            level: DiagnosticLevel::Error,
            text: "agent stderr: boom".into(),
        },
    );
    c.send(1, started("t2"));
    c.send(1, failed("t2"));
    let u = &c.app.panes[1].attention.unread;
    assert_eq!((u.count, u.errors), (5, 2));
    assert_eq!(u.stop.as_deref(), Some("rate_limit"));
    // The focused pane never collects any.
    c.turn(0, 1, "hi", "ok", "done");
    assert_eq!(c.app.panes[0].attention.unread.count, 0);
    assert!(c.app.panes[0].attention.digest.is_none());
}

#[test]
fn the_title_shows_the_unread_count() {
    let mut c = busy_elsewhere();
    let screen = c.render(100, 14);
    assert!(screen.contains("● 3 Agent 2"), "{screen}");
    insta::assert_snapshot!("unread_marker", screen);
}

#[test]
fn focus_shows_the_digest_and_its_key_jumps_to_the_first_unread() {
    let mut c = busy_elsewhere();
    c.alt('2');
    let p = &c.app.panes[1];
    assert_eq!(p.attention.unread.count, 0, "looked at: the marker goes");
    assert!(p.attention.digest.is_some());
    assert!(!c.render(120, 16).contains("● 3"));
    c.alt('z');
    let screen = c.render(160, 16);
    assert!(
        screen.contains("since you looked: 1 turn finished · 2 tools (Bash 2.0s, Edit) · 1 file changed · stop: completed  Alt+U first unread"),
        "{screen}"
    );
    insta::assert_snapshot!("digest_line", screen);
    // A narrow pane keeps the tally and the key, not the words around them.
    c.alt('z');
    insta::assert_snapshot!("digest_line_narrow", c.render(120, 16));
    c.alt('u');
    let p = &c.app.panes[1];
    assert!(p.attention.digest.is_none(), "the jump closes the digest");
    assert_eq!(p.reveal, Some(1), "scrolls to the first unread item");
}

#[test]
fn esc_dismisses_the_digest_without_interrupting() {
    let mut c = busy_elsewhere();
    c.send(1, PaneEvent::State(hive::runner::TurnState::Streaming));
    c.alt('2');
    assert!(c.app.panes[1].attention.digest.is_some());
    c.key(KeyCode::Esc);
    assert!(c.app.panes[1].attention.digest.is_none());
    assert!(
        c.app.outbox.runner_commands().is_empty(),
        "{:?}",
        c.app.outbox
    );
    // Leaving the pane and coming back with nothing new: no digest.
    c.alt('1');
    c.alt('2');
    assert!(c.app.panes[1].attention.digest.is_none());
}
