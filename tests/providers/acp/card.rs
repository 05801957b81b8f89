//! codex-acp's refused command (issue 13 item 7): the approval card shows
//! the agent's lines and options as it structured them, and the refused call
//! ends refused, in the pane and after a restart.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use hive::app::{build_app, frame};
use hive::config::{Config, ConfigSource};
use hive::history::{self, OpenOptions, Store};
use hive::runner::{PaneEvent, PaneUpdate, TurnState};
use hive::ui::ViewState;
use hive::upsert::{Output, UpsertKind};

use super::*;

fn render_card(req: &PermissionRequest) -> String {
    let config = Config::parse(
        "[[agent]]\nid = \"codex\"\nname = \"Codex\"\nprovider = \"script\"\n",
        ConfigSource::Builtin,
    )
    .unwrap();
    let (mut app, _) = build_app(&config);
    app.now = app.started;
    app.zoom = true;
    for event in [
        PaneEvent::State(TurnState::Streaming),
        PaneEvent::Permission(req.clone()),
    ] {
        app.apply(PaneUpdate { pane: 0, event });
    }
    let mut view = ViewState::default();
    let mut term = Terminal::new(TestBackend::new(100, 24)).unwrap();
    term.draw(|f| frame(&mut app, &mut view, f.area(), f.buffer_mut()))
        .unwrap();
    term.backend().to_string()
}

#[test]
fn codex_acp_approval_card_keeps_the_agents_lines_and_options() {
    let r = replay("codex", "tool_reject");
    let req = r.permissions()[0].clone();
    let screen = render_card(&req);
    // The argv and the decisions the agent put on lines of their own.
    assert!(!screen.contains("/bin/bash-lc"), "{screen}");
    assert!(!screen.contains("ApprovedApproved"), "{screen}");
    // One row per option, with its key and kind.
    for (i, o) in req.options.iter().enumerate() {
        let row = screen
            .lines()
            .find(|l| {
                l.contains(&format!(
                    "[{}] {}",
                    i + 1,
                    o.label.get(..20).unwrap_or(&o.label)
                ))
            })
            .unwrap_or_else(|| panic!("option {i} on its own row: {screen}"));
        assert!(!row.contains(&format!("[{}]", i + 2)), "{row}");
    }
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!("acp_codex_approval_card", screen);
    });
}

#[tokio::test]
async fn a_refused_codex_acp_call_is_restored_refused_with_its_arguments() {
    let r = replay("codex", "tool_reject");
    let asked = r
        .agent_lines
        .iter()
        .find(|m| m["method"] == "session/request_permission")
        .unwrap();
    let command = asked["params"]["toolCall"]["rawInput"]["command"].clone();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = AgentConfig::new("codex", "acp");
    let mut h = history::open_pane_in(&store, &agent, &OpenOptions::default());
    let mut recorder = h.recorder.take().unwrap();
    for out in &r.outputs {
        let event = match out {
            Output::Upsert(u) => PaneEvent::Upsert(u.clone()),
            Output::Turn(t) => PaneEvent::Turn(t.clone()),
        };
        recorder.record(&event);
    }
    drop(recorder);
    let h = history::open_pane_in(&store, &agent, &OpenOptions::default());
    let tools: Vec<_> = h
        .items
        .iter()
        .filter_map(|u| match &u.kind {
            UpsertKind::ToolCall {
                arguments,
                output_is_error,
                output,
                display,
                ..
            } => {
                // The title already is the command; the summary does not
                // repeat it, nor fall back on the kind ("execute").
                let summary = display.as_ref().map(|d| d.summary.clone());
                assert_eq!(summary.as_deref().unwrap_or(""), "");
                Some((arguments.clone(), *output_is_error, output.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(tools.len(), 1, "{:?}", h.items);
    let (arguments, is_error, output) = &tools[0];
    assert_eq!(arguments["input"]["command"], command, "real arguments");
    assert_eq!(*is_error, Some(true), "restored as refused: {output:?}");
}
