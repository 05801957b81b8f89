//! Canonical event schema (seed 002 TC-1.x), provider registry (TC-2.2) and
//! configuration loading.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::sync::Arc;

use hive::config::AgentConfig;
use hive::config::{Config, ConfigError, ConfigSource, QueueMode};
use hive::event::{EventError, FinalItem, ItemType, Payload, ResponseStatus, StreamEvent};
use hive::provider::{
    ProviderCommand, ProviderError, ProviderEvent, ProviderFactory, ProviderSpec, Registry,
    script::ScriptFactory,
};

fn parse(json: serde_json::Value) -> Result<StreamEvent, EventError> {
    StreamEvent::from_json(&json.to_string())
}

fn envelope(payload: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "event_id": "ev_1",
        "timestamp": "2026-11-22T10:00:00Z",
        "turn_id": "turn_1",
        "session_id": "s_1",
        "payload": payload,
    })
}

#[test]
fn tc_1_1a_schema_covers_text_streaming() {
    let e = parse(envelope(serde_json::json!({
        "type": "item_delta", "item_id": "m1", "delta_content": "Hel"
    })))
    .unwrap();
    assert!(
        matches!(e.payload, Payload::ItemDelta { ref delta_content, .. } if delta_content == "Hel")
    );
    let s = parse(envelope(serde_json::json!({
        "type": "item_start", "item_id": "m1", "item_type": "message"
    })))
    .unwrap();
    assert!(matches!(
        s.payload,
        Payload::ItemStart {
            item_type: ItemType::Message,
            ..
        }
    ));
}

#[test]
fn tc_1_1b_schema_covers_tool_call_lifecycle() {
    let start = parse(envelope(serde_json::json!({
        "type": "item_start", "item_id": "t1", "item_type": "function_call",
        "name": "Bash", "call_id": "call_1"
    })))
    .unwrap();
    assert!(
        matches!(start.payload, Payload::ItemStart { ref name, ref call_id, .. }
        if name.as_deref() == Some("Bash") && call_id.as_deref() == Some("call_1"))
    );
    parse(envelope(serde_json::json!({
        "type": "item_delta", "item_id": "t1", "delta_content": "{\"command\":"
    })))
    .unwrap();
    let done = parse(envelope(serde_json::json!({
        "type": "item_done", "item_id": "t1",
        "final_item": {"type": "function_call", "name": "Bash", "call_id": "call_1", "arguments": {"command": "ls"}}
    })))
    .unwrap();
    assert!(matches!(
        done.payload,
        Payload::ItemDone {
            final_item: FinalItem::FunctionCall { .. },
            ..
        }
    ));
    let out = parse(envelope(serde_json::json!({
        "type": "item_done", "item_id": "o1",
        "final_item": {"type": "function_call_output", "call_id": "call_1", "output": "a.txt", "is_error": false}
    })))
    .unwrap();
    assert!(
        matches!(out.payload, Payload::ItemDone { final_item: FinalItem::FunctionCallOutput { ref output, .. }, .. } if output == "a.txt")
    );
}

#[test]
fn tc_1_1c_schema_covers_thinking() {
    let e = parse(envelope(serde_json::json!({
        "type": "item_done", "item_id": "r1",
        "final_item": {"type": "reasoning", "content": "hmm", "provider_id": "claude"}
    })))
    .unwrap();
    assert!(
        matches!(e.payload, Payload::ItemDone { final_item: FinalItem::Reasoning { ref content, .. }, .. } if content == "hmm")
    );
    let s = parse(envelope(serde_json::json!({
        "type": "item_start", "item_id": "r1", "item_type": "reasoning"
    })))
    .unwrap();
    assert!(matches!(
        s.payload,
        Payload::ItemStart {
            item_type: ItemType::Reasoning,
            ..
        }
    ));
}

