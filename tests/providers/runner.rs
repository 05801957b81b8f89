//! The turn runner against a fake provider: the queue/interrupt fallback
//! matrix of seed 000 (one test per row), the user's own message, crashes,
//! agents that ignore interrupts, and queue editing.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hive::config::{AgentConfig, QueueMode};
use hive::event::{ItemType, Origin, Payload, ResponseStatus, StreamEvent};
use hive::processor::ProcessorConfig;
use hive::provider::{
    Capabilities, EventSink, ProviderCommand, ProviderError, ProviderEvent, ProviderFactory,
    ProviderHandle, ProviderSpec,
};
use hive::runner::{
    PaneEvent, PaneUpdate, QueueEdit, RunnerCommand, RunnerHandle, RunnerOptions, SubmitMode,
    TurnState, spawn_runner,
};
use hive::upsert::{TurnEvent, TurnStatus, UpsertKind};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// What the fake saw and how to drive it.
#[derive(Default)]
struct Shared {
    commands: Vec<ProviderCommand>,
    sink: Option<EventSink>,
    /// The pace a paced fake reads at.
    pace: Option<hive::provider::channel::ReadPace>,
    turn: Option<String>,
    spawns: usize,
}

#[derive(Clone)]
struct Fake {
    caps: Capabilities,
    honor_cancel: bool,
    /// Reads its (imaginary) agent at the runner's pace.
    paced: bool,
    shared: Arc<Mutex<Shared>>,
}

impl Fake {
    fn new(caps: Capabilities) -> Self {
        Self {
            caps,
            honor_cancel: true,
            paced: false,
            shared: Arc::default(),
        }
    }

    fn emit(&self, payload: Payload) {
        let s = self.shared.lock().unwrap();
        let turn = s.turn.clone().expect("a turn is running");
        let ev = StreamEvent::new(&turn, "fake_session", payload);
        s.sink
            .as_ref()
            .unwrap()
            .send(ProviderEvent::Stream(ev))
            .unwrap();
    }

    /// The agent finishes its current turn.
    fn finish_turn(&self) {
        self.emit(Payload::ResponseDone {
            status: ResponseStatus::Completed,
            finish_reason: Some("end_turn".into()),
            error: None,
            usage: None,
        });
    }

    fn crash(&self) {
        let s = self.shared.lock().unwrap();
        s.sink
            .as_ref()
            .unwrap()
            .send(ProviderEvent::Exited {
                code: Some(1),
                message: "exited with status 1\npanic: boom".into(),
            })
            .unwrap();
    }

    fn sent_texts(&self) -> Vec<String> {
        self.shared
            .lock()
            .unwrap()
            .commands
            .iter()
            .filter_map(|c| match c {
                ProviderCommand::Send { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    fn commands(&self) -> Vec<ProviderCommand> {
        self.shared.lock().unwrap().commands.clone()
    }
}

impl ProviderFactory for Fake {
    fn capabilities(&self, _: &AgentConfig) -> Capabilities {
        self.caps
    }

    fn spawn(
        &self,
        _spec: ProviderSpec,
        events: EventSink,
    ) -> Result<ProviderHandle, ProviderError> {
        let shared = Arc::clone(&self.shared);
        let honor_cancel = self.honor_cancel;
        if self.paced {
            shared.lock().unwrap().pace = events.pace_reads();
        }
        {
            let mut s = shared.lock().unwrap();
            s.sink = Some(events.clone());
            s.spawns += 1;
        }
        Ok(ProviderHandle::spawn(move |mut rx| async move {
            while let Some(cmd) = rx.recv().await {
                shared.lock().unwrap().commands.push(cmd.clone());
                match cmd {
                    ProviderCommand::Send { turn_id, .. } => {
                        shared.lock().unwrap().turn = Some(turn_id.clone());
                        let ev = StreamEvent::new(
                            &turn_id,
                            "fake_session",
                            Payload::ResponseStart {
                                model_id: "fake-model".into(),
                                provider_id: "fake".into(),
                            },
                        );
                        let _ = events.send(ProviderEvent::Stream(ev));
                    }
                    ProviderCommand::Cancel if honor_cancel => {
                        let turn = shared.lock().unwrap().turn.clone().unwrap_or_default();
                        let ev = StreamEvent::new(
                            &turn,
                            "fake_session",
                            Payload::ResponseDone {
                                status: ResponseStatus::Cancelled,
                                finish_reason: None,
                                error: None,
                                usage: None,
                            },
                        );
                        let _ = events.send(ProviderEvent::Stream(ev));
                    }
                    ProviderCommand::Kill => return,
                    _ => {}
                }
            }
        }))
    }
}

fn caps(queue_while_streaming: bool, interrupt: bool) -> Capabilities {
    Capabilities {
        queue_while_streaming,
        interrupt,
        ..Capabilities::default()
    }
}

fn start(fake: &Fake, queue_mode: QueueMode) -> (RunnerHandle, UnboundedReceiver<PaneUpdate>) {
    let mut agent = AgentConfig::new("a", "fake");
    agent.queue_mode = queue_mode;
    start_with(fake, None, RunnerOptions::default(), agent)
}

fn start_with(
    fake: &Fake,
    resume: Option<String>,
    options: RunnerOptions,
    agent: AgentConfig,
) -> (RunnerHandle, UnboundedReceiver<PaneUpdate>) {
    let (tx, rx) = unbounded_channel();
    let spec = ProviderSpec { agent, resume };
    let handle = spawn_runner(0, Arc::new(fake.clone()), spec, options, tx).unwrap();
    (handle, rx)
}

/// Waits (in virtual time) for the first event matching `pred`.
async fn until<T>(
    rx: &mut UnboundedReceiver<PaneUpdate>,
    mut pred: impl FnMut(&PaneEvent) -> Option<T>,
) -> T {
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let u = rx.recv().await.expect("runner alive");
            if let Some(t) = pred(&u.event) {
                return t;
            }
        }
    })
    .await;
    found.expect("expected event did not arrive")
}

async fn state(rx: &mut UnboundedReceiver<PaneUpdate>, want: TurnState) {
    until(rx, |e| {
        matches!(e, PaneEvent::State(s) if *s == want).then_some(())
    })
    .await
}

/// The status of the next completed turn.
async fn turn_status(rx: &mut UnboundedReceiver<PaneUpdate>) -> TurnStatus {
    until(rx, |e| match e {
        PaneEvent::Turn(TurnEvent::TurnComplete { status, .. }) => Some(*status),
        _ => None,
    })
    .await
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(10)).await;
}

