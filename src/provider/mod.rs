//! The provider contract (DESIGN §4, seed 002 `CliProvider`).
//!
//! A provider is a tokio task that owns one agent (a child process, an HTTP
//! client, a PTY). `ProviderCommand`s go in over a channel; canonical
//! `StreamEvent`s and a few out-of-band `ProviderEvent`s come out. Knowledge of an
//! agent's own protocol lives only in that agent's module below, which
//! describes the provider to the rest of hive with a `ProviderDescriptor`
//! (registry.rs).

pub mod acp;
pub mod channel;
pub mod claude;
pub mod codex;
pub use crate::protocol::display;
pub mod doctor;
pub mod gemini;
pub mod import;
pub(crate) mod instructions;
pub(crate) mod json;
pub mod limits;
pub(crate) mod mcp_status;
pub(crate) mod oneshot;
pub mod openai;
pub mod operations;
pub(crate) mod paced;
pub mod pi;
pub mod preset;
pub mod process;
pub mod pty;
pub mod reap;
mod registry;
pub mod script;
pub(crate) mod seed;
mod sink;
pub(crate) mod stderr;
pub(crate) mod toolbox;
pub mod vendor_home;

pub use crate::protocol::agent::{
    Capabilities, DiagnosticLevel, PermissionDecision, PermissionOption, PermissionRequest,
    SessionInfo,
};
pub use registry::Registry;
pub(crate) use registry::{NpmProgram, OwnSettings, ProviderDescriptor};
pub(crate) use sink::Sink;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::AgentConfig;
use crate::event::StreamEvent;

/// Host → provider.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderCommand {
    /// Start a turn. Every event of the turn carries this `turn_id`; the
    /// turn is bound once the provider emits `response_start` for it.
    Send { turn_id: String, text: String },
    /// Deliver a message into the running turn (only with `queue_while_streaming`).
    Steer { text: String },
    /// Interrupt the running turn; it ends with `response_done` `cancelled`.
    Cancel,
    /// Answer a `ProviderEvent::Permission`.
    Permission {
        request_id: String,
        decision: PermissionDecision,
    },
    /// Raw bytes for a terminal pane.
    Input(Vec<u8>),
    /// The pane's size changed (terminal panes resize their PTY).
    Resize { cols: u16, rows: u16 },
    /// Use this model from now on (live where the protocol allows, else
    /// from the next turn's command line). Only with `set_model`.
    SetModel { model: String },
    /// Thinking / reasoning effort (`off`, `low`, `medium`, `high`, or the
    /// agent's own level name) from now on. Only with `set_effort`.
    SetEffort { effort: String },
    /// Images for the next `Send` (only with `images`); the runner sends
    /// it just before that `Send`.
    Attach(Vec<crate::image::Image>),
    /// End the agent and its whole process group; the task then finishes.
    Kill,
}

/// Provider → host.
#[derive(Debug, Clone)]
pub enum ProviderEvent {
    Stream(StreamEvent),
    Session(SessionInfo),
    Permission(PermissionRequest),
    /// Something the user should know that is not part of the conversation:
    /// a malformed line from the agent, stderr output, a fallback taken.
    Diagnostic {
        level: DiagnosticLevel,
        message: String,
    },
    /// The agent's process ended. `message` carries its last stderr lines.
    Exited {
        code: Option<i32>,
        message: String,
    },
    /// The agent did not confirm an interrupt within its grace time. The
    /// runner ends its process group and starts it again on the same session
    /// (the one escalation path every provider shares). Sent before the
    /// provider ends the turn itself.
    Unresponsive {
        reason: String,
    },
    /// Terminal panes: the emulated screen changed.
    TerminalUpdated,
    /// Terminal panes: the child rang the bell.
    Bell,
    /// The models the agent offers for `/model` (ids, as `SetModel` takes them).
    Models(Vec<String>),
    /// The agent took this effort (`SetEffort`). Sent by providers with
    /// `confirms_effort`: only then is it the pane's, kept with its session.
    EffortTaken(String),
}

