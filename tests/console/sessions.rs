#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic
//! Sessions in a pane (issue 14 item 5): the `/resume` picker of the agent's
//! past history sessions, switching to one (its transcript shown, its own
//! resume handle handed to the provider), and `/clear` starting a new one
//! while the old stays listed. The console asks the pane's server for the
//! list and the switch (issue 44; the server's side: e2e_tmux
//! `server::resume_goes_through_the_server_and_every_console_sees_it`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use hive::app::command::AppCommand;
use hive::config::AgentConfig;
use hive::history::record::{Block, Meta, Record, Role};
use hive::history::state::{PastResume, resume_key};
use hive::history::{self, OpenOptions, PaneState, Store, sessions};
use hive::provider::script::ScriptFactory;
use hive::provider::{Capabilities, ProviderSpec};
use hive::runner::{PaneEvent, PaneUpdate, RunnerCommand, RunnerOptions, SubmitMode, spawn_runner};
use hive::wire::snapshot::Restored;
use support::console::{Console, pane_event};
use tokio::sync::mpsc;

const OLDEST: &str = "20261120T090000-aaaaaaaa";
const MIDDLE: &str = "20261121T100000-bbbbbbbb";
const CURRENT: &str = "20261122T110000-cccccccc";

/// Fixed times (ms) of each session's first prompt.
const T_OLDEST: i64 = 1_795_165_200_000;
const T_MIDDLE: i64 = 1_795_255_200_000;
const T_CURRENT: i64 = 1_795_345_200_000;

fn record(session: &str, ts: i64, role: Role, text: &str, model: Option<&str>) -> Record {
    let mut r = Record::new("demo", session, ts, role);
    r.turn_id = Some(format!("turn-{ts}"));
    r.content = vec![Block::Text { text: text.into() }];
    r.meta = model.map(|m| Meta {
        model: Some(m.into()),
        provider: Some("script".into()),
        ..Meta::default()
    });
    r
}

/// Writes a session: each (prompt, answer) pair is one turn.
fn write_session(store: &Store, session: &str, start: i64, turns: &[(&str, &str)], model: &str) {
    let mut body = String::new();
    for (n, (prompt, answer)) in turns.iter().enumerate() {
        let ts = start + n as i64 * 60_000;
        body.push_str(&record(session, ts, Role::User, prompt, None).to_line());
        body.push_str(&record(session, ts + 1000, Role::Assistant, answer, Some(model)).to_line());
    }
    let path = store.session_path("demo", session);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, body).unwrap();
}

/// Three sessions on disk, the newest current; hive kept the agent's
/// handles of the two older ones.
fn three_sessions(dir: &Path) -> (Store, AgentConfig) {
    let store = Store::at(dir);
    let mut agent = AgentConfig::new("demo", "script");
    agent.name = Some("Architect".into());
    agent.model = Some("demo-1".into());
    write_session(
        &store,
        OLDEST,
        T_OLDEST,
        &[(
            "fix the login bug\nit fails on empty passwords",
            "Fixed in auth.rs.",
        )],
        "demo-architect-1",
    );
    // Modification times order the list; make them strictly increasing.
    std::thread::sleep(Duration::from_millis(20));
    write_session(
        &store,
        MIDDLE,
        T_MIDDLE,
        &[
            ("write the release notes", "Done."),
            ("shorter please", "Shorter."),
        ],
        "demo-architect-2",
    );
    std::thread::sleep(Duration::from_millis(20));
    write_session(
        &store,
        CURRENT,
        T_CURRENT,
        &[("what is in src/", "A tour.")],
        "demo-1",
    );
    let key = resume_key(&agent);
    let past = |h: &str| PastResume {
        resume: h.into(),
        resume_key: Some(key.clone()),
        ..PastResume::default()
    };
    let mut state = PaneState {
        agent_id: "demo".into(),
        session: CURRENT.into(),
        resume: Some("script_current".into()),
        resume_key: Some(key.clone()),
        provider: Some("script".into()),
        past: [
            (OLDEST.to_owned(), past("script_oldest")),
            (MIDDLE.to_owned(), past("script_middle")),
        ]
        .into_iter()
        .collect(),
        ..PaneState::default()
    };
    state.save(&store.state_path("demo")).unwrap();
    (store, agent)
}

/// The console with the pane restored from `store` (as at start).
fn console(store: &Store, agent: &AgentConfig, caps: Capabilities) -> Console {
    let mut c = Console::one(caps);
    let mut restored = history::open_pane_in(store, agent, &OpenOptions::default());
    restored.recorder = None;
    c.app.restore(0, &mut Restored::of(&restored));
    c
}

fn resumable() -> Capabilities {
    Capabilities {
        resume: true,
        ..Capabilities::default()
    }
}