fn send(h: &RunnerHandle, text: &str, mode: SubmitMode) {
    assert!(h.send(RunnerCommand::Submit {
        text: text.into(),
        mode
    }));
}

#[tokio::test(start_paused = true)]
async fn user_message_is_emitted_as_a_user_origin_item() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "hello agent", SubmitMode::Auto);
    let (content, turn) = until(&mut rx, |e| match e {
        PaneEvent::Upsert(u) => match &u.kind {
            UpsertKind::Message {
                content,
                origin: Origin::User,
            } => Some((content.to_string(), u.turn_id.clone())),
            _ => None,
        },
        _ => None,
    })
    .await;
    assert_eq!(content, "hello agent");
    state(&mut rx, TurnState::Streaming).await;
    settle().await;
    assert_eq!(
        fake.shared.lock().unwrap().turn.as_deref(),
        Some(turn.as_str()),
        "same turn id"
    );
}

/// Issue 13 item 11: the agent names its own session while hive's user
/// message already went out; every event of the turn carries one id.
#[tokio::test(start_paused = true)]
async fn every_event_of_a_turn_carries_one_session_id() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "hello", SubmitMode::Auto);
    let mut ids = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("turn ends")
            .expect("runner alive")
            .event;
        match ev {
            PaneEvent::Upsert(u) => ids.push(u.session_id),
            PaneEvent::Turn(t) => {
                let terminal = t.is_terminal();
                ids.push(match t {
                    TurnEvent::TurnStarted { session_id, .. }
                    | TurnEvent::TurnComplete { session_id, .. }
                    | TurnEvent::TurnError { session_id, .. } => session_id,
                });
                if terminal {
                    break;
                }
            }
            PaneEvent::State(TurnState::Streaming) => {
                fake.emit(Payload::item_start("m1", ItemType::Message));
                fake.emit(Payload::ItemDelta {
                    item_id: "m1".into(),
                    delta_content: "hi".into(),
                });
                fake.finish_turn();
            }
            _ => {}
        }
    }
    assert!(ids.len() >= 4, "{ids:?}");
    assert!(ids.iter().all(|i| *i == ids[0]), "{ids:?}");
}

/// Issue 13 item 10: a crash mid-turn is told once (the turn's error), not
/// again as a notice.
#[tokio::test(start_paused = true)]
async fn a_crash_is_one_error_line() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "work", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    fake.crash();
    let mut told = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the pane dies")
            .expect("runner alive")
            .event;
        match ev {
            PaneEvent::Turn(TurnEvent::TurnError { error_message, .. }) => told.push(error_message),
            PaneEvent::Notice { text, .. } => told.push(text),
            PaneEvent::State(TurnState::Dead) => break,
            _ => {}
        }
    }
    settle().await;
    while let Ok(u) = rx.try_recv() {
        if let PaneEvent::Notice { text, .. } = u.event {
            told.push(text);
        }
    }
    let crash: Vec<&String> = told.iter().filter(|t| t.contains("panic: boom")).collect();
    assert_eq!(crash.len(), 1, "{told:#?}");
    drop(h);
}

/// seed 000 row 1: streaming, queue mode, agent takes input mid-turn.
#[tokio::test(start_paused = true)]
async fn matrix_row1_queue_mode_with_streaming_input() {
    let fake = Fake::new(caps(true, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "first", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    // Queue intent (Enter while busy) → runner queue, per DESIGN §5.
    send(&h, "after", SubmitMode::Auto);
    let q = until(&mut rx, |e| match e {
        PaneEvent::Queue(q) if !q.is_empty() => Some(q.clone()),
        _ => None,
    })
    .await;
    assert_eq!(q, vec!["after".to_string()]);
    // Steer intent → handed to the agent now.
    send(&h, "now", SubmitMode::Steer);
    settle().await;
    assert!(
        fake.commands()
            .contains(&ProviderCommand::Steer { text: "now".into() })
    );
    assert_eq!(fake.sent_texts(), vec!["first"]);
    fake.finish_turn();
    state(&mut rx, TurnState::Idle).await;
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["first", "after"]);
}

/// seed 000 row 2: streaming, queue mode, agent lacks mid-turn input.
#[tokio::test(start_paused = true)]
async fn matrix_row2_queue_mode_without_streaming_input_drains_in_order() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "one", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    send(&h, "two", SubmitMode::Auto);
    send(&h, "three", SubmitMode::Queue);
    settle().await;
    assert_eq!(
        fake.sent_texts(),
        vec!["one"],
        "nothing else sent while busy"
    );
    fake.finish_turn();
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["one", "two"], "one turn at a time");
    fake.finish_turn();
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["one", "two", "three"]);
    fake.finish_turn();
    state(&mut rx, TurnState::Idle).await;
}

