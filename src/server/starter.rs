//! Starting a pane's runner (at start and for a pane made at runtime),
//! and a pane whose worktree setup ran in the background coming up once
//! it ended.

use std::time::Duration;

use tokio::sync::mpsc;

use super::pane::PaneSlot;
use crate::config::Config;
use crate::panes::Started;
use crate::protocol::snapshot::Restored;
use crate::provider::{ProviderSpec, Registry};
use crate::runner::{PaneUpdate, RunnerHandle, RunnerOptions, spawn_runner};

/// What starting a pane's runner needs, at start and for a pane made at
/// runtime.
pub(super) struct Starter {
    pub(super) config: Config,
    /// The project's history (`crate::project`).
    pub(super) store: crate::history::Store,
    registry: Registry,
    tx: mpsc::UnboundedSender<PaneUpdate>,
    setups: mpsc::UnboundedSender<SetupDone>,
    socket: std::path::PathBuf,
    hive_budget: Option<std::sync::Arc<crate::runner::budget::HiveBudget>>,
    /// The project's approvals log (issue 47), shared by its runners.
    audit: std::sync::Arc<crate::policy::audit::Audit>,
    /// Its rules learned from `allow always`.
    learned: std::sync::Arc<crate::policy::learned::LearnedRules>,
}

impl Starter {
    pub(super) fn new(
        config: Config,
        ops_tx: mpsc::UnboundedSender<crate::ops::HiveRequest>,
        (tx, setups): (
            mpsc::UnboundedSender<PaneUpdate>,
            mpsc::UnboundedSender<SetupDone>,
        ),
        socket: std::path::PathBuf,
    ) -> Self {
        let project = crate::project::Project::of(&config.source);
        let registry = Registry::builtin()
            .for_project(crate::ops::meta::toolbox_factory(ops_tx), project.store());
        let hive_budget =
            crate::runner::budget::HiveBudget::new(config.budget.usd, config.budget.tokens);
        let state = project.dir_in(&crate::paths::state_dir());
        let audit = std::sync::Arc::new(crate::policy::audit::Audit::in_dir(&state));
        let learned = std::sync::Arc::new(crate::policy::learned::LearnedRules::in_dir(&state));
        Self {
            learned,
            store: project.store(),
            audit,
            config,
            registry,
            tx,
            setups,
            socket,
            hive_budget,
        }
    }

    /// Starts pane `i`'s runner, or first its worktree's setup in the
    /// background (the server starts the runner when it is done:
    /// `Server::set_up`).
    pub(super) fn start_or_set_up(
        &self,
        i: usize,
        pane: &mut PaneSlot,
        fresh: bool,
        ops: &mut crate::ops::OpsHost,
    ) -> Option<RunnerHandle> {
        let agent = &pane.record.agent;
        let pending = pane
            .worktree
            .as_ref()
            .filter(|w| pane.record.failed().is_none() && crate::worktree::setup_pending(agent, w));
        let Some(w) = pending.cloned() else {
            return self.start(i, pane, fresh, ops);
        };
        let shown = agent.worktree_setup.join(" ");
        let agent = agent.clone();
        pane.log.note(format!(
            "running worktree setup `{shown}`; the agent starts when it is done"
        ));
        pane.record.started = Started::SettingUp;
        let tx = self.setups.clone();
        tokio::task::spawn_blocking(move || {
            let result = crate::worktree::setup(&agent, &w).map_err(|e| e.to_string());
            let _ = tx.send(SetupDone {
                slot: i,
                fresh,
                result,
                note: None,
            });
        });
        None
    }

    /// Pane `i`'s agent again on its own session once `old` has stopped
    /// (two runners never write one session), after the `worktree_setup`
    /// of a member that has not had it; `note` is said in the pane then.
    /// The server starts it (`Server::set_up`) and sends it what was typed
    /// meanwhile.
    pub(super) fn restart_after(
        &self,
        i: usize,
        pane: &mut PaneSlot,
        old: Option<RunnerHandle>,
        note: String,
    ) {
        let agent = pane.record.agent.clone();
        let pending = pane
            .worktree
            .clone()
            .filter(|w| crate::worktree::setup_pending(&agent, w));
        if pending.is_some() {
            let shown = agent.worktree_setup.join(" ");
            pane.log.note(format!(
                "running worktree setup `{shown}`; the agent starts again when it is done"
            ));
        }
        pane.record.started = Started::SettingUp;
        let tx = self.setups.clone();
        tokio::spawn(async move {
            if let Some(r) = old {
                r.shutdown().await;
            }
            let result = match pending {
                Some(w) => tokio::task::spawn_blocking(move || {
                    crate::worktree::setup(&agent, &w).map_err(|e| e.to_string())
                })
                .await
                .unwrap_or_else(|e| Err(format!("worktree setup: {e}"))),
                None => Ok(None),
            };
            let _ = tx.send(SetupDone {
                slot: i,
                fresh: false,
                result,
                note: Some(note),
            });
        });
    }