#[test]
fn tc_1_1d_schema_covers_turn_lifecycle() {
    let s = parse(envelope(serde_json::json!({
        "type": "response_start", "model_id": "claude-x", "provider_id": "claude"
    })))
    .unwrap();
    assert_eq!(s.turn_id, "turn_1");
    assert!(
        matches!(s.payload, Payload::ResponseStart { ref model_id, .. } if model_id == "claude-x")
    );
    let d = parse(envelope(serde_json::json!({
        "type": "response_done", "status": "error", "finish_reason": "api_error",
        "error": {"code": "api_error", "message": "500"},
        "usage": {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 1, "cost_usd": 0.01}
    })))
    .unwrap();
    match d.payload {
        Payload::ResponseDone {
            status,
            finish_reason,
            error,
            usage,
        } => {
            assert_eq!(status, ResponseStatus::Error);
            assert_eq!(finish_reason.as_deref(), Some("api_error"));
            assert_eq!(error.unwrap().code, "api_error");
            let u = usage.unwrap();
            assert_eq!((u.input_tokens, u.output_tokens), (3, 4));
            assert_eq!(u.cost_usd, Some(0.01));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tc_1_1e_schema_covers_error_events() {
    let i = parse(envelope(serde_json::json!({
        "type": "item_error", "item_id": "m1", "error": {"code": "bad", "message": "broken"}
    })))
    .unwrap();
    assert!(
        matches!(i.payload, Payload::ItemError { ref item_id, ref error } if item_id == "m1" && error.message == "broken")
    );
    let r = parse(envelope(serde_json::json!({
        "type": "response_error", "error": {"code": "rate_limit", "message": "429"}
    })))
    .unwrap();
    assert!(
        matches!(r.payload, Payload::ResponseError { ref error } if error.code == "rate_limit")
    );
}

#[test]
fn tc_1_1f_schema_rejects_malformed_events_naming_the_field() {
    let missing = parse(envelope(serde_json::json!({
        "type": "item_delta", "delta_content": "x"
    })))
    .unwrap_err();
    assert!(missing.to_string().contains("item_id"), "{missing}");

    let wrong_type = parse(envelope(serde_json::json!({
        "type": "item_delta", "item_id": "m1", "delta_content": 42
    })))
    .unwrap_err();
    let msg = wrong_type.to_string();
    assert!(msg.contains("payload.delta_content"), "{msg}");

    let bad_enum = parse(envelope(serde_json::json!({
        "type": "item_start", "item_id": "m1", "item_type": "image"
    })))
    .unwrap_err();
    assert!(bad_enum.to_string().contains("item_type"), "{bad_enum}");

    let no_call_id = parse(envelope(serde_json::json!({
        "type": "item_start", "item_id": "t1", "item_type": "function_call", "name": "Bash"
    })))
    .unwrap_err();
    assert!(no_call_id.to_string().contains("call_id"), "{no_call_id}");

    let mut no_turn = envelope(
        serde_json::json!({"type": "response_error", "error": {"code": "x", "message": "y"}}),
    );
    no_turn["turn_id"] = serde_json::json!("");
    assert!(parse(no_turn).unwrap_err().to_string().contains("turn_id"));

    let bad_time = {
        let mut e = envelope(serde_json::json!({"type": "item_cancelled", "item_id": "m1"}));
        e["timestamp"] = serde_json::json!("yesterday");
        parse(e).unwrap_err()
    };
    assert!(bad_time.to_string().contains("timestamp"), "{bad_time}");

    assert!(StreamEvent::from_json("{not json").is_err());
}

/// The built-in demo agent as a bare provider task.
fn spawn_demo() -> (
    hive::provider::ProviderHandle,
    hive::provider::EventReceiver,
) {
    let mut agent = AgentConfig::new("demo", "script");
    agent.script = Some("demo:tour".into());
    let (tx, rx) = hive::provider::channel::channel();
    let spec = ProviderSpec {
        agent,
        resume: None,
    };
    (ScriptFactory.spawn(spec, tx).unwrap(), rx)
}

/// All events of a scripted turn, as the script provider emits them.
async fn scripted_turn() -> Vec<StreamEvent> {
    let (handle, mut rx) = spawn_demo();
    handle.send(ProviderCommand::Send {
        turn_id: "turn_42".into(),
        text: "hello".into(),
    });
    let mut events = Vec::new();
    while let Some(ev) = rx.recv().await {
        if let ProviderEvent::Stream(e) = ev {
            let end = matches!(
                e.payload,
                Payload::ResponseDone { .. } | Payload::ResponseError { .. }
            );
            events.push(e);
            if end {
                break;
            }
        }
    }
    handle.kill().await;
    events
}

#[tokio::test(start_paused = true)]
async fn tc_1_2a_all_events_of_a_turn_share_the_turn_id() {
    let events = scripted_turn().await;
    assert!(events.len() > 10);
    assert!(events.iter().all(|e| e.turn_id == "turn_42"));
    for e in &events {
        e.validate().unwrap();
        let back = StreamEvent::from_json(&serde_json::to_string(e).unwrap()).unwrap();
        assert_eq!(&back, e);
    }
}

#[tokio::test(start_paused = true)]
async fn tc_1_2b_events_of_one_item_share_the_item_id() {
    let events = scripted_turn().await;
    let mut open: Option<String> = None;
    for e in &events {
        match &e.payload {
            Payload::ItemStart {
                item_id, item_type, ..
            } if *item_type != ItemType::FunctionCall => open = Some(item_id.clone()),
            Payload::ItemDelta { item_id, .. } => assert_eq!(Some(item_id), open.as_ref()),
            Payload::ItemDone {
                item_id,
                final_item,
            } if !matches!(
                final_item,
                FinalItem::FunctionCall { .. } | FinalItem::FunctionCallOutput { .. }
            ) =>
            {
                assert_eq!(Some(item_id), open.as_ref());
                open = None;
            }
            _ => {}
        }
    }
}

#[tokio::test(start_paused = true)]
async fn tc_1_2c_tool_invocation_and_result_share_the_call_id() {
    let events = scripted_turn().await;
    let invoked: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ItemStart {
                call_id: Some(c), ..
            } => Some(c.clone()),
            _ => None,
        })
        .collect();
    let results: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ItemDone {
                final_item: FinalItem::FunctionCallOutput { call_id, .. },
                ..
            } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    assert!(!invoked.is_empty());
    assert_eq!(invoked, results);
}

#[test]
fn tc_2_2a_registry_resolves_by_name() {
    let mut r = Registry::empty();
    let script: Arc<dyn ProviderFactory> = Arc::new(ScriptFactory);
    r.register("script", Arc::clone(&script));
    assert!(Arc::ptr_eq(&r.get("script").unwrap(), &script));
    assert!(Registry::builtin().names().contains(&"script"));
}

#[test]
fn tc_2_2b_registry_error_for_unknown_name_lists_known_ones() {
    let err = Registry::builtin().get("gemini-ultra").err().unwrap();
    assert!(matches!(err, ProviderError::Unknown { .. }));
    let msg = err.to_string();
    assert!(msg.contains("gemini-ultra"), "{msg}");
    for name in Registry::builtin().names() {
        assert!(msg.contains(name), "{msg} should list {name}");
    }
}

#[test]
fn builtin_config_has_demo_agents_and_a_shell() {
    let c = Config::builtin();
    assert_eq!(c.source, ConfigSource::Builtin);
    let demo = c.agent("demo").expect("a demo agent");
    assert_eq!(demo.provider, "script");
    assert!(c.agents.iter().any(|a| a.provider == "pty"), "a shell pane");
    assert!(c.agents.len() >= 3);
    assert_eq!(c.processor.batch_gradient, vec![10, 20, 40, 80, 120]);
    for a in &c.agents {
        if a.provider == "script" {
            let s = hive::provider::script::Scenario::load(a.script.as_ref().unwrap());
            assert!(s.is_ok(), "{}: {:?}", a.id, s.err());
        }
    }
}

#[test]
fn example_config_has_the_six_roles() {
    let text = include_str!("../../config/hive.example.toml");
    let c = Config::parse(text, ConfigSource::File("hive.example.toml".into())).unwrap();
    for (id, provider) in [
        ("architect", "claude"),
        ("infra", "codex"),
        ("frontend", "claude"),
        ("backend", "codex"),
        ("analyst", "gemini"),
        ("reviewer", "claude"),
    ] {
        assert_eq!(
            c.agent(id).map(|a| a.provider.as_str()),
            Some(provider),
            "{id}"
        );
    }
    assert_eq!(
        c.agent("frontend").unwrap().queue_mode,
        QueueMode::Interrupt
    );
}

#[test]
fn bad_config_names_file_line_column_and_expectation() {
    let text = "theme = \"dark\"\n\n[[agent]]\nid = \"a\"\nprovider = 42\n";
    let err = Config::parse(text, ConfigSource::File("/tmp/bad.toml".into())).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConfigError::Parse { line: 5, .. }), "{msg}");
    assert!(msg.starts_with("/tmp/bad.toml:5:"), "{msg}");
    assert!(msg.contains("string"), "says what was expected: {msg}");

    let typo = "[[agent]]\nid = \"a\"\nprovider = \"script\"\nqueue_mod = \"queue\"\n";
    let msg = Config::parse_checked(typo, ConfigSource::Builtin, &Registry::builtin())
        .unwrap_err()
        .to_string();
    assert!(msg.contains(":4:") && msg.contains("queue_mod"), "{msg}");

    let syntax = "[[agent]\nid = 1\n";
    let msg = Config::parse(syntax, ConfigSource::Builtin)
        .unwrap_err()
        .to_string();
    assert!(msg.contains(":1:"), "{msg}");
}

