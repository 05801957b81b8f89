//! Fan-out and compare: the chooser, one prompt sent to each chosen pane
//! through the typed-message path, and the compare view of their answers.

use std::time::Duration;

use crossterm::event::KeyCode;

use super::console::*;
use hive::app::fanout::RunState;
use hive::app::state::Overlay;
use hive::event::Origin;
use hive::runner::{PaneEvent, RunnerCommand, SubmitMode, TurnState};

const PROMPT: &str = "which error handling crate?";

/// Four panes; pane 3 is busy (a fan-out queues there).
fn chooser() -> Console {
    let mut c = console(4, "");
    c.send(2, PaneEvent::State(TurnState::Streaming));
    c.prefix('f');
    c
}

#[test]
fn the_chooser_picks_panes_and_a_picks_all() {
    let mut c = chooser();
    assert_eq!(c.app.overlay, Overlay::FanOut);
    let chosen = |c: &Console| c.app.fanout.chosen.iter().copied().collect::<Vec<_>>();
    assert_eq!(chosen(&c), [0], "the focused pane to start with");
    c.key(KeyCode::Down);
    c.key(KeyCode::Char(' '));
    assert_eq!(chosen(&c), [0, 1]);
    c.key(KeyCode::Char('a'));
    assert_eq!(chosen(&c), [0, 1, 2, 3]);
    c.key(KeyCode::Char('a'));
    assert!(chosen(&c).is_empty(), "a again: none");
    c.key(KeyCode::Char('a'));
    c.key(KeyCode::Down);
    c.key(KeyCode::Char(' '));
    assert_eq!(chosen(&c), [0, 1, 3]);
    insta::assert_snapshot!("fanout_chooser", c.render(100, 16));
    c.key(KeyCode::Enter);
    c.typ(PROMPT);
    insta::assert_snapshot!("fanout_prompt", c.render(100, 16));
    c.key(KeyCode::Esc);
    assert_eq!(c.app.overlay, Overlay::FanOut, "Esc: back to the panes");
    c.key(KeyCode::Esc);
    assert_eq!(c.app.overlay, Overlay::None);
}

/// A fan-out of `PROMPT` to panes 1–3 (pane 3 busy).
fn fanned() -> Console {
    let mut c = chooser();
    c.key(KeyCode::Char('a'));
    c.key(KeyCode::Up);
    c.key(KeyCode::Up);
    c.key(KeyCode::Up);
    c.key(KeyCode::Char(' '));
    c.key(KeyCode::Enter);
    c.typ(PROMPT);
    c.key(KeyCode::Enter);
    c
}

#[test]
fn one_prompt_goes_to_each_chosen_pane_as_a_typed_message() {
    let c = fanned();
    assert_eq!(c.app.overlay, Overlay::Compare);
    let sent: Vec<(usize, String, SubmitMode)> = c
        .app
        .outbox
        .runner_commands()
        .iter()
        .filter_map(|(i, cmd)| match cmd {
            RunnerCommand::Submit { text, mode } => Some((*i, text.clone(), *mode)),
            _ => None,
        })
        .collect();
    let want: Vec<_> = [1, 2, 3]
        .into_iter()
        .map(|i| (i, PROMPT.to_owned(), SubmitMode::Auto))
        .collect();
    assert_eq!(sent, want);
}

/// Pane 2 answered, pane 3 answers still, pane 4 has it queued.
fn answering() -> Console {
    let mut c = fanned();
    c.app.outbox.clear_runner_commands();
    c.send(1, started("t1"));
    c.send(1, message("t1", "u1", Origin::User, PROMPT));
    c.app.now += Duration::from_secs(3);
    c.send(2, started("t1"));
    c.send(2, message("t1", "u1", Origin::User, PROMPT));
    c.send(2, running_tool("t1", "c1", "cargo tree -i anyhow"));
    c.send(2, message("t1", "m1", Origin::Agent, "Looking at the tree"));
    c.send(3, PaneEvent::Queue(vec![PROMPT.into()]));
    c.app.now += Duration::from_secs(4);
    c.send(
        1,
        message(
            "t1",
            "m1",
            Origin::Agent,
            "**thiserror** for libraries, **anyhow** at the edges.\n\nBoth are well kept.",
        ),
    );
    c.send(1, completed("t1"));
    c.app.now += Duration::from_secs(2);
    c
}

#[test]
fn compare_shows_each_answer_live_with_its_figures() {
    let mut c = answering();
    let states: Vec<RunState> = c
        .app
        .fanout
        .runs
        .iter()
        .map(|r| {
            hive::app::fanout::outcome(&c.app.panes[r.pane], r, &c.app.fanout.sent, c.app.now).state
        })
        .collect();
    assert_eq!(
        states,
        [RunState::Done, RunState::Running, RunState::Queued]
    );
    insta::assert_snapshot!("compare_wide", c.render(150, 20));
    insta::assert_snapshot!("compare_narrow", c.render(70, 34));
    // Live: the running one finishes, the queued one starts.
    c.send(2, message("t1", "m1", Origin::Agent, "anyhow everywhere"));
    c.send(2, completed("t1"));
    c.send(3, PaneEvent::Queue(Vec::new()));
    c.send(3, started("t9"));
    c.send(3, message("t9", "u9", Origin::User, PROMPT));
    let screen = c.render(150, 20);
    assert!(screen.contains("compare · 2 of 3 answered"), "{screen}");
    assert!(screen.contains("anyhow everywhere"), "{screen}");
    assert!(screen.contains("4 Agent 4 … running"), "{screen}");
    // Enter on the second opens its pane.
    c.key(KeyCode::Right);
    c.key(KeyCode::Enter);
    assert_eq!(c.app.overlay, Overlay::None);
    assert_eq!(c.app.focus, 2);
    // `c` in the chooser brings the compare view back; Esc closes it.
    c.prefix('f');
    c.key(KeyCode::Char('c'));
    assert_eq!(c.app.overlay, Overlay::Compare);
    c.key(KeyCode::Esc);
    assert_eq!(c.app.overlay, Overlay::None);
}

#[test]
fn a_failed_run_shows_its_error_and_hive_commands_are_not_fanned_out() {
    let mut c = fanned();
    c.send(1, started("t1"));
    c.send(1, message("t1", "u1", Origin::User, PROMPT));
    c.send(1, failed("t1"));
    let f = &c.app.fanout;
    let o = hive::app::fanout::outcome(&c.app.panes[1], &f.runs[0], &f.sent, c.app.now);
    assert_eq!(o.state, RunState::Failed);
    assert_eq!(o.answer, "[rate_limit] 429");
    // A hive command is not a prompt: nothing is sent.
    c.key(KeyCode::Esc);
    c.app.outbox.clear_runner_commands();
    c.prefix('f');
    c.key(KeyCode::Enter);
    c.typ("/clear");
    c.key(KeyCode::Enter);
    assert!(
        c.app.outbox.runner_commands().is_empty(),
        "{:?}",
        c.app.outbox
    );
    assert_eq!(c.app.overlay, Overlay::None);
}
