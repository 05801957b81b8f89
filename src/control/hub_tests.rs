//! The hub's tests: the panes' updates it observes answer the control
//! calls (`send`, `wait`, `watch`, cancels) as a client would see them.

use chrono::Utc;

use super::*;

fn hub() -> Hub {
    let caps = Capabilities {
        interrupt: true,
        ..Capabilities::default()
    };
    Hub::new([
        (AgentConfig::new("a", "script"), Started::Running(caps)),
        (AgentConfig::new("b", "script"), Started::Running(caps)),
    ])
}

fn message(turn: &str, item: &str, origin: Origin, text: &str) -> PaneEvent {
    PaneEvent::Upsert(Upsert {
        turn_id: turn.into(),
        session_id: "s".into(),
        item_id: item.into(),
        source_timestamp: Utc::now(),
        emitted_at: Utc::now(),
        status: UpsertStatus::Complete,
        error_code: None,
        error_message: None,
        kind: UpsertKind::Message {
            content: text.into(),
            origin,
        },
    })
}

impl Hub {
    /// A ctl line's call, as the server's door hands it on.
    fn handle(&mut self, req: ControlRequest) -> Option<(usize, RunnerCommand)> {
        let verb = req.call.into_verb().expect("not an op");
        self.answer(verb, req.reply, req.events)
    }
}

fn at(pane: usize, event: PaneEvent) -> PaneUpdate {
    PaneUpdate { pane, event }
}

type Answer = oneshot::Receiver<Result<Value, CtlError>>;

fn ask(hub: &mut Hub, call: Call) -> (Option<(usize, RunnerCommand)>, Answer) {
    let (reply, rx) = oneshot::channel();
    let cmd = hub.handle(ControlRequest {
        call,
        reply,
        events: None,
    });
    (cmd, rx)
}

/// Turn `turn_id` completed.
fn completed(turn_id: &str) -> PaneEvent {
    PaneEvent::Turn(TurnEvent::TurnComplete {
        turn_id: turn_id.into(),
        session_id: "s".into(),
        status: TurnStatus::Completed,
        usage: None,
        finish_reason: None,
    })
}

/// The error code a call was answered with.
fn refused(answer: &mut Answer) -> ErrorCode {
    answer.try_recv().unwrap().unwrap_err().code
}

/// `send` of `text` to pane `a`, not steering.
fn send_to_a(text: &str) -> Call {
    Call::Send {
        pane: "a".into(),
        text: text.into(),
        steer: false,
    }
}

#[test]
fn send_answers_when_bound_and_wait_when_the_turn_ends() {
    let mut hub = hub();
    let (cmd, mut sent) = ask(&mut hub, send_to_a("hi"));
    assert!(matches!(
        cmd,
        Some((0, RunnerCommand::Submit { ref text, mode: SubmitMode::Queue })) if text == "hi"
    ));
    assert!(sent.try_recv().is_err(), "not bound yet");
    // Another pane's identical message does not bind it.
    hub.observe(&at(1, message("t-b", "u0", Origin::User, "hi")));
    assert!(sent.try_recv().is_err());
    hub.observe(&at(0, message("t1", "u1", Origin::User, "hi")));
    let bound = sent.try_recv().unwrap().unwrap();
    assert_eq!(bound["turn_id"], "t1");

    let (_, mut waiting) = ask(
        &mut hub,
        Call::Wait {
            turn_id: "t1".into(),
        },
    );
    hub.observe(&at(0, message("t1", "m1", Origin::Agent, "one")));
    hub.observe(&at(0, message("t1", "m2", Origin::Agent, "two")));
    assert!(waiting.try_recv().is_err());
    hub.observe(&at(0, completed("t1")));
    let done = waiting.try_recv().unwrap().unwrap();
    assert_eq!(done["text"], "one\n\ntwo");
    assert_eq!(done["status"], "completed");
    // Finished turns are still there for a late `wait`.
    let (_, mut late) = ask(
        &mut hub,
        Call::Wait {
            turn_id: "t1".into(),
        },
    );
    assert_eq!(late.try_recv().unwrap().unwrap()["text"], "one\n\ntwo");
    let (_, mut unknown) = ask(
        &mut hub,
        Call::Wait {
            turn_id: "t9".into(),
        },
    );
    assert_eq!(refused(&mut unknown), ErrorCode::TurnNotFound);
}

