//! The fake-agent driver: starts a provider (bare, or behind a pane runner)
//! over a fake agent script from tests/fake, feeds it commands, keeps every
//! event it sent, and waits for the one a test wants with a bounded timeout
//! (a hang guard, never a speed assertion).

use std::fmt::Debug;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use hive::config::AgentConfig;
use hive::event::{Origin, Payload};
use hive::provider::{
    EventReceiver, ProviderCommand, ProviderError, ProviderEvent, ProviderFactory, ProviderHandle,
    ProviderSpec,
};
use hive::runner::{
    PaneEvent, PaneUpdate, RunnerCommand, RunnerHandle, RunnerOptions, SubmitMode, spawn_runner,
};
use hive::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};
use tokio::sync::mpsc;

/// How long a wait may take before the test fails as hung (the machine may
/// be loaded: generous on purpose).
pub const WAIT: Duration = Duration::from_secs(30);

/// What a channel carries, as a test reads it.
pub trait Observed {
    type Item: Clone + Debug;
    fn item(self) -> Self::Item;
}

impl Observed for PaneUpdate {
    type Item = PaneEvent;
    fn item(self) -> PaneEvent {
        self.event
    }
}

impl Observed for ProviderEvent {
    type Item = ProviderEvent;
    fn item(self) -> ProviderEvent {
        self
    }
}

/// The receiving end of a runner's or a provider's channel.
pub trait Source<M> {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<M>>;
}

impl<M> Source<M> for mpsc::UnboundedReceiver<M> {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<M>> {
        mpsc::UnboundedReceiver::recv(self)
    }
}

impl Source<ProviderEvent> for EventReceiver {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<ProviderEvent>> {
        EventReceiver::recv(self)
    }
}

/// A channel's output: waits for events, keeps all it saw.
pub struct Watch<M: Observed, R: Source<M> = mpsc::UnboundedReceiver<M>> {
    pub rx: R,
    pub seen: Vec<M::Item>,
}

impl<M: Observed, R: Source<M>> Watch<M, R> {
    pub fn new(rx: R) -> Self {
        Self {
            rx,
            seen: Vec::new(),
        }
    }

    /// Waits (up to [`WAIT`]) for an event matching `pred`.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&M::Item) -> bool) -> M::Item {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let item = tokio::time::timeout_at(deadline, self.rx.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out waiting for {what}; saw {:#?}", self.seen))
                .unwrap_or_else(|| panic!("channel closed waiting for {what}"))
                .item();
            self.seen.push(item.clone());
            if pred(&item) {
                return item;
            }
        }
    }

    /// The next event, or `None` once the channel closed.
    pub async fn next(&mut self, what: &str) -> Option<M::Item> {
        let item = tokio::time::timeout(WAIT, self.rx.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}; saw {:#?}", self.seen))?
            .item();
        self.seen.push(item.clone());
        Some(item)
    }
}

/// A provider behind a pane runner, as the app drives it.
pub struct Pane {
    pub runner: RunnerHandle,
    pub watch: Watch<PaneUpdate>,
}

impl Deref for Pane {
    type Target = Watch<PaneUpdate>;
    fn deref(&self) -> &Self::Target {
        &self.watch
    }
}

impl DerefMut for Pane {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.watch
    }
}

impl Pane {
    pub fn start(
        factory: Arc<dyn ProviderFactory>,
        agent: AgentConfig,
        resume: Option<&str>,
    ) -> Self {
        let spec = ProviderSpec {
            agent,
            resume: resume.map(str::to_owned),
        };
        Self::start_with(factory, spec, RunnerOptions::default())
    }

    pub fn start_with(
        factory: Arc<dyn ProviderFactory>,
        spec: ProviderSpec,
        options: RunnerOptions,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let runner = spawn_runner(0, factory, spec, options, tx).unwrap_or_else(|e| panic!("{e}"));
        Self {
            runner,
            watch: Watch::new(rx),
        }
    }

    /// The runner handle and the pane, for tests that hold them apart.
    pub fn split(self) -> (RunnerHandle, Self) {
        (self.runner.clone(), self)
    }

