//! The turn runner: one task per pane that owns the provider, the upsert
//! processor, the turn state and the pending queue (DESIGN §5).
//!
//! The app talks to it only through `RunnerCommand`s and hears back only
//! through `PaneEvent`s, so the UI thread never waits on an agent.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::config::QueueMode;
use crate::event::{FinalItem, ItemType, Origin, Payload, StreamEvent, new_id};
use crate::processor::{Processor, ProcessorConfig};
use crate::provider::{
    Capabilities, DiagnosticLevel, PermissionDecision, PermissionRequest, ProviderCommand,
    ProviderError, ProviderEvent, ProviderFactory, ProviderHandle, ProviderSpec, SessionInfo,
    TerminalScreen,
};
use crate::timer;
use crate::upsert::{Output, TurnEvent, Upsert};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnState {
    Idle,
    /// Sent; the agent has not started answering.
    Starting,
    Streaming,
    /// Interrupt requested; waiting for the agent to stop.
    Cancelling,
    /// The agent's process is gone; `Restart` brings it back.
    Dead,
}

impl TurnState {
    pub fn is_busy(self) -> bool {
        matches!(
            self,
            TurnState::Starting | TurnState::Streaming | TurnState::Cancelling
        )
    }
}

/// How a submitted message should be delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitMode {
    /// Idle: send. Busy: as the agent's `queue_mode` says.
    Auto,
    /// Run after the current turn.
    Queue,
    /// Deliver now: into the running turn, or interrupt and send.
    Steer,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueEdit {
    Remove(usize),
    Replace(usize, String),
    Move {
        from: usize,
        to: usize,
    },
    /// Take the newest queued message back (answered with `PaneEvent::Recalled`).
    PopLast,
    Clear,
}

#[derive(Debug, Clone)]
pub enum RunnerCommand {
    Submit {
        text: String,
        mode: SubmitMode,
    },
    Interrupt,
    Queue(QueueEdit),
    /// Start sending the queue if the pane is idle (queued messages restored
    /// after a restart wait for this).
    DrainQueue,
    Permission {
        request_id: String,
        decision: PermissionDecision,
    },
    /// Start the agent again after it died (resuming its session).
    Restart,
    Input(Vec<u8>),
    Resize {
        cols: u16,
        rows: u16,
    },
    /// `/model NAME`: the agent uses this model from now on (and after a
    /// restart of the pane).
    SetModel(String),
    /// `/effort LEVEL`: thinking / reasoning effort from now on.
    SetEffort(String),
    /// Images for the next message that starts a turn (only with the
    /// provider's `images` capability; the app checks it first).
    Attach(Vec<crate::image::Image>),
    /// `/resume`, `/clear`: continue history session `session` and the
    /// agent's own session `resume` (`None`: a new one). The agent is
    /// started again; only while no turn runs.
    SwitchSession {
        session: String,
        resume: Option<String>,
    },
    Shutdown,
}

#[derive(Debug, Clone)]
pub enum PaneEvent {
    Upsert(Upsert),
    /// An open item's text so far, between gradient batches, for display
    /// only (`RunnerOptions::live_every`): never recorded, and ordered so a
    /// live snapshot never holds less than the upserts before it.
    Live(Upsert),
    Turn(TurnEvent),
    State(TurnState),
    /// The whole pending queue after any change.
    Queue(Vec<String>),
    Notice {
        level: DiagnosticLevel,
        text: String,
    },
    Permission(PermissionRequest),
    Session(SessionInfo),
    /// A message taken back from the queue for editing.
    Recalled(String),
    /// A (new) provider started; terminal panes carry their screen.
    Attached {
        capabilities: Capabilities,
        terminal: Option<TerminalScreen>,
    },
    TerminalUpdated,
    Bell,
    /// The models the agent offers (the `/model` picker).
    Models(Vec<String>),
    /// The effort level now in use (after `/effort`).
    Effort(String),
    /// The pane continues another history session from now on (the
    /// recorder writes there); `resume` is the agent's handle it started with.
    SessionSwitched {
        session: String,
        resume: Option<String>,
    },
    /// A history write failed (reason); shown in the pane and the status bar
    /// as "history not saved: <reason>".
    HistoryNotSaved(String),
    /// The running turn has had no output since this instant
    /// (`stall_after`); `None` once output resumes or the turn ends.
    Stalled(Option<std::time::Instant>),
}

