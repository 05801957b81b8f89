//! What a console and its server say about one pane: the commands a
//! console's keys make (`RunnerCommand`), and what the pane's runner tells
//! every console (`PaneEvent`). They were the runner ↔ app boundary inside
//! one process; now they cross the socket inside `ClientMsg` / `ServerMsg`.
//! The runner (src/runner/) reads the one and makes the other.

use serde::{Deserialize, Serialize};

use crate::protocol::agent::{
    Capabilities, DiagnosticLevel, PermissionDecision, PermissionRequest, SessionInfo,
};
use crate::protocol::hold::{BudgetAnswer, Hold};
use crate::protocol::image::Image;
use crate::protocol::screen::{Point, ScreenUpdate};
use crate::protocol::upsert::{TurnEvent, Upsert};

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
    pub(crate) fn is_busy(self) -> bool {
        matches!(
            self,
            TurnState::Starting | TurnState::Streaming | TurnState::Cancelling
        )
    }
}

/// Who answered an approval card, for the audit log (issue 47).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Decider {
    /// Nobody the server knows: a command made in-process without a door.
    #[default]
    Unknown,
    /// A console's keys.
    Console,
    /// `hive ctl` (or `hive mcp` outside any pane).
    Ctl,
    /// A paired browser, by its device id.
    Device(String),
    /// An agent (a helper's parent), by its pane id.
    Agent(String),
    /// `hive run`, which has nobody to ask.
    Headless,
}

impl Decider {
    /// How the audit log names it.
    pub fn audit_name(&self) -> String {
        match self {
            Decider::Unknown => "unknown".into(),
            Decider::Console => "console".into(),
            Decider::Ctl => "ctl".into(),
            Decider::Device(id) => format!("device:{id}"),
            Decider::Agent(id) => format!("agent:{id}"),
            Decider::Headless => "headless".into(),
        }
    }
}

impl RunnerCommand {
    /// Whether it only looks at the pane (a terminal pane's scrollback,
    /// a copy-mode selection, the focus): all a read-only console may send
    /// (`verb::viewer_may`).
    pub fn only_looks(&self) -> bool {
        matches!(
            self,
            RunnerCommand::TermView { .. }
                | RunnerCommand::CopyTerminal { .. }
                | RunnerCommand::Focused(_)
        )
    }

    /// What it does, in a few words, for a refusal.
    pub fn what_it_does(&self) -> &'static str {
        match self {
            RunnerCommand::Submit { .. } => "send",
            RunnerCommand::Interrupt | RunnerCommand::InterruptFrom(_) => "interrupt",
            RunnerCommand::Queue(_) | RunnerCommand::DrainQueue => "change the queue",
            RunnerCommand::Permission { .. } => "answer an approval",
            RunnerCommand::Restart => "restart a pane",
            RunnerCommand::Budget(_) => "answer the budget card",
            RunnerCommand::Input(_) => "type into a pane",
            RunnerCommand::Resize { .. } => "size a pane",
            RunnerCommand::SetModel(_) | RunnerCommand::SetEffort(_) => "change the model",
            RunnerCommand::SwitchAccount(_) => "switch accounts",
            RunnerCommand::Attach(_) => "attach images",
            RunnerCommand::SwitchSession { .. } => "switch sessions",
            RunnerCommand::Shutdown => "end an agent",
            RunnerCommand::Focused(_)
            | RunnerCommand::TermView { .. }
            | RunnerCommand::CopyTerminal { .. } => "look",
        }
    }

    /// This command with its decider set to `by` (a permission's answer;
    /// any other command is unchanged).
    pub fn decided_by(self, by: Decider) -> Self {
        match self {
            RunnerCommand::Permission {
                request_id,
                decision,
                ..
            } => RunnerCommand::Permission {
                request_id,
                decision,
                by,
            },
            other => other,
        }
    }
}

/// How a submitted message should be delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SubmitMode {
    /// Idle: send. Busy: as the agent's `queue_mode` says.
    Auto,
    /// Run after the current turn.
    Queue,
    /// Deliver now: into the running turn, or interrupt and send.
    Steer,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// What the app asks of a runner. Plain data (serde): it can cross a socket
