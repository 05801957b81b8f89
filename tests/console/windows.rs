//! Panes at runtime and windows as a console shows them (issue 32 points 1
//! and 2): thirty panes laid out by the server's own rule (nine to a
//! window) with a tab bar whose markers show what waits out of view;
//! `Ctrl+B n/p` and `Alt+N` move inside and between windows; the new pane
//! picker and the close question, each at 80x24 and 160x48; and what the
//! console asks the server for (`AppCommand::Edit`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use serde_json::json;

use hive::app::command::AppCommand;
use hive::config::{Config, ConfigSource};
use hive::provider::{Capabilities, PermissionRequest};
use hive::runner::{PaneEvent, TurnState};
use hive::server::layout::SavedLayout;
use hive::upsert::{TurnEvent, TurnStatus};
use hive::wire::edit::{NewPane, PaneEdit};

use crate::support::console::{Console, pane_event};

fn config(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "[[agent]]\nid = \"a{i}\"\nname = \"Agent {}\"\nprovider = \"script\"\n\n",
                i + 1
            )
        })
        .collect()
}

/// A console of `n` panes, in the windows a server would give them.
fn console(n: usize) -> Console {
    let text = config(n);
    let mut c = Console::from_config(&text, Capabilities::default());
    let parsed = Config::parse(&text, ConfigSource::Builtin).unwrap();
    for (p, placed) in c
        .app
        .panes
        .iter_mut()
        .zip(SavedLayout::default().arrange(&parsed.agents))
    {
        p.window = placed.window;
    }
    c
}

fn on(c: &mut Console, pane: usize, event: PaneEvent) {
    let mut u = pane_event(event);
    u.pane = pane;
    c.app.apply(u);
}

fn prefix(c: &mut Console, key: char) {
    c.app
        .on_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL));
    c.app
        .on_key(KeyEvent::new(KeyCode::Char(key), KeyModifiers::NONE));
}

fn edits(c: &mut Console) -> Vec<PaneEdit> {
    c.app
        .outbox
        .drain_where(|c| matches!(c, AppCommand::Edit(_)))
        .into_iter()
        .filter_map(|c| match c {
            AppCommand::Edit(e) => Some(e),
            _ => None,
        })
        .collect()
}

/// Pane 13 (window 2) finished a turn out of view; pane 22 (window 3)
/// waits for an approval.
fn with_news(c: &mut Console) {
    on(c, 13, PaneEvent::State(TurnState::Streaming));
    on(
        c,
        13,
        PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: "t1".into(),
            session_id: "s".into(),
            status: TurnStatus::Completed,
            usage: None,
            finish_reason: None,
        }),
    );
    on(c, 13, PaneEvent::State(TurnState::Idle));
    on(c, 22, PaneEvent::State(TurnState::Streaming));
    on(
        c,
        22,
        PaneEvent::Permission(PermissionRequest {
            request_id: "p1".into(),
            tool_name: "Bash".into(),
            input: json!({"command": "make"}),
            display: None,
            description: None,
            options: vec![],
            ..Default::default()
        }),
    );
}

#[test]
fn thirty_panes_in_windows_with_markers() {
    let mut c = console(30);
    assert_eq!(c.app.windows(), [1, 2, 3, 4]);
    with_news(&mut c);
    let small = c.render(80, 24);
    assert!(
        small.contains(" 2 Agent 10, Ag… ●   3 Agent 19, Ag… !   4 Agent 28"),
        "{small}"
    );
    assert_snapshot!("thirty_panes_80x24", small);
    assert_snapshot!("thirty_panes_160x48", c.render(160, 48));

    // Ctrl+B n: window 2; its first pane has the focus; its marker goes
    // once the pane with news is looked at.
    prefix(&mut c, 'n');
    assert_eq!(c.app.focus, 9);
    assert_eq!(c.app.window(), 2);
    c.app
        .on_key(KeyEvent::new(KeyCode::Char('5'), KeyModifiers::ALT));
    assert_eq!(c.app.focus, 13, "Alt+5 is the fifth pane of the window");
    assert_snapshot!("window_two_80x24", c.render(80, 24));
    // Back and forth comes back to the pane last focused there.
    prefix(&mut c, 'p');
    assert_eq!(c.app.focus, 0);
    prefix(&mut c, 'n');
    assert_eq!(c.app.focus, 13);
    // Arrows stay inside the window: from its last pane to its first.
    c.app.focus = 17;
    prefix(&mut c, 'l');
    assert_eq!(c.app.focus, 9);
    // Ctrl+B p from window 1 wraps to the last window.
    c.app.set_focus(0);
    prefix(&mut c, 'p');
    assert_eq!(c.app.window(), 4);
}

