//! The hub's tests: the panes' updates it observes answer the control
//! calls (`send`, `wait`, `watch`, cancels) as a client would see them.

use chrono::Utc;

use super::*;

/// The hub with the registry the server would keep beside it.
struct Rig {
    hub: Hub,
    panes: Panes<()>,
}

fn hub() -> Rig {
    let caps = crate::provider::Capabilities {
        interrupt: true,
        ..Default::default()
    };
    let mut panes = Panes::default();
    for id in ["a", "b"] {
        let agent = crate::config::AgentConfig::new(id, "script");
        panes.push(PaneRecord::new(agent, Started::Running(caps)), ());
    }
    Rig {
        hub: Hub::new(),
        panes,
    }
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

impl Rig {
    /// A ctl line's call, as the server's door hands it on.
    fn handle(&mut self, req: ControlRequest) -> Option<(usize, RunnerCommand)> {
        let verb = req.call.into_verb().expect("not an op");
        self.hub.answer(&self.panes, verb, req.reply, req.events)
    }

    /// An update, as the server's loop shows it: the registry first.
    fn observe(&mut self, update: &PaneUpdate) {
        self.panes.observe(update);
        self.hub.observe(&self.panes, update);
    }

    fn set_restored(
        &mut self,
        slot: usize,
        usage: crate::event::Usage,
        turns: u64,
        model: Option<String>,
    ) {
        let from = crate::panes::Restoring {
            usage,
            turns,
            model,
        };
        self.panes.record_mut(slot).unwrap().restore(from);
    }
}

fn at(pane: usize, event: PaneEvent) -> PaneUpdate {
    PaneUpdate { pane, event }
}

type Answer = oneshot::Receiver<Result<Value, CtlError>>;

fn ask(hub: &mut Rig, call: Call) -> (Option<(usize, RunnerCommand)>, Answer) {
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
    let record = &hub.hub.turns["t1"];
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

/// A watcher's end of its stream, as its connection reads it.
struct Tap {
    rx: mpsc::UnboundedReceiver<Arc<str>>,
    backlog: Arc<crate::backlog::Backlog>,
}

impl Tap {
    /// The next line, written out by the connection.
    fn read(&mut self) -> Option<Arc<str>> {
        let line = self.rx.try_recv().ok()?;
        self.backlog.written(line.len());
        Some(line)
    }
}

fn watch(hub: &mut Rig, pane: Option<&str>) -> Tap {
    let (tx, rx) = mpsc::unbounded_channel();
    let backlog = Arc::new(crate::backlog::Backlog::default());
    let (reply, _answer) = oneshot::channel();
    hub.handle(ControlRequest {
        call: Call::Watch {
            pane: pane.map(str::to_owned),
        },
        reply,
        events: Some(Watch {
            tx,
            backlog: Arc::clone(&backlog),
        }),
    });
    Tap { rx, backlog }
}

#[test]
fn watchers_get_their_pane() {
    let mut hub = hub();
    let mut tap = watch(&mut hub, Some("b"));
    hub.observe(&at(0, message("t", "x", Origin::Agent, "not b")));
    hub.observe(&at(1, message("t", "y", Origin::Agent, "for b")));
    let line = tap.read().unwrap();
    let ev: super::super::protocol::EventLine = serde_json::from_str(&line).unwrap();
    assert_eq!(ev.pane, "b");
    assert!(tap.read().is_none());
}

/// The one backpressure rule (src/backlog.rs), as a console's: a watcher
/// that falls behind is neither dropped nor buffered for without bound;
/// once it has read everything it is told how much it missed, and a text
/// it was getting as deltas comes whole (a delta would extend a text it
/// never got).
#[test]
fn a_watcher_behind_skips_then_catches_up_whole() {
    let mut hub = hub();
    let mut tap = watch(&mut hub, None);
    let mut buf = crate::text::TextBuffer::new();
    buf.push_str("start ");
    hub.observe(&growing(&buf, UpsertStatus::Create));
    // Past the bound: one line bigger than it all.
    buf.push_str(&"x".repeat(crate::backlog::MAX_BYTES));
    hub.observe(&growing(&buf, UpsertStatus::Update));
    buf.push_str(" end");
    hub.observe(&growing(&buf, UpsertStatus::Update));
    assert!(tap.backlog.is_behind());
    assert!(tap.backlog.queued() < crate::backlog::MAX_BYTES, "bounded");
    // It reads what was queued: the first text, whole.
    let first: Value = serde_json::from_str(&tap.read().unwrap()).unwrap();
    assert_eq!(first["event"]["content"], "start ");
    assert!(tap.read().is_none(), "nothing was queued while behind");
    assert!(!tap.rx.is_closed(), "not dropped");
    buf.push_str("!");
    hub.observe(&growing(&buf, UpsertStatus::Complete));
    let lagged: Value = serde_json::from_str(&tap.read().unwrap()).unwrap();
    assert_eq!(lagged, json!({"lagged": 2}));
    let whole: Value = serde_json::from_str(&tap.read().unwrap()).unwrap();
    assert!(whole["event"].get("delta").is_none(), "whole, not a delta");
    assert_eq!(
        whole["event"]["content"].as_str().map(str::len),
        Some(buf.snapshot().len())
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

/// The item's text as a watcher rebuilds it from whole texts and deltas,
/// and the bytes it was sent.
fn rebuilt(tap: &mut Tap) -> (String, usize) {
    let (mut text, mut bytes) = (String::new(), 0);
    while let Some(line) = tap.read() {
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
    let mut early = watch(&mut hub, None);
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
            late = Some(watch(&mut hub, None));
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
    let status = |hub: &mut Rig, pane: &str| {
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
    let status = |hub: &mut Rig, pane: &str| {
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
    let mut lines = watch(&mut hub, None);
    hub.observe(&at(0, PaneEvent::State(TurnState::Streaming)));
    hub.observe(&at(0, permission("p1")));
    hub.observe(&at(0, permission("p2")));
    let line = lines.read().unwrap();
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
        confirm: false,
    };
    let (cmd, _) = ask(&mut hub, approve(true));
    let Some((
        0,
        RunnerCommand::Permission {
            request_id,
            decision,
            ..
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
                decision: PermissionDecision::Deny { reason },
                by: Decider::Unknown,
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
