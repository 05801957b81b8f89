//! `transport = "exec"`: one `codex exec --json` process per turn (seed 000
//! "Codex Event Mapping Table"); later turns run `codex exec --json resume
//! <thread_id>`.
//!
//! exec has no stdin protocol and no text deltas: messages arrive whole on
//! `item.completed`. Interrupt is SIGINT to the turn's process group, after
//! which the CLI prints nothing more, so the provider ends the turn as
//! cancelled itself (SIGKILL after a grace if the CLI lingers).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Duration;

use super::items::{ItemMapper, Out, TextKind, completed, usage};
use super::{CodexSettings, PROVIDER_ID, announce, excerpt};
use crate::event::{ErrorInfo, Payload, Usage, new_id};
use crate::provider::Sink;
use crate::provider::oneshot::{Commands, Ending, Run, Timing, Turn};
use crate::provider::{DiagnosticLevel, EventSink, ProviderCommand};

fn warn(message: String) -> Out {
    Out::Diagnostic(DiagnosticLevel::Warn, message)
}

/// `cancel_grace` is the agent's `interrupt_grace_ms`.
const TIMING: Timing = Timing {
    name: "codex exec",
    exit_wait: Duration::from_millis(500),
    drain: Duration::from_millis(200),
    cancel_grace: Duration::from_millis(500),
    kill_grace: Duration::from_millis(500),
    // After `turn.completed` the CLI still writes its rollout (the thread's
    // history on disk) before it exits; let it, so the next `resume` sees it.
    settle: Duration::from_secs(5),
};

/// Translates the JSONL of one `codex exec --json` run.
#[derive(Debug, Default)]
pub struct ExecTurn {
    items: ItemMapper,
    /// A top-level `error` that may be the cause of a coming `turn.failed`
    /// (then shown once, as the turn error) or a notice (then shown inline).
    pending_error: Option<String>,
    finished: bool,
}

impl ExecTurn {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once `turn.completed` or `turn.failed` was seen.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The last error the CLI printed, for a turn that ends without
    /// `turn.failed` (the process exited).
    pub(crate) fn last_error(&self) -> Option<&str> {
        self.pending_error.as_deref()
    }