#[derive(Debug, Clone)]
pub struct PaneUpdate {
    pub pane: usize,
    pub event: PaneEvent,
}

/// How a failed history write is announced (`PaneEvent::HistoryNotSaved`).
pub const HISTORY_NOT_SAVED: &str = "history not saved";

/// Sees every event a runner emits, in order, on the runner's task (the
/// history store records conversations through this).
pub trait Recorder: Send {
    fn record(&mut self, event: &PaneEvent);

    /// Why the last records could not be saved, once per failure (the
    /// runner shows it as "history not saved: <reason>").
    fn take_failure(&mut self) -> Option<String> {
        None
    }
}

pub struct RunnerOptions {
    pub processor: ProcessorConfig,
    /// An interrupt not honoured within this time ends the agent's process.
    pub interrupt_timeout: Duration,
    /// Messages queued before a restart; kept until `DrainQueue`.
    pub initial_queue: Vec<String>,
    pub recorder: Option<Box<dyn Recorder>>,
    /// Send the open items' live tail (`PaneEvent::Live`) at most this long
    /// after new text arrives. `None`: upserts only, as the gradient batches
    /// them (`hive run`, tests).
    pub live_every: Option<Duration>,
    /// A running turn without output this long is reported as stalled.
    pub stall_after: Duration,
}

impl Default for RunnerOptions {
    fn default() -> Self {
        Self {
            processor: ProcessorConfig::default(),
            interrupt_timeout: Duration::from_millis(900),
            initial_queue: Vec::new(),
            recorder: None,
            live_every: None,
            stall_after: Duration::from_secs(60),
        }
    }
}

/// The app's side of a runner.
#[derive(Debug, Clone)]
pub struct RunnerHandle {
    tx: mpsc::UnboundedSender<RunnerCommand>,
    /// Closed when the runner task has ended (its provider killed).
    done: watch::Receiver<()>,
    pub capabilities: Capabilities,
}

impl RunnerHandle {
    pub fn send(&self, cmd: RunnerCommand) -> bool {
        self.tx.send(cmd).is_ok()
    }

    /// Stops the runner and returns once it has killed its provider.
    pub async fn shutdown(&self) {
        self.send(RunnerCommand::Shutdown);
        let mut done = self.done.clone();
        while done.changed().await.is_ok() {}
    }
}

/// Starts the provider and the runner task for one pane.
pub fn spawn_runner(
    pane: usize,
    factory: Arc<dyn ProviderFactory>,
    spec: ProviderSpec,
    options: RunnerOptions,
    out: mpsc::UnboundedSender<PaneUpdate>,
) -> Result<RunnerHandle, ProviderError> {
    let capabilities = factory.capabilities(&spec.agent);
    let (tx, rx) = mpsc::unbounded_channel();
    let mut runner = Runner {
        pane,
        queue_mode: spec.agent.queue_mode,
        session_id: spec.resume.clone().unwrap_or_else(|| new_id("session")),
        factory,
        spec,
        capabilities,
        provider: None,
        provider_rx: None,
        processor: Processor::new(options.processor.clone()),
        state: TurnState::Idle,
        queue: options.initial_queue.iter().cloned().collect(),
        steer_next: None,
        turn: None,
        turn_session: String::new(),
        last_error: None,
        turn_text: None,
        undelivered: None,
        stall_after: options.stall_after,
        last_output: None,
        stalled: false,
        cancel_deadline: None,
        interrupt_timeout: options.interrupt_timeout,
        recorder: options.recorder,
        images: Vec::new(),
        live_every: options.live_every,
        live_at: None,
        out,
    };
    runner.start_provider()?;
    runner.emit(PaneEvent::Queue(runner.queue.iter().cloned().collect()));
    let (done_tx, done) = watch::channel(());
    tokio::spawn(async move {
        runner.run(rx).await;
        drop(done_tx);
    });
    Ok(RunnerHandle {
        tx,
        done,
        capabilities,
    })
}

