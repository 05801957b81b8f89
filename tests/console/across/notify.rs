//! Typed notifications: `/mute` silences a pane (a marker in its title) or
//! a type in every pane, while the inbox still lists what happened; OSC 777
//! and `[ui] notify_command` carry the type's fields, the command at most
//! `notify_per_minute` times a minute with what it held back counted.

use std::time::Duration;

use crossterm::event::KeyCode;

use super::console::*;

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

#[test]
fn the_notify_command_gets_the_fields_and_is_rate_limited() {
    let config = "[ui]\nnotify_command = [\"notify\", \"{title}\", \"{body}\", \"{type}\", \"{pane}\"]\nnotify_per_minute = 2\n";
    let mut c = console(4, config);
    c.send(1, started("t1"));
    c.send(1, permission("r1", "ls"));
    c.send(2, started("t1"));
    c.send(2, failed("t1"));
    // Over the limit, and of a type it does not run for (idle, bell…).
    c.send(3, started("t1"));
    c.send(3, completed("t1"));
    let argv = |c: &Console| -> Vec<Vec<String>> {
        c.app
            .outbox
            .notify_commands()
            .iter()
            .map(|a| a.to_vec())
            .collect()
    };
    assert_eq!(
        argv(&c),
        [
            [
                "notify",
                "hive: Agent 2",
                "asks to run Bash: ls",
                "permission",
                "a1"
            ],
            [
                "notify",
                "hive: Agent 3",
                "turn failed (rate_limit)",
                "failed",
                "a2"
            ],
        ]
    );
    c.app.now += Duration::from_secs(60);
    c.send(3, started("t2"));
    c.send(3, failed("t2"));
    assert_eq!(
        argv(&c)[2],
        [
            "notify",
            "hive: Agent 4",
            "turn failed (rate_limit) (+1 more held back)",
            "failed",
            "a3"
        ]
    );
}