    pub fn line(&mut self, line: &str) -> Vec<Out> {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Vec::new();
        }
        let v: Value = match serde_json::from_str(trimmed) {
            Ok(v) => v,
            Err(e) => {
                return vec![warn(format!(
                    "codex: unreadable output line ({e}): {}",
                    excerpt(trimmed)
                ))];
            }
        };
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            return vec![warn(format!(
                "codex: output line without a type: {}",
                excerpt(trimmed)
            ))];
        };
        let mut out = Vec::new();
        match kind {
            "thread.started" => out.push(match v.get("thread_id").and_then(Value::as_str) {
                Some(id) => Out::Thread {
                    id: id.to_owned(),
                    model: None,
                },
                None => warn(format!(
                    "codex: thread.started without thread_id: {}",
                    excerpt(trimmed)
                )),
            }),
            "turn.started" => out.push(Out::Started),
            "item.started" | "item.updated" | "item.completed" => {
                self.flush_error(&mut out);
                self.item(kind, &v, trimmed, &mut out);
            }
            "item.plan.delta" => {
                let id = v.get("item_id").and_then(Value::as_str).unwrap_or_default();
                let delta = v.get("delta").and_then(Value::as_str).unwrap_or_default();
                if !id.is_empty() {
                    let payloads = self.items.delta(id, TextKind::Message, delta);
                    out.extend(payloads.into_iter().map(Out::Event));
                }
            }
            "turn.completed" => {
                self.flush_error(&mut out);
                self.finished = true;
                out.push(Out::Finished(completed(v.get("usage").map(usage))));
            }
            "turn.failed" => self.turn_failed(&v, &mut out),
            "error" => self.error(&v, &mut out),
            "request_user_input" => self.request_user_input(&v, &mut out),
            other => out.push(Out::Diagnostic(
                DiagnosticLevel::Info,
                format!("codex: unhandled event `{other}`"),
            )),
        }
        out
    }

    /// `item.started` / `item.updated` / `item.completed`.
    fn item(&mut self, kind: &str, v: &Value, line: &str, out: &mut Vec<Out>) {
        let Some(item) = v.get("item") else {
            out.push(warn(format!(
                "codex: {kind} without an item: {}",
                excerpt(line)
            )));
            return;
        };
        let payloads = match kind {
            "item.started" => self.items.started(item),
            "item.updated" => self.items.updated(item),
            _ => self.items.completed(item),
        };
        out.extend(payloads.into_iter().map(Out::Event));
    }

    fn turn_failed(&mut self, v: &Value, out: &mut Vec<Out>) {
        let reported = v
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str);
        self.items
            .turn_failed(&mut self.pending_error, reported, None, out);
        self.finished = true;
    }

    /// A top-level `error`: a retry is shown at once, anything else waits to
    /// see whether `turn.failed` repeats it.
    fn error(&mut self, v: &Value, out: &mut Vec<Out>) {
        let message = v
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error")
            .to_owned();
        self.flush_error(out);
        // Retries are progress, not failure: shown at once.
        if message.starts_with("Reconnecting") {
            out.extend(self.items.notice(&message).into_iter().map(Out::Event));
        } else {
            self.pending_error = Some(message);
        }
    }

    fn request_user_input(&mut self, v: &Value, out: &mut Vec<Out>) {
        let questions: Vec<String> = v
            .get("questions")
            .and_then(Value::as_array)
            .map(|qs| {
                qs.iter()
                    .filter_map(|q| q.get("question").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let text = format!(
            "Codex asked for input, which `codex exec` cannot answer: {}",
            questions.join(" / ")
        );
        out.extend(self.items.notice(&text).into_iter().map(Out::Event));
    }

    fn flush_error(&mut self, out: &mut Vec<Out>) {
        self.items.flush_error(&mut self.pending_error, out);
    }
}

/// The provider task of `codex exec`: one process per turn.
pub(super) async fn run(
    settings: Arc<CodexSettings>,
    resume: Option<String>,
    events: EventSink,
    rx: mpsc::UnboundedReceiver<ProviderCommand>,
) {
    let placeholder = new_id("codex");
    let model = settings.display_model();
    ExecProvider {
        settings,
        thread: resume,
        placeholder,
        model,
        events,
        usage: ThreadUsage::default(),
        images: Vec::new(),
    }
    .run(rx)
    .await
}

struct ExecProvider {
    settings: Arc<CodexSettings>,
    thread: Option<String>,
    /// Session id for events before the CLI named the thread.
    placeholder: String,
    /// The model shown for turns (exec does not report it).
    model: Option<String>,
    events: EventSink,
    usage: ThreadUsage,
    /// Images for the next turn's command line (`ProviderCommand::Attach`).
    images: Vec<PathBuf>,
}

/// `turn.completed` of a resumed thread reports the whole thread's usage;
/// the turn's own is the difference to the previous report (issue 13
/// item 3). A thread resumed after a restart or with `/resume` takes its
/// earlier total from Codex's rollout (`rollout`); where that is gone too
/// it reports none rather than a wrong figure.
#[derive(Debug, Default)]
pub struct ThreadUsage {
    total: Option<Usage>,
}

impl ThreadUsage {
    /// The turn's usage from the thread total a run reported.
    pub fn turn(&mut self, resumed: bool, total: Usage) -> Option<Usage> {
        let turn = match (&self.total, resumed) {
            (_, false) => Some(total.clone()),
            (Some(earlier), true) => Some(total.since(earlier)),
            (None, true) => None,
        };
        self.total = Some(total);
        turn
    }

    /// Whether an earlier total of the thread is known.
    pub fn known(&self) -> bool {
        self.total.is_some()
    }

    /// The thread's total before this hive saw it (its rollout's).
    pub fn baseline(&mut self, total: Option<Usage>) {
        self.total = total;
    }

    /// Another thread starts: its total starts again.
    pub fn reset(&mut self) {
        self.total = None;
    }
}

/// Whether the provider goes on after a turn.
enum Flow {
    Continue,
    Stop,
}

/// State of the hive turn across runs (a stale thread means a second run).
struct TurnCtx {
    turn_id: String,
    started: bool,
    /// Shown in the conversation once the turn started (stale thread).
    notice: Option<String>,
}

impl ExecProvider {
    async fn run(mut self, rx: mpsc::UnboundedReceiver<ProviderCommand>) {
        if self.thread.is_some() {
            announce(&self.events, self.thread.as_deref(), self.model.as_deref());
        }
        // exec cannot list models: the `/model` picker offers the configured ones.
        let models = self.settings.configured_models();
        if !models.is_empty() {
            let _ = self
                .events
                .send(crate::provider::ProviderEvent::Models(models));
        }
        let mut commands = Commands::new(rx);
        while let Some(cmd) = commands.recv().await {
            match cmd {
                ProviderCommand::Send { turn_id, text } => {
                    if let Flow::Stop = self.turn(turn_id, text, &mut commands).await {
                        return;
                    }
                }
                ProviderCommand::Kill => return,
                ProviderCommand::Steer { .. } => self.no_steer(),
                ProviderCommand::SetModel { model } => {
                    self.model = Some(model.clone());
                    Arc::make_mut(&mut self.settings).model = Some(model);
                }
                ProviderCommand::SetEffort { effort } => {
                    Arc::make_mut(&mut self.settings).effort = Some(effort);
                }
                ProviderCommand::Attach(images) => self.attach(images),
                _ => {}
            }
        }
    }

    /// Keeps the images for the next turn. Codex splits `--image` values
    /// at commas, so a path with one cannot go: said, not sent as two.
    fn attach(&mut self, images: Vec<crate::image::Image>) {
        let (ok, refused): (Vec<PathBuf>, Vec<PathBuf>) = images
            .into_iter()
            .map(|i| i.path)
            .partition(|p| !p.to_string_lossy().contains(','));
        for p in refused {
            self.events.diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "{} not sent: codex exec reads a comma in an image path as two paths",
                    p.display()
                ),
            );
        }
        self.images = ok;
    }

    fn session_id(&self) -> &str {
        self.thread.as_deref().unwrap_or(&self.placeholder)
    }

    fn emit(&self, turn_id: &str, payload: Payload) {
        self.events.stream(turn_id, self.session_id(), payload);
    }

    fn no_steer(&self) {
        self.events.diagnostic(
            DiagnosticLevel::Warn,
            "codex exec cannot take a message mid-turn; it was not delivered",
        );
    }

    fn start_response(&self, ctx: &mut TurnCtx) {
        if !ctx.started {
            ctx.started = true;
            let model = self.model.clone().unwrap_or_else(|| "codex".into());
            self.emit(
                &ctx.turn_id,
                Payload::ResponseStart {
                    model_id: model,
                    provider_id: PROVIDER_ID.into(),
                },
            );
        }
        if let Some(notice) = ctx.notice.take() {
            for p in ItemMapper::new().notice(&notice) {
                self.emit(&ctx.turn_id, p);
            }
        }
    }

    async fn turn(&mut self, turn_id: String, text: String, commands: &mut Commands) -> Flow {
        let mut ctx = TurnCtx {
            turn_id,
            started: false,
            notice: None,
        };
        let mut resume = self.thread.clone();
        let images = std::mem::take(&mut self.images);
        loop {
            let (error, message) = match self
                .run_once(resume.as_deref(), &text, &images, &mut ctx, commands)
                .await
            {
                RunEnd::Finished => return Flow::Continue,
                RunEnd::Killed => return Flow::Stop,
                RunEnd::Cancelled => {
                    self.emit(&ctx.turn_id, Payload::interrupted(None));
                    return Flow::Continue;
                }
                RunEnd::Stale(detail) => {
                    let old = resume.take().unwrap_or_default();
                    let notice = format!(
                        "Codex thread {old} could not be resumed; continuing in a new thread."
                    );
                    self.events
                        .diagnostic(DiagnosticLevel::Warn, format!("{notice} ({detail})"));
                    self.thread = None;
                    // Shown once the new thread's turn starts.
                    ctx.notice = Some(notice);
                    continue;
                }
                RunEnd::SpawnFailed(message) => ("spawn_failed", message),
                RunEnd::Failed(message) => ("agent_exited", message),
            };
            self.emit(
                &ctx.turn_id,
                Payload::ResponseError {
                    error: ErrorInfo::new(error, message),
                },
            );
            return Flow::Continue;
        }
    }

    /// One `codex exec` process, from start to exit.
    async fn run_once(
        &mut self,
        resume: Option<&str>,
        prompt: &str,
        images: &[PathBuf],
        ctx: &mut TurnCtx,
        commands: &mut Commands,
    ) -> RunEnd {
        if let Some(thread) = resume
            && !self.usage.known()
        {
            let home = self.settings.home();
            let thread = thread.to_owned();
            let total =
                tokio::task::spawn_blocking(move || super::rollout::thread_total(&home?, &thread))
                    .await
                    .ok()
                    .flatten();
            self.usage.baseline(total);
        }
        let spec = self.settings.exec_command(resume, images);
        // The prompt goes to stdin (`-`); EOF tells the CLI it is complete.
        let mut run = match Run::start(&spec, Some(prompt), &self.events).await {
            Ok(run) => run,
            Err(message) => return RunEnd::SpawnFailed(message),
        };
        let timing = Timing {
            cancel_grace: self.settings.interrupt_grace,
            ..TIMING
        };
        let mut exec = ExecRun {
            provider: self,
            ctx,
            turn: ExecTurn::new(),
            resumed: resume.is_some(),
            saw_thread: false,
        };
        let ending = run.follow(&mut exec, commands, &timing).await;
        let (turn, saw_thread) = (exec.turn, exec.saw_thread);
        let (status, report) = match ending {
            Ending::Ended => return RunEnd::Finished,
            Ending::Cancelled => return RunEnd::Cancelled,
            Ending::Killed => return RunEnd::Killed,
            Ending::Exited { status, report } => (status, report),
        };
        let failed = !status.is_some_and(|s| s.success());
        if resume.is_some() && !saw_thread && failed {
            let stderr = run.stderr_tail();
            let detail = stderr
                .lines()
                .find(|l| l.contains("Error"))
                .map(str::to_owned)
                .unwrap_or(report);
            return RunEnd::Stale(detail);
        }
        RunEnd::Failed(match turn.last_error() {
            Some(e) => format!("{e}\n({report})"),
            None if failed => report,
            None => format!("codex exec ended without finishing the turn ({report})"),
        })
    }
}

