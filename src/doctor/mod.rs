//! `hive doctor`: can each configured agent start, and if not, what to do.
//!
//! For the config: where it came from and its warnings. For each agent:
//! the program on PATH and its version against the tested pins, auth
//! present (names only, never a value), a dry start with its time, the
//! cwd, the shell of a terminal pane. What an agent needs comes from its
//! provider (`provider::doctor`); this module runs the checks and
//! `render` prints them.

mod account;
mod exec_hosts;
pub mod hosts;
mod instructions;
mod mcp;
mod pins;
pub mod render;
mod run;

/// `hive init` finds the CLIs as the agents' spawn would.
pub(crate) use run::find_program;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{AgentConfig, Config};
use crate::provider::doctor::{Auth, DryStart, Facts, Probe};

/// What the checks look at: hive's environment, or a fake one in tests.
#[derive(Debug, Clone)]
pub struct Env {
    pub path: OsString,
    pub home: PathBuf,
    /// Where hive runs: relative agent cwds resolve against it.
    pub cwd: PathBuf,
    pub vars: HashMap<String, String>,
}

impl Env {
    pub fn current() -> Self {
        let vars: HashMap<String, String> = std::env::vars().collect();
        Self {
            path: std::env::var_os("PATH").unwrap_or_default(),
            home: vars.get("HOME").map(PathBuf::from).unwrap_or_default(),
            cwd: std::env::current_dir().unwrap_or_default(),
            vars,
        }
    }

