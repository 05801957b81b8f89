//! Issue 33 in the console: the overview's totals (a reported, an
//! estimated and an unknown cost), its cpu / mem column sorted with `s`,
//! and a pane's bottom gauges (processes, context) and held queue.

use crossterm::event::KeyCode;
use hive::event::Usage;
use hive::procstat::ProcessSample;
use hive::provider::SessionInfo;
use hive::runner::hold::{Hold, HoldKind};
use hive::runner::{PaneEvent, RunnerCommand};
use hive::upsert::{TurnEvent, TurnStatus};

use super::console::*;

fn end(turn: &str, usage: Usage) -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnComplete {
        turn_id: turn.into(),
        session_id: "s".into(),
        status: TurnStatus::Completed,
        usage: Some(usage),
        finish_reason: None,
    })
}

fn sample(cpu_percent: f64, mib: u64) -> PaneEvent {
    PaneEvent::Process(Some(ProcessSample {
        cpu_percent,
        rss_bytes: mib << 20,
        processes: 2,
    }))
}

fn tokens(input: u64, output: u64, cost: Option<f64>, estimated: bool) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cost_usd: cost,
        cost_estimated: estimated,
        ..Usage::default()
    }
}

/// Reported, estimated (`~`) and unknown (`—`) costs; the title adds them
/// up and says a pane's cost is unknown; pane 2 is over its memory limit.
fn three_panes() -> Console {
    let mut c = console(3, "");
    c.send(0, started("t1"));
    c.send(0, end("t1", tokens(1200, 300, Some(0.01), false)));
    c.send(1, started("t1"));
    c.send(1, end("t1", tokens(5000, 1000, Some(0.09), true)));
    c.send(2, started("t1"));
    c.send(2, end("t1", tokens(800, 40, None, false)));
    c.send(0, sample(3.0, 120));
    c.send(1, sample(150.0, 2048));
    c.send(2, sample(40.0, 300));
    c.app.panes[1].agent.max_rss_mb = Some(1024);
    c
}

