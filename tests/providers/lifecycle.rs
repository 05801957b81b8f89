//! Lifecycle scenarios written once and run per provider against its fake
//! CLI through the runner: malformed output, interrupt, an interrupt the CLI
//! ignores, a crash mid-turn, a stale session on resume. Each scenario is one
//! function taking a [`Fake`]; `per_provider!` makes one test of it per
//! provider (`lifecycle::<provider>::<scenario>`). Where providers differ by
//! design (a process per turn against one per pane) the scenario says so in
//! a `match`; what only one provider does stays in its own file.

use crate::support::{Pane, agent_text, alive, flag, gone, since_crash, tempdir};

use std::path::Path;

use hive::config::AgentConfig;
use hive::event::Origin;
use hive::runner::{PaneEvent, RunnerCommand, RunnerHandle, SubmitMode, TurnState};
use hive::upsert::{TurnEvent, TurnStatus};
use serde_json::Value;

/// A provider's fake CLI (tests/fake/) and how to read what it did.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fake {
    /// A process per turn; `--session-id` then `--resume`.
    Gemini,
    /// One process per pane over RPC; `--session`.
    Pi,
}

impl Fake {
    fn name(self) -> &'static str {
        match self {
            Fake::Gemini => "gemini",
            Fake::Pi => "pi",
        }
    }

    fn agent(self, dir: &Path) -> AgentConfig {
        match self {
            Fake::Gemini => super::gemini::fake_agent(dir),
            Fake::Pi => super::pi::fake_agent(dir),
        }
    }

    fn start(self, dir: &Path, resume: Option<&str>) -> (RunnerHandle, Pane) {
        match self {
            Fake::Gemini => super::gemini::start(self.agent(dir), resume),
            Fake::Pi => super::pi::start(self.agent(dir), resume),
        }
    }

    /// One JSON line per process the fake started (argv, pid, cwd).
    fn runs(self, dir: &Path) -> Vec<Value> {
        match self {
            Fake::Gemini => super::gemini::runs(dir),
            Fake::Pi => super::pi::starts(dir),
        }
    }
}

fn completed(t: &TurnEvent) -> bool {
    matches!(
        t,
        TurnEvent::TurnComplete {
            status: TurnStatus::Completed,
            ..
        }
    )
}

fn cancelled(t: &TurnEvent) -> bool {
    matches!(
        t,
        TurnEvent::TurnComplete {
            status: TurnStatus::Cancelled,
            ..
        }
    )
}

fn pid(run: &Value) -> i64 {
    run["pid"].as_i64().unwrap_or_default()
}

fn session(pane: &Pane) -> Option<String> {
    pane.seen.iter().find_map(|e| match e {
        PaneEvent::Session(s) => s.resume_handle.clone(),
        _ => None,
    })
}

