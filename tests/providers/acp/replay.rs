//! Replays of the real ACP captures of all three agents.

use super::*;

#[test]
fn replay_text_streams_one_message_per_agent() {
    for agent in AGENTS {
        let r = replay(agent, "text");
        let expected = r.chunk_text("agent_message_chunk");
        assert!(!expected.is_empty(), "{agent}: capture has text");
        let messages = r.messages(Origin::Agent);
        assert_eq!(messages, vec![expected], "{agent}");
        let ends = r.turn_ends();
        assert_eq!(ends.len(), 1, "{agent}: exactly one turn end");
        assert_eq!(
            completed(ends[0]),
            Some((&TurnStatus::Completed, Some("end_turn"))),
            "{agent}"
        );
        // The session id the agent gave names every event.
        let sid = r
            .agent_lines
            .iter()
            .find_map(|m| m["result"]["sessionId"].as_str())
            .unwrap();
        assert!(r.stream().iter().all(|e| e.session_id == sid), "{agent}");
        assert!(r.stream().iter().all(|e| e.turn_id == "turn-1"), "{agent}");
        // What hive sent: initialize with fs capabilities, session/new with an absolute cwd.
        let init = &r.written[0];
        assert_eq!(init["method"], "initialize");
        assert_eq!(init["params"]["protocolVersion"], 1);
        assert_eq!(
            init["params"]["clientCapabilities"]["fs"]["readTextFile"],
            true
        );
        assert_eq!(
            init["params"]["clientCapabilities"]["fs"]["writeTextFile"],
            true
        );
        let new = r
            .written
            .iter()
            .find(|w| w["method"] == "session/new")
            .unwrap();
        assert!(Path::new(new["params"]["cwd"].as_str().unwrap()).is_absolute());
        assert_eq!(new["params"]["mcpServers"], json!([]));
    }
}

#[test]
fn replay_thinking_keeps_reasoning_and_text_apart() {
    for agent in AGENTS {
        let r = replay(agent, "thinking");
        let thought = r.chunk_text("agent_thought_chunk");
        assert!(!thought.is_empty(), "{agent}: capture has thinking");
        assert_eq!(r.thinking().concat(), thought, "{agent}");
        assert_eq!(
            r.messages(Origin::Agent).concat(),
            r.chunk_text("agent_message_chunk"),
            "{agent}"
        );
        assert_eq!(r.turn_ends().len(), 1, "{agent}");
    }
}