/// How one `codex exec` run ended.
enum RunEnd {
    Finished,
    Cancelled,
    Stale(String),
    SpawnFailed(String),
    Failed(String),
    Killed,
}

/// The `codex exec` run in flight, as the per-turn loop sees it.
struct ExecRun<'a> {
    provider: &'a mut ExecProvider,
    ctx: &'a mut TurnCtx,
    turn: ExecTurn,
    resumed: bool,
    saw_thread: bool,
}

impl Turn for ExecRun<'_> {
    fn line(&mut self, line: &str) {
        if self.turn.finished() {
            return;
        }
        for out in self.turn.line(line) {
            self.handle(out);
        }
    }

    fn ended(&self) -> bool {
        self.turn.finished()
    }

    fn command(&mut self, cmd: ProviderCommand) {
        match cmd {
            ProviderCommand::Steer { .. } => self.provider.no_steer(),
            ProviderCommand::Send { .. } => self.provider.events.diagnostic(
                DiagnosticLevel::Warn,
                "codex exec: a turn is already running; message ignored",
            ),
            _ => {}
        }
    }
}

impl ExecRun<'_> {
    fn handle(&mut self, out: Out) {
        let p = &mut *self.provider;
        match out {
            Out::Thread { id, .. } => {
                self.saw_thread = true;
                if p.thread.as_deref() != Some(id.as_str()) {
                    p.usage.reset();
                    p.thread = Some(id);
                    announce(&p.events, p.thread.as_deref(), p.model.as_deref());
                }
            }
            Out::Started => p.start_response(self.ctx),
            Out::Event(payload) => {
                p.start_response(self.ctx);
                p.emit(&self.ctx.turn_id, payload);
            }
            Out::Finished(mut payload) => {
                if let Payload::ResponseDone { usage, .. } = &mut payload
                    && let Some(total) = usage.take()
                {
                    *usage = p.usage.turn(self.resumed, total);
                }
                p.start_response(self.ctx);
                p.emit(&self.ctx.turn_id, payload);
            }
            Out::Diagnostic(level, message) => p.events.diagnostic(level, message),
        }
    }
}