async fn malformed_lines_are_notices_and_the_turn_goes_on(fake: Fake) {
    let dir = tempdir();
    let (h, mut pane) = fake.start(dir.path(), None);
    let (prompt, line) = match fake {
        Fake::Gemini => ("MALFORMED output", "this is not json"),
        Fake::Pi => ("MALFORMED", "garbage"),
    };
    pane.submit(prompt, SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert!(
        pane.notices().iter().any(|n| n.contains(line)),
        "{:?}",
        pane.notices()
    );
    h.send(RunnerCommand::Shutdown);
}

async fn interrupt_cancels_and_the_next_turn_works(fake: Fake) {
    let dir = tempdir();
    let (h, mut pane) = fake.start(dir.path(), None);
    // Gemini's fake also leaves a grandchild that ignores SIGINT and holds stdout.
    let slow = match fake {
        Fake::Gemini => "SLOW ORPHAN",
        Fake::Pi => "SLOW",
    };
    pane.submit(slow, SubmitMode::Auto);
    pane.until("agent text", agent_text).await;
    let asked = std::time::Instant::now();
    h.send(RunnerCommand::Interrupt);
    assert!(cancelled(&pane.turn_end().await));
    eprintln!(
        "figure: {} interrupt -> cancelled {:?}",
        fake.name(),
        asked.elapsed()
    );
    // The provider ended the turn itself; the runner did not have to force it.
    assert!(!pane.notices().iter().any(|n| n.contains("did not stop")));
    let first = fake.runs(dir.path())[0].clone();
    if let Fake::Gemini = fake {
        // SIGINT ends the turn's process; hive kills the group.
        let grandchild = first["grandchild"].as_i64().unwrap_or_default();
        assert!(
            gone(pid(&first)).await,
            "fake gemini {} survived the interrupt",
            pid(&first)
        );
        assert!(gone(grandchild).await, "grandchild {grandchild} survived");
    }
    // The pane keeps working after an interrupt.
    pane.submit("after", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    if let Fake::Pi = fake {
        // Abort keeps pi's one process.
        assert_eq!(fake.runs(dir.path()).len(), 1);
        assert!(alive(pid(&first)));
    }
    h.send(RunnerCommand::Shutdown);
    if let Fake::Pi = fake {
        assert!(gone(pid(&first)).await, "pi outlived shutdown");
    }
}

async fn ignored_interrupt_still_cancels_and_ends_the_process(fake: Fake) {
    let dir = tempdir();
    let (h, mut pane) = fake.start(dir.path(), None);
    let ignoring = match fake {
        Fake::Gemini => "IGNORE_INT",
        Fake::Pi => "IGNORE_ABORT",
    };
    pane.submit(ignoring, SubmitMode::Auto);
    pane.until("agent text", agent_text).await;
    h.send(RunnerCommand::Interrupt);
    assert!(cancelled(&pane.turn_end().await));
    let first = fake.runs(dir.path())[0].clone();
    match fake {
        Fake::Gemini => {
            // SIGINT ignored: the grace period ends the process, not the runner.
            assert!(!pane.notices().iter().any(|n| n.contains("did not stop")));
            assert!(
                gone(pid(&first)).await,
                "fake gemini {} outlived the grace period",
                pid(&first)
            );
        }
        Fake::Pi => {
            // Abort ignored: the runner replaces pi, which resumes its session.
            assert!(gone(pid(&first)).await);
            pane.submit("after", SubmitMode::Auto);
            assert!(completed(&pane.turn_end().await));
            let runs = fake.runs(dir.path());
            assert_eq!(runs.len(), 2);
            assert_eq!(flag(&runs[1], "--session"), session(&pane));
            assert!(pane.notices().iter().any(|n| n.contains("did not stop")));
        }
    }
    h.send(RunnerCommand::Shutdown);
}

async fn crash_mid_turn_is_a_turn_error_and_the_pane_goes_on(fake: Fake) {
    let dir = tempdir();
    let (h, mut pane) = fake.start(dir.path(), None);
    let (prompt, status) = match fake {
        Fake::Gemini => ("please CRASH", "status 3"),
        Fake::Pi => {
            // pi's process outlives a turn: crash it after one.
            pane.submit("warm up", SubmitMode::Auto);
            pane.turn_end().await;
            ("CRASH now", "status 5")
        }
    };
    pane.submit(prompt, SubmitMode::Auto);
    match pane.turn_end().await {
        TurnEvent::TurnError { error_message, .. } => {
            assert!(error_message.contains(status), "{error_message}");
            assert!(error_message.contains("simulated crash"), "{error_message}");
            if let Fake::Gemini = fake {
                // Issue 13 item 10: the exit status, then the telling stderr lines, each on
                // its own line and once; Gemini's start-up noise and stack frames stay in the log.
                let lines: Vec<&str> = error_message.lines().collect();
                assert_eq!(lines[0], "gemini exited with status 3", "{error_message}");
                assert_eq!(
                    lines[1..lines.len() - 1],
                    ["Error when talking to Gemini API: simulated"],
                    "{error_message}"
                );
                assert!(lines[lines.len() - 1].starts_with("fatal: simulated crash"));
            }
            if let Some(latency) = since_crash(&error_message) {
                eprintln!(
                    "figure: {} crash -> turn_error {:.0} ms",
                    fake.name(),
                    latency * 1000.0
                );
            }
        }
        other => panic!("{other:?}"),
    }
    match fake {
        Fake::Gemini => {
            // The provider survives: the next turn works.
            pane.submit("again", SubmitMode::Auto);
            assert!(completed(&pane.turn_end().await));
        }
        Fake::Pi => {
            // The pane's process is dead until restarted, which resumes the session.
            pane.until("dead", |e| matches!(e, PaneEvent::State(TurnState::Dead)))
                .await;
            let first = fake.runs(dir.path())[0].clone();
            assert!(gone(pid(&first)).await);
            h.send(RunnerCommand::Restart);
            pane.submit("back", SubmitMode::Auto);
            pane.turn_end().await;
            let runs = fake.runs(dir.path());
            assert_eq!(runs.len(), 2);
            assert_eq!(flag(&runs[1], "--session"), session(&pane));
        }
    }
    h.send(RunnerCommand::Shutdown);
}

async fn stale_session_falls_back_to_a_new_one_visibly(fake: Fake) {
    let dir = tempdir();
    let (stale, prompt) = match fake {
        Fake::Gemini => ("vanished", "hello"),
        Fake::Pi => ("stale-1", "hi"),
    };
    let (h, mut pane) = fake.start(dir.path(), Some(stale));
    pane.submit(prompt, SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    let runs = fake.runs(dir.path());
    assert_eq!(runs.len(), 2);
    match fake {
        Fake::Gemini => {
            assert_eq!(flag(&runs[0], "--resume").as_deref(), Some("vanished"));
            assert!(flag(&runs[1], "--session-id").is_some());
            assert!(
                pane.system_messages()
                    .iter()
                    .any(|m| m.contains("could not resume")),
                "{:?}",
                pane.system_messages()
            );
        }
        Fake::Pi => {
            assert_eq!(flag(&runs[0], "--session").as_deref(), Some("stale-1"));
            assert_eq!(flag(&runs[1], "--session"), None);
            assert!(
                pane.texts(Origin::System)
                    .iter()
                    .any(|t| t.contains("could not resume session stale-1")),
                "{:?}",
                pane.seen
            );
            assert_eq!(pane.texts(Origin::Agent), ["Hello from fake pi."]);
        }
    }
    h.send(RunnerCommand::Shutdown);
}

/// One test per scenario for one provider.
macro_rules! scenarios {
    ($fake:expr => $($scenario:ident),+ $(,)?) => {$(
        #[tokio::test]
        async fn $scenario() {
            super::$scenario($fake).await
        }
    )+};
}

/// The table: every provider runs every scenario.
macro_rules! per_provider {
    ($($provider:ident => $fake:expr),+ $(,)?) => {$(
        mod $provider {
            scenarios!($fake =>
                malformed_lines_are_notices_and_the_turn_goes_on,
                interrupt_cancels_and_the_next_turn_works,
                ignored_interrupt_still_cancels_and_ends_the_process,
                crash_mid_turn_is_a_turn_error_and_the_pane_goes_on,
                stale_session_falls_back_to_a_new_one_visibly,
            );
        }
    )+};
}

per_provider!(gemini => super::Fake::Gemini, pi => super::Fake::Pi);