/// seed 000 row 3: streaming, interrupt mode, agent can be interrupted.
#[tokio::test(start_paused = true)]
async fn matrix_row3_interrupt_mode_interrupts_then_sends() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Interrupt);
    send(&h, "long task", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    send(&h, "change of plan", SubmitMode::Auto);
    let status = turn_status(&mut rx).await;
    assert_eq!(status, TurnStatus::Cancelled);
    settle().await;
    let cmds = fake.commands();
    let cancel_at = cmds
        .iter()
        .position(|c| *c == ProviderCommand::Cancel)
        .expect("cancelled");
    let resend_at = cmds
        .iter()
        .position(|c| matches!(c, ProviderCommand::Send { text, .. } if text == "change of plan"))
        .expect("sent after the interrupt");
    assert!(cancel_at < resend_at);
}

/// seed 000 row 4: streaming, interrupt mode, agent lacks interrupt.
#[tokio::test(start_paused = true)]
async fn matrix_row4_interrupt_mode_without_interrupt_falls_back_to_queue() {
    let fake = Fake::new(caps(false, false));
    let (h, mut rx) = start(&fake, QueueMode::Interrupt);
    send(&h, "long task", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    send(&h, "later", SubmitMode::Auto);
    let notice = until(&mut rx, |e| match e {
        PaneEvent::Notice { text, .. } => Some(text.clone()),
        _ => None,
    })
    .await;
    assert!(notice.contains("queued"), "{notice}");
    settle().await;
    assert!(!fake.commands().contains(&ProviderCommand::Cancel));
    fake.finish_turn();
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["long task", "later"]);
}

#[tokio::test(start_paused = true)]
async fn interrupt_without_capability_says_so_and_turn_continues() {
    let fake = Fake::new(caps(false, false));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "task", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    h.send(RunnerCommand::Interrupt);
    let notice = until(&mut rx, |e| match e {
        PaneEvent::Notice { text, .. } => Some(text.clone()),
        _ => None,
    })
    .await;
    assert!(notice.contains("cannot be interrupted"));
    fake.finish_turn();
    let status = turn_status(&mut rx).await;
    assert_eq!(status, TurnStatus::Completed);
}

#[tokio::test(start_paused = true)]
async fn ignored_interrupt_ends_turn_as_cancelled_and_replaces_the_agent() {
    let mut fake = Fake::new(caps(false, true));
    fake.honor_cancel = false;
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "stubborn", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    send(&h, "next", SubmitMode::Queue);
    let t0 = tokio::time::Instant::now();
    h.send(RunnerCommand::Interrupt);
    state(&mut rx, TurnState::Cancelling).await;
    let status = turn_status(&mut rx).await;
    assert_eq!(status, TurnStatus::Cancelled);
    assert!(t0.elapsed() <= Duration::from_secs(1), "within a second");
    settle().await;
    assert_eq!(fake.shared.lock().unwrap().spawns, 2, "agent replaced");
    assert!(fake.commands().contains(&ProviderCommand::Kill));
    // The user interrupted: the queue waits for them (issue 34 item 9),
    // then Enter on an empty composer sends it into the new agent.
    assert_eq!(fake.sent_texts(), vec!["stubborn"]);
    h.send(RunnerCommand::DrainQueue);
    settle().await;
    assert_eq!(
        fake.sent_texts().last().map(String::as_str),
        Some("next"),
        "queue drains into the new agent"
    );
}

/// Issue 34 item 9: Esc with messages queued interrupts (DESIGN §5) and
/// holds the queue instead of sending it at once; Enter sends the next,
/// the rest keep waiting; Esc again clears them. Failed before: "two" was
/// sent as soon as the interrupted turn ended.
#[tokio::test(start_paused = true)]
async fn esc_with_a_queue_interrupts_and_holds_it() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "one", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    send(&h, "two", SubmitMode::Auto);
    send(&h, "three", SubmitMode::Auto);
    settle().await;
    h.send(RunnerCommand::Interrupt);
    let notice = until(&mut rx, |e| match e {
        PaneEvent::Notice { text, .. } => Some(text.clone()),
        _ => None,
    })
    .await;
    assert_eq!(
        notice,
        "queue held: Enter sends the next · Esc again clears it"
    );
    assert_eq!(turn_status(&mut rx).await, TurnStatus::Cancelled);
    state(&mut rx, TurnState::Idle).await;
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["one"], "the queue waits");
    // Enter: the next goes, the last keeps waiting.
    h.send(RunnerCommand::DrainQueue);
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["one", "two"]);
    fake.finish_turn();
    state(&mut rx, TurnState::Idle).await;
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["one", "two"], "still held");
    // Esc again: the queue is cleared, nothing sent.
    h.send(RunnerCommand::Interrupt);
    let released = until(&mut rx, |e| match e {
        PaneEvent::Held(h) => Some(h.clone()),
        _ => None,
    })
    .await;
    assert_eq!(released, None);
    let queue = until(&mut rx, |e| match e {
        PaneEvent::Queue(q) => Some(q.clone()),
        _ => None,
    })
    .await;
    assert!(queue.is_empty(), "{queue:?}");
    // A new message goes at once.
    send(&h, "four", SubmitMode::Auto);
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["one", "two", "four"]);
}

