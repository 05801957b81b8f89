//! Typed notifications: `/mute` silences a pane (a marker in its title) or
//! a type in every pane, while the inbox still lists what happened; OSC 777
//! and `[ui] notify_command` carry the type's fields, the command at most
//! `notify_per_minute` times a minute with what it held back counted.

use std::time::Duration;

use crossterm::event::KeyCode;

use super::console::*;
use hive::app::command::AppCommand;
use hive::app::inbox::InboxEvent;
use hive::notify::{Mute, Mutes};

fn command(c: &mut Console, text: &str) {
    c.typ(text);
    c.key(KeyCode::Enter);
}

#[test]
fn a_muted_pane_raises_no_bell_and_shows_it_in_its_title() {
    let mut c = console(2, "[ui]\nbell = true\nosc777 = [\"finished\"]\n");
    c.app.set_focus(1);
    command(&mut c, "/mute");
    assert!(c.app.panes[1].attention.muted);
    c.app.set_focus(0);
    assert!(c.render(80, 24).contains("⊘ Agent 2"));

    c.send(1, started("t1"));
    c.send(1, completed("t1"));
    assert!(c.app.outbox.terminal_writes().is_empty(), "muted: no bell");
    assert_eq!(c.app.inbox.len(), 1, "the inbox still lists it");

    c.app.set_focus(1);
    command(&mut c, "/mute");
    c.app.set_focus(0);
    assert!(!c.render(80, 24).contains('⊘'));
    c.send(1, started("t2"));
    c.send(1, completed("t2"));
    assert_eq!(
        c.app.outbox.terminal_writes(),
        ["\x07", "\x1b]777;notify;hive: Agent 2;turn finished\x07"]
    );
}

#[test]
fn a_muted_type_is_silent_in_every_pane_and_others_still_ring() {
    let mut c = console(3, "[ui]\nbell = true\n");
    command(&mut c, "/mute finished");
    c.send(1, started("t1"));
    c.send(1, completed("t1"));
    c.send(2, started("t1"));
    c.send(2, completed("t1"));
    assert!(c.app.outbox.terminal_writes().is_empty());
    c.send(2, started("t2"));
    c.send(2, permission("r1", "ls"));
    assert_eq!(c.app.outbox.terminal_writes(), ["\x07"]);
    command(&mut c, "/mute nonsense");
    let status = c.app.status.clone().unwrap().0;
    assert!(status.contains("types: permission"), "{status}");
}

/// The server runs `notify_command` for what it sees (approvals, turns,
/// exits: src/server/notifier.rs), once, attached consoles or not; a
/// console runs it only for what it found itself (a feature's post, an
/// idle terminal), with the fields and the rate as before.
#[test]
fn the_console_runs_the_notify_command_only_for_its_own_findings() {
    let config = "[ui]\nnotify_command = [\"notify\", \"{title}\", \"{body}\", \"{type}\", \"{pane}\"]\nnotify_on = true\nnotify_per_minute = 1\n";
    let mut c = console(3, config);
    c.send(1, started("t1"));
    c.send(1, permission("r1", "ls"));
    c.send(2, started("t1"));
    c.send(2, failed("t1"));
    assert!(
        c.app.outbox.notify_commands().is_empty(),
        "the server tells these"
    );
    let post = |pane, text: &str| InboxEvent::Post {
        pane,
        kind: "overlap".into(),
        text: text.into(),
    };
    c.app.inbox_event(post(1, "edits src/lib.rs as web does"));
    c.app.inbox_event(post(2, "edits src/main.rs as api does"));
    c.app.now += Duration::from_secs(60);
    c.app.inbox_event(post(1, "edits README.md as web does"));
    let argv: Vec<Vec<String>> = c
        .app
        .outbox
        .notify_commands()
        .iter()
        .map(|a| a.to_vec())
        .collect();
    assert_eq!(
        argv,
        [
            [
                "notify",
                "hive: Agent 2",
                "edits src/lib.rs as web does",
                "posted",
                "a1"
            ],
            [
                "notify",
                "hive: Agent 2",
                "edits README.md as web does (+1 more held back)",
                "posted",
                "a1"
            ],
        ]
    );
}

/// `/mute` goes to the server, which keeps it; the server's word (after a
/// snapshot, or another console's `/mute`) is what the console shows.
#[test]
fn mutes_go_to_the_server_and_come_back_from_it() {
    let mut c = console(2, "");
    c.app.set_focus(1);
    command(&mut c, "/mute");
    command(&mut c, "/mute finished");
    let sent: Vec<Mute> = c
        .app
        .outbox
        .drain_where(|cmd| matches!(cmd, AppCommand::Mute(_)))
        .into_iter()
        .filter_map(|cmd| match cmd {
            AppCommand::Mute(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(
        sent,
        [
            Mute::Pane {
                id: "a1".into(),
                on: true
            },
            Mute::Kind {
                kind: hive::config::ReasonKind::Finished,
                on: true
            }
        ]
    );
    let mut mutes = Mutes::default();
    mutes.apply(&Mute::Pane {
        id: "a0".into(),
        on: true,
    });
    c.app.set_mutes(&mutes, None);
    assert!(c.app.panes[0].attention.muted);
    assert!(!c.app.panes[1].attention.muted, "the server's word wins");
    assert!(c.app.inbox.muted_kinds.is_empty());
    assert!(c.render(80, 24).contains("⊘ Agent 1"));
}