/// What the console asked its server for: lists and switches.
fn asked(c: &mut Console) -> Vec<AppCommand> {
    c.app.outbox.drain_where(|c| {
        matches!(
            c,
            AppCommand::ListSessions { .. } | AppCommand::Resume { .. }
        )
    })
}

/// `/resume` typed, and the list the server makes of `store` given back.
fn open_picker(c: &mut Console, store: &Store) {
    c.typ("/resume");
    c.key(KeyCode::Enter);
    let sent = asked(c);
    assert!(
        matches!(sent[..], [AppCommand::ListSessions { pane: 0 }]),
        "{sent:?}"
    );
    c.app.on_sessions(0, sessions::list(store, "demo", None));
}

/// The picker shows local times: replaced by the UTC ones the fixtures
/// were written with, so the snapshot holds wherever the test runs.
fn in_utc(screen: &str) -> String {
    let mut out = screen.to_owned();
    for ms in [T_OLDEST, T_MIDDLE, T_CURRENT] {
        let local = chrono::TimeZone::timestamp_millis_opt(&chrono::Local, ms)
            .unwrap()
            .format("%Y-%m-%d %H:%M")
            .to_string();
        let utc = chrono::DateTime::from_timestamp_millis(ms)
            .unwrap()
            .format("%Y-%m-%d %H:%M")
            .to_string();
        out = out.replace(&local, &utc);
    }
    out
}

#[test]
fn summaries_list_sessions_newest_first_with_prompt_turns_and_model() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = three_sessions(dir.path());
    let list = sessions::list(&store, "demo", None);
    let got: Vec<(&str, usize, Option<&str>, i64)> = list
        .iter()
        .map(|s| {
            (
                s.session.as_str(),
                s.turns,
                s.model.as_deref(),
                s.started.unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (CURRENT, 1, Some("demo-1"), T_CURRENT),
            (MIDDLE, 2, Some("demo-architect-2"), T_MIDDLE),
            (OLDEST, 1, Some("demo-architect-1"), T_OLDEST),
        ]
    );
    assert_eq!(
        list[2].first_prompt,
        "fix the login bug\nit fails on empty passwords"
    );
    let items = hive::app::sessions::session_items(
        &list,
        Some(CURRENT),
        chrono::FixedOffset::east_opt(0).unwrap(),
    );
    assert_eq!(items[2].label, "2026-11-20 09:00  fix the login bug…");
    assert_eq!(items[0].detail, "1 turn · demo-1 · current");
    assert_eq!(items[1].detail, "2 turns · demo-architect-2");
    assert_eq!(items[1].value, MIDDLE);
}

#[test]
fn resume_picker_then_picking_an_older_session_asks_the_server_to_switch() {
    let dir = tempfile::tempdir().unwrap();
    let (store, agent) = three_sessions(dir.path());
    let mut c = console(&store, &agent, resumable());
    assert!(c.transcript().contains("what is in src/"));
    open_picker(&mut c, &store);
    assert!(
        c.app.outbox.runner_commands().is_empty(),
        "{:?}",
        c.app.outbox
    );
    let menu = c.app.panes[0]
        .composer
        .picker
        .as_ref()
        .expect("picker open");
    assert_eq!(menu.selected().unwrap().value, CURRENT);
    insta::assert_snapshot!("resume_picker", in_utc(&c.render(90, 18)));
    // Typing narrows the list fuzzily.
    c.typ("lgn bug");
    let menu = c.app.panes[0].composer.picker.as_ref().unwrap();
    let shown: Vec<&str> = menu.visible().iter().map(|i| i.value.as_str()).collect();
    assert_eq!(shown, [OLDEST]);
    insta::assert_snapshot!("resume_picker_filtered", in_utc(&c.render(90, 18)));
    c.key(KeyCode::Enter);
    let sent = asked(&mut c);
    assert!(
        matches!(&sent[..], [AppCommand::Resume { pane: 0, session }] if session == OLDEST),
        "{sent:?}"
    );
    // The server switches the runner and sends the pane's Reset: nothing
    // here reads the history or commands the runner.
    assert!(c.app.outbox.runner_commands().is_empty());
    assert!(c.transcript().contains("what is in src/"));
}

/// Issue 34 item 13: in a narrow pane the picker keeps each session's turns,
/// model and the current marker (under its date and prompt, two rows each)
/// instead of cutting them off.
#[test]
fn resume_picker_in_a_narrow_pane_keeps_turns_model_and_current() {
    let dir = tempfile::tempdir().unwrap();
    let (store, agent) = three_sessions(dir.path());
    let mut c = console(&store, &agent, resumable());
    open_picker(&mut c, &store);
    let screen = in_utc(&c.render(52, 18));
    for detail in [
        "1 turn · demo-1 · current",
        "2 turns · demo-architect-2",
        "1 turn · demo-architect-1",
    ] {
        assert!(screen.contains(detail), "{detail}:\n{screen}");
    }
    assert!(
        screen.contains("2026-11-21 10:00  write the release notes"),
        "{screen}"
    );
    insta::assert_snapshot!("resume_picker_narrow", screen);
}