#[test]
fn a_finished_turn_shares_the_transcript_text_instead_of_copying_it() {
    let mut hub = hub();
    let answer = message("t1", "m1", Origin::Agent, "a long answer");
    let PaneEvent::Upsert(Upsert {
        kind: UpsertKind::Message { content, .. },
        ..
    }) = &answer
    else {
        unreachable!()
    };
    let content = content.clone();
    hub.observe(&at(0, answer));
    hub.observe(&at(0, completed("t1")));
    let record = &hub.turns["t1"];
    assert_eq!(record.result.as_ref().unwrap().text, "", "no copy kept");
    assert!(record.texts["m1"].same_buffer(&content));
    assert_eq!(record.answer().unwrap().text, "a long answer");
}

#[test]
fn a_dying_agent_fails_unbound_sends() {
    let mut hub = hub();
    let (_, mut sent) = ask(&mut hub, send_to_a("queued"));
    hub.observe(&at(0, PaneEvent::State(TurnState::Dead)));
    assert_eq!(refused(&mut sent), ErrorCode::ProcessCrash);
    let (cmd, mut again) = ask(&mut hub, send_to_a("x"));
    assert!(cmd.is_none());
    assert_eq!(refused(&mut again), ErrorCode::ProcessCrash);
}

#[test]
fn a_send_taken_out_of_the_queue_is_answered() {
    let mut hub = hub();
    let (_, mut drained) = ask(&mut hub, send_to_a("first"));
    let (_, mut removed) = ask(&mut hub, send_to_a("second"));
    hub.observe(&at(
        0,
        PaneEvent::Queue(vec!["first".into(), "second".into()]),
    ));
    // The console removes "second"; the turn ends; "first" drains.
    hub.observe(&at(0, PaneEvent::Queue(vec!["first".into()])));
    hub.observe(&at(0, PaneEvent::State(TurnState::Idle)));
    assert_eq!(refused(&mut removed), ErrorCode::InvalidState);
    hub.observe(&at(0, PaneEvent::Queue(vec![])));
    hub.observe(&at(0, PaneEvent::State(TurnState::Starting)));
    hub.observe(&at(0, message("t2", "u", Origin::User, "first")));
    assert_eq!(drained.try_recv().unwrap().unwrap()["turn_id"], "t2");
}

#[test]
fn watchers_get_their_pane_and_are_dropped_when_behind() {
    let mut hub = hub();
    let (tx, mut rx) = mpsc::channel(1);
    let (reply, _answer) = oneshot::channel();
    hub.handle(ControlRequest {
        call: Call::Watch {
            pane: Some("b".into()),
        },
        reply,
        events: Some(tx),
    });
    hub.observe(&at(0, message("t", "x", Origin::Agent, "not b")));
    hub.observe(&at(1, message("t", "y", Origin::Agent, "for b")));
    let line = rx.try_recv().unwrap();
    let ev: super::super::protocol::EventLine = serde_json::from_str(&line).unwrap();
    assert_eq!(ev.pane, "b");
    hub.observe(&at(1, message("t", "z", Origin::Agent, "fills it")));
    hub.observe(&at(1, message("t", "w", Origin::Agent, "overflows")));
    assert!(rx.try_recv().is_ok());
    assert!(
        matches!(rx.try_recv(), Err(mpsc::error::TryRecvError::Disconnected)),
        "a watcher that fell behind is let go"
    );
}

/// Pane `a`'s agent message `m` of turn `t`, as the processor shares it.
fn growing(text: &crate::text::TextBuffer, status: UpsertStatus) -> PaneUpdate {
    let PaneEvent::Upsert(mut u) = message("t", "m", Origin::Agent, "") else {
        unreachable!()
    };
    u.status = status;
    u.kind = UpsertKind::Message {
        content: text.snapshot(),
        origin: Origin::Agent,
    };
    at(0, PaneEvent::Upsert(u))
}

/// A watcher of every pane, with room for `n` lines.
fn watcher(hub: &mut Hub, n: usize) -> mpsc::Receiver<Arc<str>> {
    let (tx, rx) = mpsc::channel(n);
    let (reply, _answer) = oneshot::channel();
    hub.handle(ControlRequest {
        call: Call::Watch { pane: None },
        reply,
        events: Some(tx),
    });
    rx
}

/// The item's text as a watcher rebuilds it from whole texts and deltas,
/// and the bytes it was sent.
fn rebuilt(rx: &mut mpsc::Receiver<Arc<str>>) -> (String, usize) {
    let (mut text, mut bytes) = (String::new(), 0);
    while let Ok(line) = rx.try_recv() {
        bytes += line.len();
        let v: Value = serde_json::from_str(&line).unwrap();
        let ev = &v["event"];
        if let Some(delta) = ev.get("delta") {
            assert!(ev.get("content").is_none(), "{line}");
            text.push_str(delta.as_str().unwrap());
        } else if let Some(whole) = ev.get("content") {
            text = whole.as_str().unwrap().to_owned();
        }
    }
    (text, bytes)
}