/// The hold is the queue's, shown to every console as `Held`.
#[tokio::test(start_paused = true)]
async fn the_held_queue_is_told_to_the_consoles() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "one", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    send(&h, "two", SubmitMode::Auto);
    h.send(RunnerCommand::Interrupt);
    let held = until(&mut rx, |e| match e {
        PaneEvent::Held(Some(h)) => Some(h.kind),
        _ => None,
    })
    .await;
    assert_eq!(held, hive::runner::hold::HoldKind::Interrupted);
    state(&mut rx, TurnState::Idle).await;
    // Enter sends the last one: nothing waits any more.
    h.send(RunnerCommand::DrainQueue);
    let released = until(&mut rx, |e| match e {
        PaneEvent::Held(h) => Some(h.clone()),
        _ => None,
    })
    .await;
    assert_eq!(released, None);
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["one", "two"]);
}

#[tokio::test(start_paused = true)]
async fn crash_mid_turn_is_a_turn_error_and_queue_survives_until_restart() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "work", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    send(&h, "queued", SubmitMode::Auto);
    settle().await;
    fake.crash();
    let (code, message) = until(&mut rx, |e| match e {
        PaneEvent::Turn(TurnEvent::TurnError {
            error_code,
            error_message,
            ..
        }) => Some((error_code.clone(), error_message.clone())),
        _ => None,
    })
    .await;
    assert_eq!(code, "agent_exited");
    assert!(
        message.contains("status 1") && message.contains("panic: boom"),
        "{message}"
    );
    state(&mut rx, TurnState::Dead).await;
    send(&h, "while dead", SubmitMode::Auto);
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["work"], "never silently restarted");
    h.send(RunnerCommand::Restart);
    settle().await;
    assert_eq!(fake.shared.lock().unwrap().spawns, 2);
    assert_eq!(fake.sent_texts(), vec!["work", "queued"]);
    fake.finish_turn();
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["work", "queued", "while dead"]);
}

#[tokio::test(start_paused = true)]
async fn queue_can_be_edited_reordered_and_recalled() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "busy", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    for t in ["a", "b", "c", "d"] {
        send(&h, t, SubmitMode::Queue);
    }
    h.send(RunnerCommand::Queue(QueueEdit::Move { from: 2, to: 0 }));
    h.send(RunnerCommand::Queue(QueueEdit::Replace(1, "A".into())));
    h.send(RunnerCommand::Queue(QueueEdit::Remove(2)));
    h.send(RunnerCommand::Queue(QueueEdit::PopLast));
    let recalled = until(&mut rx, |e| match e {
        PaneEvent::Recalled(t) => Some(t.clone()),
        _ => None,
    })
    .await;
    assert_eq!(recalled, "d");
    let q = until(&mut rx, |e| match e {
        PaneEvent::Queue(q) => Some(q.clone()),
        _ => None,
    })
    .await;
    assert_eq!(q, vec!["c", "A"]);
}

#[tokio::test(start_paused = true)]
async fn restored_queue_waits_for_drain_command() {
    let fake = Fake::new(caps(false, true));
    let options = RunnerOptions {
        initial_queue: vec!["left over".into()],
        ..RunnerOptions::default()
    };
    let agent = AgentConfig::new("a", "fake");
    let (h, mut rx) = start_with(&fake, Some("old-session".into()), options, agent);
    let q = until(&mut rx, |e| match e {
        PaneEvent::Queue(q) => Some(q.clone()),
        _ => None,
    })
    .await;
    assert_eq!(q, vec!["left over"]);
    settle().await;
    assert!(fake.sent_texts().is_empty(), "offered, not auto-sent");
    h.send(RunnerCommand::DrainQueue);
    settle().await;
    assert_eq!(fake.sent_texts(), vec!["left over"]);
}

