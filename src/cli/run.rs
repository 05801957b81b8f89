//! `hive run --agent ID [--json] PROMPT`: one turn, headless.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::Cli;
use crate::config::{AgentConfig, Config};
use crate::event::Origin;
use crate::history;
use crate::provider::{DiagnosticLevel, PermissionDecision, ProviderSpec, Registry};
use crate::runner::{
    Decider, PaneEvent, PaneUpdate, RunnerCommand, RunnerHandle, RunnerOptions, SubmitMode,
    spawn_runner,
};
use crate::upsert::{TurnEvent, UpsertKind, UpsertStatus};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Agent id from the config.
    #[arg(long)]
    pub agent: String,
    /// Print every upsert and turn event as one JSON line.
    #[arg(long)]
    pub json: bool,
    /// Resume the agent's session with this handle (Claude session id, Codex thread id…);
    /// by default the agent's last session is resumed (`--fresh` starts a new one).
    #[arg(long, value_name = "HANDLE")]
    pub resume: Option<String>,
    /// The message to send.
    pub prompt: String,
}

pub(super) fn run(cli: &Cli, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(cli.config.as_deref(), &Registry::builtin())?;
    let agent = in_worktree(&config, find_agent(&config, &args.agent)?)?;
    let factory = Registry::builtin().get(&agent.provider)?;
    let (options, resume) = open_session(cli, args, &config, &agent);
    let rt = super::runtime()?;
    let code = rt.block_on(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let spec = ProviderSpec { agent, resume };
        let runner = spawn_runner(0, factory, spec, options, tx)?;
        runner.send(RunnerCommand::Submit {
            text: args.prompt.clone(),
            mode: SubmitMode::Auto,
        });
        let mut out = Output::new(args);
        let code = drive(&runner, &mut rx, &mut out).await?;
        out.finish()?;
        // Let the runner kill its provider before the runtime goes away
        // (bounded: kill_all below sweeps whatever is left).
        let _ = tokio::time::timeout(Duration::from_millis(50), runner.shutdown()).await;
        Ok::<_, anyhow::Error>(code)
    })?;
    crate::provider::process::kill_all();
    Ok(code)
}

/// An agent with `worktree` runs in its worktree here too, never in the
/// shared checkout.
fn in_worktree(config: &Config, agent: AgentConfig) -> anyhow::Result<AgentConfig> {
    let id = agent.id.clone();
    let mut agents = [agent];
    for (_, result) in crate::worktree::prepare(&mut agents, config.worktrees.root.as_deref()) {
        result.with_context(|| format!("agent `{id}` wants a worktree"))?;
    }
    let [agent] = agents;
    Ok(agent)
}

fn find_agent(config: &Config, id: &str) -> anyhow::Result<AgentConfig> {
    if let Some(agent) = config.agent(id) {
        return Ok(agent.clone());
    }
    let known: Vec<_> = config.agents.iter().map(|a| a.id.as_str()).collect();
    bail!(
        "no agent `{id}` in {}; agents: {}",
        config.source.describe(),
        known.join(", ")
    );
}

/// Continues the agent's history session and records this turn into it:
/// the runner's options and the session to resume. The stored queue is the
/// console's: `hive run` neither shows nor drains it.
fn open_session(
    cli: &Cli,
    args: &RunArgs,
    config: &Config,
    agent: &AgentConfig,
) -> (RunnerOptions, Option<String>) {
    let history = history::open_pane_in(
        &crate::project::Project::open(config).store(),
        agent,
        &history::OpenOptions {
            fresh: cli.fresh,
            track_queue: false,
            tail_records: 0,
        },
    );
    for w in &history.warnings {
        eprintln!("hive: history: {w}");
    }
    let options = RunnerOptions {
        processor: config.processor_config(),
        interrupt_timeout: Duration::from_millis(config.ui.interrupt_timeout_ms),
        stall_after: Duration::from_secs(config.ui.stall_after_s.max(1)),
        initial_queue: Vec::new(),
        accounts: config.accounts_of(&agent.provider).cloned().collect(),
        recorder: history.recorder,
        live_every: None,
        background_every: None,
        focused: true,
        prices: std::sync::Arc::new(config.prices.clone()),
        sample_every: None,
        hive_budget: crate::runner::budget::HiveBudget::new(
            config.budget.usd,
            config.budget.tokens,
        ),
        // The gate answers first, as in the server; a card it leaves is
        // denied below (nobody here to ask).
        policy: policy(config, agent),
    };
    (options, args.resume.clone().or(history.resume))
}

