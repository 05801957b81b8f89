//! `transport = "exec"`: one `codex exec --json` process per turn (seed 000
//! "Codex Event Mapping Table"); later turns run `codex exec --json resume
//! <thread_id>`.
//!
//! exec has no stdin protocol and no text deltas: messages arrive whole on
//! `item.completed`. Interrupt is SIGINT to the turn's process group, after
//! which the CLI prints nothing more, so the provider ends the turn as
//! cancelled itself (SIGKILL after a grace if the CLI lingers).

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant};

use super::items::{ItemMapper, Out, TextKind, completed, usage};
use super::{CodexSettings, PROVIDER_ID, announce, excerpt};
use crate::event::{ErrorInfo, Payload, ResponseStatus, Usage, new_id};
use crate::provider::Sink;
use crate::provider::process::{AgentProcess, LineReader};
use crate::provider::{DiagnosticLevel, EventSink, ProviderCommand, ProviderHandle};
use crate::timer;

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
    pub fn last_error(&self) -> Option<&str> {
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
                return vec![Out::Diagnostic(
                    DiagnosticLevel::Warn,
                    format!("codex: unreadable output line ({e}): {}", excerpt(trimmed)),
                )];
            }
        };
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            return vec![Out::Diagnostic(
                DiagnosticLevel::Warn,
                format!("codex: output line without a type: {}", excerpt(trimmed)),
            )];
        };
        let mut out = Vec::new();
        match kind {
            "thread.started" => match v.get("thread_id").and_then(Value::as_str) {
                Some(id) => out.push(Out::Thread {
                    id: id.to_owned(),
                    model: None,
                }),
                None => out.push(Out::Diagnostic(
                    DiagnosticLevel::Warn,
                    format!(
                        "codex: thread.started without thread_id: {}",
                        excerpt(trimmed)
                    ),
                )),
            },
            "turn.started" => out.push(Out::Started),
            "item.started" | "item.updated" | "item.completed" => {
                self.flush_error(&mut out);
                let Some(item) = v.get("item") else {
                    out.push(Out::Diagnostic(
                        DiagnosticLevel::Warn,
                        format!("codex: {kind} without an item: {}", excerpt(trimmed)),
                    ));
                    return out;
                };
                let payloads = match kind {
                    "item.started" => self.items.started(item),
                    "item.updated" => self.items.updated(item),
                    _ => self.items.completed(item),
                };
                out.extend(payloads.into_iter().map(Out::Event));
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
            "turn.failed" => {
                let message = v
                    .get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| self.pending_error.clone())
                    .unwrap_or_else(|| "the turn failed".into());
                if self.pending_error.as_deref() != Some(message.as_str()) {
                    self.flush_error(&mut out);
                }
                self.pending_error = None;
                self.finished = true;
                out.push(Out::Finished(Payload::ResponseDone {
                    status: ResponseStatus::Error,
                    finish_reason: None,
                    error: Some(ErrorInfo::new("turn_failed", message)),
                    usage: None,
                }));
            }
            "error" => {
                let message = v
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_owned();
                self.flush_error(&mut out);
                // Retries are progress, not failure: shown at once.
                if message.starts_with("Reconnecting") {
                    out.extend(self.items.notice(&message).into_iter().map(Out::Event));
                } else {
                    self.pending_error = Some(message);
                }
            }
            "request_user_input" => {
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
            other => out.push(Out::Diagnostic(
                DiagnosticLevel::Info,
                format!("codex: unhandled event `{other}`"),
            )),
        }
        out
    }

    fn flush_error(&mut self, out: &mut Vec<Out>) {
        if let Some(message) = self.pending_error.take() {
            let text = format!("⚠ {message}");
            out.extend(self.items.notice(&text).into_iter().map(Out::Event));
        }
    }
}

/// How long output written just before the CLI exited is still read.
const DRAIN: Duration = Duration::from_millis(200);

pub fn spawn(
    settings: Arc<CodexSettings>,
    resume: Option<String>,
    events: EventSink,
) -> ProviderHandle {
    ProviderHandle::spawn(move |rx| async move {
        let placeholder = new_id("codex");
        let model = settings.display_model();
        ExecProvider {
            settings,
            thread: resume,
            placeholder,
            model,
            events,
            usage: ThreadUsage::default(),
        }
        .run(rx)
        .await
    })
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
}

/// `turn.completed` of a resumed thread reports the whole thread's usage;
/// the turn's own is the difference to the previous report (issue 13
/// item 3). A resumed thread whose earlier total is unknown (hive restarted)
/// reports none rather than a wrong figure.
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

/// How one `codex exec` run ended.
enum RunEnd {
    Finished,
    Cancelled,
    Stale(String),
    Failed(String),
    Killed,
}

