//! Lifecycle against the fake agent (tests/fake/fake_acp.py).

use super::*;

/// The provider over the fake agent, with where the fake works and logs.
struct Live {
    live: support::Live,
    _dir: tempfile::TempDir,
    work: PathBuf,
    log: PathBuf,
}

impl Deref for Live {
    type Target = support::Live;
    fn deref(&self) -> &support::Live {
        &self.live
    }
}

impl DerefMut for Live {
    fn deref_mut(&mut self) -> &mut support::Live {
        &mut self.live
    }
}

fn fake_agent(dir: &Path, env: &[(&str, &str)]) -> (AgentConfig, PathBuf, PathBuf) {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let log = dir.join("agent.log");
    let mut a = AgentConfig::new("fake", "acp");
    a.command = fake_command("fake_acp.py");
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
    let spec = ProviderSpec {
        agent,
        resume: resume.map(str::to_owned),
    };
    Live {
        live: support::Live::spawn(&AcpFactory, spec).expect("spawn fake agent"),
        _dir: dir,
        work,
        log,
    }
}

impl Live {
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
        jsonl(&self.log)
    }

    fn child_pid(&self) -> Option<i32> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("CHILD ").and_then(|p| p.trim().parse().ok()))
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
    l.live.handle.kill().await;
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
    l.live.handle.kill().await;
}

