//! The turn runner: one task per pane that owns the provider, the upsert
//! processor, the turn state and the pending queue (DESIGN §5).
//!
//! The app talks to it only through `RunnerCommand`s and hears back only
//! through `PaneEvent`s, so the UI thread never waits on an agent.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::config::QueueMode;
use crate::event::new_id;
use crate::processor::{Processor, ProcessorConfig};
use crate::provider::{
    Capabilities, DiagnosticLevel, EventReceiver, ProviderError, ProviderFactory, ProviderHandle,
    ProviderSpec,
};
use crate::timer;
use crate::upsert::Upsert;

pub use crate::history::{Chosen, Recorder};
pub(crate) use crate::protocol::pane::HISTORY_NOT_SAVED;
pub use crate::protocol::pane::{
    Decider, PaneEvent, PaneUpdate, QueueEdit, RunnerCommand, RunnerSink, SubmitMode, TurnState,
};

mod account;
mod agent;
mod approve;
pub use approve::CONFIRM_OPTION;
pub mod budget;
pub mod hold;
mod idle;
pub(crate) mod mirror;
mod procs;
pub mod screen;
mod session;
mod turn;
pub mod usage;

/// The most provider events handled in a row before commands get a turn
/// (a key's interrupt, for one).
const BURST: usize = 256;

pub struct RunnerOptions {
    pub processor: ProcessorConfig,
    /// An interrupt not honoured within this time ends the agent's process.
    pub interrupt_timeout: Duration,
    /// Messages queued before a restart; kept until `DrainQueue`.
    pub initial_queue: Vec<String>,
    pub recorder: Option<Box<dyn Recorder>>,
    /// Send the open items' live tail (`PaneEvent::Live`) at most this long
    /// after new text arrives, and read the agent's pipe at this pace
    /// (`provider::paced`). `None`: upserts only, as the gradient batches
    /// them, and every line read as it comes (`hive run`, tests).
    pub live_every: Option<Duration>,
    /// `live_every` while the pane is out of focus (`None`: the same). The
    /// console draws a background pane's text this late anyway
    /// (`app::pace`), so its agent is read no more often either.
    pub background_every: Option<Duration>,
    /// Whether the pane starts in focus (`RunnerCommand::Focused`).
    pub focused: bool,
    /// A running turn without output this long is reported as stalled.
    pub stall_after: Duration,
    /// `[prices]`: what a turn costs where the agent does not say.
    pub prices: Arc<BTreeMap<String, crate::config::Price>>,
    /// The hive's budget (`[budget]`), one for all of a server's runners.
    pub hive_budget: Option<Arc<budget::HiveBudget>>,
    /// Sample the agent's process tree (CPU, memory) this often
    /// (`PaneEvent::Process`); `None`: never (`hive run`, tests).
    pub sample_every: Option<Duration>,
    /// The pane's approval policy (issue 47); `None`: every request shows
    /// its card.
    pub policy: Option<crate::policy::PanePolicy>,
    /// The `[[account]]`s of the agent's provider (`/account`).
    pub accounts: Vec<crate::config::AccountConfig>,
}

