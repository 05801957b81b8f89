//! pi's running tool (issue 13 items 4 and 9): its output shows while it
//! runs (`tool_execution_update`), and it sits below the text that came
//! before it, as pi streamed them.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use hive::app::{build_app, frame};
use hive::config::{Config, ConfigSource};
use hive::runner::PaneUpdate;
use hive::ui::ViewState;

use super::*;

/// The turn's upserts in emission order, as (status, what) rows.
fn rows(r: &Replay, turn: &str) -> Vec<(UpsertStatus, String)> {
    r.upserts()
        .into_iter()
        .filter(|u| u.turn_id == turn)
        .map(|u| {
            let what = match &u.kind {
                UpsertKind::Message { content, .. } => format!("text:{content}"),
                UpsertKind::Thinking { .. } => "thinking".into(),
                UpsertKind::ToolCall {
                    tool_name, output, ..
                } => format!("tool:{tool_name}:{}", output.as_deref().unwrap_or("-")),
            };
            (u.status, what)
        })
        .collect()
}

#[test]
fn a_running_pi_tool_shows_its_output_below_the_text_before_it() {
    let r = replay("rpc_prompt.timeline.jsonl");
    let rows = rows(&r, "turn_2");
    let first = |prefix: &str| rows.iter().position(|(_, w)| w.starts_with(prefix));
    let text = first("text:Let me run a command.").expect("the text before the tool");
    let tool = first("tool:bash").expect("the tool");
    assert!(text < tool, "the text precedes the tool: {rows:#?}");
    // The capture's partialResult while bash runs, then the result.
    let tool_rows: Vec<&(UpsertStatus, String)> = rows
        .iter()
        .filter(|(_, w)| w.starts_with("tool:bash"))
        .collect();
    let output = "hello-from-tool\n/tmp/hive-lab-work\n";
    assert_eq!(tool_rows[0].0, UpsertStatus::Create);
    assert!(
        tool_rows
            .iter()
            .any(|(s, w)| *s == UpsertStatus::Update && *w == format!("tool:bash:{output}")),
        "{tool_rows:#?}"
    );
    assert_eq!(
        tool_rows.last().map(|(s, _)| *s),
        Some(UpsertStatus::Complete)
    );
}

/// The pane as it looks the moment the running tool first shows output.
#[test]
fn a_running_tool_with_live_arguments_and_output_snapshot() {
    let r = replay("rpc_prompt.timeline.jsonl");
    let config = Config::parse(
        "[[agent]]\nid = \"pi\"\nname = \"pi\"\nprovider = \"script\"\n",
        ConfigSource::Builtin,
    )
    .unwrap();
    let (mut app, _) = build_app(&config);
    app.now = app.started;
    app.zoom = true;
    let mut events = Vec::new();
    for out in &r.outputs {
        match out {
            Output::Turn(t) => events.push(PaneEvent::Turn(t.clone())),
            Output::Upsert(u) => {
                events.push(PaneEvent::Upsert(u.clone()));
                let live = u.status == UpsertStatus::Update
                    && matches!(
                        &u.kind,
                        UpsertKind::ToolCall {
                            output: Some(_),
                            ..
                        }
                    );
                if live {
                    break;
                }
            }
        }
    }
    events.push(PaneEvent::State(TurnState::Streaming));
    for event in events {
        app.apply(PaneUpdate { pane: 0, event });
    }
    let mut view = ViewState::default();
    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    term.draw(|f| frame(&mut app, &mut view, f.area(), f.buffer_mut()))
        .unwrap();
    let screen = term.backend().to_string();
    assert!(screen.contains("echo hello-from-tool && pwd"), "{screen}");
    assert!(screen.contains("/tmp/hive-lab-work"), "{screen}");
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("pi_running_tool_live", screen);
    });
}