struct Runner {
    pane: usize,
    queue_mode: QueueMode,
    session_id: String,
    factory: Arc<dyn ProviderFactory>,
    spec: ProviderSpec,
    capabilities: Capabilities,
    provider: Option<ProviderHandle>,
    provider_rx: Option<mpsc::UnboundedReceiver<ProviderEvent>>,
    processor: Processor,
    state: TurnState,
    queue: VecDeque<String>,
    /// A steer that had to interrupt first; sent before the queue.
    steer_next: Option<String>,
    turn: Option<String>,
    /// The session id every event of the turn in flight carries: the one
    /// known when it started (the agent may name its session mid-turn;
    /// `hive run --json` readers want one id per turn).
    turn_session: String,
    /// The last turn error shown, so a crash is told once (issue 13 item 10).
    last_error: Option<String>,
    /// The message of the turn in flight, kept until the agent starts it.
    turn_text: Option<String>,
    /// A message put back at the front of the queue because the agent died
    /// before starting on it. It is already shown and recorded (in the failed
    /// turn), so sending it again does not repeat it.
    undelivered: Option<String>,
    stall_after: Duration,
    /// While a turn runs: when the agent last said anything.
    last_output: Option<Instant>,
    /// `PaneEvent::Stalled(Some)` was sent for this silence.
    stalled: bool,
    cancel_deadline: Option<Instant>,
    interrupt_timeout: Duration,
    recorder: Option<Box<dyn Recorder>>,
    /// Images for the next turn (`RunnerCommand::Attach`).
    images: Vec<crate::image::Image>,
    live_every: Option<Duration>,
    /// When the next live tail goes out (set when unshown text arrives).
    live_at: Option<Instant>,
    out: mpsc::UnboundedSender<PaneUpdate>,
}

