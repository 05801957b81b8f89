//! The `acp` provider: real captures of claude-code-acp, codex-acp and
//! `gemini --experimental-acp` replayed through the engine and the upsert
//! processor, and lifecycle tests against a fake ACP agent
//! (tests/fake/fake_acp.py).
//!
//! Expected values are derived from the captures themselves (the chunks the
//! agent sent, the options it offered), never typed in by hand.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hive::config::AgentConfig;
use hive::event::{FinalItem, Origin, Payload, ResponseStatus, StreamEvent};
use hive::processor::{Processor, ProcessorConfig};
use hive::provider::acp::AcpFactory;
use hive::provider::acp::engine::{Effect, Engine, EngineConfig};
use hive::provider::{
    DiagnosticLevel, PermissionDecision, PermissionRequest, ProviderCommand, ProviderError,
    ProviderEvent, ProviderFactory, ProviderHandle, ProviderSpec,
};
use hive::upsert::{Output, TurnEvent, TurnStatus, UpsertKind, UpsertStatus};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

const CAPTURE_CWD: &str = "/tmp/hive-lab-work";
const AGENTS: [&str; 3] = ["claude", "codex", "gemini"];

// ---------------------------------------------------------------------------
// Replay harness
// ---------------------------------------------------------------------------

/// One capture replayed: what the engine wrote, emitted, and what the
/// processor made of it.
struct Replay {
    /// The agent's stdout lines as captured (after the cwd rewrite).
    agent_lines: Vec<Value>,
    /// Every line the engine wrote, in order.
    written: Vec<Value>,
    events: Vec<ProviderEvent>,
    outputs: Vec<Output>,
    /// The engine's working directory (a temp dir standing in for the lab's).
    dir: tempfile::TempDir,
}

fn fixture(agent: &str, case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("acp-{agent}"))
        .join(format!("{case}.timeline.jsonl"))
}

fn id_key(v: &Value) -> String {
    v.to_string()
}