#[test]
fn overview_marks_estimates_and_unknown_costs_and_adds_them_up() {
    let mut c = three_panes();
    c.prefix('o');
    let screen = c.render(150, 9);
    assert!(screen.contains("1.2k/300 $0.01"), "{screen}");
    assert!(screen.contains("5.0k/1.0k ~$0.09"), "{screen}");
    assert!(screen.contains("800/40 —"), "{screen}");
    assert!(
        screen.contains("overview · 3 panes · ↑7.0k ↓1.3k · ~$0.10 + — in all"),
        "{screen}"
    );
    assert!(screen.contains("150% 2.0G"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn overview_sorts_by_cpu_and_enter_focuses_the_row() {
    let mut c = three_panes();
    c.prefix('o');
    c.key(KeyCode::Char('s'));
    let screen = c.render(150, 9);
    let row = |n: usize| screen.find(&format!("{n} Agent {n} idle")).unwrap();
    assert!(row(2) < row(3), "{screen}");
    assert!(row(3) < row(1), "{screen}");
    assert!(screen.contains("s sort (cpu)"), "{screen}");
    insta::assert_snapshot!(screen);
    // The selection stayed on Agent 1 (the focused pane), now the last row.
    c.key(KeyCode::Home);
    c.key(KeyCode::Enter);
    assert_eq!(c.app.focus, 1, "the first row is Agent 2");
}

#[test]
fn a_pane_shows_its_processes_and_a_nearly_full_context() {
    let mut c = console(1, "");
    c.send(
        0,
        PaneEvent::Session(SessionInfo {
            resume_handle: None,
            model: None,
            commands: vec!["compact".into()],
        }),
    );
    c.send(0, started("t1"));
    let mut u = tokens(100, 10, None, false);
    u.context_tokens = Some(170_000);
    u.context_window = Some(200_000);
    c.send(0, end("t1", u));
    c.send(0, sample(12.0, 340));
    let screen = c.render(90, 12);
    assert!(
        screen.contains("12% 340M · ctx 85% of 200.0k · /compact"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
}

#[test]
fn a_held_queue_shows_when_it_goes_on_and_esc_lets_it_go() {
    let mut c = console(1, "");
    let until = chrono::Utc::now() + chrono::Duration::minutes(30);
    c.send(
        0,
        PaneEvent::Held(Some(Hold {
            kind: HoldKind::RateLimit,
            until: Some(until),
            reported: true,
            resend: true,
            spent: None,
        })),
    );
    let local = until.with_timezone(&chrono::Local);
    let time = if local.date_naive() == chrono::Local::now().date_naive() {
        local.format("%H:%M").to_string()
    } else {
        local.format("%a %H:%M").to_string()
    };
    let screen = c.render(90, 12);
    assert!(
        screen.contains(&format!("⏸ limit · resets {time}")),
        "{screen}"
    );
    c.key(KeyCode::Esc);
    let sent: Vec<_> = c.app.outbox.take_runner_commands().into_iter().collect();
    assert!(
        matches!(&sent[..], [(0, RunnerCommand::Interrupt)]),
        "{sent:?}"
    );
    c.send(0, PaneEvent::Held(None));
    assert!(c.render(90, 12).contains("idle"));
}

/// Issue 34 item 9: a turn started on Gemini's `auto` names the model that
/// answered at its end: the footer shows that model. Failed before: the
/// footer read `auto`.
#[test]
fn the_footer_names_the_model_that_answered() {
    let mut c = console(1, "");
    c.send(
        0,
        PaneEvent::Turn(TurnEvent::TurnStarted {
            turn_id: "t1".into(),
            session_id: "s".into(),
            model_id: "auto".into(),
            provider_id: "gemini".into(),
        }),
    );
    let mut u = tokens(13_055, 45, None, false);
    u.model = Some("gemini-3.8-flash".into());
    c.send(0, end("t1", u));
    let screen = c.render(70, 8);
    let footer = screen.lines().nth(1).unwrap_or_default();
    assert!(footer.contains("── gemini-3.8-flash · "), "{screen}");
    insta::assert_snapshot!(screen);
}

/// Issue 34 item 9: after Esc with messages queued the runner holds the
/// queue; the pane says so, Enter on an empty composer sends the next and
/// Esc again asks the runner to clear it.
#[test]
fn a_queue_held_after_an_interrupt_shows_and_enter_or_esc_go_on() {
    let mut c = console(1, "");
    c.send(
        0,
        PaneEvent::Queue(vec!["next step".into(), "and then".into()]),
    );
    c.send(
        0,
        PaneEvent::Held(Some(Hold {
            kind: HoldKind::Interrupted,
            until: None,
            reported: false,
            resend: false,
            spent: None,
        })),
    );
    c.send(
        0,
        PaneEvent::Notice {
            level: hive::provider::DiagnosticLevel::Info,
            text: "queue held: Enter sends the next · Esc again clears it".into(),
        },
    );
    let screen = c.render(90, 14);
    assert!(screen.contains("⏸ queue held"), "{screen}");
    assert!(!screen.contains("budget"), "{screen}");
    insta::assert_snapshot!(screen);
    c.key(KeyCode::Enter);
    c.key(KeyCode::Esc);
    let sent: Vec<_> = c.app.outbox.take_runner_commands().into_iter().collect();
    assert!(
        matches!(
            &sent[..],
            [
                (0, RunnerCommand::DrainQueue),
                (0, RunnerCommand::Interrupt)
            ]
        ),
        "{sent:?}"
    );
}

#[test]
fn a_spent_budget_shows_its_card_and_r_raises_s_stops() {
    use hive::runner::budget::BudgetAnswer;
    let mut c = console(1, "");
    c.send(0, PaneEvent::Queue(vec!["next step".into()]));
    c.send(
        0,
        PaneEvent::Held(Some(Hold {
            kind: HoldKind::Budget,
            until: None,
            reported: false,
            resend: false,
            spent: Some("$5.02 of $5.00".into()),
        })),
    );
    let screen = c.render(90, 14);
    assert!(screen.contains("budget spent"), "{screen}");
    assert!(screen.contains("⏸ budget spent"), "{screen}");
    assert!(screen.contains("[r] raise by half"), "{screen}");
    insta::assert_snapshot!(screen);
    c.key(KeyCode::Char('r'));
    c.key(KeyCode::Char('s'));
    let sent: Vec<_> = c.app.outbox.take_runner_commands().into_iter().collect();
    assert!(
        matches!(
            &sent[..],
            [
                (0, RunnerCommand::Budget(BudgetAnswer::Raise)),
                (0, RunnerCommand::Budget(BudgetAnswer::Stop))
            ]
        ),
        "{sent:?}"
    );
    // With text in the composer, r and s are typed.
    c.typ("xrs");
    assert_eq!(c.app.panes[0].composer.text(), "xrs");
    assert!(
        c.app
            .outbox
            .take_runner_commands()
            .into_iter()
            .next()
            .is_none()
    );
}

/// The hand-offs a console asked its server for.
fn handoffs(c: &mut Console) -> Vec<hive::protocol::carry::Handoff> {
    c.app
        .outbox
        .drain_where(|cmd| matches!(cmd, hive::app::command::AppCommand::Edit(_)))
        .into_iter()
        .filter_map(|cmd| match cmd {
            hive::app::command::AppCommand::Edit(hive::protocol::edit::PaneEdit::Handoff(h)) => {
                Some(h)
            }
            _ => None,
        })
        .collect()
}

/// Issue 33 item 5, issue 50: `/handoff` from a Claude pane asks its
/// server to hand the work to the openai pane (shared by default, or
/// branched, or to a new pane), naming the target by id; refused while
/// for no such pane (a running turn: the server refuses, tests/cli).
#[test]
fn handoff_asks_the_server_shared_branched_or_new() {
    use hive::protocol::carry::{Handoff, HandoffTarget, HandoffTree};
    let mut c = console(
        0,
        "[[agent]]\nid = \"cl\"\nname = \"Claude\"\nprovider = \"claude\"\n\
         [[agent]]\nid = \"oa\"\nname = \"Local\"\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
    );
    c.send(0, started("t1"));
    c.send(
        0,
        message(
            "t1",
            "u1",
            hive::event::Origin::User,
            "port the parser to nom",
        ),
    );
    c.send(0, completed("t1"));
    c.typ("/handoff Local");
    c.key(KeyCode::Enter);
    let shared = Handoff {
        from: "cl".into(),
        to: HandoffTarget::Pane("oa".into()),
        tree: HandoffTree::Shared,
    };
    assert_eq!(handoffs(&mut c), [shared]);
    c.typ("/handoff new codex branched");
    c.key(KeyCode::Enter);
    let branched = Handoff {
        from: "cl".into(),
        to: HandoffTarget::New {
            template: None,
            provider: Some("codex".into()),
        },
        tree: HandoffTree::Branched,
    };
    assert_eq!(handoffs(&mut c), [branched]);
    // No such pane: refused in the pane, nothing sent.
    c.typ("/handoff nobody");
    c.key(KeyCode::Enter);
    assert!(handoffs(&mut c).is_empty());
    assert!(
        c.render(100, 20)
            .contains("/handoff: no other pane `nobody`")
    );
}
