//! Replays a capture's timeline through the engine and the processor,
//! answering what the harness answered, and collects what came out.

use super::*;

/// One capture replayed: what the engine wrote, emitted, and what the
/// processor made of it.
pub(crate) struct Capture {
    /// What the engine emitted, through the processor.
    pub(crate) r: Replay,
    /// The agent's stdout lines as captured (after the cwd rewrite).
    pub(crate) agent_lines: Vec<Value>,
    /// Every line the engine wrote, in order.
    pub(crate) written: Vec<Value>,
    /// The engine's working directory (a temp dir standing in for the lab's).
    pub(crate) dir: tempfile::TempDir,
}

impl Deref for Capture {
    type Target = Replay;
    fn deref(&self) -> &Replay {
        &self.r
    }
}

pub(crate) fn fixture(agent: &str, case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("acp-{agent}"))
        .join(format!("{case}.timeline.jsonl"))
}

pub(crate) fn id_key(v: &Value) -> String {
    v.to_string()
}

pub(crate) fn replay(agent: &str, case: &str) -> Capture {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let mut engine = Engine::new(EngineConfig::new("replay", cwd.clone()));
    let mut r = Capture {
        r: Replay::default(),
        agent_lines: Vec::new(),
        written: Vec::new(),
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

    let pump = |engine: &mut Engine,
                r: &mut Capture,
                unmatched: &mut VecDeque<Value>,
                perms: &mut VecDeque<PermissionRequest>| {
        for effect in engine.drain() {
            match effect {
                Effect::Write(line) => {
                    let v: Value = serde_json::from_str(&line).expect("engine wrote JSON");
                    r.written.push(v.clone());
                    unmatched.push_back(v);
                }
                Effect::File(job) => {
                    let done = job.run();
                    let v: Value = serde_json::from_str(&done.line).expect("fs answer is JSON");
                    r.written.push(v.clone());
                    unmatched.push_back(v);
                }
                Effect::Emit(ev) => {
                    let ev = *ev;
                    if let ProviderEvent::Permission(p) = &ev {
                        perms.push_back(p.clone());
                    }
                    r.r.feed(ev);
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
    for (dir_, line) in timeline(&fixture(agent, case)) {
        let dir_ = dir_.as_str();
        if dir_ != "in" && dir_ != "out" {
            continue;
        }
        let line = line.replace(CAPTURE_CWD, cwd.to_str().unwrap());
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

pub(crate) fn take_method(q: &mut VecDeque<Value>, method: &str) -> Value {
    let pos = q
        .iter()
        .position(|v| v["method"] == method)
        .unwrap_or_else(|| panic!("hive did not send {method}; unmatched: {q:?}"));
    q.remove(pos).unwrap()
}

pub(crate) fn take_response(q: &mut VecDeque<Value>, id: &Value) -> Value {
    let pos = q
        .iter()
        .position(|v| v.get("method").is_none() && v["id"] == *id)
        .unwrap_or_else(|| panic!("hive did not answer request {id}; unmatched: {q:?}"));
    q.remove(pos).unwrap()
}

impl Capture {
    pub(crate) fn updates(&self, kind: &str) -> Vec<&Value> {
        self.agent_lines
            .iter()
            .filter(|m| {
                m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == kind
            })
            .map(|m| &m["params"]["update"])
            .collect()
    }

    pub(crate) fn chunk_text(&self, kind: &str) -> String {
        self.updates(kind)
            .iter()
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    pub(crate) fn prompt_results(&self) -> Vec<&Value> {
        self.agent_lines
            .iter()
            .filter(|m| m.get("method").is_none() && m["result"].get("stopReason").is_some())
            .map(|m| &m["result"])
            .collect()
    }
}

/// `tools` per provider: the test binary shares one `Replay` type.
pub(crate) trait AcpTools {
    fn tools(&self) -> Vec<ToolSeen>;
}

impl AcpTools for Replay {
    /// (status, tool name, call id, output, is_error) of every tool upsert.
    fn tools(&self) -> Vec<ToolSeen> {
        self.tool_rows()
            .into_iter()
            .map(|(status, name, call_id, _, output, is_error)| {
                (status, name, call_id, output, is_error)
            })
            .collect()
    }
}

/// (status, tool name, call id, output, is_error) of one tool upsert.
pub(crate) type ToolSeen = (UpsertStatus, String, String, Option<String>, Option<bool>);

pub(crate) fn completed(t: &TurnEvent) -> Option<(&TurnStatus, Option<&str>)> {
    match t {
        TurnEvent::TurnComplete {
            status,
            finish_reason,
            ..
        } => Some((status, finish_reason.as_deref())),
        _ => None,
    }
}
