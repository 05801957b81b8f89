//! A pane's chosen model and effort (`/model`, `/effort`) are part of its
//! session (issue 34 item 1): they come back when the pane starts again on
//! its history and when `/resume` continues a session, and a new session
//! (`/clear`) goes on with them. Driven through the runner with the real
//! history store and the providers' fakes, whose logs show what reached the
//! agent (codex itself warned "recorded with model gpt-fid-7 but is resuming
//! with gpt-5.5"): codex exec in full, then a restart for an ACP agent,
//! gemini and Claude on its stale-session fallback.

use hive::config::AgentConfig;
use hive::history::{OpenOptions, PaneState, Store, open_pane_in};
use std::sync::Arc;

use hive::provider::openai::OpenAiFactory;
use hive::provider::{ProviderFactory, ProviderSpec, Registry};
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
    let factory: Arc<dyn ProviderFactory> = match agent.provider.as_str() {
        // Its own conversation lives in the history store too.
        "openai" => Arc::new(OpenAiFactory::default().with_store(store.clone())),
        name => Registry::builtin().get(name).expect("a built-in provider"),
    };
    let mut history = open_pane_in(store, agent, &OpenOptions::default());
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

/// One life of a pane: `/model` and `/effort` (when given), one turn.
async fn first_life(store: &Store, agent: &AgentConfig, effort: Option<&str>) {
    let (mut p, _) = start(store, agent);
    p.runner.send(RunnerCommand::SetModel("gpt-fid-7".into()));
    if let Some(e) = effort {
        p.runner.send(RunnerCommand::SetEffort(e.into()));
    }
    turn(&mut p, "hello").await;
    p.runner.shutdown().await;
}

/// The next life after hive restarted: one turn.
async fn second_life(store: &Store, agent: &AgentConfig) {
    let (mut p, _) = start(store, agent);
    turn(&mut p, "after the restart").await;
    p.runner.shutdown().await;
}

#[tokio::test]
async fn an_acp_agent_gets_them_again_on_its_loaded_session() {
    let dir = tempdir();
    let store = Store::at(dir.path().join("data"));
    let log = dir.path().join("acp.log");
    let mut agent = AgentConfig::new("ac", "acp");
    agent.command = fake_command("fake_acp.py");
    agent.cwd = Some(dir.path().to_owned());
    agent.env.insert("FAKE_ACP_LOAD".into(), "1".into());
    agent
        .env
        .insert("FAKE_ACP_LOG".into(), log.to_string_lossy().into_owned());
    first_life(&store, &agent, Some("low")).await;
    second_life(&store, &agent).await;
    let lines = jsonl(&log);
    let load = lines
        .iter()
        .rposition(|l| l["method"] == "session/load")
        .expect("the session was loaded");
    let after = &lines[load..];
    assert!(
        after
            .iter()
            .any(|l| l["method"] == "session/set_model" && l["params"]["modelId"] == "gpt-fid-7"),
        "{after:#?}"
    );
    assert!(
        after
            .iter()
            .any(|l| l["method"] == "session/set_config_option"
                && l["params"]["configId"] == "effort"
                && l["params"]["value"] == "low"),
        "{after:#?}"
    );
}

#[tokio::test]
async fn gemini_gets_the_model_again() {
    let dir = tempdir();
    let store = Store::at(dir.path().join("data"));
    let agent = crate::gemini::fake_agent(dir.path());
    first_life(&store, &agent, None).await;
    second_life(&store, &agent).await;
    let runs = crate::gemini::runs(dir.path());
    let last = runs.last().expect("gemini ran");
    assert_eq!(
        crate::support::flag(last, "--model").as_deref(),
        Some("gpt-fid-7")
    );
    assert!(crate::support::flag(last, "--resume").is_some(), "{last}");
}

/// Claude keeps its model through its own session; when that session is
/// gone (the stale-session fallback), the new one starts with the choices.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_starts_its_fallback_session_with_them() {
    let dir = tempdir();
    let store = Store::at(dir.path().join("data"));
    let argv_file = dir.path().join("argv.jsonl");
    let mut agent = AgentConfig::new("cl", "claude");
    agent.command = fake_command("fake_claude.py");
    agent.cwd = Some(dir.path().to_owned());
    agent.env.insert(
        "FAKE_CLAUDE_ARGV_FILE".into(),
        argv_file.to_string_lossy().into_owned(),
    );
    first_life(&store, &agent, Some("low")).await;
    // Claude no longer has the conversation.
    let path = store.state_path(&agent.id);
    let mut state = PaneState::load(&path).unwrap().unwrap();
    state.resume = Some("stale-gone".into());
    state.save(&path).unwrap();
    second_life(&store, &agent).await;
    let starts = jsonl(&argv_file);
    let [.., stale, fallback] = starts.as_slice() else {
        panic!("{starts:#?}")
    };
    assert_eq!(
        crate::support::flag(stale, "--resume").as_deref(),
        Some("stale-gone")
    );
    assert_eq!(crate::support::flag(fallback, "--resume"), None);
    assert_eq!(
        crate::support::flag(fallback, "--model").as_deref(),
        Some("gpt-fid-7")
    );
    assert_eq!(
        crate::support::flag(fallback, "--effort").as_deref(),
        Some("low")
    );
}

#[tokio::test]
async fn codex_app_server_gets_them_again_on_its_resumed_thread() {
    let dir = tempdir();
    let store = Store::at(dir.path().join("data"));
    let rpc = dir.path().join("rpc.jsonl");
    let mut agent = agent(dir.path());
    agent.transport = Some("app-server".into());
    agent.env.insert(
        "FAKE_CODEX_RPC_LOG".into(),
        rpc.to_string_lossy().into_owned(),
    );
    first_life(&store, &agent, Some("low")).await;
    second_life(&store, &agent).await;
    let calls = jsonl(&rpc);
    let resume = calls
        .iter()
        .rposition(|c| c["method"] == "thread/resume")
        .expect("the thread was resumed");
    assert_eq!(calls[resume]["params"]["model"], "gpt-fid-7");
    let turn = calls[resume..]
        .iter()
        .find(|c| c["method"] == "turn/start")
        .expect("a turn");
    assert_eq!(turn["params"]["effort"], "low");
}

#[tokio::test]
async fn openai_gets_them_again() {
    use crate::openai::server::{Server, answer_text};
    let dir = tempdir();
    let store = Store::at(dir.path().join("data"));
    let server = Server::start(vec![answer_text("one", 1, 1), answer_text("two", 1, 1)]);
    let mut agent = crate::openai::coding_agent(&server);
    agent.set("tools", false).unwrap();
    first_life(&store, &agent, Some("low")).await;
    second_life(&store, &agent).await;
    let requests = server.requests();
    let last = &requests.last().expect("two requests").body;
    assert_eq!(last["model"], "gpt-fid-7");
    assert_eq!(last["reasoning_effort"], "low");
}