/// Keys a provider reads directly on the agent table (`openai`'s) are its
/// own to check: a bad value is an error at its line; another provider's
/// key is let through as it always was; a key no provider reads is not.
#[test]
fn provider_keys_are_checked_by_their_provider() {
    let r = Registry::builtin();
    let ok = "[[agent]]\nid = \"o\"\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nheaders = { X-Title = \"hive\" }\nmax_steps = 3\n[[agent.mcp_servers]]\nname = \"f\"\ncommand = \"f\"\n";
    let c = Config::parse_checked(ok, ConfigSource::Builtin, &r).unwrap();
    let own = hive::provider::openai::OpenAiSettings::from_agent(&c.agents[0]).unwrap();
    assert_eq!(own.max_steps, Some(3));
    assert_eq!(own.headers["X-Title"], "hive");
    assert_eq!(own.mcp_servers[0].name, "f");

    let bad = "[[agent]]\nid = \"o\"\nprovider = \"openai\"\nmodel = \"m\"\nmax_steps = \"many\"\n";
    let msg = Config::parse_checked(bad, ConfigSource::Builtin, &r)
        .unwrap_err()
        .to_string();
    assert!(msg.contains(":5:") && msg.contains("max_steps"), "{msg}");

    let other = "[[agent]]\nid = \"c\"\nprovider = \"claude\"\nbase_url = \"http://x\"\n";
    assert!(Config::parse_checked(other, ConfigSource::Builtin, &r).is_ok());

    let unknown = "[[agent]]\nid = \"o\"\nprovider = \"openai\"\nbase_ur = \"http://x\"\n";
    let msg = Config::parse_checked(unknown, ConfigSource::Builtin, &r)
        .unwrap_err()
        .to_string();
    assert!(msg.contains(":4:") && msg.contains("base_ur"), "{msg}");
}