#[test]
fn watchers_get_deltas_so_a_long_answer_costs_linear_bytes() {
    let mut hub = hub();
    let mut early = watcher(&mut hub, 4096);
    let mut buf = crate::text::TextBuffer::new();
    let mut late = None;
    for n in 0..2000 {
        buf.push_str(&format!(
            "{n:>5} and some more words of the answer, {}\n",
            "x".repeat(150)
        ));
        let status = if n == 0 {
            UpsertStatus::Create
        } else {
            UpsertStatus::Update
        };
        hub.observe(&growing(&buf, status));
        if n == 1000 {
            late = Some(watcher(&mut hub, 4096));
        }
    }
    hub.observe(&growing(&buf, UpsertStatus::Complete));
    let want = buf.with_str(str::to_owned);
    let (text, bytes) = rebuilt(&mut early);
    assert_eq!(text, want, "create + deltas rebuild the answer");
    assert!(
        bytes < 3 * want.len(),
        "{bytes} bytes sent for {}",
        want.len()
    );
    // A watcher that came in mid-answer starts from the whole text.
    let (text, bytes) = rebuilt(late.as_mut().unwrap());
    assert_eq!(text, want);
    assert!(
        bytes < 3 * want.len(),
        "{bytes} bytes sent for {}",
        want.len()
    );

    // Replaced content (not grown) goes whole again.
    buf.replace("a different answer".into());
    hub.observe(&growing(&buf, UpsertStatus::Complete));
    assert_eq!(rebuilt(&mut early).0, "a different answer");
}

/// Issue 33: `status` reports the pane's session usage (restored turns,
/// then each turn's end; an estimated cost marked, an unknown one null)
/// and its process sample.
#[test]
fn status_reports_usage_and_process() {
    let mut hub = hub();
    let status = |hub: &mut Hub, pane: &str| {
        let (_, mut rx) = ask(hub, Call::Status { pane: pane.into() });
        rx.try_recv().unwrap().unwrap()
    };
    let before = status(&mut hub, "a");
    assert_eq!(before["usage"]["input_tokens"], 0);
    assert!(before["usage"]["cost_usd"].is_null(), "nothing known: null");
    assert!(before["process"].is_null());
    // Restored turns, then a priced turn.
    hub.set_restored(
        0,
        crate::event::Usage {
            input_tokens: 1000,
            output_tokens: 100,
            cost_usd: Some(0.5),
            ..Default::default()
        },
        0,
        None,
    );
    hub.observe(&at(
        0,
        PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: "t1".into(),
            session_id: "s".into(),
            status: TurnStatus::Completed,
            usage: Some(crate::event::Usage {
                input_tokens: 500,
                output_tokens: 50,
                cache_read_input_tokens: Some(2000),
                cost_usd: Some(0.25),
                cost_estimated: true,
                ..Default::default()
            }),
            finish_reason: None,
        }),
    ));
    hub.observe(&at(
        0,
        PaneEvent::Process(Some(crate::procstat::ProcessSample {
            cpu_percent: 12.5,
            rss_bytes: 3 << 20,
            processes: 4,
        })),
    ));
    let s = status(&mut hub, "a");
    assert_eq!(s["usage"]["input_tokens"], 1500);
    assert_eq!(s["usage"]["output_tokens"], 150);
    assert_eq!(s["usage"]["cache_read_tokens"], 2000);
    assert_eq!(s["usage"]["cost_usd"], 0.75);
    assert_eq!(s["usage"]["cost_estimated"], true);
    assert_eq!(s["process"]["cpu_percent"], 12.5);
    assert_eq!(s["process"]["rss_bytes"], 3 << 20);
    assert!(s.get("held").is_none());
}

