//! Across panes: the attention inbox (and, as they land, search, overview,
//! digest, fan-out), driven through the app model and drawn with insta
//! snapshots (`tests/console/snapshots/`).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

#[path = "across/attach.rs"]
mod attach;
#[path = "across/console.rs"]
mod console;
#[path = "across/delegation.rs"]
mod delegation;
#[path = "across/digest.rs"]
mod digest;
#[path = "across/fanout.rs"]
mod fanout;
#[path = "across/notify.rs"]
mod notify;
#[path = "across/take.rs"]
mod take;
#[path = "across/usage.rs"]
mod usage;

use std::time::Duration;

use crossterm::event::KeyCode;

use console::*;
use hive::app::inbox::InboxEvent;
use hive::app::state::Overlay;
use hive::provider::PermissionDecision;
use hive::runner::{PaneEvent, RunnerCommand, TurnState};

/// Pane 1 asks to run a command and pane 2's turn fails while pane 0 is
/// focused; pane 3 finishes later.
fn waiting() -> Console {
    let mut c = console(4, "");
    c.send(1, started("t1"));
    c.send(1, permission("r1", "mkdir -p build && touch build/stamp"));
    c.app.now += Duration::from_secs(30);
    c.send(2, started("t1"));
    c.send(2, failed("t1"));
    c.app.now += Duration::from_secs(50);
    c.turn(3, 1, "hi", "ok", "done");
    c.app.now += Duration::from_secs(12);
    c
}

#[test]
fn inbox_lists_everything_waiting_oldest_first() {
    let mut c = waiting();
    let screen = c.render(120, 24);
    assert!(screen.contains("3 waiting · Alt+I"), "{screen}");
    c.alt('i');
    assert_eq!(c.app.overlay, Overlay::Inbox);
    insta::assert_snapshot!(c.render(120, 24));
}

#[test]
fn inbox_answers_an_approval_in_place() {
    let mut c = waiting();
    c.prefix('i');
    assert_eq!(c.app.overlay, Overlay::Inbox, "Ctrl+B i opens it too");
    c.key(KeyCode::Char('y'));
    let sent: Vec<_> = c.app.outbox.take_runner_commands().into_iter().collect();
    assert!(
        matches!(&sent[..], [(1, RunnerCommand::Permission { request_id, decision: PermissionDecision::AllowOnce, .. })] if request_id == "r1"),
        "{sent:?}"
    );
    assert!(c.app.panes[1].pending.permissions.is_empty());
    assert_eq!(c.app.inbox.len(), 2);
    assert_eq!(c.app.overlay, Overlay::Inbox);
}

#[test]
fn inbox_denies_with_a_reason() {
    let mut c = waiting();
    c.alt('i');
    c.key(KeyCode::Char('n'));
    c.typ("not now");
    insta::assert_snapshot!("inbox_deny_reason", c.render(120, 12));
    c.key(KeyCode::Enter);
    let sent: Vec<_> = c.app.outbox.take_runner_commands().into_iter().collect();
    assert!(
        matches!(&sent[..], [(1, RunnerCommand::Permission { decision: PermissionDecision::Deny { reason }, .. })] if reason == "not now"),
        "{sent:?}"
    );
}

#[test]
fn inbox_enter_jumps_and_the_entry_goes() {
    let mut c = waiting();
    c.alt('i');
    c.key(KeyCode::Down);
    c.key(KeyCode::Enter);
    assert_eq!(c.app.focus, 2);
    assert_eq!(c.app.overlay, Overlay::None);
    assert!(
        c.app.inbox.entries.iter().all(|e| e.pane != 2),
        "looking at the pane handles its failed turn"
    );
}

#[test]
fn an_approval_answered_in_its_pane_leaves_the_inbox() {
    let mut c = waiting();
    c.app.set_focus(1);
    assert_eq!(c.app.inbox.len(), 3, "approvals stay until answered");
    c.key(KeyCode::Char('y'));
    assert!(c.app.inbox.entries.iter().all(|e| e.pane != 1));
    assert_eq!(c.app.inbox.len(), 2);
}

#[test]
fn a_restarted_agent_leaves_the_inbox() {
    let mut c = console(2, "");
    c.send(1, PaneEvent::State(TurnState::Dead));
    assert_eq!(c.app.inbox.entries[0].reason.describe(), "agent exited");
    c.send(1, PaneEvent::State(TurnState::Idle));
    assert!(c.app.inbox.is_empty());
}