#[test]
fn resume_key_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let (store, agent) = three_sessions(dir.path());
    // Alt+R opens the same picker.
    let mut c = console(&store, &agent, resumable());
    c.app
        .on_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::ALT));
    let sent = asked(&mut c);
    assert!(
        matches!(sent[..], [AppCommand::ListSessions { pane: 0 }]),
        "{sent:?}"
    );
    c.app.on_sessions(0, sessions::list(&store, "demo", None));
    assert!(c.app.panes[0].composer.picker.is_some());
    c.key(KeyCode::Esc);
    // `/resume ID` asks for that session at once; the one shown is refused.
    let mut c = console(&store, &agent, Capabilities::default());
    c.typ(&format!("/resume {CURRENT}"));
    c.key(KeyCode::Enter);
    assert!(asked(&mut c).is_empty());
    let status = c
        .app
        .status
        .as_ref()
        .map(|s| s.0.clone())
        .unwrap_or_default();
    assert!(status.contains("already in that session"), "{status}");
    c.typ(&format!("/resume {MIDDLE}"));
    c.key(KeyCode::Enter);
    let sent = asked(&mut c);
    assert!(
        matches!(&sent[..], [AppCommand::Resume { pane: 0, session }] if session == MIDDLE),
        "{sent:?}"
    );
    // While a turn runs, switching is refused.
    c.app.outbox.clear_runner_commands();
    c.app.apply(pane_event(PaneEvent::State(
        hive::runner::TurnState::Streaming,
    )));
    c.typ("/clear");
    c.key(KeyCode::Enter);
    assert!(
        c.app.outbox.runner_commands().is_empty(),
        "{:?}",
        c.app.outbox
    );
    assert!(c.transcript().contains("a turn is running"));
}

/// Issue 30: a pane on another machine has its sessions in that machine's
/// history. This console's history holds sessions of an agent of the same
/// id: `/resume` must not offer them. It asks the pane's server, shows the
/// list that comes back, and a pick asks that server to switch (it finds
/// the handle in its own history; the pane's `Reset` then shows it).
#[test]
fn resume_in_a_remote_pane_lists_and_switches_at_its_server() {
    use hive::app::command::AppCommand;
    let dir = tempfile::tempdir().unwrap();
    let (store, agent) = three_sessions(dir.path());
    let mut c = console(&store, &agent, resumable());
    c.app.panes[0].host = Some("box".into());
    let asked = |c: &mut Console| {
        c.app.outbox.drain_where(|c| {
            matches!(
                c,
                AppCommand::ListSessions { .. } | AppCommand::Resume { .. }
            )
        })
    };
    c.typ("/resume");
    c.key(KeyCode::Enter);
    assert!(c.app.panes[0].composer.picker.is_none());
    assert!(
        matches!(asked(&mut c)[..], [AppCommand::ListSessions { pane: 0 }]),
        "{:?}",
        c.app.outbox
    );
    // The host's list: one session this machine has never seen.
    let far = sessions::SessionSummary {
        session: "20261101T080000-ffffffff".into(),
        path: Default::default(),
        started: Some(T_OLDEST),
        updated: Some(T_OLDEST),
        first_prompt: "port the parser on the build box".into(),
        turns: 3,
        model: Some("far-model".into()),
    };
    c.app.on_sessions(0, vec![far.clone()]);
    let menu = c.app.panes[0]
        .composer
        .picker
        .as_ref()
        .expect("picker open");
    let shown: Vec<&str> = menu.visible().iter().map(|i| i.value.as_str()).collect();
    assert_eq!(shown, [far.session.as_str()]);
    c.key(KeyCode::Enter);
    let sent = asked(&mut c);
    assert!(
        matches!(&sent[..], [AppCommand::Resume { pane: 0, session }] if *session == far.session),
        "{sent:?}"
    );
    // Nothing of this machine's history, no runner command from here.
    assert!(c.app.outbox.runner_commands().is_empty());
    c.typ(&format!("/resume {MIDDLE}"));
    c.key(KeyCode::Enter);
    assert!(c.app.outbox.runner_commands().is_empty());
    let text = c.transcript();
    assert!(!text.contains("write the release notes"), "{text}");
}