impl Runner {
    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<RunnerCommand>) {
        loop {
            let flush_at = self.processor.next_deadline();
            let cancel_at = self.cancel_deadline;
            let live_at = self.live_at;
            let stall_at = self
                .last_output
                .filter(|_| !self.stalled)
                .map(|t| t + self.stall_after);
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(RunnerCommand::Shutdown) | None => break,
                    Some(cmd) => self.command(cmd),
                },
                ev = recv_opt(&mut self.provider_rx) => match ev {
                    Some(ev) => self.provider_event(ev),
                    None => self.provider_gone(None, "the provider stopped".into()),
                },
                _ = timer::sleep_until(flush_at) => {
                    let outs = self.processor.flush_idle(Instant::now());
                    self.forward(outs);
                }
                _ = timer::sleep_until(cancel_at) => self.interrupt_expired(),
                _ = timer::sleep_until(live_at) => self.send_live(),
                _ = timer::sleep_until(stall_at) => {
                    self.stalled = true;
                    let since = self.last_output.map(Instant::into_std);
                    self.emit(PaneEvent::Stalled(since));
                }
            }
        }
        if let Some(p) = self.provider.take() {
            p.kill().await;
        }
    }

    fn emit(&mut self, event: PaneEvent) {
        let failure = self.recorder.as_mut().and_then(|r| {
            r.record(&event);
            r.take_failure()
        });
        let _ = self.out.send(PaneUpdate {
            pane: self.pane,
            event,
        });
        if let Some(reason) = failure {
            // Not through `emit`: the recorder has nothing to write for it.
            let _ = self.out.send(PaneUpdate {
                pane: self.pane,
                event: PaneEvent::HistoryNotSaved(reason),
            });
        }
    }

    /// Display-only events skip the recorder.
    fn emit_live(&mut self, u: Upsert) {
        let _ = self.out.send(PaneUpdate {
            pane: self.pane,
            event: PaneEvent::Live(u),
        });
    }

    fn send_live(&mut self) {
        self.live_at = None;
        for u in self.processor.live_tail() {
            self.emit_live(u);
        }
    }

    /// Arms the live tail when the processor holds text nobody has seen.
    fn schedule_live(&mut self) {
        if let Some(every) = self.live_every
            && self.live_at.is_none()
            && self.processor.has_unshown()
        {
            self.live_at = Some(Instant::now() + every);
        }
    }

    fn notice(&mut self, level: DiagnosticLevel, text: impl Into<String>) {
        self.emit(PaneEvent::Notice {
            level,
            text: text.into(),
        });
    }

    fn set_state(&mut self, state: TurnState) {
        if self.state != state {
            self.state = state;
            self.emit(PaneEvent::State(state));
        }
    }

    fn queue_changed(&mut self) {
        self.emit(PaneEvent::Queue(self.queue.iter().cloned().collect()));
    }

    fn start_provider(&mut self) -> Result<(), ProviderError> {
        self.spec
            .agent
            .check_cwd()
            .map_err(|message| ProviderError::Config {
                agent: self.spec.agent.id.clone(),
                message,
            })?;
        let (tx, rx) = mpsc::unbounded_channel();
        let handle = self.factory.spawn(self.spec.clone(), tx)?;
        self.emit(PaneEvent::Attached {
            capabilities: self.capabilities,
            terminal: handle.terminal.clone(),
        });
        self.provider = Some(handle);
        self.provider_rx = Some(rx);
        Ok(())
    }

    fn command(&mut self, cmd: RunnerCommand) {
        match cmd {
            RunnerCommand::Submit { text, mode } => self.submit(text, mode),
            RunnerCommand::Interrupt => self.interrupt(),
            RunnerCommand::Queue(edit) => self.edit_queue(edit),
            RunnerCommand::DrainQueue => {
                if self.state == TurnState::Idle {
                    self.drain();
                }
            }
            RunnerCommand::Permission {
                request_id,
                decision,
            } => {
                self.to_provider(ProviderCommand::Permission {
                    request_id,
                    decision,
                });
            }
            RunnerCommand::Restart => self.restart(),
            RunnerCommand::Input(bytes) => {
                self.to_provider(ProviderCommand::Input(bytes));
            }
            RunnerCommand::Resize { cols, rows } => {
                self.to_provider(ProviderCommand::Resize { cols, rows });
            }
            RunnerCommand::SetModel(model) => self.set_model(model),
            RunnerCommand::SetEffort(effort) => self.set_effort(effort),
            RunnerCommand::Attach(images) => self.attach(images),
            RunnerCommand::SwitchSession { session, resume } => {
                self.switch_session(session, resume)
            }
            RunnerCommand::Shutdown => {}
        }
    }

    /// Hands the new model to the provider and keeps it for restarts; the
    /// pane's title follows (the next turn's `response_start` confirms it).
    fn set_model(&mut self, model: String) {
        if !self.capabilities.set_model {
            return self.notice(
                DiagnosticLevel::Warn,
                "this agent cannot switch models; the model stays as it is",
            );
        }
        self.spec.agent.model = Some(model.clone());
        self.to_provider(ProviderCommand::SetModel {
            model: model.clone(),
        });
        self.emit(PaneEvent::Session(SessionInfo {
            model: Some(model.clone()),
            ..SessionInfo::default()
        }));
        self.notice(DiagnosticLevel::Info, format!("model set to {model}"));
    }

    fn set_effort(&mut self, effort: String) {
        if !self.capabilities.set_effort {
            return self.notice(
                DiagnosticLevel::Warn,
                "this agent has no effort setting hive can change",
            );
        }
        self.spec.agent.thinking = Some(effort.clone());
        self.to_provider(ProviderCommand::SetEffort {
            effort: effort.clone(),
        });
        self.emit(PaneEvent::Effort(effort.clone()));
        self.notice(DiagnosticLevel::Info, format!("effort set to {effort}"));
    }

    fn to_provider(&self, cmd: ProviderCommand) -> bool {
        self.provider.as_ref().is_some_and(|p| p.send(cmd))
    }

    fn submit(&mut self, text: String, mode: SubmitMode) {
        if text.trim().is_empty() {
            return;
        }
        if self.state == TurnState::Dead {
            self.queue.push_back(text);
            self.queue_changed();
            self.notice(
                DiagnosticLevel::Warn,
                "the agent is not running: message queued; restart the pane to send it",
            );
            return;
        }
        if !self.state.is_busy() {
            self.start_turn(text);
            return;
        }
        let mode = match (mode, self.queue_mode) {
            (SubmitMode::Auto, QueueMode::Queue) => SubmitMode::Queue,
            (SubmitMode::Auto, QueueMode::Interrupt) => SubmitMode::Steer,
            (m, _) => m,
        };
        match mode {
            SubmitMode::Steer => self.steer(text),
            _ => {
                self.queue.push_back(text);
                self.queue_changed();
            }
        }
    }

    /// seed 000 matrix, steer column by column.
    fn steer(&mut self, text: String) {
        if self.capabilities.queue_while_streaming {
            let turn_id = self.turn.clone().unwrap_or_default();
            if self.to_provider(ProviderCommand::Steer { text: text.clone() }) {
                self.user_message(&turn_id, &text);
                return;
            }
        }
        if self.capabilities.interrupt {
            if let Some(previous) = self.steer_next.replace(text) {
                self.queue.push_front(previous);
                self.queue_changed();
            }
            self.interrupt();
            return;
        }
        self.queue.push_back(text);
        self.queue_changed();
        self.notice(
            DiagnosticLevel::Info,
            "this agent cannot take a message mid-turn or be interrupted: queued for after the turn",
        );
    }

    fn interrupt(&mut self) {
        if self.turn.is_none() {
            return;
        }
        if !self.capabilities.interrupt {
            self.notice(
                DiagnosticLevel::Info,
                "this agent cannot be interrupted; the turn continues",
            );
            return;
        }
        if self.state == TurnState::Cancelling {
            return;
        }
        self.to_provider(ProviderCommand::Cancel);
        self.set_state(TurnState::Cancelling);
        self.cancel_deadline = Some(Instant::now() + self.interrupt_timeout);
    }

    /// The agent ignored the interrupt (the runner's own deadline passed).
    fn interrupt_expired(&mut self) {
        self.cancel_deadline = None;
        if self.turn.is_none() {
            return;
        }
        self.replace_agent("the agent did not stop when interrupted");
    }

    /// The one escalation path: end the turn in flight as cancelled, end the
    /// agent's process group and start it again on the same session.
    fn replace_agent(&mut self, why: &str) {
        self.cancel_deadline = None;
        let outs = match self.turn.clone() {
            Some(turn_id) => self.processor.cancel_turn((&turn_id, &self.turn_session)),
            None => Vec::new(),
        };
        if let Some(p) = self.provider.take() {
            tokio::spawn(p.kill());
        }
        self.provider_rx = None;
        self.notice(
            DiagnosticLevel::Warn,
            format!("{why}: hive ended its process and started it again on the same session"),
        );
        if let Err(e) = self.start_provider() {
            self.notice(DiagnosticLevel::Error, e.to_string());
        }
        self.forward(outs);
    }

    fn restart(&mut self) {
        if self.provider.as_ref().is_some_and(ProviderHandle::is_alive) {
            // A live agent is restarted only while a turn runs (it may hang).
            if self.turn.is_some() {
                self.replace_agent("restarted on request");
            }
            return;
        }
        match self.start_provider() {
            Ok(()) => {
                self.set_state(TurnState::Idle);
                self.notice(DiagnosticLevel::Info, "agent restarted");
                self.drain();
            }
            Err(e) => self.notice(DiagnosticLevel::Error, e.to_string()),
        }
    }

    fn attach(&mut self, images: Vec<crate::image::Image>) {
        if !self.capabilities.images {
            return self.notice(
                DiagnosticLevel::Warn,
                "this agent takes no images: the images were not sent",
            );
        }
        self.images = images;
    }

    /// Ends the agent and starts it again on another session (or a new
    /// one). A turn in flight would be lost: the app only asks while idle,
    /// and a late request is refused.
    fn switch_session(&mut self, session: String, resume: Option<String>) {
        if self.turn.is_some() {
            return self.notice(
                DiagnosticLevel::Warn,
                "a turn is running: interrupt it before switching sessions",
            );
        }
        if let Some(p) = self.provider.take() {
            tokio::spawn(p.kill());
        }
        self.provider_rx = None;
        let resume = resume.filter(|_| self.capabilities.resume);
        self.spec.resume.clone_from(&resume);
        self.session_id = resume.clone().unwrap_or_else(|| new_id("session"));
        self.emit(PaneEvent::SessionSwitched { session, resume });
        match self.start_provider() {
            Ok(()) => self.set_state(TurnState::Idle),
            Err(e) => {
                self.notice(DiagnosticLevel::Error, e.to_string());
                self.set_state(TurnState::Dead);
            }
        }
    }

    fn edit_queue(&mut self, edit: QueueEdit) {
        // The user touched the queue: whatever is sent next is shown anew.
        self.undelivered = None;
        let len = self.queue.len();
        match edit {
            QueueEdit::Remove(i) if i < len => {
                self.queue.remove(i);
            }
            QueueEdit::Replace(i, text) if i < len => self.queue[i] = text,
            QueueEdit::Move { from, to } if from < len && to < len => {
                if let Some(item) = self.queue.remove(from) {
                    self.queue.insert(to, item);
                }
            }
            QueueEdit::PopLast => {
                if let Some(text) = self.queue.pop_back() {
                    self.emit(PaneEvent::Recalled(text));
                }
            }
            QueueEdit::Clear => self.queue.clear(),
            _ => return,
        }
        self.queue_changed();
    }

    fn start_turn(&mut self, text: String) {
        self.begin_turn(text, true);
    }

    /// `echo`: show (and record) the user's message; not for a message that
    /// already is, see `undelivered`.
    fn begin_turn(&mut self, text: String, echo: bool) {
        let turn_id = new_id("turn");
        self.turn = Some(turn_id.clone());
        self.turn_session.clone_from(&self.session_id);
        self.last_error = None;
        self.last_output = Some(Instant::now());
        self.turn_text = Some(text.clone());
        self.set_state(TurnState::Starting);
        let images = std::mem::take(&mut self.images);
        if echo {
            // The transcript and history name the images the message carried.
            let mut shown = text.clone();
            for i in &images {
                shown.push_str(&format!("\n[image: {}]", i.path.display()));
            }
            self.user_message(&turn_id, &shown);
        }
        if !images.is_empty() {
            self.to_provider(ProviderCommand::Attach(images));
        }
        if !self.to_provider(ProviderCommand::Send { turn_id, text }) {
            self.provider_gone(None, "the agent is not running".into());
        }
    }

    /// The user's own message, as a `message` item with origin `user`.
    fn user_message(&mut self, turn_id: &str, text: &str) {
        let item_id = new_id("user");
        let now = Instant::now();
        let start = StreamEvent::new(
            turn_id,
            &self.turn_session,
            Payload::ItemStart {
                item_id: item_id.clone(),
                item_type: ItemType::Message,
                initial_content: None,
                name: None,
                call_id: None,
            },
        );
        let done = StreamEvent::new(
            turn_id,
            &self.turn_session,
            Payload::ItemDone {
                item_id,
                final_item: FinalItem::Message {
                    content: text.to_owned(),
                    origin: Origin::User,
                },
            },
        );
        let mut outs = self.processor.process(&start, now);
        outs.extend(self.processor.process(&done, now));
        self.forward(outs);
    }

    fn provider_event(&mut self, ev: ProviderEvent) {
        self.activity();
        match ev {
            ProviderEvent::Stream(mut ev) => {
                if self.turn.as_deref() != Some(ev.turn_id.as_str()) {
                    tracing::debug!(turn = %ev.turn_id, "event for a turn no longer running dropped");
                    return;
                }
                if ev.session_id != self.turn_session {
                    ev.session_id.clone_from(&self.turn_session);
                }
                let outs = self.processor.process(&ev, Instant::now());
                self.forward(outs);
                self.schedule_live();
            }
            ProviderEvent::Session(info) => {
                if let Some(h) = &info.resume_handle {
                    self.spec.resume = Some(h.clone());
                    self.session_id = h.clone();
                }
                self.emit(PaneEvent::Session(info));
            }
            ProviderEvent::Permission(req) => self.emit(PaneEvent::Permission(req)),
            ProviderEvent::Diagnostic { level, message } => self.notice(level, message),
            ProviderEvent::Exited { code, message } => self.provider_gone(code, message),
            ProviderEvent::Unresponsive { reason } => self.replace_agent(&reason),
            ProviderEvent::TerminalUpdated => self.emit(PaneEvent::TerminalUpdated),
            ProviderEvent::Bell => self.emit(PaneEvent::Bell),
            ProviderEvent::Models(list) => self.emit(PaneEvent::Models(list)),
        }
    }

    fn forward(&mut self, outs: Vec<Output>) {
        for out in outs {
            match out {
                Output::Upsert(u) => self.emit(PaneEvent::Upsert(u)),
                Output::Turn(t) => {
                    let terminal = t.is_terminal();
                    if let TurnEvent::TurnError { error_message, .. } = &t {
                        self.last_error = Some(error_message.clone());
                    }
                    if matches!(t, TurnEvent::TurnStarted { .. })
                        && self.state == TurnState::Starting
                    {
                        self.set_state(TurnState::Streaming);
                    }
                    self.emit(PaneEvent::Turn(t));
                    if terminal {
                        self.end_turn();
                    }
                }
            }
        }
    }

    /// The agent said something: a stall (if any) is over.
    fn activity(&mut self) {
        if self.turn.is_some() {
            self.last_output = Some(Instant::now());
        }
        if self.stalled {
            self.stalled = false;
            self.emit(PaneEvent::Stalled(None));
        }
    }

    fn end_turn(&mut self) {
        self.last_output = None;
        if self.stalled {
            self.stalled = false;
            self.emit(PaneEvent::Stalled(None));
        }
        self.turn = None;
        self.turn_text = None;
        self.cancel_deadline = None;
        if self.provider.is_none() {
            self.set_state(TurnState::Dead);
            return;
        }
        self.set_state(TurnState::Idle);
        self.drain();
    }

    fn drain(&mut self) {
        if self.turn.is_some() || self.provider.is_none() {
            return;
        }
        if let Some(text) = self.steer_next.take() {
            self.start_turn(text);
        } else if let Some(text) = self.queue.pop_front() {
            self.queue_changed();
            let again = self.undelivered.take().is_some_and(|u| u == text);
            self.begin_turn(text, !again);
        }
    }

    /// The agent's process ended: fail the turn in flight, keep the queue.
    fn provider_gone(&mut self, code: Option<i32>, message: String) {
        self.provider = None;
        self.provider_rx = None;
        self.cancel_deadline = None;
        if let Some(steer) = self.steer_next.take() {
            self.queue.push_front(steer);
            self.queue_changed();
        }
        let mut detail = match code {
            Some(c) if !message.contains(&format!("status {c}")) => {
                format!("exit status {c}: {message}")
            }
            _ => message,
        };
        // A message the agent never started on is not lost: it goes back to
        // the front of the queue (a dying agent's last turn may have drained
        // it a moment before the exit was known).
        if self.state == TurnState::Starting
            && let Some(text) = self.turn_text.take()
        {
            self.undelivered = Some(text.clone());
            self.queue.push_front(text);
            self.queue_changed();
            detail.push_str("\n(the message was not delivered; it is back in the queue)");
        }
        if let Some(turn_id) = self.turn.clone() {
            let outs =
                self.processor
                    .fail_turn((&turn_id, &self.turn_session), "agent_exited", &detail);
            self.forward(outs);
        }
        self.set_state(TurnState::Dead);
        // The turn's error already says it (the provider's own report, or
        // the one just made): one error line per crash.
        let told = self
            .last_error
            .as_ref()
            .zip(detail.lines().next().filter(|l| !l.trim().is_empty()))
            .is_some_and(|(e, first)| e.contains(first));
        if !told {
            self.notice(DiagnosticLevel::Error, format!("agent stopped: {detail}"));
        }
    }
}

async fn recv_opt<T>(rx: &mut Option<mpsc::UnboundedReceiver<T>>) -> Option<T> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}