#[tokio::test(start_paused = true)]
async fn runner_flushes_buffered_text_after_the_batch_timeout() {
    let fake = Fake::new(caps(false, true));
    let options = RunnerOptions {
        processor: ProcessorConfig {
            batch_timeout: Duration::from_millis(300),
            ..ProcessorConfig::default()
        },
        ..RunnerOptions::default()
    };
    let (_h, mut rx) = streaming_message(&fake, options).await;
    fake.emit(Payload::ItemDelta {
        item_id: "m1".into(),
        delta_content: "Hel".into(),
    });
    let t0 = tokio::time::Instant::now();
    let text = until(&mut rx, |e| match e {
        PaneEvent::Upsert(u) if u.item_id == "m1" => u.text().map(|t| t.to_string()),
        _ => None,
    })
    .await;
    assert_eq!(text, "Hel");
    assert!(t0.elapsed() >= Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn kill_aborts_a_provider_task_that_ignores_it() {
    let dropped = Arc::new(Mutex::new(false));
    struct Guard(Arc<Mutex<bool>>);
    impl Drop for Guard {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = true;
        }
    }
    let guard = Guard(Arc::clone(&dropped));
    let handle = ProviderHandle::spawn(move |_rx| async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    assert!(handle.is_alive());
    let t0 = tokio::time::Instant::now();
    handle.kill().await;
    assert!(t0.elapsed() <= Duration::from_secs(3));
    assert!(
        *dropped.lock().unwrap(),
        "the task (and whatever it owned) was dropped"
    );
}

/// "work" runs, "queued" waits; the agent fails its turn and dies right
/// after, as a crashing CLI does: the runner drains "queued" into it before
/// it learns of the exit.
async fn drain_into_a_dying_agent(fake: &Fake) -> (RunnerHandle, UnboundedReceiver<PaneUpdate>) {
    let (h, mut rx) = start(fake, QueueMode::Queue);
    send(&h, "work", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    send(&h, "queued", SubmitMode::Auto);
    settle().await;
    fake.emit(Payload::ResponseError {
        error: hive::event::ErrorInfo::new("api_error", "boom"),
    });
    fake.crash();
    (h, rx)
}

#[tokio::test(start_paused = true)]
async fn message_drained_into_a_dying_agent_goes_back_to_the_queue() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = drain_into_a_dying_agent(&fake).await;
    let q = until(&mut rx, |e| match e {
        PaneEvent::Queue(q) if !q.is_empty() => Some(q.clone()),
        _ => None,
    })
    .await;
    assert_eq!(q, vec!["queued"], "not lost");
    state(&mut rx, TurnState::Dead).await;
    h.send(RunnerCommand::Restart);
    settle().await;
    assert_eq!(fake.sent_texts().last().map(String::as_str), Some("queued"));
}

#[tokio::test(start_paused = true)]
async fn shutdown_returns_after_the_provider_is_killed() {
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = start(&fake, QueueMode::Queue);
    send(&h, "work", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    h.shutdown().await;
    assert_eq!(fake.commands().last(), Some(&ProviderCommand::Kill));
    assert!(!h.send(RunnerCommand::Interrupt), "the runner is gone");
}

/// Issue 12 item 13: a message the dying agent never started on is shown
/// (and recorded) once, not again when the restarted agent gets it.
#[tokio::test(start_paused = true)]
async fn undelivered_message_is_not_repeated_after_restart() {
    fn echo_of_queued(e: &PaneEvent) -> bool {
        matches!(e, PaneEvent::Upsert(u)
            if u.status == hive::upsert::UpsertStatus::Complete
            && matches!(&u.kind, UpsertKind::Message { content, origin: Origin::User }
                if content.with_str(|s| s == "queued")))
    }
    let fake = Fake::new(caps(false, true));
    let (h, mut rx) = drain_into_a_dying_agent(&fake).await;
    let mut echoes = 0;
    until(&mut rx, |e| {
        echoes += usize::from(echo_of_queued(e));
        matches!(e, PaneEvent::State(TurnState::Dead)).then_some(())
    })
    .await;
    assert_eq!(echoes, 1, "shown when it was drained into the dying agent");
    h.send(RunnerCommand::Restart);
    settle().await;
    assert_eq!(fake.sent_texts().last().map(String::as_str), Some("queued"));
    fake.finish_turn();
    until(&mut rx, |e| {
        echoes += usize::from(echo_of_queued(e));
        matches!(e, PaneEvent::Turn(TurnEvent::TurnComplete { .. })).then_some(())
    })
    .await;
    assert_eq!(echoes, 1, "the message was shown (and recorded) again");
    h.shutdown().await;
}

/// Issue 12 item 7: a turn without output for `stall_after` is reported as
/// stalled, and the report is withdrawn when output resumes; Restart then
/// replaces the live agent.
#[tokio::test(start_paused = true)]
async fn a_silent_turn_is_reported_as_stalled_until_output_resumes() {
    let fake = Fake::new(caps(false, true));
    // Below `until`'s own 30 s bound (virtual time).
    let options = RunnerOptions {
        stall_after: Duration::from_secs(10),
        ..RunnerOptions::default()
    };
    let (h, mut rx) = start_with(&fake, None, options, AgentConfig::new("a", "fake"));
    send(&h, "work", SubmitMode::Auto);
    state(&mut rx, TurnState::Starting).await;
    let since = until(&mut rx, |e| match e {
        PaneEvent::Stalled(s) => Some(*s),
        _ => None,
    })
    .await;
    assert!(since.is_some());
    fake.emit(Payload::ItemStart {
        item_id: "m1".into(),
        item_type: ItemType::Message,
        initial_content: None,
        name: None,
        call_id: None,
    });
    let cleared = until(&mut rx, |e| match e {
        PaneEvent::Stalled(s) => Some(*s),
        _ => None,
    })
    .await;
    assert_eq!(cleared, None);
    // Silent again: reported again; Restart replaces the live agent.
    until(&mut rx, |e| {
        matches!(e, PaneEvent::Stalled(Some(_))).then_some(())
    })
    .await;
    let spawns = fake.shared.lock().unwrap().spawns;
    h.send(RunnerCommand::Restart);
    until(&mut rx, |e| match e {
        PaneEvent::Notice { text, .. } if text.contains("restarted on request") => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(fake.shared.lock().unwrap().spawns, spawns + 1);
}

/// A runner with `options` whose turn is streaming message `m1`.
async fn streaming_message(
    fake: &Fake,
    options: RunnerOptions,
) -> (RunnerHandle, UnboundedReceiver<PaneUpdate>) {
    let (h, mut rx) = start_with(fake, None, options, AgentConfig::new("a", "fake"));
    send(&h, "hi", SubmitMode::Auto);
    state(&mut rx, TurnState::Streaming).await;
    fake.emit(Payload::ItemStart {
        item_id: "m1".into(),
        item_type: ItemType::Message,
        initial_content: None,
        name: None,
        call_id: None,
    });
    (h, rx)
}

/// Records which events reach the history recorder.
struct SeenByRecorder(Arc<Mutex<Vec<String>>>);

impl hive::runner::Recorder for SeenByRecorder {
    fn record(&mut self, event: &PaneEvent) {
        let name = match event {
            PaneEvent::Live(_) => "live",
            PaneEvent::Upsert(_) => "upsert",
            _ => "other",
        };
        self.0.lock().unwrap().push(name.into());
    }
}

/// The console draws streaming text on the live tail's cadence only
/// (`app::pace`), so a gradient batch must not stop the live tail that
/// shows its text.
#[tokio::test(start_paused = true)]
async fn live_tail_follows_a_gradient_batch() {
    let fake = Fake::new(caps(false, true));
    let options = RunnerOptions {
        live_every: Some(Duration::from_millis(40)),
        ..RunnerOptions::default()
    };
    let (_h, mut rx) = streaming_message(&fake, options).await;
    let text = "enough words in one delta to pass the gradient's first batch of ten tokens";
    fake.emit(Payload::ItemDelta {
        item_id: "m1".into(),
        delta_content: text.into(),
    });
    let batch = until(&mut rx, |e| match e {
        PaneEvent::Upsert(u) if u.item_id == "m1" => u.text().map(|t| t.to_string()),
        _ => None,
    })
    .await;
    assert_eq!(batch, text);
    let live = until(&mut rx, |e| match e {
        PaneEvent::Live(u) if u.item_id == "m1" => u.text().map(|t| t.to_string()),
        _ => None,
    })
    .await;
    assert_eq!(live, text);
}

#[tokio::test(start_paused = true)]
async fn live_tail_shows_text_between_gradient_batches_and_is_not_recorded() {
    let fake = Fake::new(caps(false, true));
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let options = RunnerOptions {
        live_every: Some(Duration::from_millis(40)),
        recorder: Some(Box::new(SeenByRecorder(Arc::clone(&recorded)))),
        ..RunnerOptions::default()
    };
    let (_h, mut rx) = streaming_message(&fake, options).await;
    let t0 = tokio::time::Instant::now();
    let mut live = Vec::new();
    for delta in ["Hel", "lo"] {
        fake.emit(Payload::ItemDelta {
            item_id: "m1".into(),
            delta_content: delta.into(),
        });
        // Below the gradient's first batch (10 tokens): only the live tail shows it.
        let text = until(&mut rx, |e| match e {
            PaneEvent::Upsert(u) if u.item_id == "m1" => panic!("gradient emitted early"),
            PaneEvent::Live(u) if u.item_id == "m1" => u.text().map(|t| t.to_string()),
            _ => None,
        })
        .await;
        live.push(text);
    }
    assert_eq!(live, vec!["Hel", "Hello"]);
    assert!(
        t0.elapsed() < Duration::from_millis(200),
        "within the live period, not the batch timeout"
    );
    settle().await;
    assert!(!recorded.lock().unwrap().iter().any(|n| n == "live"));
}

/// The deltas of one read of the agent, handed over together.
fn burst(fake: &Fake, deltas: &[&str]) {
    for d in deltas {
        fake.emit(Payload::ItemDelta {
            item_id: "m1".into(),
            delta_content: (*d).into(),
        });
    }
}

async fn next_live(rx: &mut UnboundedReceiver<PaneUpdate>) -> String {
    until(rx, |e| match e {
        PaneEvent::Live(u) if u.item_id == "m1" => u.text().map(|t| t.to_string()),
        _ => None,
    })
    .await
}

/// Text a paced provider read has already waited up to a tick in the
/// agent's pipe: its burst shows at once, and the next a tick (less the
/// quarter of slack) after the last. Text read as it comes shows on a
/// tick of the shared grid, a quarter to a tick and a quarter after it
/// came, so a tick's deltas share one frame.
#[tokio::test(start_paused = true)]
async fn a_paced_burst_shows_at_once_and_unpaced_text_a_tick_later() {
    let every = Duration::from_millis(40);
    for paced in [true, false] {
        let mut fake = Fake::new(caps(false, true));
        fake.paced = paced;
        let options = RunnerOptions {
            live_every: Some(every),
            ..RunnerOptions::default()
        };
        let (_h, mut rx) = streaming_message(&fake, options).await;
        let t0 = tokio::time::Instant::now();
        burst(&fake, &["Hel", "lo"]);
        assert_eq!(next_live(&mut rx).await, "Hello");
        let first = t0.elapsed();
        burst(&fake, &[" there"]);
        assert_eq!(next_live(&mut rx).await, "Hello there");
        let second = t0.elapsed();
        if paced {
            assert_eq!((first, second), (Duration::ZERO, every - every / 4));
        } else {
            // The live tail rests on the process's shared tick grid: a
            // grid tick between a quarter tick and a tick and a quarter
            // away (docs/ui.md), and the next a tick later.
            assert!(
                first >= every / 4 && first <= every + every / 4,
                "{first:?}"
            );
            assert_eq!(second - first, every);
        }
    }
}

/// Out of focus, a pane's text shows on the background tick, and its agent
/// is read no more often; back in focus, both return to the live tick.
#[tokio::test(start_paused = true)]
async fn a_pane_out_of_focus_is_shown_and_read_on_the_background_tick() {
    let (every, background) = (Duration::from_millis(40), Duration::from_millis(160));
    let mut fake = Fake::new(caps(false, true));
    fake.paced = true;
    let options = RunnerOptions {
        live_every: Some(every),
        background_every: Some(background),
        ..RunnerOptions::default()
    };
    let (h, mut rx) = streaming_message(&fake, options).await;
    let pace = || {
        let s = fake.shared.lock().unwrap();
        s.pace.as_ref().expect("a paced reader").get()
    };
    assert_eq!(pace(), every);
    let t0 = tokio::time::Instant::now();
    burst(&fake, &["Hel"]);
    assert_eq!(next_live(&mut rx).await, "Hel");

    h.send(RunnerCommand::Focused(false));
    settle().await;
    assert_eq!(pace(), background);
    burst(&fake, &["lo"]);
    assert_eq!(next_live(&mut rx).await, "Hello");
    assert_eq!(t0.elapsed(), background - background / 4);

    h.send(RunnerCommand::Focused(true));
    settle().await;
    assert_eq!(pace(), every);
}

/// Issue 33 item 2: a turn that leaves the context past 80 % of the window
/// (the agent's own figure, else the configured one) warns once, and again
/// only after the fill dropped below; it offers the agent's own `/compact`
/// where the agent announced one.
#[tokio::test(start_paused = true)]
async fn the_context_past_80_percent_is_told_once() {
    let fake = Fake::new(caps(false, true));
    let mut agent = AgentConfig::new("a", "fake");
    agent.context_window = Some(1000);
    let (h, mut rx) = start_with(&fake, None, RunnerOptions::default(), agent);
    let mut warnings = Vec::new();
    let turns = [
        (900, None),
        (950, None),
        (410, None),
        (860, None),
        (100, None),
        // The agent's own window wins over the configured one.
        (200, Some(250)),
    ];
    for (used, window) in turns {
        if used == 860 {
            let sink = fake.shared.lock().unwrap().sink.clone().unwrap();
            sink.send(ProviderEvent::Session(hive::provider::SessionInfo {
                resume_handle: None,
                model: None,
                commands: vec!["compact".into(), "review".into()],
            }))
            .unwrap();
        }
        send(&h, "go", SubmitMode::Queue);
        state(&mut rx, TurnState::Streaming).await;
        fake.emit(Payload::ResponseDone {
            status: ResponseStatus::Completed,
            finish_reason: None,
            error: None,
            usage: Some(hive::event::Usage {
                input_tokens: 10,
                output_tokens: 1,
                context_tokens: Some(used),
                context_window: window,
                ..Default::default()
            }),
        });
        loop {
            match rx.recv().await.unwrap().event {
                PaneEvent::Notice { text, .. } if text.contains("context") => warnings.push(text),
                PaneEvent::State(TurnState::Idle) => break,
                _ => {}
            }
        }
    }
    assert_eq!(
        warnings,
        [
            "the context is 90 % full (900 of 1000 tokens): /clear starts a new conversation",
            "the context is 86 % full (860 of 1000 tokens): /compact summarises the conversation to free it",
            "the context is 80 % full (200 of 250 tokens): /compact summarises the conversation to free it",
        ]
    );
}

/// Issue 33 item 3: past 80 % of `budget_usd` a notice; at 100 % the next
/// message waits in the queue behind the budget card (`Held` of kind
/// `budget`); raising it sends the message; stopping empties the queue.
#[tokio::test(start_paused = true)]
async fn a_spent_budget_holds_the_queue_until_raised_or_stopped() {
    use hive::runner::budget::BudgetAnswer;
    use hive::runner::hold::HoldKind;
    let fake = Fake::new(caps(false, true));
    let mut agent = AgentConfig::new("a", "fake");
    agent.budget_usd = Some(1.0);
    let (h, mut rx) = start_with(&fake, None, RunnerOptions::default(), agent);
    let finish = |cost: f64| {
        fake.emit(Payload::ResponseDone {
            status: ResponseStatus::Completed,
            finish_reason: None,
            error: None,
            usage: Some(hive::event::Usage {
                input_tokens: 100,
                output_tokens: 10,
                cost_usd: Some(cost),
                ..Default::default()
            }),
        })
    };
    #[derive(Default)]
    struct Seen {
        notices: Vec<String>,
        holds: Vec<Option<hive::runner::hold::Hold>>,
        queues: Vec<Vec<String>>,
    }
    impl Seen {
        fn drain(&mut self, rx: &mut UnboundedReceiver<PaneUpdate>) {
            while let Ok(u) = rx.try_recv() {
                self.see(u.event);
            }
        }
        fn see(&mut self, event: PaneEvent) {
            match event {
                PaneEvent::Notice { text, .. } if text.contains("budget") => {
                    self.notices.push(text)
                }
                PaneEvent::Held(hold) => self.holds.push(hold),
                PaneEvent::Queue(q) => self.queues.push(q),
                _ => {}
            }
        }
        async fn until_idle(&mut self, rx: &mut UnboundedReceiver<PaneUpdate>) {
            self.until_state(rx, TurnState::Idle).await;
        }
        async fn until_state(&mut self, rx: &mut UnboundedReceiver<PaneUpdate>, want: TurnState) {
            loop {
                let e = rx.recv().await.unwrap().event;
                if matches!(e, PaneEvent::State(s) if s == want) {
                    return;
                }
                self.see(e);
            }
        }
        fn last_hold(&self) -> Option<hive::runner::hold::Hold> {
            self.holds.last().cloned().flatten()
        }
    }
    let mut seen = Seen::default();
    for cost in [0.85, 0.2] {
        send(&h, "work", SubmitMode::Queue);
        state(&mut rx, TurnState::Streaming).await;
        finish(cost);
        seen.until_idle(&mut rx).await;
    }
    settle().await;
    seen.drain(&mut rx);
    assert_eq!(seen.notices[0], "85 % of the budget spent ($0.85 of $1.00)");
    assert!(
        seen.notices[1].starts_with("budget spent ($1.05 of $1.00)"),
        "{:?}",
        seen.notices
    );
    let hold = seen.last_hold().expect("held");
    assert_eq!(hold.kind, HoldKind::Budget);
    assert_eq!(hold.spent.as_deref(), Some("$1.05 of $1.00"));

    // The next message waits in the queue, not sent.
    send(&h, "more", SubmitMode::Queue);
    settle().await;
    seen.drain(&mut rx);
    assert_eq!(fake.sent_texts(), ["work", "work"]);
    assert_eq!(seen.queues.last().unwrap(), &["more"]);

    // Raise: the card goes, the message is sent.
    assert!(h.send(RunnerCommand::Budget(BudgetAnswer::Raise)));
    seen.until_state(&mut rx, TurnState::Streaming).await;
    assert_eq!(fake.sent_texts(), ["work", "work", "more"]);
    finish(1.0);
    seen.until_idle(&mut rx).await;
    settle().await;
    seen.drain(&mut rx);
    assert!(seen.holds.contains(&None), "{:?}", seen.holds);
    assert_eq!(
        seen.last_hold().map(|h| h.kind),
        Some(HoldKind::Budget),
        "spent again"
    );

    // Stop: the waiting message is dropped; the budget still holds.
    send(&h, "even more", SubmitMode::Queue);
    settle().await;
    assert!(h.send(RunnerCommand::Budget(BudgetAnswer::Stop)));
    settle().await;
    seen.drain(&mut rx);
    assert_eq!(seen.queues.last().unwrap(), &Vec::<String>::new());
    assert_eq!(fake.sent_texts().len(), 3);
    assert!(seen.last_hold().is_some());
}

/// Issue 33 item 3, for the hive: `[budget]` is shared by every pane; a
/// turn of pane A that spends it holds pane B's next message too, and a
/// raise from B's card lets both go on.
#[tokio::test(start_paused = true)]
async fn the_hive_budget_holds_every_pane_and_a_raise_frees_them() {
    use hive::runner::budget::{BudgetAnswer, HiveBudget};
    let hive_budget = HiveBudget::new(Some(1.0), None);
    let options = || RunnerOptions {
        hive_budget: hive_budget.clone(),
        ..RunnerOptions::default()
    };
    let (fa, fb) = (Fake::new(caps(false, true)), Fake::new(caps(false, true)));
    let (a, mut rx_a) = start_with(&fa, None, options(), AgentConfig::new("a", "fake"));
    let (b, mut rx_b) = start_with(&fb, None, options(), AgentConfig::new("b", "fake"));
    send(&a, "spend", SubmitMode::Queue);
    state(&mut rx_a, TurnState::Streaming).await;
    fa.emit(Payload::ResponseDone {
        status: ResponseStatus::Completed,
        finish_reason: None,
        error: None,
        usage: Some(hive::event::Usage {
            input_tokens: 10,
            cost_usd: Some(1.25),
            ..Default::default()
        }),
    });
    state(&mut rx_a, TurnState::Idle).await;
    // B hears the hive is spent: its card shows, its message waits.
    let held = until(&mut rx_b, |e| match e {
        PaneEvent::Held(Some(h)) => Some(h.clone()),
        _ => None,
    })
    .await;
    assert_eq!(held.spent.as_deref(), Some("hive: $1.25 of $1.00"));
    send(&b, "wait for it", SubmitMode::Queue);
    settle().await;
    assert!(fb.sent_texts().is_empty(), "held by the hive's budget");
    // A raise from B's card frees B (and A).
    assert!(b.send(RunnerCommand::Budget(BudgetAnswer::Raise)));
    state(&mut rx_b, TurnState::Streaming).await;
    assert_eq!(fb.sent_texts(), ["wait for it"]);
    until(&mut rx_a, |e| {
        matches!(e, PaneEvent::Held(None)).then_some(())
    })
    .await;
}

/// Issue 46 item 4: an agent whose own session keeps a failed turn's
/// prompt (Claude Code, Codex) is asked to go on after a rate limit, not
/// given the prompt again; one that keeps nothing gets the prompt again.
#[tokio::test(start_paused = true)]
async fn a_resend_after_a_limit_goes_on_where_the_agent_keeps_the_prompt() {
    for keeps in [true, false] {
        let fake = Fake::new(Capabilities {
            keeps_failed_prompt: keeps,
            ..caps(false, true)
        });
        let (h, mut rx) = start(&fake, QueueMode::Queue);
        send(&h, "migrate the schema", SubmitMode::Auto);
        settle().await;
        fake.emit(Payload::ResponseDone {
            status: ResponseStatus::Error,
            finish_reason: Some("error".into()),
            error: Some(hive::event::ErrorInfo::new(
                "rate_limit",
                "rate limited; retry after 5 s",
            )),
            usage: None,
        });
        until(&mut rx, |e| {
            matches!(e, PaneEvent::Held(Some(_))).then_some(())
        })
        .await;
        until(&mut rx, |e| {
            matches!(e, PaneEvent::Held(None)).then_some(())
        })
        .await;
        settle().await;
        let sent = fake.sent_texts();
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert_eq!(sent[0], "migrate the schema");
        if keeps {
            assert_eq!(sent[1], hive::runner::hold::GO_ON);
        } else {
            assert_eq!(sent[1], "migrate the schema");
        }
        fake.finish_turn();
        assert_eq!(turn_status(&mut rx).await, TurnStatus::Completed);
        // The next message is sent as it is.
        send(&h, "now the data", SubmitMode::Auto);
        settle().await;
        assert_eq!(
            fake.sent_texts().last().map(String::as_str),
            Some("now the data")
        );
        h.send(RunnerCommand::Shutdown);
    }
}