#[test]
fn clear_starts_a_new_session_id_and_empties_the_pane() {
    let dir = tempfile::tempdir().unwrap();
    let (store, agent) = three_sessions(dir.path());
    let mut c = console(&store, &agent, resumable());
    c.typ("/clear");
    c.key(KeyCode::Enter);
    let sent = c.app.outbox.runner_commands();
    let [(0, RunnerCommand::SwitchSession { session, resume })] = sent.as_slice() else {
        panic!("{:?}", c.app.outbox);
    };
    assert!(resume.is_none());
    assert_ne!(session, CURRENT);
    assert!(!store.session_path("demo", session).exists());
    assert_eq!(c.app.panes[0].history_session.as_ref(), Some(session));
    let text = c.transcript();
    assert!(!text.contains("what is in src/"), "{text}");
    assert!(text.contains("new session"), "{text}");
}

const SCENARIO: &str = r#"
model = "demo-architect-1"
[[turn]]
[[turn.step]]
text = "ok"
"#;

async fn until<F: FnMut(&PaneEvent) -> bool>(
    rx: &mut mpsc::UnboundedReceiver<PaneUpdate>,
    mut f: F,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(u)) if f(&u.event) => return,
            Ok(Some(_)) => {}
            other => panic!("event not seen: {other:?}"),
        }
    }
}

async fn handle(rx: &mut mpsc::UnboundedReceiver<PaneUpdate>) -> String {
    let mut got = None;
    until(rx, |e| match e {
        PaneEvent::Session(info) if info.resume_handle.is_some() => {
            got = info.resume_handle.clone();
            true
        }
        _ => false,
    })
    .await;
    got.unwrap()
}

async fn turn(
    runner: &hive::runner::RunnerHandle,
    rx: &mut mpsc::UnboundedReceiver<PaneUpdate>,
    text: &str,
) {
    runner.send(RunnerCommand::Submit {
        text: text.into(),
        mode: SubmitMode::Auto,
    });
    until(rx, |e| matches!(e, PaneEvent::Turn(t) if t.is_terminal())).await;
}

fn prompts(store: &Store, session: &str) -> Vec<String> {
    hive::history::store::read_all(&store.session_path("demo", session))
        .unwrap()
        .records
        .into_iter()
        .filter(|(_, r)| r.role == Role::User)
        .map(|(_, r)| r.text())
        .collect()
}

/// The runner and the recorder: `/clear` records into a new file with a
/// new agent session; switching back hands the provider the old session's
/// handle and appends to the old file.
#[tokio::test]
async fn switching_sessions_moves_the_recorder_and_resumes_the_old_handle() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let scenario = dir.path().join("demo.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let mut agent = AgentConfig::new("demo", "script");
    agent.script = Some(scenario);
    let mut opened = history::open_pane_in(&store, &agent, &OpenOptions::default());
    let first = opened.session.clone();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let options = RunnerOptions {
        recorder: opened.recorder.take(),
        ..RunnerOptions::default()
    };
    let spec = ProviderSpec {
        agent: agent.clone(),
        resume: None,
    };
    let runner = spawn_runner(0, Arc::new(ScriptFactory), spec, options, tx).unwrap();
    let h1 = handle(&mut rx).await;
    turn(&runner, &mut rx, "one").await;

    let second = history::store::new_session_id();
    runner.send(RunnerCommand::SwitchSession {
        session: second.clone(),
        resume: None,
    });
    let h2 = handle(&mut rx).await;
    assert_ne!(h1, h2, "a new agent session");
    turn(&runner, &mut rx, "two").await;
    let state = PaneState::load(&store.state_path("demo")).unwrap().unwrap();
    assert_eq!(state.session, second);
    assert_eq!(state.resume.as_deref(), Some(h2.as_str()));
    assert_eq!(state.past[&first].resume, h1);

    // What the picker would send for the first session.
    let back = sessions::open(&store, &agent, &first, 100);
    assert_eq!(back.resume.as_deref(), Some(h1.as_str()));
    runner.send(RunnerCommand::SwitchSession {
        session: first.clone(),
        resume: back.resume,
    });
    assert_eq!(
        handle(&mut rx).await,
        h1,
        "the provider resumed the old session"
    );
    turn(&runner, &mut rx, "three").await;
    runner.shutdown().await;

    assert_eq!(prompts(&store, &first), ["one", "three"]);
    assert_eq!(prompts(&store, &second), ["two"]);
    let state = PaneState::load(&store.state_path("demo")).unwrap().unwrap();
    assert_eq!(state.session, first);
    assert_eq!(state.past[&second].resume, h2);
    let listed: Vec<String> = sessions::list(&store, "demo", None)
        .into_iter()
        .map(|s| s.session)
        .collect();
    assert_eq!(listed, [first, second]);
}