impl Default for RunnerOptions {
    fn default() -> Self {
        Self {
            processor: ProcessorConfig::default(),
            interrupt_timeout: Duration::from_millis(900),
            initial_queue: Vec::new(),
            recorder: None,
            live_every: None,
            background_every: None,
            focused: true,
            stall_after: Duration::from_secs(60),
            prices: Arc::default(),
            sample_every: None,
            hive_budget: None,
            policy: None,
            accounts: Vec::new(),
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

    /// Whether the runner has ended (a command sent now is lost).
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Stops the runner and returns once it has killed its provider.
    pub async fn shutdown(&self) {
        self.send(RunnerCommand::Shutdown);
        let mut done = self.done.clone();
        while done.changed().await.is_ok() {}
    }
}

impl RunnerSink for [Option<RunnerHandle>] {
    fn send_to(&self, pane: usize, cmd: RunnerCommand) {
        match self.get(pane).and_then(Option::as_ref) {
            Some(r) => {
                r.send(cmd);
            }
            None => tracing::debug!(pane, "command for a pane without a runner dropped"),
        }
    }

    fn edit_panes(&self, edit: crate::protocol::edit::PaneEdit) {
        tracing::debug!(pane = edit.pane(), "no server here to change the panes");
    }
}

impl RunnerSink for Vec<Option<RunnerHandle>> {
    fn send_to(&self, pane: usize, cmd: RunnerCommand) {
        self.as_slice().send_to(pane, cmd);
    }

    fn edit_panes(&self, edit: crate::protocol::edit::PaneEdit) {
        self.as_slice().edit_panes(edit);
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
    let budget = budget::Budget::new(&spec.agent);
    let accounts = account::Accounts::new(options.accounts, spec.agent.account.clone());
    let (tx, rx) = mpsc::unbounded_channel();
    let mut runner = Runner {
        pane,
        queue_mode: spec.agent.queue_mode,
        session_id: spec.resume.clone().unwrap_or_else(|| new_id("session")),
        configured: Chosen {
            model: spec.agent.model.clone(),
            effort: spec.agent.thinking.clone(),
            account: None,
        },
        chosen: Chosen::default(),
        idle: idle::IdleStop::new(spec.agent.idle_stop().ok().flatten()),
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
        kept_by_agent: None,
        stall_after: options.stall_after,
        last_output: None,
        stalled: false,
        cancel_deadline: None,
        interrupt_timeout: options.interrupt_timeout,
        recorder: options.recorder,
        images: Vec::new(),
        ticks: (
            options.live_every,
            options.background_every.or(options.live_every),
        ),
        in_focus: options.focused,
        read_pace: None,
        live_at: None,
        live_sent: None,
        terminal: None,
        meter: usage::Meter::new(options.prices),
        hold: None,
        shown_hold: None,
        user_hold: false,
        budget,
        hive_rx: options.hive_budget.as_ref().map(|h| h.subscribe()),
        hive: options.hive_budget,
        procs: procs::Procs::new(options.sample_every),
        policy: options.policy,
        approvals: approve::Approvals::default(),
        accounts,
        out,
    };
    runner.restore_choices();
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
    /// The agent's model and effort from its configuration…
    configured: Chosen,
    /// …and what the user chose over them for this session.
    chosen: Chosen,
    factory: Arc<dyn ProviderFactory>,
    spec: ProviderSpec,
    capabilities: Capabilities,
    provider: Option<ProviderHandle>,
    provider_rx: Option<crate::provider::EventReceiver>,
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
    /// A message resent after a limit that the agent's own session holds
    /// already (`Capabilities::keeps_failed_prompt`): the agent is asked to
    /// go on (`hold::GO_ON`) rather than given it twice.
    kept_by_agent: Option<String>,
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
    /// (focused, background) live ticks.
    ticks: (Option<Duration>, Option<Duration>),
    /// Which of the two is in use (`RunnerCommand::Focused`).
    in_focus: bool,
    /// The pace the provider reads its agent at, kept to the live tick.
    read_pace: Option<crate::provider::channel::ReadPace>,
    /// When the next live tail goes out (set when unshown text arrives).
    live_at: Option<Instant>,
    /// When the last one went out.
    live_sent: Option<Instant>,
    /// Terminal panes: the emulator's screen, which only the runner reads.
    terminal: Option<screen::TermOwner>,
    /// Prices turns, watches the context's fill.
    meter: usage::Meter,
    /// Why the queue waits, and until when.
    hold: Option<hold::Held>,
    /// What the consoles were last told holds the queue.
    shown_hold: Option<hold::Hold>,
    /// The queue waits for the user after an interrupt (`hold.rs`).
    user_hold: bool,
    /// The agent's budget and what its turns spent.
    budget: budget::Budget,
    /// The hive's, shared with the other runners, and its changes.
    hive: Option<Arc<budget::HiveBudget>>,
    hive_rx: Option<watch::Receiver<u64>>,
    /// The agent's process tree, sampled.
    procs: procs::Procs,
    /// The approval policy, and the cards it showed.
    policy: Option<crate::policy::PanePolicy>,
    /// Its provider's accounts and a switch between them.
    accounts: account::Accounts,
    approvals: approve::Approvals,
    /// `idle_stop_after`: when the idle agent's process goes.
    idle: idle::IdleStop,
    out: mpsc::UnboundedSender<PaneUpdate>,
}

impl Runner {
    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<RunnerCommand>) {
        loop {
            let flush_at = self.processor.next_deadline();
            let cancel_at = self.cancel_deadline;
            let live_at = self.live_at;
            let hold_at = self.hold.as_ref().and_then(|h| h.at);
            let sample_at = self.procs.next;
            let approval_at = self.approvals.next_deadline();
            let idle_at = self.idle.at;
            let stall_at = self
                .last_output
                .filter(|_| !self.stalled)
                // Checked: an absurd `stall_after` means no stall notice,
                // not a panic.
                .and_then(|t| t.checked_add(self.stall_after));
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(RunnerCommand::Shutdown) | None => break,
                    Some(cmd) => self.command(cmd),
                },
                ev = agent::recv_opt(&mut self.provider_rx) => match ev {
                    Some(ev) => {
                        self.provider_event(ev);
                        self.rest_of_burst();
                    }
                    None => self.provider_gone(None, "the provider stopped".into()),
                },
                _ = timer::sleep_until(flush_at) => {
                    let outs = self.processor.flush_idle(Instant::now());
                    self.forward(outs);
                }
                _ = timer::sleep_until(cancel_at) => self.interrupt_expired(),
                _ = timer::sleep_until(live_at) => self.send_live(),
                _ = timer::sleep_until(hold_at) => self.release_hold(),
                _ = timer::sleep_until(sample_at) => self.sample_processes(),
                _ = timer::sleep_until(approval_at) => self.approvals_expired(),
                _ = timer::sleep_until(idle_at) => self.idle_expired(),
                _ = budget::hive_changed(&mut self.hive_rx) => self.hive_budget_changed(),
                (name, carried) = account::carried(&mut self.accounts) => self.account_carried(name, carried),
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

    /// A live tail is not recorded; the recorder only learns where its item
    /// shows (a restart restores the same order).
    fn emit_live(&mut self, u: Upsert) {
        if let Some(r) = self.recorder.as_mut() {
            r.shown(&u);
        }
        let _ = self.out.send(PaneUpdate {
            pane: self.pane,
            event: PaneEvent::Live(u),
        });
    }

    fn send_live(&mut self) {
        self.live_at = None;
        self.live_sent = Some(Instant::now());
        for u in self.processor.live_tail() {
            self.emit_live(u);
        }
    }

    /// Arms the live tail when the processor holds text nobody has seen.
    /// Text read as it comes shows on the next tick of the grid every
    /// runner shares, a quarter to a tick and a quarter later (so a tick's
    /// deltas, and all panes' tails, share a frame). A paced reader's text
    /// has already waited up to a tick in the pipe: it shows at once (after
    /// the burst it came in), unless the last live tail went out less than
    /// a tick ago. The quarter tick of slack lets a burst read a tick after
    /// the last, and handled a hair sooner than the last one was, show
    /// without a timer of its own.
    fn schedule_live(&mut self) {
        if let Some(every) = self.live_every()
            && self.live_at.is_none()
            && self.processor.has_unshown()
        {
            let now = Instant::now();
            let paced = self.provider_rx.as_ref().is_some_and(EventReceiver::paced);
            self.live_at = Some(match self.live_sent {
                Some(last) if paced => (last + every - every / 4).max(now),
                None if paced => now,
                // On the tick all panes share (`timer::next_tick`): panes
                // streaming at once send their tails in one wake-up.
                _ => timer::next_tick(now + every / 4, every),
            });
        }
    }

    /// Handles the events a provider handed over together (a paced pipe
    /// reads a tick's worth of lines at once) before anything else, and
    /// shows their text in one live tail right after, if it is due.
    fn rest_of_burst(&mut self) {
        for _ in 0..BURST {
            let Some(Ok(ev)) = self.provider_rx.as_mut().map(EventReceiver::try_recv) else {
                break;
            };
            self.provider_event(ev);
        }
        if self.live_at.is_some_and(|at| at <= Instant::now()) {
            self.send_live();
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
            if state.is_busy() {
                self.procs.wake();
            }
            match state {
                TurnState::Idle => self.idle.arm(),
                _ => self.idle.disarm(),
            }
            self.emit(PaneEvent::State(state));
        }
    }

    /// Focus moved to or away from this pane: its live tick, and the pace
    /// its agent is read at, follow.
    fn focused(&mut self, focused: bool) {
        self.in_focus = focused;
        if let (Some(pace), Some(every)) = (&self.read_pace, self.live_every()) {
            pace.set(every);
        }
    }

    /// The live tick now: the focused or the background one.
    fn live_every(&self) -> Option<Duration> {
        if self.in_focus {
            self.ticks.0
        } else {
            self.ticks.1
        }
    }

    fn queue_changed(&mut self) {
        if self.queue.is_empty() && std::mem::take(&mut self.user_hold) {
            self.publish_hold();
        }
        self.emit(PaneEvent::Queue(self.queue.iter().cloned().collect()));
    }
}