#[tokio::test]
async fn live_agent_that_ignores_eof_and_sigterm_is_killed() {
    let mut l = start(
        &[("FAKE_ACP_IGNORE_EOF", "1"), ("FAKE_ACP_IGNORE_TERM", "1")],
        None,
    );
    l.send("t1", "hello");
    l.turn_end("t1").await;
    l.live.handle.kill().await;
    let mut exited = None;
    while let Ok(ev) = l.live.watch.rx.try_recv() {
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
    let asked = std::time::Instant::now();
    l.live.handle.kill().await;
    eprintln!(
        "kill of an agent that ignores EOF took {:?}",
        asked.elapsed()
    );
    let mut exited = None;
    while let Ok(ev) = l.live.watch.rx.try_recv() {
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
    l.live.handle.kill().await;
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

/// Issue 34 item 5: ACP's permission answer has no field for a reason
/// (`RequestPermissionResponse` is an option id), so the reason the user
/// gave with a refusal goes to the agent as the first words of the next
/// prompt, and the pane says so.
#[tokio::test]
async fn a_deny_reason_goes_to_the_agent_with_the_next_prompt() {
    let mut l = start(&[], None);
    let reason = "use the staging database instead";
    permission_round(
        &mut l,
        "t1",
        Some(PermissionDecision::Deny {
            reason: reason.into(),
        }),
    )
    .await;
    assert_eq!(l.text_of("t1"), "decision: no");
    assert!(l.seen.iter().any(|e| matches!(e,
        ProviderEvent::Diagnostic { message, .. } if message.contains("with your next message"))));
    l.send("t2", "hello");
    l.turn_end("t2").await;
    let prompts: Vec<Value> = l
        .log_lines()
        .into_iter()
        .filter(|m| m["method"] == "session/prompt")
        .map(|m| m["params"]["prompt"].clone())
        .collect();
    assert_eq!(prompts.len(), 2, "{prompts:#?}");
    let texts: Vec<&str> = prompts[1]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        [
            format!("I declined your request to use `touch x`: {reason}").as_str(),
            "hello"
        ]
    );
    // Said once: the prompt after that carries only its own text.
    l.send("t3", "again");
    l.turn_end("t3").await;
    let last = l
        .log_lines()
        .into_iter()
        .rfind(|m| m["method"] == "session/prompt")
        .unwrap();
    assert_eq!(last["params"]["prompt"].as_array().unwrap().len(), 1);
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
    l.live.handle.kill().await;
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
    l.live.handle.kill().await;
}

/// A hostile agent in a hostile repository: nothing it plants gets it past
/// the cwd, FIFOs do not freeze hive, a 1 GiB file is not read whole.
/// Multi-threaded so that, without the fix, the blocked read shows as a
/// timeout rather than a hung test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fs_attack_from_a_planted_repository_is_refused() {
    let mut l = start(&[], None);
    l.send("t1", "fsattack");
    l.turn_end("t1").await;
    let report = l.text_of("t1");
    let lines: Vec<&str> = report.lines().collect();
    let expected = [
        "fs/write_text_file error -32602",
        "fs/read_text_file error -32602",
        "fs/write_text_file error -32602",
        "fs/read_text_file error -32602",
        "fs/read_text_file error -32602",
        "fs/write_text_file error -32602",
        r#"fs/read_text_file ok {"content": "first line\n"}"#,
        "fs/read_text_file error -32602",
    ];
    assert_eq!(lines, expected, "{report}");
    let outside = l.work.parent().unwrap().join("outside");
    assert!(
        !outside.join("planted.txt").exists(),
        "wrote through a dangling link"
    );
    assert!(
        !outside.join("new.txt").exists(),
        "wrote through a linked dir"
    );
    let refusals: Vec<String> = l
        .seen
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Diagnostic { message, .. }
                if message.contains("refused agent file access") =>
            {
                Some(message.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(refusals.len(), 6, "{refusals:#?}");
    // The console still answers: another turn runs normally.
    l.send("t2", "hello");
    l.turn_end("t2").await;
    l.live.handle.kill().await;
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
    l.live.handle.kill().await;
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
    l.live.handle.kill().await;
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
    l.live.handle.kill().await;
}

#[tokio::test]
async fn live_resume_without_load_support_starts_a_new_session_with_a_notice() {
    let mut l = start(&[], Some("old-session-7"));
    l.send("t1", "hello");
    l.turn_end("t1").await;
    assert!(l.log_lines().iter().any(|m| m["method"] == "session/new"));
    assert!(l.seen.iter().any(|e| matches!(e, ProviderEvent::Diagnostic { message, .. } if message.contains("old-session-7") && message.contains("new one"))));
    l.live.handle.kill().await;
}

#[tokio::test]
async fn config_errors_name_the_problem() {
    let (tx, _rx) = hive::provider::channel::channel();
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
    l.live.handle.kill().await;
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
    // The agent's answer to set_mode (a config_option_update, as codex-acp
    // sends) names the mode once, never as raw JSON.
    let notes = format!("{:?}", l.seen);
    assert!(!notes.contains("config_option_update"), "{notes}");
    assert_eq!(
        notes.matches("agent mode is now `yolo`").count(),
        1,
        "{notes}"
    );
    l.live.handle.kill().await;

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
    l.live.handle.kill().await;
}

/// Issue 34 item 3: `/effort` on an agent without a thinking level gets one
/// true note ("offers no thinking level"), not "effort set to low" first; an
/// agent with one gets "effort set to high" once. Only a taken effort
/// becomes the pane's.
#[tokio::test]
async fn effort_gets_one_true_note() {
    use hive::runner::{RunnerCommand, SubmitMode};
    for (env, wanted, refused) in [
        (&[("FAKE_ACP_NO_THOUGHT", "1")][..], "low", true),
        (&[][..], "high", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (agent, _work, _log) = fake_agent(dir.path(), env);
        let mut pane = support::Pane::start(std::sync::Arc::new(AcpFactory), agent, None);
        pane.submit("hello", SubmitMode::Auto);
        pane.turn_end().await;
        pane.runner.send(RunnerCommand::SetEffort(wanted.into()));
        let expected = if refused {
            "offers no thinking level".to_owned()
        } else {
            format!("effort set to {wanted}")
        };
        pane.until("the effort note", |e| {
            matches!(e, hive::runner::PaneEvent::Notice { text, .. } if text.contains(&expected))
        })
        .await;
        // Anything the runner would add comes with the same command, before it.
        pane.submit("again", SubmitMode::Auto);
        pane.turn_end().await;
        let notes: Vec<String> = pane
            .notices()
            .into_iter()
            .filter(|n| n.contains("effort") || n.contains("thinking level"))
            .collect();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains(&expected), "{notes:?}");
        // A refused effort is not the pane's: not shown as its effort, not
        // kept with its session (a restart warned "`thinking = \"low\"`
        // ignored" for a setting nobody wrote).
        let shown: Vec<&String> = pane
            .seen
            .iter()
            .filter_map(|e| match e {
                hive::runner::PaneEvent::Effort(level) => Some(level),
                _ => None,
            })
            .collect();
        let kept: &[&str] = if refused { &[] } else { &[wanted] };
        assert_eq!(shown, kept, "effort shown as the pane's");
        pane.runner.send(RunnerCommand::Shutdown);
    }
}

/// The same when `/effort` comes before the session is open (right after
/// the pane starts; claude-code-acp takes seconds): the session's opening
/// answers it with the same one note, not a warning about a `thinking`
/// setting nobody wrote, and a refused effort is not the pane's.
#[tokio::test]
async fn effort_before_the_session_opens_gets_the_same_note() {
    use hive::runner::{PaneEvent, RunnerCommand, SubmitMode};
    for (no_thought, wanted, expected) in [
        (
            true,
            "low",
            "offers no thinking level; the effort stays as it is",
        ),
        (false, "high", "effort set to high"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut env = vec![("FAKE_ACP_SLOW_NEW", "1")];
        if no_thought {
            env.push(("FAKE_ACP_NO_THOUGHT", "1"));
        }
        let (agent, _work, _log) = fake_agent(dir.path(), &env);
        let mut pane = support::Pane::start(std::sync::Arc::new(AcpFactory), agent, None);
        pane.runner.send(RunnerCommand::SetEffort(wanted.into()));
        pane.submit("hello", SubmitMode::Auto);
        pane.turn_end().await;
        let notes: Vec<String> = pane
            .notices()
            .into_iter()
            .filter(|n| n.contains("effort") || n.contains("thinking"))
            .collect();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains(expected), "{notes:?}");
        let shown = pane
            .seen
            .iter()
            .filter(|e| matches!(e, PaneEvent::Effort(l) if l == wanted))
            .count();
        assert_eq!(
            shown,
            usize::from(!no_thought),
            "effort shown as the pane's"
        );
        pane.runner.send(RunnerCommand::Shutdown);
    }
}

/// Issue 51: an ACP agent's `mcpServers` server that did not start (the
/// fake says it as codex-acp 0.16 does, in its stderr WARN of
/// `McpStartupComplete`) is a warning; the one that started is not.
#[tokio::test]
async fn an_mcp_server_that_did_not_start_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (mut agent, work, log) = fake_agent(dir.path(), &[]);
    agent.shared_mcp = support::fake_mcp_servers();
    let mut l = start_with(agent, dir, work, log, None);
    let want = "MCP server `broken` did not start (Codex: MCP client for `broken` failed to start: handshaking with MCP server failed: connection closed: initialize response)";
    let warned = |e: &ProviderEvent| matches!(e, ProviderEvent::Diagnostic { level: DiagnosticLevel::Warn, message } if message == want);
    l.send("t1", "hello");
    l.turn_end("t1").await;
    // stderr is read beside stdout: the warning may come after the turn.
    if !l.seen.iter().any(warned) {
        l.until("the warning", warned).await;
    }
    assert!(!l.seen.iter().any(
        |e| matches!(e, ProviderEvent::Diagnostic { message, .. } if message.contains("`good`"))
    ));
}