#[test]
fn invalid_values_are_rejected_with_a_reason() {
    let dup = "[[agent]]\nid = \"a\"\nprovider = \"script\"\n[[agent]]\nid = \"a\"\nprovider = \"script\"\n";
    assert!(
        Config::parse(dup, ConfigSource::Builtin)
            .unwrap_err()
            .to_string()
            .contains("twice")
    );
    let bad_id = "[[agent]]\nid = \"a b\"\nprovider = \"script\"\n";
    assert!(Config::parse(bad_id, ConfigSource::Builtin).is_err());
    let gradient = "[processor]\nbatch_gradient = []\n";
    assert!(
        Config::parse(gradient, ConfigSource::Builtin)
            .unwrap_err()
            .to_string()
            .contains("batch_gradient")
    );
}

#[test]
fn config_search_order_explicit_then_local_then_xdg_then_builtin() {
    let dir = tempfile::tempdir().unwrap();
    let explicit = dir.path().join("explicit.toml");
    std::fs::write(
        &explicit,
        "[[agent]]\nid = \"x\"\nprovider = \"script\"\nscript = \"s.toml\"\n",
    )
    .unwrap();
    let c = Config::load(Some(&explicit), &Registry::builtin()).unwrap();
    assert_eq!(c.source, ConfigSource::File(explicit));
    assert_eq!(
        c.agents[0].script.as_deref(),
        Some(dir.path().join("s.toml").as_path()),
        "relative to the file"
    );
    let missing =
        Config::load(Some(&dir.path().join("nope.toml")), &Registry::builtin()).unwrap_err();
    assert!(missing.to_string().contains("nope.toml"));
}