#[test]
fn other_features_post_and_resolve_entries() {
    let mut c = console(2, "");
    let post = InboxEvent::Post {
        pane: 1,
        kind: "overlap".into(),
        text: "edits src/a.rs like Agent 1".into(),
    };
    c.app.inbox_event(post.clone());
    c.app.inbox_event(post);
    assert_eq!(c.app.inbox.len(), 1, "posting twice keeps one entry");
    c.app.set_focus(1);
    assert_eq!(c.app.inbox.len(), 1, "a posted warning outlives a glance");
    c.app.inbox_event(InboxEvent::Resolve {
        pane: 1,
        kind: "overlap".into(),
    });
    assert!(c.app.inbox.is_empty());
}

#[test]
fn notifications_per_reason() {
    let mut c = console(2, "[ui]\nosc9 = [\"permission\"]\nbell = true\n");
    c.send(1, started("t1"));
    c.send(1, completed("t1"));
    assert_eq!(
        c.app.outbox.terminal_writes(),
        ["\x07"],
        "bell for every reason, no OSC 9"
    );
    c.app.outbox.clear_terminal_writes();
    c.send(1, permission("r1", "ls"));
    assert_eq!(c.app.outbox.terminal_writes().len(), 2);
    assert!(
        c.app.outbox.terminal_writes()[1].starts_with("\x1b]9;hive: Agent 2 asks to run Bash: ls")
    );
}

#[test]
fn a_stalled_turn_waits_until_output_resumes() {
    let mut c = console(2, "");
    c.send(1, PaneEvent::State(TurnState::Streaming));
    c.send(1, PaneEvent::Stalled(Some(c.app.now)));
    assert_eq!(
        c.app.inbox.entries[0].reason.describe(),
        "stalled: no progress"
    );
    c.send(1, PaneEvent::Stalled(None));
    assert!(c.app.inbox.is_empty());
}

/// Three panes with a turn each; "walnut" is in pane 2's tool output and
/// pane 3's answer.
fn searchable() -> Console {
    let mut c = console(3, "");
    c.turn(
        0,
        1,
        "give me a tour",
        "total 48\nsrc/app.rs",
        "Here is the tour.",
    );
    c.turn(
        1,
        1,
        "run the tests",
        "test walnut::cracks ... ok\ntest result: ok",
        "All green.",
    );
    c.turn(2, 1, "name a nut", "", "A Walnut, or a pecan.");
    c
}

#[test]
fn search_lists_matches_across_panes_from_the_index() {
    let mut c = searchable();
    c.prefix('/');
    assert_eq!(c.app.overlay, Overlay::Search);
    c.typ("walnut");
    c.search_results();
    let hits: Vec<_> = c
        .app
        .search
        .hits
        .iter()
        .map(|h| (h.pane, h.label.as_str()))
        .collect();
    assert_eq!(hits, [(1, "tool Bash"), (2, "agent")]);
    insta::assert_snapshot!(c.render(120, 30));
    // Incremental: a newer item is found by the next keystroke's query.
    c.turn(0, 2, "more", "", "a walnut shell");
    c.key(KeyCode::Backspace);
    c.typ("t");
    c.search_results();
    assert_eq!(c.app.search.hits.len(), 3);
}

/// Reopened, search shows its last query selected: typing replaces it (it
/// was appended to: "walnutpecan"), other keys keep it (#34 item 11).
#[test]
fn a_reopened_search_replaces_its_old_query_when_typed_over() {
    let mut c = searchable();
    c.prefix('/');
    c.typ("walnut");
    c.search_results();
    c.key(KeyCode::Esc);
    c.prefix('/');
    assert_eq!(c.app.search.query, "walnut", "the last query is back");
    c.search_results();
    assert_eq!(c.app.search.hits.len(), 2, "and its results");
    insta::assert_snapshot!("search_reopened", c.render(80, 16));
    c.typ("pecan");
    assert_eq!(c.app.search.query, "pecan");
    c.search_results();
    assert_eq!(c.app.search.hits.len(), 1);
    // A key that is not typing keeps the old query for editing.
    c.key(KeyCode::Esc);
    c.prefix('/');
    c.key(KeyCode::Down);
    c.typ("s");
    assert_eq!(c.app.search.query, "pecans");
    // Backspace on a selected query clears it.
    c.key(KeyCode::Esc);
    c.prefix('/');
    c.key(KeyCode::Backspace);
    assert_eq!(c.app.search.query, "");
}

