//! Issue 33 through the runner, against the scripted Chat Completions
//! server (tests/support/openai_server.rs): a turn priced from `[prices]`
//! and marked estimated, and a rate limit
//! that holds the queue until the vendor's reset and then sends the failed
//! message again (the "overnight" run, on a paused clock).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use hive::config::{AgentConfig, Price};
use hive::event::Origin;
use hive::provider::openai::OpenAiFactory;
use hive::provider::{DiagnosticLevel, ProviderSpec};
use hive::runner::hold::HoldKind;
use hive::runner::{
    PaneEvent, PaneUpdate, RunnerCommand, RunnerHandle, RunnerOptions, SubmitMode, spawn_runner,
};
use hive::upsert::{TurnEvent, TurnStatus, UpsertKind};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::openai::server::{Server, answer_text, status};

fn agent(server: &Server) -> AgentConfig {
    let mut a = AgentConfig::new("oa", "openai");
    a.model = Some("test-model".into());
    a.set("base_url", server.base_url.clone()).unwrap();
    a.set("tools", false).unwrap();
    a
}

struct Pane {
    runner: RunnerHandle,
    rx: UnboundedReceiver<PaneUpdate>,
    seen: Vec<PaneEvent>,
}

impl Pane {
    fn start(agent: AgentConfig, prices: BTreeMap<String, Price>) -> Self {
        let store = hive::history::Store::at(tempfile::tempdir().unwrap().keep());
        let factory = Arc::new(OpenAiFactory::default().with_store(store));
        let (tx, rx) = unbounded_channel();
        let options = RunnerOptions {
            prices: Arc::new(prices),
            // No stall notices while a paused clock jumps ahead.
            stall_after: Duration::from_secs(86_400 * 7),
            ..RunnerOptions::default()
        };
        let spec = ProviderSpec {
            agent,
            resume: None,
        };
        let runner = spawn_runner(0, factory, spec, options, tx).unwrap();
        Self {
            runner,
            rx,
            seen: Vec::new(),
        }
    }

    fn send(&self, text: &str) {
        self.runner.send(RunnerCommand::Submit {
            text: text.into(),
            mode: SubmitMode::Queue,
        });
    }

    /// Events until one `f` accepts (no timeout: a paused clock would
    /// jump to it while the scripted server answers).
    async fn until(&mut self, f: impl Fn(&PaneEvent) -> bool) -> PaneEvent {
        loop {
            let u = self.rx.recv().await.expect("the runner is gone");
            self.seen.push(u.event.clone());
            if f(&u.event) {
                return u.event;
            }
        }
    }

    async fn turn_end(&mut self) -> TurnEvent {
        match self
            .until(|e| matches!(e, PaneEvent::Turn(t) if t.is_terminal()))
            .await
        {
            PaneEvent::Turn(t) => t,
            _ => unreachable!(),
        }
    }