fn replay(agent: &str, case: &str) -> Replay {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let text = std::fs::read_to_string(fixture(agent, case)).unwrap();
    let mut engine = Engine::new(EngineConfig::new("replay", cwd.clone()));
    let mut processor = Processor::new(ProcessorConfig::default());
    let mut r = Replay {
        agent_lines: Vec::new(),
        written: Vec::new(),
        events: Vec::new(),
        outputs: Vec::new(),
        dir,
    };
    // Lines written but not yet matched against the capture.
    let mut unmatched: VecDeque<Value> = VecDeque::new();
    // Captured request id (ours) → the id the engine used.
    let mut our_ids: HashMap<String, Value> = HashMap::new();
    // Agent request id → method.
    let mut agent_requests: HashMap<String, String> = HashMap::new();
    let mut pending_permissions: VecDeque<PermissionRequest> = VecDeque::new();
    let mut turns = 0;

    let mut pump = |engine: &mut Engine,
                    r: &mut Replay,
                    unmatched: &mut VecDeque<Value>,
                    perms: &mut VecDeque<PermissionRequest>| {
        for effect in engine.drain() {
            match effect {
                Effect::Write(line) => {
                    let v: Value = serde_json::from_str(&line).expect("engine wrote JSON");
                    r.written.push(v.clone());
                    unmatched.push_back(v);
                }
                Effect::Emit(ev) => {
                    let ev = *ev;
                    if let ProviderEvent::Stream(se) = &ev {
                        r.outputs.extend(processor.process(se, Instant::now()));
                    }
                    if let ProviderEvent::Permission(p) = &ev {
                        perms.push_back(p.clone());
                    }
                    r.events.push(ev);
                }
            }
        }
    };

    engine.start();
    pump(
        &mut engine,
        &mut r,
        &mut unmatched,
        &mut pending_permissions,
    );
    for raw in text.lines() {
        let entry: Value = serde_json::from_str(raw).unwrap();
        let dir_ = entry["dir"].as_str().unwrap_or("");
        if dir_ != "in" && dir_ != "out" {
            continue;
        }
        let line = entry["line"]
            .as_str()
            .unwrap()
            .replace(CAPTURE_CWD, cwd.to_str().unwrap());
        let msg: Value = serde_json::from_str(&line).unwrap();
        let now = Instant::now();
        if dir_ == "in" {
            let method = msg.get("method").and_then(Value::as_str);
            match (method, msg.get("id")) {
                (Some("session/prompt"), Some(id)) => {
                    turns += 1;
                    let text = msg["params"]["prompt"][0]["text"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    engine.on_command(
                        ProviderCommand::Send {
                            turn_id: format!("turn-{turns}"),
                            text,
                        },
                        now,
                    );
                    pump(
                        &mut engine,
                        &mut r,
                        &mut unmatched,
                        &mut pending_permissions,
                    );
                    let sent = take_method(&mut unmatched, "session/prompt");
                    our_ids.insert(id_key(id), sent["id"].clone());
                }
                (Some(m), Some(id)) => {
                    let sent = take_method(&mut unmatched, m);
                    our_ids.insert(id_key(id), sent["id"].clone());
                }
                (Some("session/cancel"), None) => {
                    engine.on_command(ProviderCommand::Cancel, now);
                    pump(
                        &mut engine,
                        &mut r,
                        &mut unmatched,
                        &mut pending_permissions,
                    );
                    take_method(&mut unmatched, "session/cancel");
                }
                (Some(other), None) => panic!("unexpected notification from the harness: {other}"),
                (None, Some(id)) => {
                    // The harness answered an agent request; hive answers its own way.
                    let method = agent_requests.get(&id_key(id)).cloned().unwrap_or_default();
                    if method == "session/request_permission" {
                        let perm = pending_permissions
                            .pop_front()
                            .expect("a permission event for the agent's request");
                        let outcome = &msg["result"]["outcome"];
                        let decision = match outcome["optionId"].as_str() {
                            Some(option_id) => PermissionDecision::Option {
                                option_id: option_id.to_owned(),
                            },
                            None => PermissionDecision::Deny {
                                reason: "test".into(),
                            },
                        };
                        engine.on_command(
                            ProviderCommand::Permission {
                                request_id: perm.request_id,
                                decision,
                            },
                            now,
                        );
                        pump(
                            &mut engine,
                            &mut r,
                            &mut unmatched,
                            &mut pending_permissions,
                        );
                    }
                    let answer = take_response(&mut unmatched, id);
                    if method == "session/request_permission" {
                        assert_eq!(
                            answer["result"], msg["result"],
                            "hive answers the permission as the harness did"
                        );
                    }
                }
                (None, None) => panic!("harness line without method or id: {line}"),
            }
            continue;
        }
        // Agent → client: responses to our requests carry the engine's ids.
        let mut msg = msg;
        if msg.get("method").is_none() {
            if let Some(id) = msg.get("id").cloned() {
                let mapped = our_ids
                    .get(&id_key(&id))
                    .unwrap_or_else(|| panic!("response to unknown request {id}"));
                msg["id"] = mapped.clone();
            }
        } else if let (Some(id), Some(m)) = (msg.get("id"), msg.get("method")) {
            agent_requests.insert(id_key(id), m.as_str().unwrap_or("").to_owned());
        }
        r.agent_lines.push(msg.clone());
        engine.on_line(&msg.to_string(), now);
        pump(
            &mut engine,
            &mut r,
            &mut unmatched,
            &mut pending_permissions,
        );
    }
    r
}

fn take_method(q: &mut VecDeque<Value>, method: &str) -> Value {
    let pos = q
        .iter()
        .position(|v| v["method"] == method)
        .unwrap_or_else(|| panic!("hive did not send {method}; unmatched: {q:?}"));
    q.remove(pos).unwrap()
}

fn take_response(q: &mut VecDeque<Value>, id: &Value) -> Value {
    let pos = q
        .iter()
        .position(|v| v.get("method").is_none() && v["id"] == *id)
        .unwrap_or_else(|| panic!("hive did not answer request {id}; unmatched: {q:?}"));
    q.remove(pos).unwrap()
}

impl Replay {
    fn updates(&self, kind: &str) -> Vec<&Value> {
        self.agent_lines
            .iter()
            .filter(|m| {
                m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == kind
            })
            .map(|m| &m["params"]["update"])
            .collect()
    }

    fn chunk_text(&self, kind: &str) -> String {
        self.updates(kind)
            .iter()
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    fn turn_events(&self) -> Vec<&TurnEvent> {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Turn(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    fn turn_ends(&self) -> Vec<&TurnEvent> {
        self.turn_events()
            .into_iter()
            .filter(|t| t.is_terminal())
            .collect()
    }

    /// Final text of every completed message item, by origin.
    fn messages(&self, origin: Origin) -> Vec<String> {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Upsert(u) if u.status == UpsertStatus::Complete => match &u.kind {
                    UpsertKind::Message { content, origin: o } if *o == origin => {
                        Some(content.to_string())
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    fn thinking(&self) -> Vec<String> {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Upsert(u) if u.status == UpsertStatus::Complete => match &u.kind {
                    UpsertKind::Thinking { content, .. } => Some(content.to_string()),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// (status, tool name, call id, output, is_error) of every tool upsert.
    fn tools(&self) -> Vec<ToolSeen> {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Upsert(u) => match &u.kind {
                    UpsertKind::ToolCall {
                        tool_name,
                        call_id,
                        output,
                        output_is_error,
                        ..
                    } => Some((
                        u.status,
                        tool_name.clone(),
                        call_id.clone(),
                        output.clone(),
                        *output_is_error,
                    )),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    fn permissions(&self) -> Vec<&PermissionRequest> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Permission(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    fn stream(&self) -> Vec<&StreamEvent> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Stream(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    fn prompt_results(&self) -> Vec<&Value> {
        self.agent_lines
            .iter()
            .filter(|m| m.get("method").is_none() && m["result"].get("stopReason").is_some())
            .map(|m| &m["result"])
            .collect()
    }
}

/// (status, tool name, call id, output, is_error) of one tool upsert.
type ToolSeen = (UpsertStatus, String, String, Option<String>, Option<bool>);

fn completed(t: &TurnEvent) -> Option<(&TurnStatus, Option<&str>)> {
    match t {
        TurnEvent::TurnComplete {
            status,
            finish_reason,
            ..
        } => Some((status, finish_reason.as_deref())),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Replays
// ---------------------------------------------------------------------------

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
        assert_eq!(
            tools.iter().map(|t| t.0).collect::<Vec<_>>(),
            vec![UpsertStatus::Create, UpsertStatus::Complete],
            "{agent}: {tools:?}"
        );
        let done = &tools[1];
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
            continue;
        }
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
    // codex-acp: the last usage_update of the turn.
    let r = replay("codex", "text");
    let used = r.updates("usage_update").last().unwrap()["used"]
        .as_u64()
        .unwrap();
    let usage = r.stream().iter().find_map(|e| match &e.payload {
        Payload::ResponseDone { usage, .. } => usage.clone(),
        _ => None,
    });
    assert_eq!(usage.map(|u| u.input_tokens), Some(used));
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
    assert_eq!(
        usage.output_tokens,
        counts["output_tokens"].as_u64().unwrap()
    );
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

// ---------------------------------------------------------------------------
// Lifecycle against the fake agent
// ---------------------------------------------------------------------------

struct Live {
    handle: ProviderHandle,
    rx: mpsc::UnboundedReceiver<ProviderEvent>,
    seen: Vec<ProviderEvent>,
    _dir: tempfile::TempDir,
    work: PathBuf,
    log: PathBuf,
}

fn fake_agent(dir: &Path, env: &[(&str, &str)]) -> (AgentConfig, PathBuf, PathBuf) {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let log = dir.join("agent.log");
    let mut a = AgentConfig::new("fake", "acp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_acp.py");
    a.command = vec!["python3".into(), script.display().to_string()];
    a.cwd = Some(work.clone());
    a.env
        .insert("FAKE_ACP_LOG".into(), log.display().to_string());
    for (k, v) in env {
        a.env.insert((*k).into(), (*v).into());
    }
    a.options
        .insert("kill_grace_ms".into(), toml::Value::Integer(500));
    (a, work, log)
}

fn start(env: &[(&str, &str)], resume: Option<&str>) -> Live {
    let dir = tempfile::tempdir().unwrap();
    let (agent, work, log) = fake_agent(dir.path(), env);
    start_with(agent, dir, work, log, resume)
}

fn start_with(
    agent: AgentConfig,
    dir: tempfile::TempDir,
    work: PathBuf,
    log: PathBuf,
    resume: Option<&str>,
) -> Live {
    let (tx, rx) = mpsc::unbounded_channel();
    let spec = ProviderSpec {
        agent,
        resume: resume.map(str::to_owned),
    };
    let handle = AcpFactory.spawn(spec, tx).expect("spawn fake agent");
    Live {
        handle,
        rx,
        seen: Vec::new(),
        _dir: dir,
        work,
        log,
    }
}

impl Live {
    /// Waits (up to a generous bound) for an event matching `f`.
    async fn until(&mut self, what: &str, f: impl Fn(&ProviderEvent) -> bool) -> ProviderEvent {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let ev = tokio::time::timeout_at(deadline, self.rx.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out waiting for {what}; seen: {:#?}", self.seen))
                .unwrap_or_else(|| panic!("event channel closed waiting for {what}"));
            self.seen.push(ev.clone());
            if f(&ev) {
                return ev;
            }
        }
    }

    async fn turn_end(&mut self, turn: &str) -> Payload {
        let t = turn.to_owned();
        let ev = self
            .until(&format!("end of {turn}"), move |e| {
                matches!(e, ProviderEvent::Stream(s) if s.turn_id == t && matches!(s.payload, Payload::ResponseDone { .. } | Payload::ResponseError { .. }))
            })
            .await;
        match ev {
            ProviderEvent::Stream(s) => s.payload,
            _ => unreachable!(),
        }
    }

    fn send(&self, turn: &str, text: &str) {
        assert!(self.handle.send(ProviderCommand::Send {
            turn_id: turn.into(),
            text: text.into(),
        }));
    }

    fn text_of(&self, turn: &str) -> String {
        self.seen
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Stream(s) if s.turn_id == turn => match &s.payload {
                    Payload::ItemDone {
                        final_item:
                            FinalItem::Message {
                                content,
                                origin: Origin::Agent,
                            },
                        ..
                    } => Some(content.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn log_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn child_pid(&self) -> Option<i32> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("CHILD ").and_then(|p| p.trim().parse().ok()))
    }
}

/// Running (a zombie nobody reaped in this container counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test]
async fn live_turn_session_and_commands() {
    let mut l = start(&[], None);
    l.send("t1", "hello");
    let end = l.turn_end("t1").await;
    assert!(matches!(
        end,
        Payload::ResponseDone {
            status: ResponseStatus::Completed,
            ..
        }
    ));
    assert_eq!(l.text_of("t1"), "Hello **from** the fake agent.");
    let session = l
        .seen
        .iter()
        .rev()
        .find_map(|e| match e {
            ProviderEvent::Session(s) => Some(s.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(session.resume_handle.as_deref(), Some("fake-session-1"));
    assert_eq!(session.model.as_deref(), Some("fake-model"));
    assert_eq!(session.commands, vec!["review".to_owned()]);
    let new = l
        .log_lines()
        .into_iter()
        .find(|m| m["method"] == "session/new")
        .unwrap();
    assert_eq!(
        new["params"]["cwd"].as_str().map(PathBuf::from),
        Some(l.work.canonicalize().unwrap())
    );
    l.handle.kill().await;
}

#[tokio::test]
async fn live_crash_mid_turn_is_a_turn_error_then_exited() {
    let mut l = start(&[], None);
    l.send("t1", "crash please");
    match l.turn_end("t1").await {
        Payload::ResponseError { error } => {
            assert_eq!(error.code, "agent_exited");
            assert!(error.message.contains("status 3"), "{}", error.message);
            assert!(
                error.message.contains("crashed on purpose"),
                "{}",
                error.message
            );
        }
        other => panic!("expected response_error, got {other:?}"),
    }
    let exited = l
        .until("exited", |e| matches!(e, ProviderEvent::Exited { .. }))
        .await;
    assert!(matches!(
        exited,
        ProviderEvent::Exited { code: Some(3), .. }
    ));
}

#[tokio::test]
async fn live_hang_is_ended_by_cancel_and_kill() {
    let mut l = start(&[], None);
    l.send("t1", "hang");
    l.until("response start", |e| {
        matches!(e, ProviderEvent::Stream(s) if matches!(s.payload, Payload::ResponseStart { .. }))
    })
    .await;
    l.handle.send(ProviderCommand::Cancel);
    let end = l.turn_end("t1").await;
    assert!(
        matches!(
            end,
            Payload::ResponseDone {
                status: ResponseStatus::Cancelled,
                ..
            }
        ),
        "{end:?}"
    );
    assert!(l.handle.is_alive());
    assert!(
        l.log_lines()
            .iter()
            .any(|m| m["method"] == "session/cancel")
    );
    l.handle.kill().await;
}

#[tokio::test]
async fn live_agent_that_ignores_eof_and_sigterm_is_killed() {
    let mut l = start(
        &[("FAKE_ACP_IGNORE_EOF", "1"), ("FAKE_ACP_IGNORE_TERM", "1")],
        None,
    );
    l.send("t1", "hello");
    l.turn_end("t1").await;
    let Live { handle, mut rx, .. } = l;
    handle.kill().await;
    let mut exited = None;
    while let Ok(ev) = rx.try_recv() {
        if let ProviderEvent::Exited { code, message } = ev {
            exited = Some((code, message));
        }
    }
    let (code, message) = exited.expect("Exited after kill");
    assert_eq!(code, None, "ended by a signal: {message}");
    assert!(
        message.contains("signal 9"),
        "SIGKILL was needed: {message}"
    );

    // Ignoring only EOF (claude-code-acp, codex-acp): SIGTERM is enough.
    let mut l = start(&[("FAKE_ACP_IGNORE_EOF", "1")], None);
    l.send("t1", "hello");
    l.turn_end("t1").await;
    let Live { handle, mut rx, .. } = l;
    let asked = std::time::Instant::now();
    handle.kill().await;
    eprintln!(
        "kill of an agent that ignores EOF took {:?}",
        asked.elapsed()
    );
    let mut exited = None;
    while let Ok(ev) = rx.try_recv() {
        if let ProviderEvent::Exited { message, .. } = ev {
            exited = Some(message);
        }
    }
    let message = exited.expect("Exited after kill");
    assert!(message.contains("signal 15"), "SIGTERM ended it: {message}");
}

#[tokio::test]
async fn live_malformed_lines_are_diagnostics_and_the_stream_goes_on() {
    let mut l = start(&[], None);
    l.send("t1", "malformed");
    let end = l.turn_end("t1").await;
    assert!(matches!(
        end,
        Payload::ResponseDone {
            status: ResponseStatus::Completed,
            ..
        }
    ));
    assert_eq!(l.text_of("t1"), "still here");
    let malformed = l
        .seen
        .iter()
        .filter(|e| matches!(e, ProviderEvent::Diagnostic { level: DiagnosticLevel::Warn, message } if message.contains("malformed")))
        .count();
    assert_eq!(malformed, 3);
    l.handle.kill().await;
}

async fn permission_round(
    l: &mut Live,
    turn: &str,
    decision: Option<PermissionDecision>,
) -> Payload {
    l.send(turn, "permission");
    let ev = l
        .until("permission", |e| matches!(e, ProviderEvent::Permission(_)))
        .await;
    let ProviderEvent::Permission(p) = ev else {
        unreachable!()
    };
    let kinds: Vec<&str> = p.options.iter().map(|o| o.kind.as_str()).collect();
    assert_eq!(kinds, ["allow_always", "allow_once", "reject_once"]);
    assert_eq!(p.tool_name, "`touch x`");
    assert_eq!(p.input, json!({"command": "touch x"}));
    match decision {
        Some(decision) => {
            l.handle.send(ProviderCommand::Permission {
                request_id: p.request_id,
                decision,
            });
        }
        None => {
            l.handle.send(ProviderCommand::Cancel);
        }
    }
    l.turn_end(turn).await
}

fn permission_answers(l: &Live) -> Vec<Value> {
    l.log_lines()
        .into_iter()
        .filter(|m| m.get("method").is_none() && m["result"].get("outcome").is_some())
        .map(|m| m["result"]["outcome"].clone())
        .collect()
}

#[tokio::test]
async fn live_permission_round_trips() {
    let mut l = start(&[], None);
    let end = permission_round(&mut l, "t1", Some(PermissionDecision::AllowOnce)).await;
    assert!(matches!(
        end,
        Payload::ResponseDone {
            status: ResponseStatus::Completed,
            ..
        }
    ));
    assert_eq!(l.text_of("t1"), "decision: yes");
    let end = permission_round(
        &mut l,
        "t2",
        Some(PermissionDecision::Deny {
            reason: "no".into(),
        }),
    )
    .await;
    assert!(matches!(
        end,
        Payload::ResponseDone {
            status: ResponseStatus::Completed,
            ..
        }
    ));
    assert_eq!(l.text_of("t2"), "decision: no");
    let end = permission_round(
        &mut l,
        "t3",
        Some(PermissionDecision::Option {
            option_id: "yes-always".into(),
        }),
    )
    .await;
    assert!(matches!(end, Payload::ResponseDone { .. }));
    assert_eq!(l.text_of("t3"), "decision: yes-always");
    // Cancel while the agent waits for an answer: it hears `cancelled`.
    let end = permission_round(&mut l, "t4", None).await;
    assert!(
        matches!(
            end,
            Payload::ResponseDone {
                status: ResponseStatus::Cancelled,
                ..
            }
        ),
        "{end:?}"
    );
    assert_eq!(
        permission_answers(&l),
        vec![
            json!({"outcome": "selected", "optionId": "yes"}),
            json!({"outcome": "selected", "optionId": "no"}),
            json!({"outcome": "selected", "optionId": "yes-always"}),
            json!({"outcome": "cancelled"}),
        ]
    );
    // The refused call ended as an error, the allowed one did not.
    let outputs: Vec<(String, bool)> = l
        .seen
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Stream(s) => match &s.payload {
                Payload::ItemDone {
                    final_item:
                        FinalItem::FunctionCallOutput {
                            output, is_error, ..
                        },
                    ..
                } => Some((output.clone(), *is_error)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        outputs[..3],
        [
            ("touched".to_owned(), false),
            ("refused".to_owned(), true),
            ("touched".to_owned(), false)
        ]
    );
    l.handle.kill().await;
}

#[tokio::test]
async fn live_fs_requests_stay_inside_the_cwd() {
    let mut l = start(&[], None);
    l.send("t1", "fs");
    l.turn_end("t1").await;
    let report = l.text_of("t1");
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 7, "{report}");
    assert_eq!(
        lines[0], "fs/read_text_file error -32602",
        "outside: /etc/hostname"
    );
    assert_eq!(lines[1], "fs/read_text_file error -32602", "outside via ..");
    assert_eq!(lines[2], "fs/write_text_file error -32602", "write via ..");
    assert_eq!(
        lines[3], r#"fs/read_text_file ok {"content": ""}"#,
        "missing file"
    );
    assert_eq!(lines[4], "fs/write_text_file ok null");
    assert_eq!(
        lines[5],
        r#"fs/read_text_file ok {"content": "agent wrote this"}"#
    );
    assert_eq!(lines[6], "terminal/create error -32601");
    assert!(!l.work.parent().unwrap().join("escape.txt").exists());
    assert_eq!(
        std::fs::read_to_string(l.work.join("made/by-agent.txt")).unwrap(),
        "agent wrote this"
    );
    let refusals = l
        .seen
        .iter()
        .filter(|e| matches!(e, ProviderEvent::Diagnostic { message, .. } if message.contains("refused agent file access")))
        .count();
    assert_eq!(refusals, 3);
    l.handle.kill().await;
}

#[tokio::test]
async fn live_cancel_while_a_command_keeps_running() {
    let mut l = start(&[], None);
    l.send("t1", "longcmd");
    l.until(
        "the tool call",
        |e| matches!(e, ProviderEvent::Stream(s) if matches!(s.payload, Payload::ItemStart { .. })),
    )
    .await;
    let asked = std::time::Instant::now();
    l.handle.send(ProviderCommand::Cancel);
    let end = l.turn_end("t1").await;
    let took = asked.elapsed();
    eprintln!("cancel with a running command → turn end: {took:?}");
    assert!(
        matches!(
            end,
            Payload::ResponseDone {
                status: ResponseStatus::Cancelled,
                ..
            }
        ),
        "{end:?}"
    );
    // The agent would answer only after its 30 s command; hive did not wait for it.
    assert!(took < Duration::from_secs(10), "cancel took {took:?}");
    let child = l.child_pid().expect("the fake logged its command's pid");
    assert!(alive(child), "the command still runs after the cancel");
    l.handle.kill().await;
    // Killing the agent ends its whole process group, the command included.
    let mut gone = false;
    for _ in 0..50 {
        if !alive(child) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "command {child} outlived the agent");
}

#[tokio::test]
async fn live_error_refusal_plan_and_unknown_updates() {
    let mut l = start(&[], None);
    l.send("t1", "error");
    match l.turn_end("t1").await {
        Payload::ResponseError { error } => {
            assert_eq!(error.code, "rpc_-32603");
            assert_eq!(error.message, "Internal error: API Error: 400 boom");
        }
        other => panic!("expected response_error, got {other:?}"),
    }
    l.send("t2", "refusal");
    match l.turn_end("t2").await {
        Payload::ResponseDone {
            status,
            finish_reason,
            ..
        } => {
            assert_eq!(status, ResponseStatus::Completed);
            assert_eq!(finish_reason.as_deref(), Some("refusal"));
        }
        other => panic!("{other:?}"),
    }
    let note = l.seen.iter().any(|e| matches!(e, ProviderEvent::Stream(s) if s.turn_id == "t2" && matches!(&s.payload, Payload::ItemDone { final_item: FinalItem::Message { origin: Origin::System, content }, .. } if content.contains("refused"))));
    assert!(note, "a refusal is visible in the conversation");
    l.send("t3", "plan");
    l.turn_end("t3").await;
    let plans: Vec<(String, String)> = l
        .seen
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Stream(s) if s.turn_id == "t3" => match &s.payload {
                Payload::ItemDone {
                    item_id,
                    final_item:
                        FinalItem::Message {
                            origin: Origin::System,
                            content,
                        },
                } => Some((item_id.clone(), content.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(plans.len(), 2);
    assert_eq!(
        plans[0].0, plans[1].0,
        "a plan update replaces the same item"
    );
    assert!(
        plans[0].1.contains("- [ ] one _(in progress)_"),
        "{}",
        plans[0].1
    );
    assert!(plans[1].1.contains("- [x] one"), "{}", plans[1].1);
    l.send("t4", "unknown");
    l.turn_end("t4").await;
    assert!(l.seen.iter().any(|e| matches!(e, ProviderEvent::Diagnostic { message, .. } if message.contains("telepathy_update") && message.contains("curious"))));
    l.handle.kill().await;
}

#[tokio::test]
async fn live_resume_loads_the_session_without_replaying_it() {
    let mut l = start(&[("FAKE_ACP_LOAD", "1")], Some("old-session-7"));
    l.send("t1", "hello");
    l.turn_end("t1").await;
    let load = l
        .log_lines()
        .into_iter()
        .find(|m| m["method"] == "session/load");
    let load = load.expect("session/load sent");
    assert_eq!(load["params"]["sessionId"], "old-session-7");
    assert!(!l.log_lines().iter().any(|m| m["method"] == "session/new"));
    // The replayed history is not streamed again.
    assert_eq!(l.text_of("t1"), "Hello **from** the fake agent.");
    let handle = l.seen.iter().find_map(|e| match e {
        ProviderEvent::Session(s) => s.resume_handle.clone(),
        _ => None,
    });
    assert_eq!(handle.as_deref(), Some("old-session-7"));
    l.handle.kill().await;
}

#[tokio::test]
async fn live_resume_without_load_support_starts_a_new_session_with_a_notice() {
    let mut l = start(&[], Some("old-session-7"));
    l.send("t1", "hello");
    l.turn_end("t1").await;
    assert!(l.log_lines().iter().any(|m| m["method"] == "session/new"));
    assert!(l.seen.iter().any(|e| matches!(e, ProviderEvent::Diagnostic { message, .. } if message.contains("old-session-7") && message.contains("new one"))));
    l.handle.kill().await;
}

#[tokio::test]
async fn config_errors_name_the_problem() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let spec = ProviderSpec {
        agent: AgentConfig::new("x", "acp"),
        resume: None,
    };
    match AcpFactory.spawn(spec, tx.clone()) {
        Err(ProviderError::Config { message, .. }) => assert!(message.contains("command")),
        other => panic!("expected a config error, got {other:?}"),
    }
    let mut agent = AgentConfig::new("x", "acp");
    agent.command = vec!["true".into()];
    let bad: toml::Table = toml::from_str("mcp_servers = [{ url = 5 }]").unwrap();
    agent.options = bad;
    match AcpFactory.spawn(
        ProviderSpec {
            agent,
            resume: None,
        },
        tx,
    ) {
        Err(ProviderError::Config { message, .. }) => {
            assert!(message.contains("mcp_servers[0]"), "{message}")
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[tokio::test]
async fn mcp_servers_from_options_reach_session_new() {
    let dir = tempfile::tempdir().unwrap();
    let (mut agent, work, log) = fake_agent(dir.path(), &[]);
    let extra: toml::Table = toml::from_str(
        r#"
        [[mcp_servers]]
        name = "files"
        command = "/usr/bin/mcp-files"
        args = ["--root", "."]
        env = { TOKEN = "t" }
        [[mcp_servers]]
        name = "web"
        url = "http://127.0.0.1:9/mcp"
        headers = { Authorization = "Bearer x" }
        "#,
    )
    .unwrap();
    agent.options.extend(extra);
    let mut l = start_with(agent, dir, work, log, None);
    l.send("t1", "hello");
    l.turn_end("t1").await;
    let new = l
        .log_lines()
        .into_iter()
        .find(|m| m["method"] == "session/new")
        .unwrap();
    assert_eq!(
        new["params"]["mcpServers"],
        json!([
            {"name": "files", "command": "/usr/bin/mcp-files", "args": ["--root", "."], "env": [{"name": "TOKEN", "value": "t"}]},
            {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "Authorization", "value": "Bearer x"}]}
        ])
    );
    l.handle.kill().await;
}

// ---------------------------------------------------------------------------
// Engine timers (no process; time passed in)
// ---------------------------------------------------------------------------

fn writes(fx: &[Effect]) -> Vec<Value> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Write(l) => serde_json::from_str(l).ok(),
            _ => None,
        })
        .collect()
}

fn payloads(fx: &[Effect]) -> Vec<Payload> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Emit(ev) => match ev.as_ref() {
                ProviderEvent::Stream(s) => Some(s.payload.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// An engine with an open session; returns it and the now it was opened at.
fn open_engine() -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = Engine::new(EngineConfig::new("t", dir.path().to_path_buf()));
    e.start();
    let init = writes(&e.drain());
    let now = Instant::now();
    e.on_line(
        &json!({"jsonrpc": "2.0", "id": init[0]["id"], "result": {"protocolVersion": 1}})
            .to_string(),
        now,
    );
    let new = writes(&e.drain());
    assert_eq!(new[0]["method"], "session/new");
    e.on_line(
        &json!({"jsonrpc": "2.0", "id": new[0]["id"], "result": {"sessionId": "s9"}}).to_string(),
        now,
    );
    e.drain();
    (e, dir)
}

#[test]
fn engine_ends_an_unconfirmed_cancel_itself_and_ignores_the_late_answer() {
    let (mut e, _dir) = open_engine();
    let t0 = Instant::now();
    e.on_command(
        ProviderCommand::Send {
            turn_id: "a".into(),
            text: "x".into(),
        },
        t0,
    );
    let prompt = writes(&e.drain())[0].clone();
    assert_eq!(prompt["method"], "session/prompt");
    e.on_command(ProviderCommand::Cancel, t0);
    let fx = e.drain();
    assert_eq!(writes(&fx)[0]["method"], "session/cancel");
    let deadline = e.next_deadline().expect("a cancel deadline");
    assert!(deadline > t0 && deadline <= t0 + Duration::from_secs(1));
    e.on_timer(deadline - Duration::from_millis(1));
    assert!(
        payloads(&e.drain()).is_empty(),
        "not before the grace ran out"
    );
    e.on_timer(deadline);
    let ended = payloads(&e.drain());
    assert!(
        matches!(
            &ended[..],
            [Payload::ResponseDone {
                status: ResponseStatus::Cancelled,
                ..
            }]
        ),
        "{ended:?}"
    );
    // The next turn runs; the old prompt's late answer does not end it.
    e.on_command(
        ProviderCommand::Send {
            turn_id: "b".into(),
            text: "y".into(),
        },
        deadline,
    );
    let second = writes(&e.drain())[0].clone();
    e.on_line(
        &json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "end_turn"}})
            .to_string(),
        deadline,
    );
    assert!(payloads(&e.drain()).is_empty(), "late answer ignored");
    e.on_line(
        &json!({"jsonrpc": "2.0", "id": second["id"], "result": {"stopReason": "end_turn"}})
            .to_string(),
        deadline,
    );
    let done = payloads(&e.drain());
    assert!(
        matches!(
            &done[..],
            [Payload::ResponseDone {
                status: ResponseStatus::Completed,
                ..
            }]
        ),
        "{done:?}"
    );
}

#[test]
fn engine_gives_up_on_a_silent_agent_and_retries_on_the_next_send() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = Engine::new(EngineConfig::new("t", dir.path().to_path_buf()));
    e.start();
    e.drain();
    e.on_command(
        ProviderCommand::Send {
            turn_id: "a".into(),
            text: "x".into(),
        },
        Instant::now(),
    );
    assert!(e.drain().is_empty(), "the turn waits for the session");
    let deadline = e.next_deadline().expect("a start-up deadline");
    e.on_timer(deadline);
    let fx = e.drain();
    let failed = payloads(&fx);
    match &failed[..] {
        [Payload::ResponseError { error }] => {
            assert_eq!(error.code, "session_failed");
            assert!(error.message.contains("initialize"), "{}", error.message);
        }
        other => panic!("{other:?}"),
    }
    e.on_command(
        ProviderCommand::Send {
            turn_id: "b".into(),
            text: "x".into(),
        },
        Instant::now(),
    );
    let retry = writes(&e.drain());
    assert_eq!(retry[0]["method"], "initialize", "start-up is tried again");
}

#[test]
fn engine_sends_steer_nowhere_and_says_so() {
    let (mut e, _dir) = open_engine();
    e.on_command(ProviderCommand::Steer { text: "hi".into() }, Instant::now());
    let fx = e.drain();
    assert!(writes(&fx).is_empty());
    assert!(fx.iter().any(
        |f| matches!(f, Effect::Emit(ev) if matches!(ev.as_ref(), ProviderEvent::Diagnostic { .. }))
    ));
}

#[tokio::test]
async fn model_mode_and_thinking_are_applied_where_the_agent_offers_them() {
    let dir = tempfile::tempdir().unwrap();
    let (mut agent, work, log) = fake_agent(dir.path(), &[]);
    agent.model = Some("bigger-model".into());
    agent.permission_mode = Some("yolo".into());
    agent.thinking = Some("high".into());
    let mut l = start_with(agent, dir, work, log, None);
    l.send("t1", "hello");
    l.turn_end("t1").await;
    let sent = l.log_lines();
    let find = |m: &str| sent.iter().find(|x| x["method"] == m).cloned();
    assert_eq!(
        find("session/set_model").unwrap()["params"]["modelId"],
        "bigger-model"
    );
    assert_eq!(
        find("session/set_mode").unwrap()["params"]["modeId"],
        "yolo"
    );
    let opt = find("session/set_config_option").unwrap();
    assert_eq!(
        (
            opt["params"]["configId"].clone(),
            opt["params"]["value"].clone()
        ),
        (json!("effort"), json!("high"))
    );
    // The turn reports the selected model.
    let model = l.seen.iter().find_map(|e| match e {
        ProviderEvent::Stream(s) => match &s.payload {
            Payload::ResponseStart { model_id, .. } => Some(model_id.clone()),
            _ => None,
        },
        _ => None,
    });
    assert_eq!(model.as_deref(), Some("bigger-model"));
    l.handle.kill().await;

    // A mode the agent does not have is reported, not sent.
    let dir = tempfile::tempdir().unwrap();
    let (mut agent, work, log) = fake_agent(dir.path(), &[]);
    agent.permission_mode = Some("bypassEverything".into());
    let mut l = start_with(agent, dir, work, log, None);
    l.send("t1", "hello");
    l.turn_end("t1").await;
    assert!(
        !l.log_lines()
            .iter()
            .any(|m| m["method"] == "session/set_mode")
    );
    assert!(l.seen.iter().any(|e| matches!(e, ProviderEvent::Diagnostic { message, .. } if message.contains("bypassEverything") && message.contains("default, yolo"))));
    l.handle.kill().await;
}