/// `list` adds the hive's usage up; `status` shows a held queue until it
/// goes on.
#[test]
fn list_totals_the_hive_and_status_shows_a_held_queue() {
    let mut hub = hub();
    let status = |hub: &mut Hub, pane: &str| {
        let (_, mut rx) = ask(hub, Call::Status { pane: pane.into() });
        rx.try_recv().unwrap().unwrap()
    };
    hub.set_restored(
        0,
        crate::event::Usage {
            input_tokens: 1500,
            cost_usd: Some(0.75),
            cost_estimated: true,
            ..Default::default()
        },
        0,
        None,
    );
    hub.observe(&at(
        1,
        PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: "t2".into(),
            session_id: "s".into(),
            status: TurnStatus::Completed,
            usage: Some(crate::event::Usage {
                input_tokens: 10,
                output_tokens: 1,
                ..Default::default()
            }),
            finish_reason: None,
        }),
    ));
    let (_, mut rx) = ask(&mut hub, Call::List);
    let list = rx.try_recv().unwrap().unwrap();
    assert_eq!(list["usage"]["input_tokens"], 1510);
    assert_eq!(list["usage"]["cost_estimated"], true);
    // A held queue shows until it goes on.
    hub.observe(&at(
        0,
        PaneEvent::Held(Some(crate::runner::hold::Hold {
            kind: crate::runner::hold::HoldKind::Budget,
            until: None,
            reported: false,
            resend: false,
            spent: Some("$0.75 of $0.50".into()),
        })),
    ));
    assert_eq!(status(&mut hub, "a")["held"]["kind"], "budget");
    hub.observe(&at(0, PaneEvent::Held(None)));
    assert!(status(&mut hub, "a").get("held").is_none());
}

fn permission(id: &str) -> PaneEvent {
    PaneEvent::Permission(crate::provider::PermissionRequest {
        request_id: id.into(),
        tool_name: "Bash".into(),
        input: json!({"command": "rm -rf build"}),
        description: None,
        options: Vec::new(),
        display: None,
        ..Default::default()
    })
}

#[test]
fn a_pane_waiting_for_approval_shows_it_and_approve_and_deny_answer_it() {
    let mut hub = hub();
    let (tx, mut lines) = mpsc::channel(16);
    let (reply, _watching) = oneshot::channel();
    hub.handle(ControlRequest {
        call: Call::Watch { pane: None },
        reply,
        events: Some(tx),
    });
    hub.observe(&at(0, PaneEvent::State(TurnState::Streaming)));
    hub.observe(&at(0, permission("p1")));
    hub.observe(&at(0, permission("p2")));
    let line = lines.try_recv().unwrap();
    let line: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(line["pane"], "a");
    assert_eq!(line["approval"]["type"], "approval_requested");
    assert_eq!(line["approval"]["arguments"]["command"], "rm -rf build");

    let (_, mut status) = ask(&mut hub, Call::Status { pane: "a".into() });
    let status = status.try_recv().unwrap().unwrap();
    assert_eq!(status["state"], "awaiting_approval");
    assert_eq!(status["approvals"][0]["tool"], "Bash");
    assert_eq!(status["approvals"].as_array().unwrap().len(), 2);

    // The oldest first; a named one; none left.
    let approve = |always| Call::Approve {
        pane: "a".into(),
        request_id: None,
        always,
    };
    let (cmd, _) = ask(&mut hub, approve(true));
    let Some((
        0,
        RunnerCommand::Permission {
            request_id,
            decision,
        },
    )) = cmd
    else {
        panic!("{cmd:?}");
    };
    assert_eq!(
        (request_id.as_str(), decision),
        ("p1", PermissionDecision::AllowAlways)
    );
    hub.observe(&at(0, PaneEvent::PermissionSettled { request_id }));
    let deny = |id: &str| Call::Deny {
        pane: "a".into(),
        request_id: Some(id.into()),
        reason: Some("not here".into()),
    };
    let (cmd, mut nope) = ask(&mut hub, deny("p1"));
    assert!(cmd.is_none());
    assert_eq!(refused(&mut nope), ErrorCode::InvalidState);
    let (cmd, mut denied) = ask(&mut hub, deny("p2"));
    let reason = "not here".to_owned();
    assert_eq!(
        cmd,
        Some((
            0,
            RunnerCommand::Permission {
                request_id: "p2".into(),
                decision: PermissionDecision::Deny { reason }
            }
        ))
    );
    assert_eq!(denied.try_recv().unwrap().unwrap()["decision"], "deny");
    hub.observe(&at(
        0,
        PaneEvent::PermissionSettled {
            request_id: "p2".into(),
        },
    ));
    let (_, mut status) = ask(&mut hub, Call::Status { pane: "a".into() });
    assert_eq!(status.try_recv().unwrap().unwrap()["state"], "streaming");
    let (_, mut none) = ask(&mut hub, approve(false));
    assert_eq!(refused(&mut none), ErrorCode::InvalidState);
}

#[test]
fn an_approval_goes_with_its_turn() {
    let mut hub = hub();
    hub.observe(&at(1, PaneEvent::State(TurnState::Streaming)));
    hub.observe(&at(1, permission("p1")));
    hub.observe(&at(1, completed("t1")));
    let (_, mut status) = ask(&mut hub, Call::Status { pane: "b".into() });
    let status = status.try_recv().unwrap().unwrap();
    assert!(status.get("approvals").is_none(), "{status}");
}