#[test]
fn one_window_has_no_tab_bar() {
    let mut c = console(3);
    let screen = c.render(80, 24);
    assert!(
        screen.lines().next().unwrap().contains("Agent 1"),
        "{screen}"
    );
    prefix(&mut c, 'n');
    assert!(c.app.status.as_ref().unwrap().0.contains("one window"));
}

#[test]
fn the_new_pane_picker_then_the_command_to_adjust() {
    let mut c = console(2);
    prefix(&mut c, 'c');
    assert_snapshot!("new_pane_picker_80x24", c.render(80, 24));
    assert_snapshot!("new_pane_picker_160x48", c.render(160, 48));
    // The second entry: the config's second agent.
    c.key(KeyCode::Down);
    c.key(KeyCode::Enter);
    assert_eq!(c.app.panes[0].composer.text(), "/new a1 a1-2 ");
    c.typ("--model m2 --worktree");
    c.key(KeyCode::Enter);
    assert_eq!(
        edits(&mut c),
        [PaneEdit::New(NewPane {
            id: "a1-2".into(),
            template: Some("a1".into()),
            model: Some("m2".into()),
            worktree: true,
            window: Some(1),
            ..NewPane::default()
        })]
    );
    // A provider, an id of the user's, and a mistake said in the pane.
    c.typ("/new pty shell2 --name 'A shell'");
    c.key(KeyCode::Enter);
    let made = edits(&mut c);
    let [PaneEdit::New(new)] = made.as_slice() else {
        panic!("one new pane: {made:?}")
    };
    assert_eq!(new.provider.as_deref(), Some("pty"));
    assert_eq!(new.name.as_deref(), Some("A shell"));
    // Issue 52: a workspace over repositories, each `--repo` absolute.
    c.typ("/new pty ws --repo /src/api --repo /src/web");
    c.key(KeyCode::Enter);
    let made = edits(&mut c);
    let [PaneEdit::New(new)] = made.as_slice() else {
        panic!("one new pane: {made:?}")
    };
    let repos: Vec<&str> = new.repos.iter().map(|r| r.to_str().unwrap()).collect();
    assert_eq!(repos, ["/src/api", "/src/web"]);
    // Issue 49: on a `[[host]]` of the server's.
    c.typ("/new pty boxed --host ctr");
    c.key(KeyCode::Enter);
    let made = edits(&mut c);
    let [PaneEdit::New(new)] = made.as_slice() else {
        panic!("one new pane: {made:?}")
    };
    assert_eq!(new.host.as_deref(), Some("ctr"));
    c.typ("/new pty --bogus");
    c.key(KeyCode::Enter);
    assert!(edits(&mut c).is_empty());
    assert!(
        c.transcript().contains("no option --bogus"),
        "{}",
        c.transcript()
    );
}

#[test]
fn closing_a_busy_pane_asks_first() {
    let mut c = console(2);
    // Idle: closes at once.
    prefix(&mut c, 'x');
    assert_eq!(
        edits(&mut c),
        [PaneEdit::Close {
            pane: "a0".into(),
            team: false,
            discard: false
        }]
    );
    on(&mut c, 0, PaneEvent::State(TurnState::Streaming));
    prefix(&mut c, 'x');
    assert!(edits(&mut c).is_empty());
    assert_snapshot!("close_busy_pane_80x24", c.render(80, 24));
    assert_snapshot!("close_busy_pane_160x48", c.render(160, 48));
    c.key(KeyCode::Char('n'));
    assert!(edits(&mut c).is_empty(), "n keeps it");
    prefix(&mut c, 'x');
    c.key(KeyCode::Char('y'));
    assert_eq!(
        edits(&mut c),
        [PaneEdit::Close {
            pane: "a0".into(),
            team: false,
            discard: false
        }]
    );
}