#[test]
fn search_enter_jumps_to_the_match_and_n_steps() {
    let mut c = searchable();
    for n in 2..12 {
        c.turn(1, n, "again", "fine", "Still green.");
    }
    c.app.full_view = false;
    c.render(120, 30);
    c.prefix('/');
    c.typ("walnut");
    c.search_results();
    c.key(KeyCode::Enter);
    assert_eq!(c.app.overlay, Overlay::None);
    assert_eq!(c.app.focus, 1, "focus moved to the tool output's pane");
    assert!(c.app.full_view, "tool output is shown to show the match");
    let term = c.draw(120, 30);
    insta::assert_snapshot!("search_jumped", term.backend().to_string());
    // The match is on screen, scrolled to, and marked.
    let buf = term.backend().buffer();
    let marked: String = (0..120u16)
        .flat_map(|x| (0..30u16).map(move |y| (x, y)))
        .filter(|&(x, y)| buf[(x, y)].bg == c.app.theme.attention)
        .map(|(x, y)| buf[(x, y)].symbol().to_owned())
        .collect();
    assert_eq!(marked, "walnut");
    c.key(KeyCode::Char('n'));
    assert_eq!(c.app.focus, 2);
    c.key(KeyCode::Char('N'));
    assert_eq!(c.app.focus, 1);
    c.key(KeyCode::Esc);
    assert!(
        c.app.panes[1].highlight.is_none(),
        "Esc clears the highlight"
    );
    c.key(KeyCode::Char('n'));
    assert_eq!(c.app.panes[1].composer.text(), "n", "n types again");
}

#[test]
fn overview_tables_every_pane_and_enter_focuses() {
    let mut c = console(12, "");
    c.turn(
        0,
        1,
        "give me a tour",
        "total 48",
        "Here is the tour.\nThat was it.",
    );
    c.send(1, PaneEvent::State(TurnState::Streaming));
    c.send(1, started("t1"));
    c.send(1, running_tool("t1", "c1", "cargo build"));
    c.send(1, PaneEvent::Queue(vec!["next".into(), "after".into()]));
    c.send(2, permission("r1", "rm -rf target"));
    c.send(3, PaneEvent::State(TurnState::Dead));
    c.app.now += Duration::from_secs(75);
    c.prefix('o');
    assert_eq!(c.app.overlay, Overlay::Overview);
    insta::assert_snapshot!(c.render(140, 20));
    // Pane 12 is beyond Alt+1…9; the overview reaches it.
    for _ in 0..11 {
        c.key(KeyCode::Down);
    }
    c.key(KeyCode::Enter);
    assert_eq!(c.app.focus, 11);
    assert_eq!(c.app.overlay, Overlay::None);
}

/// Issue 34 item 13: "doing" shows the answer's last line with words in it,
/// not the code fence (or table rule) that closes it.
#[test]
fn overview_doing_skips_a_closing_fence() {
    let mut c = console(2, "");
    c.turn(
        0,
        1,
        "how?",
        "ls",
        "Run this:\n```sh\ncargo test --quiet\n```\n",
    );
    c.turn(
        1,
        1,
        "table?",
        "ls",
        "| a | b |\n|---|---|\n| one | two |\n",
    );
    c.prefix('o');
    let screen = c.render(100, 10);
    assert!(!screen.contains("```"), "{screen}");
    insta::assert_snapshot!(screen);
}

/// Issue 34 item 13: at 80×24 the status bar keeps the waiting count and
/// the F1 hint whole; the usage, the other hints and then the provider
/// give way first.
#[test]
fn status_bar_at_80_keeps_waiting_and_help() {
    let mut c = console(2, "");
    c.turn(0, 1, "how?", "ls", "Done.");
    c.turn(1, 1, "and?", "ls", "Also done.");
    let screen = c.render(80, 24);
    let status = screen.lines().last().unwrap().to_owned();
    assert!(status.contains("● 1 waiting · Alt+I"), "{status}");
    assert!(status.contains("F1 help"), "{status}");
    assert!(status.contains("demo-1 · idle"), "{status}");
    insta::assert_snapshot!(status);
}