#[test]
fn replay_tool_with_permission_allowed() {
    for agent in AGENTS {
        let r = replay(agent, "tool");
        // The approval card carries the agent's own options.
        let perms = r.permissions();
        assert_eq!(perms.len(), 1, "{agent}");
        let asked = r
            .agent_lines
            .iter()
            .find(|m| m["method"] == "session/request_permission")
            .unwrap();
        let offered: Vec<(String, String, String)> = asked["params"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["optionId"].as_str().unwrap().to_owned(),
                    o["name"].as_str().unwrap().to_owned(),
                    o["kind"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let shown: Vec<(String, String, String)> = perms[0]
            .options
            .iter()
            .map(|o| (o.option_id.clone(), o.label.clone(), o.kind.clone()))
            .collect();
        assert_eq!(shown, offered, "{agent}");
        // One create and one complete for the call, correlated by its id.
        let call_id = asked["params"]["toolCall"]["toolCallId"].as_str().unwrap();
        let tools: Vec<_> = r.tools().into_iter().filter(|t| t.2 == call_id).collect();
        // (claude-code-acp's call is re-announced with its command while
        // it waits: an update between them.)
        let statuses: Vec<UpsertStatus> = tools.iter().map(|t| t.0).collect();
        assert_eq!(
            statuses.first(),
            Some(&UpsertStatus::Create),
            "{agent}: {tools:?}"
        );
        assert_eq!(
            statuses.last(),
            Some(&UpsertStatus::Complete),
            "{agent}: {tools:?}"
        );
        assert!(
            statuses[1..statuses.len() - 1]
                .iter()
                .all(|s| *s == UpsertStatus::Update),
            "{agent}: {tools:?}"
        );
        let done = tools.last().unwrap();
        assert_eq!(done.4, Some(false), "{agent}");
        assert!(
            done.1.contains("mkdir -p perm-dir"),
            "{agent}: title as name: {}",
            done.1
        );
        if agent != "gemini" {
            // Gemini reports the command's completion without its output.
            assert!(
                done.3.as_deref().unwrap_or("").contains("made"),
                "{agent}: {done:?}"
            );
        }
        assert_eq!(
            completed(r.turn_ends()[0]).map(|c| c.0),
            Some(&TurnStatus::Completed),
            "{agent}"
        );
    }
}

#[test]
fn replay_tool_with_permission_rejected() {
    for agent in AGENTS {
        let r = replay(agent, "tool_reject");
        assert_eq!(r.permissions().len(), 1, "{agent}");
        let stop = r.prompt_results()[0]["stopReason"]
            .as_str()
            .unwrap()
            .to_owned();
        let ends = r.turn_ends();
        assert_eq!(ends.len(), 1, "{agent}");
        if stop == "cancelled" {
            // codex-acp ends the turn when a command is refused.
            assert_eq!(
                completed(ends[0]).map(|c| c.0),
                Some(&TurnStatus::Cancelled),
                "{agent}"
            );
        }
        // However the turn ends, the refused call ends refused (issue 13
        // item 7: codex-acp's kept spinning), with its real arguments.
        let tools = r.tools();
        let done: Vec<_> = tools
            .iter()
            .filter(|t| t.0 == UpsertStatus::Complete)
            .collect();
        assert_eq!(done.len(), 1, "{agent}: {tools:?}");
        assert_eq!(done[0].4, Some(true), "{agent}: a refused call is an error");
        assert!(
            done[0]
                .3
                .as_deref()
                .unwrap_or("")
                .to_lowercase()
                .contains("refused")
                || done[0].3.as_deref().unwrap_or("").contains("denied"),
            "{agent}: {:?}",
            done[0]
        );
    }
}

#[test]
fn replay_plan_renders_a_checklist() {
    for agent in AGENTS {
        let r = replay(agent, "plan");
        let plan = r.updates("plan");
        let system = r.messages(Origin::System);
        assert_eq!(r.turn_ends().len(), 1, "{agent}");
        if plan.is_empty() {
            // Gemini answered this prompt without its todo tool.
            assert!(system.is_empty(), "{agent}");
            continue;
        }
        assert_eq!(system.len(), 1, "{agent}: one plan item");
        for entry in plan[0]["entries"].as_array().unwrap() {
            let content = entry["content"].as_str().unwrap();
            let mark = if entry["status"] == "completed" {
                "[x]"
            } else {
                "[ ]"
            };
            assert!(
                system[0].contains(&format!("- {mark} {content}")),
                "{agent}: {content} in {}",
                system[0]
            );
        }
    }
}

#[test]
fn replay_cancel_ends_the_turn_cancelled_and_the_next_one_works() {
    for agent in AGENTS {
        let r = replay(agent, "cancel");
        assert!(
            r.written.iter().any(|w| w["method"] == "session/cancel"),
            "{agent}"
        );
        let ends = r.turn_ends();
        let statuses: Vec<_> = ends.iter().map(|t| completed(t).map(|c| *c.0)).collect();
        assert_eq!(
            statuses,
            vec![Some(TurnStatus::Cancelled), Some(TurnStatus::Completed)],
            "{agent}"
        );
        assert_eq!(ends[0].turn_id(), "turn-1");
        assert_eq!(ends[1].turn_id(), "turn-2");
    }
}

#[test]
fn replay_cancel_during_a_tool() {
    for agent in AGENTS {
        let r = replay(agent, "cancel_tool");
        let ends = r.turn_ends();
        assert_eq!(ends.len(), 1, "{agent}");
        assert_eq!(
            completed(ends[0]).map(|c| c.0),
            Some(&TurnStatus::Cancelled),
            "{agent}"
        );
        // A cancelled turn shows no tool as completed.
        assert!(
            r.tools()
                .iter()
                .all(|t| t.0 != UpsertStatus::Complete || t.3.is_some()),
            "{agent}"
        );
    }
}

#[test]
fn replay_error_response_becomes_a_turn_error() {
    for agent in AGENTS {
        let r = replay(agent, "error");
        let err = r
            .agent_lines
            .iter()
            .find_map(|m| m.get("error"))
            .expect("capture has an error response");
        let ends = r.turn_ends();
        assert_eq!(ends.len(), 1, "{agent}");
        match ends[0] {
            TurnEvent::TurnError {
                error_code,
                error_message,
                ..
            } => {
                assert_eq!(error_code, &format!("rpc_{}", err["code"]), "{agent}");
                assert!(
                    error_message.contains(err["message"].as_str().unwrap()),
                    "{agent}"
                );
            }
            other => panic!("{agent}: expected a turn error, got {other:?}"),
        }
    }
}

#[test]
fn replay_two_prompts_in_one_session() {
    for agent in AGENTS {
        let r = replay(agent, "two_prompts");
        let ends = r.turn_ends();
        assert_eq!(ends.len(), 2, "{agent}");
        assert!(
            ends.iter()
                .all(|t| completed(t).map(|c| *c.0) == Some(TurnStatus::Completed))
        );
        let starts = r.turn_events().iter().filter(|t| !t.is_terminal()).count();
        assert_eq!(starts, 2, "{agent}");
    }
}

#[test]
fn replay_commands_and_session_are_reported() {
    for agent in AGENTS {
        let r = replay(agent, "text");
        let advertised: Vec<String> =
            r.updates("available_commands_update")[0]["availableCommands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect();
        let sid = r
            .agent_lines
            .iter()
            .find_map(|m| m["result"]["sessionId"].as_str())
            .unwrap();
        let last = r
            .events
            .iter()
            .rev()
            .find_map(|e| match e {
                ProviderEvent::Session(s) => Some(s.clone()),
                _ => None,
            })
            .expect("a session event");
        assert_eq!(last.resume_handle.as_deref(), Some(sid), "{agent}");
        assert_eq!(last.commands, advertised, "{agent}");
        assert!(
            last.model.is_some(),
            "{agent}: the session's model is known"
        );
    }
}

#[test]
fn replay_usage_reaches_the_turn_end() {
    // codex-acp: the last usage_update of the turn gives the context.
    let r = replay("codex", "text");
    let used = r.updates("usage_update").last().unwrap()["used"]
        .as_u64()
        .unwrap();
    let usage = r.stream().iter().find_map(|e| match &e.payload {
        Payload::ResponseDone { usage, .. } => usage.clone(),
        _ => None,
    });
    // It reports the context in use, not the turn's tokens (issue 33).
    let usage = usage.unwrap();
    assert_eq!(usage.context_tokens, Some(used));
    assert_eq!(usage.context_window, Some(258_400));
    assert_eq!(usage.input_tokens, 0);
    // Gemini: the prompt response's own token counts.
    let r = replay("gemini", "text");
    let counts = &r.prompt_results()[0]["_meta"]["quota"]["token_count"];
    let usage = r
        .stream()
        .iter()
        .find_map(|e| match &e.payload {
            Payload::ResponseDone { usage, .. } => usage.clone(),
            _ => None,
        })
        .unwrap();
    assert_eq!(usage.input_tokens, counts["input_tokens"].as_u64().unwrap());
    // gemini --acp runs `auto`; the model that answered is in the
    // response's `model_usage`, for the footer (issue 34 item 9).
    assert_eq!(usage.model.as_deref(), Some("gemini-3.8-flash"));
    assert_eq!(
        usage.output_tokens,
        counts["output_tokens"].as_u64().unwrap()
    );
}

/// Issue 13 item 3, per ACP agent: claude-code-acp reports no usage (no
/// figures at all), codex-acp only its context use (no token counts: "—",
/// not `↓0`), Gemini its token counts.
#[test]
fn footer_usage_is_what_each_acp_agent_reports() {
    let usage = |agent: &str| {
        replay(agent, "text")
            .stream()
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ResponseDone { usage, .. } => Some(usage.clone()),
                _ => None,
            })
            .expect("a turn end")
            .map(|u| hive::ui::cells::usage_text(&u))
    };
    assert_eq!(usage("claude"), None);
    // codex-acp's `usage_update` is the context in use, which the pane's
    // context gauge shows; it is no count of the turn's tokens (issue 33).
    assert_eq!(usage("codex").as_deref(), Some("↑— ↓—"));
    assert_eq!(usage("gemini").as_deref(), Some("↑12.2k ↓25"));
}

#[test]
fn replay_gemini_writes_a_new_file_through_hive() {
    for case in ["write", "write_missing_as_empty"] {
        let r = replay("gemini", case);
        // Gemini first reads the missing file; hive answers empty content, not an error.
        let reads: Vec<&Value> = r
            .agent_lines
            .iter()
            .filter(|m| m["method"] == "fs/read_text_file")
            .collect();
        assert!(!reads.is_empty(), "{case}");
        for read in reads {
            let answer = r
                .written
                .iter()
                .find(|w| w.get("method").is_none() && w["id"] == read["id"])
                .unwrap();
            assert_eq!(answer["result"], json!({"content": ""}), "{case}");
        }
        if let Some(write) = r
            .agent_lines
            .iter()
            .find(|m| m["method"] == "fs/write_text_file")
        {
            let path = write["params"]["path"].as_str().unwrap();
            assert!(path.starts_with(r.dir.path().canonicalize().unwrap().to_str().unwrap()));
            assert_eq!(
                std::fs::read_to_string(path).unwrap(),
                write["params"]["content"].as_str().unwrap(),
                "{case}"
            );
        }
    }
}

#[test]
fn replay_edit_diffs_are_rendered_as_unified_diffs() {
    let r = replay("codex", "write");
    let done: Vec<_> = r
        .tools()
        .into_iter()
        .filter(|t| t.0 == UpsertStatus::Complete)
        .collect();
    assert_eq!(done.len(), 1);
    let out = done[0].3.clone().unwrap();
    assert!(out.contains("+++ b/"), "{out}");
    assert!(out.contains("+written by the mock"), "{out}");
}

/// Issue 34 item 9: claude-code-acp announces a command as `Terminal`
/// (no input), then again with the command as a markdown code span. The
/// running call shows the command (an `update` while it runs), and no name
/// keeps the backticks. Failed before: `Terminal` until the command ended,
/// then `` `echo started; …` `` with its backticks.
#[test]
fn replay_claude_shows_a_running_command_by_its_text() {
    for case in ["tool", "cancel_tool"] {
        let r = replay("claude", case);
        let rows = r.tools();
        let running = rows
            .iter()
            .find(|t| t.0 == UpsertStatus::Update)
            .unwrap_or_else(|| panic!("{case}: no update while it ran: {rows:?}"));
        assert!(
            running.1.starts_with("mkdir -p perm-dir") || running.1.starts_with("echo started"),
            "{case}: {rows:?}"
        );
        assert!(rows.iter().all(|t| !t.1.contains('`')), "{case}: {rows:?}");
    }
}

/// codex-acp answers `session/set_mode` with a `config_option_update`
/// (captured from codex-acp 0.16.0): the options go to the engine, not to
/// the pane as raw JSON. Failed before: one `agent update` diagnostic.
#[test]
fn codex_config_option_update_is_kept_not_shown() {
    use hive::provider::acp::translate::{Translated, Translator};
    let path = fixture("codex", "x").with_file_name("config_option_update.json");
    let line: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let out = Translator::new("acp").update(&line["params"]);
    let [Translated::ConfigOptions(options)] = &out[..] else {
        panic!("one ConfigOptions, no notice: {out:?}");
    };
    assert_eq!(options[0]["currentValue"], "auto");
    assert_eq!(options.as_array().map(Vec::len), Some(3));
}
