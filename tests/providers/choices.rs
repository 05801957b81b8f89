//! A pane's chosen model and effort (`/model`, `/effort`) are part of its
//! session (issue 34 item 1): they come back when the pane starts again on
//! its history and when `/resume` continues a session, and a new session
//! (`/clear`) goes on with them. Driven through the runner with the real
//! history store; the agent is codex exec's fake, whose command line shows
//! what reached it (codex itself warned "recorded with model gpt-fid-7 but
//! is resuming with gpt-5.5").

use hive::config::AgentConfig;
use hive::history::{OpenOptions, Store, open_pane_in};
use hive::provider::{ProviderSpec, Registry};
use hive::runner::{RunnerCommand, RunnerOptions, SubmitMode};

use crate::support::{Pane, argv, fake_command, jsonl, tempdir};

fn agent(dir: &std::path::Path) -> AgentConfig {
    let mut a = AgentConfig::new("cx", "codex");
    a.command = fake_command("fake_codex.py");
    a.transport = Some("exec".into());
    a.model = Some("gpt-5.5".into());
    a.env.insert(
        "FAKE_CODEX_LOG".into(),
        dir.join("log.jsonl").to_string_lossy().into_owned(),
    );
    a
}

/// The pane as the server starts it: on its stored history.
fn start(store: &Store, agent: &AgentConfig) -> (Pane, String) {
    let mut history = open_pane_in(store, agent, &OpenOptions::default());
    let factory = Registry::builtin().get("codex").expect("codex");
    let spec = ProviderSpec {
        agent: agent.clone(),
        resume: history.resume.take(),
    };
    let options = RunnerOptions {
        recorder: history.recorder.take(),
        ..RunnerOptions::default()
    };
    (Pane::start_with(factory, spec, options), history.session)
}

async fn turn(p: &mut Pane, text: &str) {
    p.submit(text, SubmitMode::Auto);
    p.turn_end().await;
}

/// The last codex run's model and effort flags.
fn last_run(dir: &std::path::Path) -> (Option<String>, Option<String>) {
    let log = jsonl(&dir.join("log.jsonl"));
    let args = argv(log.last().expect("codex ran"));
    let after = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let effort = args
        .iter()
        .find_map(|a| a.strip_prefix("model_reasoning_effort=").map(str::to_owned));
    (after("--model"), effort)
}

#[tokio::test]
async fn model_and_effort_come_back_after_a_restart_and_with_resume() {
    let dir = tempdir();
    let store = Store::at(dir.path().join("data"));
    let agent = agent(dir.path());
    let (mut p, first) = start(&store, &agent);
    p.runner.send(RunnerCommand::SetModel("gpt-fid-7".into()));
    p.runner.send(RunnerCommand::SetEffort("low".into()));
    turn(&mut p, "hello").await;
    let thread = p.handles().last().cloned().expect("a thread");
    p.runner.shutdown().await;

    // hive restarted: the pane's session goes on with what was chosen.
    let (mut p, again) = start(&store, &agent);
    assert_eq!(again, first);
    turn(&mut p, "after the restart").await;
    let chosen = (Some("gpt-fid-7".to_owned()), Some("\"low\"".to_owned()));
    assert_eq!(last_run(dir.path()), chosen);

    // `/clear`: a new session keeps the pane's choices; one changed there
    // stays with it.
    p.runner.send(RunnerCommand::SwitchSession {
        session: "later".into(),
        resume: None,
    });
    turn(&mut p, "in a new session").await;
    assert_eq!(last_run(dir.path()), chosen);
    p.runner.send(RunnerCommand::SetModel("gpt-other".into()));
    p.runner.send(RunnerCommand::SetEffort("high".into()));
    turn(&mut p, "changed").await;

    // `/resume` of the first session: its own choices, not the last ones.
    p.runner.send(RunnerCommand::SwitchSession {
        session: first.clone(),
        resume: Some(thread),
    });
    turn(&mut p, "back").await;
    assert_eq!(last_run(dir.path()), chosen);
    p.runner.shutdown().await;

    // And `/resume` of the later one after another restart.
    let (mut p, _) = start(&store, &agent);
    p.runner.send(RunnerCommand::SwitchSession {
        session: "later".into(),
        resume: None,
    });
    turn(&mut p, "later again").await;
    let later = (Some("gpt-other".to_owned()), Some("\"high\"".to_owned()));
    assert_eq!(last_run(dir.path()), later);
    p.runner.shutdown().await;
}