#[test]
fn rename_move_and_window_ask_the_server() {
    let mut c = console(3);
    c.typ("/rename Lead reviewer");
    c.key(KeyCode::Enter);
    c.typ("/move 3");
    c.key(KeyCode::Enter);
    c.typ("/window new");
    c.key(KeyCode::Enter);
    c.typ("/window 7");
    c.key(KeyCode::Enter);
    assert_eq!(
        edits(&mut c),
        [
            PaneEdit::Rename {
                pane: "a0".into(),
                name: "Lead reviewer".into()
            },
            PaneEdit::Move {
                pane: "a0".into(),
                to: 2
            },
            PaneEdit::Window {
                pane: "a0".into(),
                window: 2
            },
        ]
    );
    assert!(c.transcript().contains("/window N: 1 to 1, or new"));
}

/// Issue 50: `/move @HOST` asks the pane's server to move the live pane
/// to that host; a bare `@` is refused in the pane.
#[test]
fn move_to_a_host_asks_the_server() {
    let mut c = console(2);
    c.typ("/move @box");
    c.key(KeyCode::Enter);
    c.typ("/move @");
    c.key(KeyCode::Enter);
    assert_eq!(
        edits(&mut c),
        [PaneEdit::Relocate(hive::protocol::carry::Relocate::Go {
            pane: "a0".into(),
            host: "box".into()
        })]
    );
    assert!(
        c.transcript()
            .contains("/move @HOST: a [[host]] of the config")
    );
}

fn finished(c: &mut Console, pane: usize, cost: f64) {
    on(c, pane, PaneEvent::State(TurnState::Streaming));
    on(
        c,
        pane,
        PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: format!("t{pane}"),
            session_id: "s".into(),
            status: TurnStatus::Completed,
            usage: Some(hive::event::Usage {
                input_tokens: 1000 * pane as u64,
                output_tokens: 100,
                cost_usd: Some(cost),
                ..Default::default()
            }),
            finish_reason: None,
        }),
    );
    on(c, pane, PaneEvent::State(TurnState::Idle));
}

/// Issue 32 point 3: helpers sit under the agent that spawned them, and
/// a lead's row rolls up its team's usage; a helper's finished turn is a
/// "spawned" entry of the inbox.
#[test]
fn the_overview_shows_teams_as_a_tree() {
    let mut c = console(5);
    c.app.panes[2].parent = Some("a0".into());
    c.app.panes[4].parent = Some("a2".into());
    c.app.panes[3].parent = Some("a0".into());
    finished(&mut c, 0, 0.10);
    finished(&mut c, 2, 0.25);
    finished(&mut c, 4, 0.05);
    let helper = c
        .app
        .inbox
        .entries
        .iter()
        .find(|e| e.pane == 2)
        .expect("the helper's turn in the inbox");
    assert_eq!(helper.reason.describe(), "helper of a0: turn finished");
    assert_eq!(helper.reason.kind(), hive::config::ReasonKind::Spawned);
    prefix(&mut c, 'o');
    let wide = c.render(160, 48);
    assert!(wide.contains("team of 4"), "{wide}");
    assert_snapshot!("team_overview_160x48", wide);
    // #46 item 22: at 80 columns the table ran past the edge (`cpu / mem`
    // cut, `doing` never seen); columns that do not fit give way whole.
    let narrow = c.render(80, 24);
    assert!(
        narrow.contains("doing") && narrow.contains("team of 4"),
        "{narrow}"
    );
    assert_snapshot!("team_overview_80x24", narrow);
}

/// #46 item 16: a window out of view whose pane runs a turn says `…` in
/// its tab, the turn's streamed text or not.
#[test]
fn a_running_window_shows_its_ellipsis() {
    let mut c = console(12);
    on(&mut c, 10, PaneEvent::State(TurnState::Streaming));
    let text = hive::upsert::UpsertKind::Message {
        content: "Reading the tests first.".into(),
        origin: hive::event::Origin::Agent,
    };
    on(
        &mut c,
        10,
        PaneEvent::Upsert(crate::support::console::upsert(
            "t1",
            "m1",
            hive::upsert::UpsertStatus::Create,
            text,
        )),
    );
    let screen = c.render(80, 24);
    assert!(
        screen.contains(" 2 Agent 10, Agent 11, Age… … "),
        "{screen}"
    );
}
