//! `hive run --agent ID [--json] PROMPT`: one turn, headless.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use tokio::sync::mpsc;

use super::Cli;
use crate::config::Config;
use crate::event::Origin;
use crate::history;
use crate::provider::{DiagnosticLevel, ProviderSpec, Registry};
use crate::runner::{PaneEvent, RunnerCommand, RunnerOptions, SubmitMode, spawn_runner};
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

pub fn run(cli: &Cli, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(cli.config.as_deref())?;
    let Some(agent) = config.agent(&args.agent).cloned() else {
        let known: Vec<_> = config.agents.iter().map(|a| a.id.as_str()).collect();
        bail!(
            "no agent `{}` in {}; agents: {}",
            args.agent,
            config.source.describe(),
            known.join(", ")
        );
    };
    // An agent with `worktree` runs in its worktree here too, never in the shared checkout.
    let mut agents = [agent];
    for (_, result) in crate::worktree::prepare(&mut agents, config.worktrees.root.as_deref()) {
        result.with_context(|| format!("agent `{}` wants a worktree", args.agent))?;
    }
    let [agent] = agents;
    let registry = Registry::builtin();
    let factory = registry.get(&agent.provider)?;
    // Continue the agent's history session and record this turn into it.
    // The stored queue is the console's: `hive run` neither shows nor drains it.
    let history = history::open_pane_in(
        &history::Store::user(),
        &agent,
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
        interrupt_timeout: std::time::Duration::from_millis(config.ui.interrupt_timeout_ms),
        initial_queue: Vec::new(),
        recorder: history.recorder,
    };
    let resume = args.resume.clone().or(history.resume);
    let rt = super::runtime()?;
    let code =
        rt.block_on(async {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let spec = ProviderSpec { agent, resume };
            let runner = spawn_runner(0, factory, spec, options, tx)?;
            runner.send(RunnerCommand::Submit {
                text: args.prompt.clone(),
                mode: SubmitMode::Auto,
            });
            use tokio::signal::unix::{SignalKind, signal};
            // First Ctrl-C interrupts the turn (it then ends as cancelled); a
            // second one, or SIGTERM, gives up at once.
            let mut sigint = signal(SignalKind::interrupt())?;
            let mut sigterm = signal(SignalKind::terminate())?;
            let mut interrupts = 0;
            let mut stdout = std::io::stdout().lock();
            let mut final_text = String::new();
            let code = loop {
                let update = tokio::select! {
                    u = rx.recv() => u,
                    _ = sigint.recv() => {
                        interrupts += 1;
                        if interrupts == 1 {
                            runner.send(RunnerCommand::Interrupt);
                            continue;
                        }
                        break ExitCode::from(130);
                    }
                    _ = sigterm.recv() => break ExitCode::from(143),
                };
                let Some(update) = update else {
                    bail!("the runner stopped without finishing the turn");
                };
                match update.event {
                    PaneEvent::Upsert(u) => {
                        if args.json {
                            writeln!(stdout, "{}", serde_json::to_string(&u)?)?;
                        } else if let (
                            UpsertStatus::Complete,
                            UpsertKind::Message { content, origin },
                        ) = (u.status, &u.kind)
                            && *origin == Origin::Agent
                        {
                            if !final_text.is_empty() {
                                final_text.push_str("\n\n");
                            }
                            content.with_str(|s| final_text.push_str(s));
                        }
                    }
                    PaneEvent::Turn(t) => {
                        if args.json {
                            writeln!(stdout, "{}", serde_json::to_string(&t)?)?;
                        }
                        match t {
                            TurnEvent::TurnStarted { .. } => {}
                            TurnEvent::TurnComplete { .. } => break ExitCode::SUCCESS,
                            TurnEvent::TurnError {
                                error_code,
                                error_message,
                                ..
                            } => {
                                eprintln!("hive: turn failed [{error_code}]: {error_message}");
                                break ExitCode::FAILURE;
                            }
                        }
                    }
                    PaneEvent::Notice { level, text }
                        if level != DiagnosticLevel::Info || !args.json =>
                    {
                        eprintln!("hive: {text}");
                    }
                    PaneEvent::Permission(req) => {
                        // Headless: nobody can answer, so say so rather than hang.
                        eprintln!(
                            "hive: {} asks permission for {}; denied (no console to ask in)",
                            args.agent, req.tool_name
                        );
                        runner.send(RunnerCommand::Permission {
                            request_id: req.request_id,
                            decision: crate::provider::PermissionDecision::Deny {
                                reason: "hive run is headless; run the console to approve".into(),
                            },
                        });
                    }
                    _ => {}
                }
            };
            if !args.json && !final_text.is_empty() {
                writeln!(stdout, "{final_text}")?;
            }
            stdout.flush().context("writing output")?;
            // Let the runner kill its provider before the runtime goes away
            // (bounded: kill_all below sweeps whatever is left).
            let _ =
                tokio::time::timeout(std::time::Duration::from_millis(50), runner.shutdown()).await;
            Ok::<_, anyhow::Error>(code)
        })?;
    crate::provider::process::kill_all();
    Ok(code)
}