    fn notices(&self, level: DiagnosticLevel) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                PaneEvent::Notice { level: l, text } if *l == level => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    /// The user messages the pane showed.
    fn user_messages(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                PaneEvent::Upsert(u) if u.is_final() => match &u.kind {
                    UpsertKind::Message { content, origin } if *origin == Origin::User => {
                        Some(content.to_string())
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }
}

fn price(input: f64, output: f64) -> BTreeMap<String, Price> {
    BTreeMap::from([(
        "test".to_owned(),
        Price {
            input,
            output,
            cache_read: None,
            cache_write: None,
        },
    )])
}

#[tokio::test]
async fn a_turn_without_a_reported_cost_is_priced_and_marked_estimated() {
    let server = Server::start(vec![answer_text("ok", 1_000_000, 100_000)]);
    // "test" prices "test-model" (a prefix before `-`).
    let mut p = Pane::start(agent(&server), price(3.0, 15.0));
    p.send("hi");
    let TurnEvent::TurnComplete {
        usage: Some(u),
        status,
        ..
    } = p.turn_end().await
    else {
        panic!("{:?}", p.seen)
    };
    assert_eq!(status, TurnStatus::Completed);
    assert!((u.cost_usd.unwrap() - 4.5).abs() < 1e-9, "{u:?}");
    assert!(u.cost_estimated);
    assert_eq!(hive::ui::cells::usage_text(&u), "↑1.0M ↓100.0k · ~$4.50");

    // No price for the model: no cost, shown as unknown.
    let server = Server::start(vec![answer_text("ok", 10, 1)]);
    let mut p = Pane::start(agent(&server), BTreeMap::new());
    p.send("hi");
    let TurnEvent::TurnComplete { usage: Some(u), .. } = p.turn_end().await else {
        panic!()
    };
    assert_eq!(u.cost_usd, None);
    assert!(!u.cost_estimated);
    assert_eq!(hive::ui::cells::usage_cost(&u), "—");
}

/// The overnight run: the vendor answers 429 with a reset an hour away;
/// the message goes back to the front of the queue, the queue waits, and
/// at the reset the message is sent again (without showing it twice) and
/// the turn completes.
#[tokio::test(start_paused = true)]
async fn a_rate_limit_holds_the_queue_and_sends_the_message_again_at_the_reset() {
    let server = Server::start(vec![
        status(429, "rate limited", Some("3600")),
        answer_text("done overnight", 10, 3),
    ]);
    let mut p = Pane::start(agent(&server), BTreeMap::new());
    let t0 = tokio::time::Instant::now();
    p.send("finish the migration");
    let failed = p.turn_end().await;
    assert!(
        matches!(&failed, TurnEvent::TurnError { error_code, error_message, .. }
            if error_code == "http_429" && error_message.contains("retry after 3600 s")),
        "{failed:?}"
    );
    let PaneEvent::Held(Some(hold)) = p.until(|e| matches!(e, PaneEvent::Held(_))).await else {
        panic!("{:?}", p.seen)
    };
    assert_eq!(hold.kind, HoldKind::RateLimit);
    assert!(hold.reported && hold.resend);
    let ahead = (hold.until.unwrap() - chrono::Utc::now()).num_seconds();
    assert!((3590..=3600).contains(&ahead), "{ahead}");
    assert!(
        p.seen
            .iter()
            .any(|e| matches!(e, PaneEvent::Queue(q) if q == &["finish the migration"])),
        "back at the front of the queue: {:?}",
        p.seen
    );
    assert_eq!(server.requests().len(), 1, "nothing sent while held");
    let told = p.notices(DiagnosticLevel::Warn);
    assert!(
        told.iter()
            .any(|n| n.starts_with("rate limit: it resets at") && n.contains("sent again then")),
        "{told:?}"
    );

    p.until(|e| matches!(e, PaneEvent::Held(None))).await;
    let done = p.turn_end().await;
    assert!(
        matches!(
            done,
            TurnEvent::TurnComplete {
                status: TurnStatus::Completed,
                ..
            }
        ),
        "{done:?}"
    );
    assert!(
        t0.elapsed() >= Duration::from_secs(3600),
        "sent at the reset"
    );
    assert_eq!(server.requests().len(), 2);
    let sent: Vec<_> = server
        .messages(1)
        .into_iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(sent.len(), 1, "the message once: {sent:?}");
    assert_eq!(sent[0]["content"], "finish the migration");
    assert_eq!(p.user_messages(), ["finish the migration"], "shown once");
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_opted_out_is_not_sent_again() {
    let server = Server::start(vec![
        status(429, "rate limited", Some("3600")),
        answer_text("ok", 10, 3),
    ]);
    let mut a = agent(&server);
    a.resend_on_limit = false;
    let mut p = Pane::start(a, BTreeMap::new());
    p.send("first");
    p.turn_end().await;
    let PaneEvent::Held(Some(hold)) = p.until(|e| matches!(e, PaneEvent::Held(_))).await else {
        panic!()
    };
    assert!(!hold.resend);
    // The queue is free: the next message goes at once, the failed one never.
    p.send("second");
    p.turn_end().await;
    let users: Vec<_> = server
        .messages(1)
        .into_iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(users.last().map(String::as_str), Some("second"));
    assert!(
        !p.seen
            .iter()
            .any(|e| matches!(e, PaneEvent::Queue(q) if q.iter().any(|m| m == "first"))),
        "{:?}",
        p.seen
    );
}