    pub(super) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The project's approvals log.
    pub(super) fn audit(&self) -> &crate::policy::audit::Audit {
        &self.audit
    }

    /// Its rules learned from `allow always`.
    pub(super) fn learned(&self) -> &crate::policy::learned::LearnedRules {
        &self.learned
    }

    /// Starts pane `i`'s runner on its restored history; a provider that
    /// cannot start leaves its error in the pane instead of stopping the
    /// server.
    pub(super) fn start(
        &self,
        i: usize,
        pane: &mut PaneSlot,
        fresh: bool,
        ops: &mut crate::ops::OpsHost,
    ) -> Option<RunnerHandle> {
        // A pane that failed before starting (no worktree) stays stopped.
        if pane.record.failed().is_some() {
            return None;
        }
        let config = &self.config;
        let agent = pane.record.agent.clone();
        let agent = &agent;
        let mut history = crate::history::open_pane(&self.store, agent, fresh);
        // `agent.read` sees the turns from before a restart too.
        ops.restore(i, &history.items);
        pane.log.reset(Restored::of(&history));
        // Every door says what its session used before the next turn.
        let restoring = pane.log.restoring();
        pane.record.restore(restoring);
        // What the worktree's setup printed, in the pane (issue 31).
        if let Some(text) = pane.worktree.as_ref().and_then(|w| w.setup_output.clone()) {
            pane.log.note(text);
        }
        let options = RunnerOptions {
            processor: config.processor_config(),
            interrupt_timeout: Duration::from_millis(config.ui.interrupt_timeout_ms),
            stall_after: Duration::from_secs(config.ui.stall_after_s.max(1)),
            initial_queue: std::mem::take(&mut history.queue),
            accounts: config.accounts_of(&agent.provider).cloned().collect(),
            recorder: history.recorder.take(),
            live_every: crate::config::live_every(config),
            background_every: crate::config::background_every(config),
            focused: false,
            prices: std::sync::Arc::new(config.prices.clone()),
            sample_every: Some(Duration::from_secs(1)),
            hive_budget: self.hive_budget.clone(),
            policy: self.policy(agent),
        };
        let mut agent_spec = self.registry.with_hive_mcp(agent, Some(&self.socket));
        crate::provider::preset::apply(&mut agent_spec);
        let spec = ProviderSpec {
            agent: agent_spec,
            resume: history.resume.take(),
        };
        let started = self
            .registry
            .get(&agent.provider)
            .and_then(|factory| spawn_runner(i, factory, spec, options, self.tx.clone()));
        match started {
            Ok(h) => {
                pane.record.started = Started::Running(h.capabilities);
                Some(h)
            }
            Err(e) => {
                tracing::warn!(agent = %agent.id, "cannot start: {e}");
                pane.record.started = Started::Failed(e.to_string());
                None
            }
        }
    }
}

impl Starter {
    /// `agent`'s approval policy, when it has one (a preset or a rule).
    fn policy(&self, agent: &crate::config::AgentConfig) -> Option<crate::policy::PanePolicy> {
        let cwd = crate::provider::process::working_dir(agent).ok()?;
        let (audit, learned) = (self.audit.clone(), self.learned.clone());
        self.config.pane_policy(agent, cwd, audit, learned)
    }
}

/// A worktree setup that ended: for slot `slot`, what it printed or why it
/// failed.
pub(super) struct SetupDone {
    pub(super) slot: usize,
    pub(super) fresh: bool,
    pub(super) result: Result<Option<String>, String>,
    /// Said in the pane once its agent is up (why it started again).
    pub(super) note: Option<String>,
}
