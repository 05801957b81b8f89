//! An agent's limits and idling (issue 49): the fake `claude` under a
//! memory limit that it then exceeds, and an idle agent whose process is
//! stopped and whose session resumes on the next message.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hive::config::AgentConfig;
use hive::exec::limits::{Method, method};
use hive::provider::claude::ClaudeFactory;
use hive::runner::{PaneEvent, SubmitMode, TurnState};
use hive::upsert::TurnEvent;
use serde_json::Value;

use crate::support::{Pane, completed, fake_command};

fn fake_claude(dir: &Path) -> AgentConfig {
    let mut agent = AgentConfig::new("limited", "claude");
    agent.command = fake_command("fake_claude.py");
    agent.cwd = Some(dir.to_owned());
    agent.env.insert(
        "FAKE_CLAUDE_ARGV_FILE".into(),
        dir.join("argv.jsonl").display().to_string(),
    );
    agent
}

/// One JSON line per process the fake started.
fn starts(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("argv.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_over_its_memory_limit_ends_its_turn_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = fake_claude(dir.path());
    agent.memory = Some("64M".into());
    let mut pane = Pane::start(Arc::new(ClaudeFactory), agent, None);
    pane.submit("hello", SubmitMode::Auto);
    let t = pane.turn_end().await;
    assert!(completed(&t), "a limited agent works: {t:?}");
    // The limit is on the agent's own process, as this machine applies it.
    let pid = starts(dir.path())[0]["pid"].as_u64().unwrap();
    match method() {
        Method::Rlimit => {
            let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
            let data = limits
                .lines()
                .find(|l| l.starts_with("Max data size"))
                .unwrap();
            assert!(data.contains("67108864"), "{data}");
        }
        Method::Cgroup => {
            let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
            assert!(cgroup.contains(".scope"), "{cgroup}");
        }
    }
    pane.submit("please hog", SubmitMode::Auto);
    let t = tokio::time::timeout(Duration::from_secs(60), pane.turn_end())
        .await
        .expect("the pane hung instead of ending the turn");
    let TurnEvent::TurnError {
        error_code,
        error_message,
        ..
    } = t
    else {
        panic!("expected a turn error, got {t:?}")
    };
    assert_eq!(error_code, "agent_exited");
    assert!(
        error_message.contains("ran out of memory: it is limited to 64M (`memory`"),
        "{error_message}"
    );
    assert!(!error_message.contains("allocated"), "{error_message}");
    pane.until("dead", |e| matches!(e, PaneEvent::State(TurnState::Dead)))
        .await;
    pane.runner.send(hive::runner::RunnerCommand::Shutdown);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_agent_is_stopped_and_its_session_resumes_on_the_next_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = fake_claude(dir.path());
    agent.idle_stop_after = Some("1s".into());
    let mut pane = Pane::start(Arc::new(ClaudeFactory), agent, None);
    pane.submit("hello one", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    let session = pane.handles().last().cloned().expect("a session id");
    let first = starts(dir.path())[0]["pid"].as_u64().unwrap();
    pane.until("the idle stop", |e| {
        matches!(e, PaneEvent::Notice { text, .. } if text.contains("hive stopped the agent's process"))
    })
    .await;
    let gone = tokio::time::Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{first}")).exists() {
        assert!(
            tokio::time::Instant::now() < gone,
            "the idle agent still runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The pane is idle, not dead: the next message starts the agent again
    // on the same session.
    assert!(
        !pane
            .seen
            .iter()
            .any(|e| matches!(e, PaneEvent::State(TurnState::Dead)))
    );
    pane.submit("hello two", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    let starts = starts(dir.path());
    assert_eq!(starts.len(), 2, "{starts:?}");
    let argv: Vec<&str> = starts[1]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let at = argv
        .iter()
        .position(|a| *a == "--resume")
        .expect("--resume");
    assert_eq!(argv[at + 1], session);
    assert_eq!(
        pane.final_messages(hive::event::Origin::Agent)
            .last()
            .unwrap(),
        "Hello from fake claude. You said: hello two"
    );
    pane.runner.send(hive::runner::RunnerCommand::Shutdown);
}