/// One `codex exec` process and what was seen of it.
struct Run {
    proc: AgentProcess,
    lines: LineReader<tokio::process::ChildStdout>,
    turn: ExecTurn,
    resumed: Option<String>,
    saw_thread: bool,
}

/// State of the hive turn across runs (a stale thread means a second run).
struct TurnCtx {
    turn_id: String,
    started: bool,
    /// Shown in the conversation once the turn started (stale thread).
    notice: Option<String>,
}

impl ExecProvider {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<ProviderCommand>) {
        if self.thread.is_some() {
            announce(&self.events, self.thread.as_deref(), self.model.as_deref());
        }
        while let Some(cmd) = rx.recv().await {
            match cmd {
                ProviderCommand::Send { turn_id, text } => {
                    if let Flow::Stop = self.turn(turn_id, text, &mut rx).await {
                        return;
                    }
                }
                ProviderCommand::Kill => return,
                ProviderCommand::Steer { .. } => self.diagnostic(
                    DiagnosticLevel::Warn,
                    "codex exec cannot take a message mid-turn; it was not delivered".into(),
                ),
                ProviderCommand::SetModel { model } => {
                    self.model = Some(model.clone());
                    Arc::make_mut(&mut self.settings).model = Some(model);
                }
                ProviderCommand::SetEffort { effort } => {
                    Arc::make_mut(&mut self.settings).effort = Some(effort);
                }
                _ => {}
            }
        }
    }

    fn session_id(&self) -> &str {
        self.thread.as_deref().unwrap_or(&self.placeholder)
    }

    fn emit(&self, turn_id: &str, payload: Payload) {
        self.events.stream(turn_id, self.session_id(), payload);
    }

    fn diagnostic(&self, level: DiagnosticLevel, message: String) {
        self.events.diagnostic(level, message);
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

    async fn turn(
        &mut self,
        turn_id: String,
        text: String,
        rx: &mut mpsc::UnboundedReceiver<ProviderCommand>,
    ) -> Flow {
        let mut ctx = TurnCtx {
            turn_id,
            started: false,
            notice: None,
        };
        let mut resume = self.thread.clone();
        loop {
            let mut run = match self.start(resume.as_deref(), &text).await {
                Ok(run) => run,
                Err(message) => {
                    self.emit(
                        &ctx.turn_id,
                        Payload::ResponseError {
                            error: ErrorInfo::new("spawn_failed", message),
                        },
                    );
                    return Flow::Continue;
                }
            };
            let end = self.follow(&mut run, &mut ctx, rx).await;
            match end {
                RunEnd::Finished => {
                    settle(&mut run).await;
                    return Flow::Continue;
                }
                RunEnd::Cancelled => {
                    self.emit(&ctx.turn_id, Payload::interrupted(None));
                    return Flow::Continue;
                }
                RunEnd::Stale(detail) => {
                    let old = resume.take().unwrap_or_default();
                    let notice = format!(
                        "Codex thread {old} could not be resumed; continuing in a new thread."
                    );
                    self.diagnostic(DiagnosticLevel::Warn, format!("{notice} ({detail})"));
                    self.thread = None;
                    // Shown once the new thread's turn starts.
                    ctx.notice = Some(notice);
                }
                RunEnd::Failed(message) => {
                    self.emit(
                        &ctx.turn_id,
                        Payload::ResponseError {
                            error: ErrorInfo::new("agent_exited", message),
                        },
                    );
                    return Flow::Continue;
                }
                RunEnd::Killed => return Flow::Stop,
            }
        }
    }

    async fn start(&self, resume: Option<&str>, prompt: &str) -> Result<Run, String> {
        let spec = self.settings.exec_command(resume);
        let (mut proc, lines) = AgentProcess::spawn(&spec)
            .map_err(|e| format!("cannot start `{}`: {e}", spec.program))?;
        // The prompt goes to stdin (`-`); EOF tells the CLI it is complete. A
        // failed write shows up as the process's own exit report.
        if let Err(e) = proc.write_line(prompt).await {
            tracing::debug!("codex exec: writing the prompt failed: {e}");
        }
        proc.close_stdin();
        Ok(Run {
            proc,
            lines,
            turn: ExecTurn::new(),
            resumed: resume.map(str::to_owned),
            saw_thread: false,
        })
    }

    /// Reads one run until it finishes, is cancelled, or exits.
    async fn follow(
        &mut self,
        run: &mut Run,
        ctx: &mut TurnCtx,
        rx: &mut mpsc::UnboundedReceiver<ProviderCommand>,
    ) -> RunEnd {
        let grace = self.settings.interrupt_grace;
        let mut cancel_at: Option<Instant> = None;
        let mut exited = None;
        loop {
            tokio::select! {
                line = run.lines.next_line() => match line {
                    Ok(Some(line)) => {
                        // After SIGINT the turn is over for hive; late lines are dropped.
                        if cancel_at.is_none() && self.feed(&line, run, ctx) {
                            return RunEnd::Finished;
                        }
                    }
                    Ok(None) | Err(_) => break,
                },
                // A child that inherited stdout can keep the pipe open after
                // the CLI died: its exit, not EOF, ends the run.
                status = run.proc.wait() => {
                    exited = status.ok();
                    let until = Instant::now() + DRAIN;
                    while let Ok(Ok(Some(line))) = tokio::time::timeout_at(until, run.lines.next_line()).await {
                        if cancel_at.is_none() && self.feed(&line, run, ctx) {
                            return RunEnd::Finished;
                        }
                    }
                    break;
                },
                cmd = rx.recv() => match cmd {
                    Some(ProviderCommand::Cancel) => {
                        if cancel_at.is_none() {
                            run.proc.signal(libc::SIGINT);
                            cancel_at = Some(Instant::now() + grace);
                        }
                    }
                    Some(ProviderCommand::Kill) | None => {
                        run.proc.terminate(Duration::from_millis(500)).await;
                        return RunEnd::Killed;
                    }
                    Some(ProviderCommand::Steer { .. }) => self.diagnostic(
                        DiagnosticLevel::Warn,
                        "codex exec cannot take a message mid-turn; it was not delivered".into(),
                    ),
                    Some(ProviderCommand::Send { .. }) => self.diagnostic(
                        DiagnosticLevel::Warn,
                        "codex exec: a turn is already running; message ignored".into(),
                    ),
                    Some(_) => {}
                },
                _ = timer::sleep_until(cancel_at) => {
                    // The CLI ignored SIGINT: end its whole group now.
                    run.proc.terminate(Duration::ZERO).await;
                    return RunEnd::Cancelled;
                }
            }
        }
        // stdout closed: the process is ending.
        let wait = match cancel_at {
            Some(at) => at.saturating_duration_since(Instant::now()),
            None => Duration::from_millis(500),
        };
        let status = match exited {
            Some(s) => Some(s),
            None => match tokio::time::timeout(wait, run.proc.wait()).await {
                Ok(Ok(s)) => Some(s),
                _ => run.proc.terminate(Duration::ZERO).await,
            },
        };
        // Grandchildren (a tool's `sleep`) share the group: end them too.
        run.proc.terminate(Duration::ZERO).await;
        if cancel_at.is_some() {
            return RunEnd::Cancelled;
        }
        let report = run.proc.exit_report(status);
        let failed = !status.is_some_and(|s| s.success());
        if run.resumed.is_some() && !run.saw_thread && failed {
            let stderr = run.proc.stderr_tail();
            let detail = stderr
                .lines()
                .find(|l| l.contains("Error"))
                .map(str::to_owned)
                .unwrap_or(report);
            return RunEnd::Stale(detail);
        }
        let message = match run.turn.last_error() {
            Some(e) => format!("{e}\n({report})"),
            None if failed => report,
            None => format!("codex exec ended without finishing the turn ({report})"),
        };
        RunEnd::Failed(message)
    }

    /// Translates one stdout line; true once the turn finished.
    fn feed(&mut self, line: &str, run: &mut Run, ctx: &mut TurnCtx) -> bool {
        for out in run.turn.line(line) {
            self.handle(out, run, ctx);
        }
        run.turn.finished()
    }

    fn handle(&mut self, out: Out, run: &mut Run, ctx: &mut TurnCtx) {
        match out {
            Out::Thread { id, .. } => {
                run.saw_thread = true;
                if self.thread.as_deref() != Some(id.as_str()) {
                    self.usage.reset();
                    self.thread = Some(id);
                    announce(&self.events, self.thread.as_deref(), self.model.as_deref());
                }
            }
            Out::Started => self.start_response(ctx),
            Out::Event(p) => {
                self.start_response(ctx);
                self.emit(&ctx.turn_id, p);
            }
            Out::Finished(mut p) => {
                if let Payload::ResponseDone { usage, .. } = &mut p
                    && let Some(total) = usage.take()
                {
                    *usage = self.usage.turn(run.resumed.is_some(), total);
                }
                self.start_response(ctx);
                self.emit(&ctx.turn_id, p);
            }
            Out::Diagnostic(level, message) => self.diagnostic(level, message),
        }
    }
}

/// After `turn.completed` the CLI still writes its rollout (the thread's
/// history on disk) before it exits; let it, so the next `resume` sees it.
async fn settle(run: &mut Run) {
    let drain = async {
        while let Ok(Some(_)) = run.lines.next_line().await {}
        run.proc.wait().await
    };
    if tokio::time::timeout(Duration::from_secs(5), drain)
        .await
        .is_err()
    {
        tracing::warn!("codex exec did not exit after its turn; ending it");
    }
    run.proc.terminate(Duration::from_millis(500)).await;
}