/// `agent`'s approval policy (docs/policy.md), on the project's audit log
/// and learned rules, as its panes in the server have.
fn policy(config: &Config, agent: &AgentConfig) -> Option<crate::policy::PanePolicy> {
    let cwd = crate::provider::process::working_dir(agent).ok()?;
    let state = crate::project::Project::of(&config.source).dir_in(&crate::paths::state_dir());
    let audit = std::sync::Arc::new(crate::policy::audit::Audit::in_dir(&state));
    let learned = std::sync::Arc::new(crate::policy::learned::LearnedRules::in_dir(&state));
    config.pane_policy(agent, cwd, audit, learned)
}

/// Runs the turn to its end. The first Ctrl-C interrupts the turn (it then
/// ends as cancelled); a second one, or SIGTERM, gives up at once.
async fn drive(
    runner: &RunnerHandle,
    rx: &mut mpsc::UnboundedReceiver<PaneUpdate>,
    out: &mut Output<'_>,
) -> anyhow::Result<ExitCode> {
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut interrupts = 0;
    loop {
        let update = tokio::select! {
            u = rx.recv() => u,
            _ = sigint.recv() => {
                interrupts += 1;
                if interrupts == 1 {
                    runner.send(RunnerCommand::Interrupt);
                    continue;
                }
                return Ok(ExitCode::from(130));
            }
            _ = sigterm.recv() => return Ok(ExitCode::from(143)),
        };
        let Some(update) = update else {
            bail!("the runner stopped without finishing the turn");
        };
        if let Some(code) = out.event(update.event, runner)? {
            return Ok(code);
        }
    }
}

/// What `hive run` prints: JSON lines, or the agent's final text.
struct Output<'a> {
    args: &'a RunArgs,
    stdout: std::io::StdoutLock<'static>,
    final_text: String,
}

impl<'a> Output<'a> {
    fn new(args: &'a RunArgs) -> Self {
        Self {
            args,
            stdout: std::io::stdout().lock(),
            final_text: String::new(),
        }
    }

    /// Handles one runner event; the exit code once the turn is over.
    fn event(
        &mut self,
        event: PaneEvent,
        runner: &RunnerHandle,
    ) -> anyhow::Result<Option<ExitCode>> {
        let json = self.args.json;
        match event {
            PaneEvent::Upsert(u) => {
                if json {
                    writeln!(self.stdout, "{}", serde_json::to_string(&u)?)?;
                } else if let (UpsertStatus::Complete, UpsertKind::Message { content, origin }) =
                    (u.status, &u.kind)
                    && *origin == Origin::Agent
                {
                    if !self.final_text.is_empty() {
                        self.final_text.push_str("\n\n");
                    }
                    content.with_str(|s| self.final_text.push_str(s));
                }
            }
            PaneEvent::Turn(t) => {
                if json {
                    writeln!(self.stdout, "{}", serde_json::to_string(&t)?)?;
                }
                return Ok(turn_end(t));
            }
            PaneEvent::Notice { level, text } if level != DiagnosticLevel::Info || !json => {
                eprintln!("hive: {}", for_stderr(&text));
            }
            PaneEvent::HistoryNotSaved(reason) => {
                eprintln!("hive: {}: {reason}", crate::runner::HISTORY_NOT_SAVED);
            }
            PaneEvent::Permission(req) => {
                // Headless: nobody can answer, so say so rather than hang.
                eprintln!(
                    "hive: {} asks permission for {}; denied (no console to ask in)",
                    self.args.agent,
                    for_stderr(&req.tool_name)
                );
                runner.send(RunnerCommand::Permission {
                    request_id: req.request_id,
                    decision: PermissionDecision::Deny {
                        reason: "hive run is headless; run the console to approve".into(),
                    },
                    by: Decider::Headless,
                });
            }
            _ => {}
        }
        Ok(None)
    }

    /// Prints the final text (plain mode) and flushes.
    fn finish(mut self) -> anyhow::Result<()> {
        if !self.args.json && !self.final_text.is_empty() {
            let tty = std::io::IsTerminal::is_terminal(&self.stdout);
            writeln!(
                self.stdout,
                "{}",
                crate::sanitize::for_output(&self.final_text, tty)
            )?;
        }
        self.stdout.flush().context("writing output")
    }
}

/// The exit code when `t` ends the turn.
fn turn_end(t: TurnEvent) -> Option<ExitCode> {
    match t {
        TurnEvent::TurnStarted { .. } => None,
        TurnEvent::TurnComplete { .. } => Some(ExitCode::SUCCESS),
        TurnEvent::TurnError {
            error_code,
            error_message,
            ..
        } => {
            eprintln!(
                "hive: turn failed [{error_code}]: {}",
                for_stderr(&error_message)
            );
            Some(ExitCode::FAILURE)
        }
    }
}

/// Agent-written text bound for stderr, neutralised when that is a terminal.
fn for_stderr(text: &str) -> std::borrow::Cow<'_, str> {
    crate::sanitize::for_output(text, std::io::IsTerminal::is_terminal(&std::io::stderr()))
}