#[test]
fn config_load_from_cwd_and_xdg_in_a_child_process() {
    // Search order depends on the process's cwd and env, so check it in `hive run`.
    let bin = env!("CARGO_BIN_EXE_hive");
    let dir = tempfile::tempdir().unwrap();
    let xdg = dir.path().join("xdg");
    std::fs::create_dir_all(xdg.join("hive")).unwrap();
    let scenario = "[[turn]]\n[[turn.step]]\ntext = \"from {prompt}\"\ndelay_ms = 0\n";
    std::fs::write(dir.path().join("s.toml"), scenario).unwrap();
    let agent = |id: &str| {
        format!(
            "[[agent]]\nid = \"{id}\"\nprovider = \"script\"\nscript = \"{}\"\n",
            dir.path().join("s.toml").display()
        )
    };
    std::fs::write(xdg.join("hive/config.toml"), agent("xdg")).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let run = |id: &str| {
        std::process::Command::new(bin)
            .args(["run", "--agent", id, "x"])
            .current_dir(&work)
            .env("XDG_CONFIG_HOME", &xdg)
            .env("HIVE_DATA_DIR", dir.path().join("data"))
            .output()
            .unwrap()
    };
    assert!(run("xdg").status.success(), "XDG config is used");
    std::fs::write(work.join("hive.toml"), agent("local")).unwrap();
    assert!(run("local").status.success(), "./hive.toml wins over XDG");
    let out = run("xdg");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no agent `xdg`"));
}

#[tokio::test(start_paused = true)]
async fn script_provider_honours_cancel_mid_stream() {
    let (handle, mut rx) = spawn_demo();
    handle.send(ProviderCommand::Send {
        turn_id: "t".into(),
        text: "go slow".into(),
    });
    let mut deltas = 0;
    let mut seen = Vec::new();
    while let Some(ev) = rx.recv().await {
        let ProviderEvent::Stream(e) = ev else {
            continue;
        };
        if matches!(e.payload, Payload::ItemDelta { .. }) {
            deltas += 1;
            if deltas == 3 {
                handle.send(ProviderCommand::Cancel);
            }
        }
        let end = matches!(e.payload, Payload::ResponseDone { .. });
        seen.push(e.payload);
        if end {
            break;
        }
    }
    let n = seen.len();
    assert!(
        matches!(seen[n - 2], Payload::ItemCancelled { .. }),
        "{:?}",
        seen[n - 2]
    );
    assert!(matches!(
        seen[n - 1],
        Payload::ResponseDone {
            status: ResponseStatus::Cancelled,
            ..
        }
    ));
    assert!(deltas <= 4, "stopped streaming promptly: {deltas} deltas");
    assert!(
        handle.is_alive(),
        "a cancelled turn leaves the agent running"
    );
    handle.kill().await;
}