/// The emulated screen of a terminal pane, shared by the PTY reader (writer)
/// and the runner (its one reader, `runner::screen`); never the app's.
#[derive(Clone)]
pub struct TerminalScreen(pub Arc<std::sync::Mutex<tui_term::vt100::Parser>>);

impl std::fmt::Debug for TerminalScreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TerminalScreen")
    }
}

pub use channel::{EventReceiver, EventSink};

/// How a provider starts: a fresh session, or resuming the agent's own.
#[derive(Debug, Clone)]
pub struct ProviderSpec {
    pub agent: AgentConfig,
    pub resume: Option<String>,
}

/// How long a provider task may take to wind down after `Kill`.
const KILL_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The host's side of a running provider task.
#[derive(Debug)]
pub struct ProviderHandle {
    commands: mpsc::UnboundedSender<ProviderCommand>,
    alive: Arc<AtomicBool>,
    task: JoinHandle<()>,
    /// Terminal panes expose their emulated screen here.
    pub terminal: Option<TerminalScreen>,
}

impl ProviderHandle {
    /// Spawns `run` as the provider task. `alive` turns false when it returns.
    pub fn spawn<F, Fut>(run: F) -> Self
    where
        F: FnOnce(mpsc::UnboundedReceiver<ProviderCommand>) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let alive = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&alive);
        let fut = run(rx);
        let task = tokio::spawn(async move {
            fut.await;
            flag.store(false, Ordering::SeqCst);
        });
        Self {
            commands: tx,
            alive,
            task,
            terminal: None,
        }
    }

    /// Sends a command; false if the task is gone.
    pub fn send(&self, cmd: ProviderCommand) -> bool {
        self.commands.send(cmd).is_ok()
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst) && !self.task.is_finished()
    }

    /// Asks the task to kill its agent and waits for it to finish. A task
    /// that does not finish within two seconds is aborted: dropping it drops
    /// its `AgentProcess`, which kills the process group.
    pub async fn kill(mut self) {
        let _ = self.commands.send(ProviderCommand::Kill);
        if tokio::time::timeout(KILL_GRACE, &mut self.task)
            .await
            .is_err()
        {
            tracing::warn!("provider task ignored Kill; aborting it");
            self.task.abort();
            let _ = (&mut self.task).await;
        }
        self.alive.store(false, Ordering::SeqCst);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("unknown provider `{name}`; known providers: {known}")]
    Unknown { name: String, known: String },
    #[error("agent `{agent}`: {message}")]
    Config { agent: String, message: String },
    #[error("agent `{agent}`: cannot start `{program}`: {source}")]
    Spawn {
        agent: String,
        program: String,
        #[source]
        source: std::io::Error,
    },
}

impl ProviderError {
    /// Agent `agent`'s configuration cannot work (a missing or bad setting).
    pub fn config(agent: &str, message: impl Into<String>) -> Self {
        Self::Config {
            agent: agent.to_owned(),
            message: message.into(),
        }
    }

    /// Agent `agent`'s `program` could not be started (or a file it needs
    /// could not be written).
    pub fn spawn(agent: &str, program: impl Into<String>, source: std::io::Error) -> Self {
        Self::Spawn {
            agent: agent.to_owned(),
            program: program.into(),
            source,
        }
    }
}

/// What `ProviderFactory::spawn` gives: the running task, or why it cannot run.
pub(crate) type Spawned = Result<ProviderHandle, ProviderError>;

/// Builds provider tasks of one kind; its descriptor in the `Registry`
/// names it.
pub trait ProviderFactory: Send + Sync {
    fn capabilities(&self, agent: &AgentConfig) -> Capabilities;
    /// Starts the provider task. Must be called inside a tokio runtime.
    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned;
}
