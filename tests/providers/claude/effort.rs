//! `/effort` on Claude Code (issue 34 item 2): a level reaches the agent as
//! its `--effort` flag, the process starting again on its session (after
//! the running turn, if one runs); a budget (`off`, a number) changes live.
//! One note says which.

use super::*;
use crate::support::agent_text;

fn argv(start: &Value) -> Vec<String> {
    serde_json::from_value(start["argv"].clone()).unwrap_or_default()
}

fn flag(start: &Value, name: &str) -> Option<String> {
    let args = argv(start);
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).cloned()
}

fn effort_notes(pane: &Pane) -> Vec<String> {
    pane.notices()
        .into_iter()
        .filter(|n| n.contains("effort") || n.contains("budget"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_restarts_claude_on_its_session_with_the_flag() {
    let fake = Fake::new();
    let mut pane = start(fake.agent.clone(), None);
    pane.submit("hello one", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    let session = pane.handles().last().cloned().expect("a session");

    pane.runner.send(RunnerCommand::SetEffort("low".into()));
    pane.submit("hello two", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    let starts = fake.starts();
    assert_eq!(starts.len(), 2, "{starts:#?}");
    assert_eq!(flag(&starts[1], "--effort").as_deref(), Some("low"));
    assert_eq!(flag(&starts[1], "--resume"), Some(session.clone()));
    assert_eq!(
        pane.final_messages(Origin::Agent)
            .last()
            .map(String::as_str),
        Some("Hello from fake claude. You said: hello two")
    );
    let notes = effort_notes(&pane);
    assert_eq!(notes.len(), 1, "one true note: {notes:?}");
    assert!(notes[0].contains("effort set to low"), "{notes:?}");

    // Mid-turn: the turn runs to its end, then Claude starts again.
    pane.submit("slow", SubmitMode::Auto);
    pane.until("agent text", agent_text).await;
    pane.runner.send(RunnerCommand::SetEffort("high".into()));
    assert!(completed(&pane.turn_end().await));
    assert!(effort_notes(&pane)[1].contains("once this turn ends"));
    pane.submit("hello three", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    let starts = fake.starts();
    assert_eq!(starts.len(), 3, "{starts:#?}");
    assert_eq!(flag(&starts[2], "--effort").as_deref(), Some("high"));
    assert_eq!(flag(&starts[2], "--resume"), Some(session));

    // A budget changes live: no new process.
    pane.runner.send(RunnerCommand::SetEffort("off".into()));
    pane.submit("hello four", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(fake.starts().len(), 3);
    assert!(
        effort_notes(&pane)
            .last()
            .is_some_and(|n| n.contains("thinking budget set to 0 tokens"))
    );
    pane.runner.send(RunnerCommand::Shutdown);
}