/// (docs/architecture.md, "The boundary").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RunnerCommand {
    Submit {
        text: String,
        mode: SubmitMode,
    },
    Interrupt,
    /// Someone other than the pane's user interrupts the turn (another
    /// agent's `agent.interrupt`, `hive ctl cancel`; named here): the pane
    /// says who, and the queue is not held (the user did not ask).
    InterruptFrom(String),
    Queue(QueueEdit),
    /// Start sending the queue if the pane is idle (queued messages restored
    /// after a restart wait for this).
    DrainQueue,
    Permission {
        request_id: String,
        decision: PermissionDecision,
        /// Who answered: the server's word, stamped at its door from the
        /// caller (a client's own claim is not read off the wire).
        #[serde(skip)]
        by: Decider,
    },
    /// Start the agent again after it died (resuming its session).
    Restart,
    /// The answer on the budget card (`PaneEvent::Held` of kind `budget`).
    Budget(BudgetAnswer),
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
    /// `/account NAME`: at the turn boundary the agent goes on under the
    /// provider's `[[account]]` NAME, with its conversation (issue 51); an
    /// empty name lists them.
    SwitchAccount(String),
    /// Images for the next message that starts a turn (only with the
    /// provider's `images` capability; the app checks it first).
    Attach(Vec<Image>),
    /// `/resume`, `/clear`: continue history session `session` and the
    /// agent's own session `resume` (`None`: a new one). The agent is
    /// started again; only while no turn runs.
    SwitchSession {
        session: String,
        resume: Option<String>,
    },
    /// The pane has the focus (its text shows on the live tick) or lost it
    /// (on the slower background tick, `RunnerOptions::background_every`).
    Focused(bool),
    /// Terminal panes: draw the screen `scroll` lines up from the live one,
    /// as it was when the history was `seen` lines long; `hold` keeps the
    /// view on its lines as output arrives (answered with `Terminal`).
    TermView {
        scroll: usize,
        seen: usize,
        hold: bool,
    },
    /// Terminal panes: copy mode's selection, between two (absolute line,
    /// column) points, inclusive (answered with `TerminalText`).
    CopyTerminal {
        from: Point,
        to: Point,
    },
    Shutdown,
}

/// What a runner tells the app. Plain data (serde): it can cross a socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Approval `request_id` was answered (by any client): every view drops
    /// its card.
    PermissionSettled {
        request_id: String,
    },
    Session(SessionInfo),
    /// A message taken back from the queue for editing.
    Recalled(String),
    /// A (new) provider started; terminal panes carry their screen.
    Attached {
        capabilities: Capabilities,
        terminal: Option<Box<ScreenUpdate>>,
    },
    /// Terminal panes: the screen changed (at most once per PTY frame), or
    /// the view asked for with `RunnerCommand::TermView`.
    Terminal(Box<ScreenUpdate>),
    /// Terminal panes: the text `RunnerCommand::CopyTerminal` asked for.
    TerminalText(String),
    Bell,
    /// Terminal panes: output after a client typed into it, then quiet for
    /// a while with no console looking (the server watches, src/server/
    /// idle.rs; protocol 9, #46 item 8: each console found it alone, and it
    /// was lost with that console).
    Idle,
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
    /// The queue waits (a vendor's limit until it resets, a spent budget
    /// until the user raises it), or goes on again (`None`).
    Held(Option<Hold>),
    /// The agent's process tree: CPU and memory (about once a second, when
    /// it changed), or `None` once no agent process runs.
    Process(Option<ProcessSample>),
    /// The running turn has had no output since this instant
    /// (`stall_after`); `None` once output resumes or the turn ends. It
    /// crosses as milliseconds ago (`ago`), an `Instant` being local.
    Stalled(#[serde(with = "ago")] Option<std::time::Instant>),
}

/// Where the app's runner commands go: the runners themselves (in one
/// process, as the benches and `hive run` drive them) or a server.
pub trait RunnerSink {
    fn send_to(&self, pane: usize, cmd: RunnerCommand);

    /// A change to the panes: only a server makes them (runners in this
    /// process, as `hive run` and the benches drive them, have fixed panes).
    fn edit_panes(&self, edit: crate::protocol::edit::PaneEdit) {
        let _ = edit;
    }
}

/// An `Instant` serialised as how long ago it was (ms), read back against
/// the reader's clock: a process's instants mean nothing to another.
pub(crate) mod ago {
    use std::time::{Duration, Instant};

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<S: Serializer>(t: &Option<Instant>, s: S) -> Result<S::Ok, S::Error> {
        let ms = t.map(|t| u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX));
        ms.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Instant>, D::Error> {
        let ms = Option::<u64>::deserialize(d)?;
        Ok(ms.map(|ms| {
            let now = Instant::now();
            now.checked_sub(Duration::from_millis(ms)).unwrap_or(now)
        }))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaneUpdate {
    pub pane: usize,
    pub event: PaneEvent,
}

/// How a failed history write is announced (`PaneEvent::HistoryNotSaved`).
pub(crate) const HISTORY_NOT_SAVED: &str = "history not saved";

/// What a pane shows and `hive ctl status` reports: `process`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    pub cpu_percent: f64,
    pub rss_bytes: u64,
    pub processes: u32,
}