    /// Submits `text`; the runner must still take commands.
    pub fn submit(&self, text: &str, mode: SubmitMode) {
        assert!(self.runner.send(RunnerCommand::Submit {
            text: text.into(),
            mode,
        }));
    }

    pub async fn turn_end(&mut self) -> TurnEvent {
        match self
            .until(
                "turn end",
                |e| matches!(e, PaneEvent::Turn(t) if t.is_terminal()),
            )
            .await
        {
            PaneEvent::Turn(t) => t,
            _ => unreachable!(),
        }
    }

    pub async fn turn_started(&mut self) {
        self.until("turn start", |e| {
            matches!(e, PaneEvent::Turn(TurnEvent::TurnStarted { .. }))
        })
        .await;
    }

    pub fn notices(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                PaneEvent::Notice { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    /// Final text of every message upsert whose status and origin match.
    pub fn messages_where(&self, keep: impl Fn(&Upsert, Origin) -> bool) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                PaneEvent::Upsert(u) => match &u.kind {
                    UpsertKind::Message { content, origin } if keep(u, *origin) => {
                        Some(content.to_string())
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// Completed messages from `origin`.
    pub fn final_messages(&self, origin: Origin) -> Vec<String> {
        self.messages_where(|u, o| u.status == UpsertStatus::Complete && o == origin)
    }

    /// (name, output, is_error) of every completed tool call.
    pub fn completed_tools(&self) -> Vec<(String, Option<String>, Option<bool>)> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                PaneEvent::Upsert(u) if u.status == UpsertStatus::Complete => match &u.kind {
                    UpsertKind::ToolCall {
                        tool_name,
                        output,
                        output_is_error,
                        ..
                    } => Some((tool_name.clone(), output.clone(), *output_is_error)),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// Resume handles the provider reported.
    pub fn handles(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                PaneEvent::Session(s) => s.resume_handle.clone(),
                _ => None,
            })
            .collect()
    }
}

/// A provider driven bare, as a runner would: commands in, events out.
pub struct Live {
    pub handle: ProviderHandle,
    pub watch: Watch<ProviderEvent, EventReceiver>,
}

impl Deref for Live {
    type Target = Watch<ProviderEvent, EventReceiver>;
    fn deref(&self) -> &Self::Target {
        &self.watch
    }
}

impl DerefMut for Live {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.watch
    }
}

impl Live {
    pub fn spawn(factory: &dyn ProviderFactory, spec: ProviderSpec) -> Result<Self, ProviderError> {
        let (tx, rx) = hive::provider::channel::channel();
        let handle = factory.spawn(spec, tx)?;
        Ok(Self {
            handle,
            watch: Watch::new(rx),
        })
    }

    /// Sends `text` as turn `turn`; the provider must still take commands.
    pub fn send(&self, turn: &str, text: &str) {
        assert!(self.handle.send(ProviderCommand::Send {
            turn_id: turn.into(),
            text: text.into(),
        }));
    }

    /// Waits for the terminal event of `turn` and returns its payload.
    pub async fn turn_end(&mut self, turn: &str) -> Payload {
        let t = turn.to_owned();
        let ev = self
            .until(&format!("end of {turn}"), move |e| {
                matches!(e, ProviderEvent::Stream(s) if s.turn_id == t
                    && matches!(s.payload, Payload::ResponseDone { .. } | Payload::ResponseError { .. }))
            })
            .await;
        match ev {
            ProviderEvent::Stream(s) => s.payload,
            _ => unreachable!(),
        }
    }
}

/// The agent's own streamed text (the runner shows the user's message first).
pub fn agent_text(e: &PaneEvent) -> bool {
    matches!(
        e,
        PaneEvent::Upsert(Upsert {
            kind: UpsertKind::Message {
                origin: Origin::Agent,
                ..
            },
            ..
        })
    )
}

pub fn completed(t: &TurnEvent) -> bool {
    matches!(
        t,
        TurnEvent::TurnComplete {
            status: TurnStatus::Completed,
            ..
        }
    )
}

pub fn cancelled(t: &TurnEvent) -> bool {
    matches!(
        t,
        TurnEvent::TurnComplete {
            status: TurnStatus::Cancelled,
            ..
        }
    )
}