    /// A path for people: `~/...` under the home directory.
    pub fn show(&self, p: &Path) -> String {
        match p.strip_prefix(&self.home) {
            Ok(rest) if !self.home.as_os_str().is_empty() => {
                format!("~/{}", rest.display())
            }
            _ => p.display().to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Ok,
    Info,
    Warn,
    /// The agent cannot start.
    Fail,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub level: Level,
    pub detail: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) elapsed_ms: Option<u64>,
}

impl Check {
    fn new(name: &'static str, level: Level, detail: impl Into<String>) -> Self {
        Self {
            name,
            level,
            detail: detail.into(),
            fix: None,
            elapsed_ms: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentReport {
    pub id: String,
    pub provider: String,
    pub(crate) can_start: bool,
    pub checks: Vec<Check>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigReport {
    pub source: String,
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub config: ConfigReport,
    pub agents: Vec<AgentReport>,
    /// Each `[[host]]`: reached, its hive, its agents.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<hosts::HostReport>,
}

impl Report {
    /// A config that could not be read: nothing else to check.
    pub(crate) fn config_error(source: String, error: String) -> Self {
        Self {
            config: ConfigReport {
                source,
                warnings: Vec::new(),
                error: Some(error),
            },
            agents: Vec::new(),
            hosts: Vec::new(),
        }
    }

    /// True when the config loaded and every agent can start.
    pub fn ok(&self) -> bool {
        self.config.error.is_none()
            && self.agents.iter().all(|a| a.can_start)
            && self.hosts.iter().all(hosts::HostReport::ok)
    }

    /// Timings vary run to run; tests pin them.
    pub fn zero_times(&mut self) {
        for c in self.agents.iter_mut().flat_map(|a| a.checks.iter_mut()) {
            if c.elapsed_ms.is_some() {
                c.elapsed_ms = Some(0);
            }
        }
    }
}

/// Checks every agent of `config` (in parallel: dry starts take time).
pub fn diagnose(config: &Config, warnings: Vec<String>, env: &Env) -> Report {
    let agents = std::thread::scope(|s| {
        let handles: Vec<_> = config
            .agents
            .iter()
            .map(|a| s.spawn(move || check_agent(a, env)))
            .collect();
        handles
            .into_iter()
            .zip(&config.agents)
            .map(|(h, a)| {
                h.join().unwrap_or_else(|_| AgentReport {
                    id: a.id.clone(),
                    provider: a.provider.clone(),
                    can_start: false,
                    checks: vec![Check::new("doctor", Level::Fail, "the check itself failed")],
                })
            })
            .collect()
    });
    Report {
        config: ConfigReport {
            source: config.source.describe(),
            warnings,
            error: None,
        },
        agents,
        hosts: hosts::check_hosts(config),
    }
}

pub fn check_agent(agent: &AgentConfig, env: &Env) -> AgentReport {
    let var = |name: &str| env.vars.get(name).cloned();
    let probe = Probe {
        var: &var,
        home: &env.home,
    };
    let mut checks = Vec::new();
    match crate::provider::Registry::builtin().facts(agent, &probe) {
        Ok(facts) => {
            let cwd = cwd(agent, env);
            // Without its cwd the agent cannot start; a dry start would only say so again.
            let can_try = cwd.level != Level::Fail;
            checks.push(cwd);
            checks.extend(worktree_check(agent, env));
            program_checks(agent, &facts, env, can_try, &mut checks);
            if let Some(auth) = &facts.auth {
                checks.push(auth_check(agent, auth, env));
            }
            checks.extend(mcp::check(agent));
            let dir = env.cwd.join(agent.cwd.as_deref().unwrap_or(Path::new("")));
            checks.extend(instructions::check(agent, &dir));
            checks.extend(account::check(agent));
            checks.extend(exec_hosts::check_limits(agent));
        }
        Err(e) => checks.push(
            Check::new("config", Level::Fail, e)
                .fix("fix this agent's [[agent]] table in the config"),
        ),
    }
    AgentReport {
        id: agent.id.clone(),
        provider: agent.provider.clone(),
        can_start: checks.iter().all(|c| c.level != Level::Fail),
        checks,
    }
}

fn cwd(agent: &AgentConfig, env: &Env) -> Check {
    let dir = match &agent.cwd {
        Some(d) => env.cwd.join(d),
        None => env.cwd.clone(),
    };
    let shown = env.show(&dir);
    if !dir.is_dir() {
        return Check::new("cwd", Level::Fail, format!("{shown} does not exist"))
            .fix("create it, or change `cwd` in the agent's table");
    }
    if !run::writable(&dir) {
        return Check::new("cwd", Level::Warn, format!("{shown} is not writable"))
            .fix("the agent cannot edit files there; fix its permissions or `cwd`");
    }
    Check::new("cwd", Level::Ok, format!("{shown} (writable)"))
}

/// Agents with `worktree`: the repository, and their worktree if it exists
/// (a stale one, whose directory is gone, is a warning). Default root only.
fn worktree_check(agent: &AgentConfig, env: &Env) -> Option<Check> {
    agent.worktree_spec(None)?;
    let dir = agent
        .cwd
        .as_ref()
        .map_or_else(|| env.cwd.clone(), |d| env.cwd.join(d));
    let repo = match crate::worktree::find_repo(&dir) {
        Ok(r) => r,
        Err(e) => {
            return Some(
                Check::new("worktree", Level::Fail, e.to_string())
                    .fix("`worktree = true` needs a cwd inside a git repository"),
            );
        }
    };
    let found = crate::worktree::list(&repo, None)
        .ok()?
        .into_iter()
        .find(|w| w.agent_id == agent.id);
    Some(match found {
        None => Check::new("worktree", Level::Info, "made on first start"),
        Some(w) if w.missing => Check::new(
            "worktree",
            Level::Warn,
            format!("stale: {} is gone", env.show(&w.path)),
        )
        .fix("`hive worktree prune` forgets it (its branch keeps any commits)"),
        Some(w) => Check::new(
            "worktree",
            Level::Ok,
            format!(
                "{} on {} ({})",
                env.show(&w.path),
                w.branch.as_deref().unwrap_or("(detached)"),
                w.describe_work()
            ),
        ),
    })
}

fn program_checks(
    agent: &AgentConfig,
    facts: &Facts,
    env: &Env,
    can_try: bool,
    checks: &mut Vec<Check>,
) {
    let Some((program, lead)) = &facts.program else {
        // A scenario file, or an agent loop inside hive (the openai provider).
        let what = if agent.script.is_some() {
            "scripted agent: no program to start"
        } else {
            "runs inside hive: no program to start"
        };
        checks.push(Check::new("start", Level::Ok, what));
        return;
    };
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pin = pins::pin_for(&name);
    let label = if facts.start == DryStart::Shell {
        "shell"
    } else {
        "program"
    };
    let Some(path) = run::find_program(program, env) else {
        let install = match &pin {
            Some(p) => format!("install it (npm install -g {}@{})", p.package, p.version),
            None => "install it".to_owned(),
        };
        checks.push(
            Check::new(label, Level::Fail, format!("`{program}` not found on PATH")).fix(format!(
                "{install}, or set `command` in the agent's table to its path"
            )),
        );
        return;
    };
    checks.push(Check::new(label, Level::Ok, env.show(&path)));
    let args: Vec<String> = match facts.start {
        DryStart::Version | DryStart::VersionOrServe => lead
            .iter()
            .cloned()
            .chain(["--version".to_owned()])
            .collect(),
        DryStart::Shell => vec!["-c".into(), "exit".into()],
        DryStart::None => return,
    };
    if !can_try {
        checks.push(Check::new(
            "dry start",
            Level::Info,
            "not tried: no cwd to start in",
        ));
        return;
    }
    let shown = format!("`{} {}`", name, args.join(" "));
    let tried = run::dry_start(&path, &args, agent, env);
    let mut check = dry_start_check(&tried, &shown, facts.start);
    check.elapsed_ms = Some(tried.elapsed.as_millis() as u64);
    checks.push(check);
    let answered = matches!(tried.outcome, run::Outcome::Exited(0));
    if answered && matches!(facts.start, DryStart::Version | DryStart::VersionOrServe) {
        checks.push(version_check(&tried.output, pin.as_ref()));
    }
}

/// What the dry start of `shown` told.
fn dry_start_check(tried: &run::Tried, shown: &str, start: DryStart) -> Check {
    match &tried.outcome {
        run::Outcome::Exited(0) => Check::new("dry start", Level::Ok, format!("{shown} exited 0")),
        run::Outcome::Running if start == DryStart::VersionOrServe => Check::new(
            "dry start",
            Level::Ok,
            format!("{shown} started and kept serving; stopped it"),
        ),
        run::Outcome::Running => Check::new(
            "dry start",
            Level::Fail,
            format!(
                "{shown} did not finish within {} s",
                run::DRY_START_LIMIT.as_secs()
            ),
        )
        .fix("run it by hand to see what it waits for"),
        run::Outcome::Exited(code) => Check::new(
            "dry start",
            Level::Fail,
            format!("{shown} failed with exit status {code}"),
        )
        .fix(format!(
            "it said \"{}\"; run it by hand to see more (reinstalling often helps)",
            tried.first_line()
        )),
        run::Outcome::Error(e) => Check::new(
            "dry start",
            Level::Fail,
            format!("{shown} could not be started: {e}"),
        )
        .fix("check the file is an executable program"),
    }
}

fn version_check(output: &str, pin: Option<&pins::Pin>) -> Check {
    let Some(found) = pins::parse_version(output) else {
        return Check::new("version", Level::Info, "not reported by `--version`");
    };
    let Some(pin) = pin else {
        return Check::new(
            "version",
            Level::Info,
            format!("{found} (hive has no tested version on record)"),
        );
    };
    match pins::compare(&found, pin.version) {
        std::cmp::Ordering::Equal => Check::new(
            "version",
            Level::Ok,
            format!("{found} (the version hive was tested with)"),
        ),
        std::cmp::Ordering::Greater => Check::new(
            "version",
            Level::Info,
            format!("{found} (newer than the tested {})", pin.version),
        )
        .fix("should work; if something breaks, try the tested version"),
        std::cmp::Ordering::Less => Check::new(
            "version",
            Level::Warn,
            format!("{found} (older than the tested {})", pin.version),
        )
        .fix(format!(
            "update: npm install -g {}@{}",
            pin.package, pin.version
        )),
    }
}

fn auth_check(agent: &AgentConfig, auth: &Auth, env: &Env) -> Check {
    let set = |name: &&&str| {
        agent.env.get(**name).is_some_and(|v| !v.is_empty())
            || env.vars.get(**name).is_some_and(|v| !v.is_empty())
    };
    if let Some(name) = auth.env.iter().find(set) {
        return Check::new("auth", Level::Ok, format!("{name} is set"));
    }
    if let Some(custom) = &auth.custom {
        return Check::new("auth", Level::Ok, custom.clone());
    }
    if let Some(file) = auth.files.iter().find(|f| f.is_file()) {
        return Check::new("auth", Level::Ok, format!("login file {}", env.show(file)));
    }
    let files: Vec<_> = auth.files.iter().map(|f| env.show(f)).collect();
    let mut detail = format!("none of {} is set", auth.env.join(", "));
    if !files.is_empty() {
        detail.push_str(&format!(" and no {}", files.join(" or ")));
    }
    Check::new("auth", Level::Warn, detail).fix(auth.fix)
}
