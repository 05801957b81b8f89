//! A hung agent is replaced: interrupt → the agent does not confirm →
//! hive ends its process group and starts it again on the same session, says
//! so in the pane, and the next message is answered. Tried with the fake
//! Claude and ACP agents, whose providers have their own cancel grace
//! (shorter than the runner's interrupt timeout).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hive::config::AgentConfig;
use hive::provider::ProviderFactory;
use hive::provider::ProviderSpec;
use hive::provider::acp::AcpFactory;
use hive::provider::claude::ClaudeFactory;
use hive::runner::{
    PaneEvent, PaneUpdate, RunnerCommand, RunnerOptions, SubmitMode, TurnState, spawn_runner,
};
use hive::upsert::{TurnEvent, TurnStatus};
use tokio::sync::mpsc::UnboundedReceiver;

async fn until<T>(
    rx: &mut UnboundedReceiver<PaneUpdate>,
    seen: &mut Vec<PaneEvent>,
    what: &str,
    mut f: impl FnMut(&PaneEvent) -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let u = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}; seen {seen:#?}"))
            .expect("runner alive");
        let found = f(&u.event);
        seen.push(u.event);
        if let Some(t) = found {
            return t;
        }
    }
}

fn fake(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fake")
        .join(name)
        .display()
        .to_string()
}

/// `hanging` (an event) and `delivered` (a check) say the agent has the
/// prompt and hangs; before that a cancel is answered by hive alone.
async fn hung_agent_is_replaced(
    factory: Arc<dyn ProviderFactory>,
    agent: AgentConfig,
    hanging: fn(&PaneEvent) -> bool,
    delivered: impl Fn() -> bool,
) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let spec = ProviderSpec {
        agent,
        resume: None,
    };
    let h = spawn_runner(0, factory, spec, RunnerOptions::default(), tx).unwrap();
    let mut seen = Vec::new();
    let send = |text: &str| {
        h.send(RunnerCommand::Submit {
            text: text.into(),
            mode: SubmitMode::Auto,
        })
    };
    send("hang");
    until(&mut rx, &mut seen, "the hanging turn", |e| {
        hanging(e).then_some(())
    })
    .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !delivered() {
        assert!(
            std::time::Instant::now() < deadline,
            "the prompt never reached the agent"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.send(RunnerCommand::Interrupt);
    let notice = until(&mut rx, &mut seen, "the replacement notice", |e| match e {
        PaneEvent::Notice { text, .. } if text.contains("started it again") => Some(text.clone()),
        _ => None,
    })
    .await;
    assert!(notice.contains("on the same session"), "{notice}");
    send("hello again");
    let status = until(
        &mut rx,
        &mut seen,
        "the next turn to complete",
        |e| match e {
            PaneEvent::Turn(TurnEvent::TurnComplete { status, .. }) => Some(*status),
            PaneEvent::Turn(TurnEvent::TurnError { error_message, .. }) => {
                panic!("turn failed: {error_message}")
            }
            _ => None,
        },
    )
    .await;
    // The first completion may be the hung turn's cancellation; wait for ours.
    let status = if status == TurnStatus::Cancelled {
        until(
            &mut rx,
            &mut seen,
            "the next turn to complete",
            |e| match e {
                PaneEvent::Turn(TurnEvent::TurnComplete { status, .. }) => Some(*status),
                _ => None,
            },
        )
        .await
    } else {
        status
    };
    assert_eq!(status, TurnStatus::Completed);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_acp_agent_is_replaced_on_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = AgentConfig::new("acp", "acp");
    a.command = vec!["python3".into(), fake("fake_acp.py")];
    a.cwd = Some(dir.path().to_path_buf());
    a.options
        .insert("kill_grace_ms".into(), toml::Value::Integer(300));
    let log = dir.path().join("agent.log");
    a.env
        .insert("FAKE_ACP_LOG".into(), log.display().to_string());
    let delivered =
        move || std::fs::read_to_string(&log).is_ok_and(|l| l.contains("session/prompt"));
    let starting = |e: &PaneEvent| matches!(e, PaneEvent::State(TurnState::Starting));
    hung_agent_is_replaced(Arc::new(AcpFactory), a, starting, delivered).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_claude_is_replaced_on_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = AgentConfig::new("claude", "claude");
    a.command = vec!["python3".into(), fake("fake_claude.py")];
    a.cwd = Some(dir.path().to_path_buf());
    // The fake announces the turn (system init), then hangs.
    let started = |e: &PaneEvent| matches!(e, PaneEvent::Turn(TurnEvent::TurnStarted { .. }));
    hung_agent_is_replaced(Arc::new(ClaudeFactory), a, started, || true).await;
}
