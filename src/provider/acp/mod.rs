//! The `acp` provider: any Agent Client Protocol agent (claude-code-acp,
//! codex-acp, `gemini --experimental-acp`, …) driven over JSON-RPC on stdio.
//!
//! `engine` holds the protocol logic as a synchronous state machine; this
//! module owns the child process and shuttles lines, commands and timer ticks
//! between it and the engine. Protocol types come from the
//! `agent-client-protocol-schema` crate. Config: docs/acp.md.

pub mod client;
pub(crate) mod doctor;
pub mod engine;
pub mod fs;
pub(crate) mod render;
pub mod translate;

use std::path::PathBuf;
use std::time::Duration;

use agent_client_protocol_schema::v1::McpServer;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use self::engine::{Effect, Engine, EngineConfig};
use self::fs::MissingFile;
use super::paced::AgentStdout;
use super::process::{AgentProcess, CommandSpec, LineReader};
use super::{
    Capabilities, DiagnosticLevel, EventSink, ProviderCommand, ProviderError, ProviderEvent,
    ProviderFactory, ProviderHandle, ProviderSpec, Spawned,
};
use crate::config::AgentConfig;
use crate::provider::Sink;
use crate::timer;

/// After stdin closes, how long an agent gets to exit on its own (Gemini
/// does) before it is signalled.
const EOF_GRACE: Duration = Duration::from_millis(300);
/// After stdout closes, how long to wait for the exit status.
const EXIT_WAIT: Duration = Duration::from_secs(2);
/// After the agent died, time for its final stderr lines to be collected.
const STDERR_SETTLE: Duration = Duration::from_millis(100);
/// A write the agent does not read within this time means it is stuck.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// Settings from `[agent.options]` (documented in docs/acp.md).
#[derive(Debug, Clone)]
pub(crate) struct AcpOptions {
    pub mcp_servers: Vec<McpServer>,
    pub(crate) cancel_grace: Duration,
    pub(crate) kill_grace: Duration,
    pub(crate) startup_timeout: Duration,
    pub(crate) missing_file: MissingFile,
}

impl AcpOptions {
    pub(crate) fn from_config(agent: &AgentConfig) -> Result<Self, ProviderError> {
        let err = |message: String| ProviderError::config(&agent.id, message);
        let opts = &agent.options;
        let ms = |key: &str, default: u64| -> Result<Duration, ProviderError> {
            match opts.get(key) {
                None => Ok(Duration::from_millis(default)),
                Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Duration::from_millis(*n as u64)),
                Some(other) => Err(err(format!(
                    "options.{key} must be a number of milliseconds, not {other}"
                ))),
            }
        };
        let missing_file = match opts.get("missing_file").map(|v| v.as_str()) {
            None | Some(Some("empty")) => MissingFile::Empty,
            Some(Some("error")) => MissingFile::Error,
            Some(_) => {
                return Err(err(
                    "options.missing_file must be \"empty\" or \"error\"".into()
                ));
            }
        };
        let mut mcp_servers: Vec<McpServer> = match opts.get("mcp_servers") {
            None => Vec::new(),
            Some(toml::Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    mcp_server(v).map_err(|m| err(format!("options.mcp_servers[{i}]: {m}")))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(err("options.mcp_servers must be an array of tables".into())),
        };
        // `hive_tools`: hive's own server goes into `session/new` beside
        // them, then the user's `[[mcp_server]]`s.
        for server in agent.mcp_servers() {
            let what = if agent
                .hive_mcp
                .as_ref()
                .is_some_and(|h| std::ptr::eq(h, server))
            {
                "hive_tools".to_owned()
            } else {
                format!("mcp_server `{}`", server.name)
            };
            let v = toml::Value::try_from(server).map_err(|e| err(e.to_string()))?;
            mcp_servers.push(mcp_server(&v).map_err(|m| err(format!("{what}: {m}")))?);
        }
        Ok(Self {
            mcp_servers,
            cancel_grace: ms("cancel_grace_ms", 800)?,
            kill_grace: ms("kill_grace_ms", 2000)?,
            startup_timeout: ms("startup_timeout_ms", 60_000)?,
            missing_file,
        })
    }
}

/// One MCP server table in ACP's own shape; `env` and `headers` may also be
/// plain TOML tables, and missing lists default to empty.
fn mcp_server(v: &toml::Value) -> Result<McpServer, String> {
    let mut json = serde_json::to_value(v).map_err(|e| e.to_string())?;
    let Value::Object(obj) = &mut json else {
        return Err("must be a table".into());
    };
    let remote = obj.contains_key("url");
    for key in ["env", "headers"] {
        if let Some(Value::Object(map)) = obj.get(key) {
            let list: Vec<Value> = map
                .iter()
                .map(|(k, v)| serde_json::json!({"name": k, "value": v}))
                .collect();
            obj.insert(key.into(), Value::Array(list));
        }
    }
    if remote {
        obj.entry("type").or_insert_with(|| "http".into());
        obj.entry("headers")
            .or_insert_with(|| Value::Array(Vec::new()));
    } else {
        obj.entry("args")
            .or_insert_with(|| Value::Array(Vec::new()));
        obj.entry("env").or_insert_with(|| Value::Array(Vec::new()));
    }
    serde_json::from_value(json).map_err(|e| e.to_string())
}

/// The ACP agent to start and its leading arguments: `command` must name one
/// (there is no default adapter).
pub(crate) fn program(agent: &AgentConfig) -> Result<(&String, &[String]), &'static str> {
    agent.command.split_first().ok_or(
        "provider `acp` needs `command = [\"program\", ...]` naming the ACP agent \
         (e.g. [\"claude-code-acp\"], [\"codex-acp\"], [\"gemini\", \"--experimental-acp\"])",
    )
}

/// The agent's working directory as an absolute path (ACP requires one).
fn absolute_cwd(agent: &AgentConfig) -> Result<PathBuf, ProviderError> {
    let cwd = super::process::working_dir(agent)?;
    Ok(cwd.canonicalize().unwrap_or(cwd))
}

/// The `acp` provider as the registry knows it: any ACP agent, hive's
/// operations passed to it in `session/new` beside its own MCP servers.
pub(crate) fn descriptor() -> super::ProviderDescriptor {
    super::ProviderDescriptor {
        doctor: doctor::facts,
        npm: &[
            super::NpmProgram {
                program: "claude-code-acp",
                package: "@zed-industries/claude-code-acp",
            },
            super::NpmProgram {
                program: "codex-acp",
                package: "@zed-industries/codex-acp",
            },
        ],
        operations: super::operations::Operations::Mcp(None),
        mcp_channel: Some("`mcpServers` of `session/new` and `session/load`"),
        ..super::ProviderDescriptor::bare("acp", std::sync::Arc::new(AcpFactory))
    }
}

pub struct AcpFactory;

impl ProviderFactory for AcpFactory {
    fn capabilities(&self, _agent: &AgentConfig) -> Capabilities {
        // Where the agent cannot load sessions, a new one starts with a
        // notice; where it advertises no models / thought level, the pane
        // says the agent offers none.
        Capabilities {
            permissions: true,
            images: true,
            confirms_effort: true,
            ..Capabilities::structured()
        }
    }

    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned {
        let agent = &spec.agent;
        let (program, lead) =
            program(agent).map_err(|message| ProviderError::config(&agent.id, message))?;
        let options = AcpOptions::from_config(agent)?;
        let cwd = absolute_cwd(agent)?;
        let command = CommandSpec {
            program: program.clone(),
            args: lead.iter().chain(agent.args.iter()).cloned().collect(),
            cwd: Some(cwd.clone()),
            env: agent.env.clone(),
            max_line: agent.max_line_bytes,
            exec: crate::provider::process::exec_for(agent),
            limits: crate::provider::process::limits_of(agent),
        };
        let (mut process, stdout) = AgentProcess::spawn_for(&agent.id, &command, &events)?;
        // `gemini --experimental-acp` writes Gemini CLI's usual start-up noise.
        if std::path::Path::new(program).file_name() == Some(std::ffi::OsStr::new("gemini")) {
            process.set_stderr_noise(crate::provider::gemini::STDERR_NOISE);
        }
        let mut cfg = EngineConfig::new(&agent.id, cwd);
        cfg.resume = spec.resume.clone();
        cfg.mcp_servers = options.mcp_servers.clone();
        cfg.model = agent.model.clone();
        cfg.permission_mode = agent.permission_mode.clone();
        cfg.thinking = agent.thinking.clone();
        cfg.cancel_grace = options.cancel_grace;
        cfg.startup_timeout = options.startup_timeout;
        cfg.missing_file = options.missing_file;
        let engine = Engine::new(cfg);
        let kill_grace = options.kill_grace;
        Ok(ProviderHandle::spawn(move |rx| {
            run(engine, process, stdout, rx, events, kill_grace)
        }))
    }
}

/// The provider task: I/O around the engine until the agent is gone.
async fn run(
    mut engine: Engine,
    mut process: AgentProcess,
    mut stdout: LineReader<AgentStdout>,
    mut rx: mpsc::UnboundedReceiver<ProviderCommand>,
    events: EventSink,
    kill_grace: Duration,
) {
    engine.start();
    flush(&mut engine, &mut process, &events).await;
    loop {
        let deadline = engine.next_deadline();
        tokio::select! {
            line = stdout.next_line() => match line {
                Ok(Some(line)) => engine.on_line(&line, Instant::now()),
                Ok(None) | Err(_) => {
                    let status = match tokio::time::timeout(EXIT_WAIT, process.wait()).await {
                        Ok(Ok(s)) => Some(s),
                        _ => process.terminate(kill_grace).await,
                    };
                    // stderr is read by its own task; let it catch the last
                    // lines (the crash message) before the report is built.
                    tokio::time::sleep(STDERR_SETTLE).await;
                    let report = process.exit_report(status);
                    engine.on_exit(&report);
                    flush(&mut engine, &mut process, &events).await;
                    let _ = events.send(ProviderEvent::Exited {
                        code: status.and_then(|s| s.code()),
                        message: report,
                    });
                    return;
                }
            },
            cmd = rx.recv() => match cmd {
                Some(ProviderCommand::Kill) | None => {
                    engine.on_kill();
                    flush(&mut engine, &mut process, &events).await;
                    let status = shut_down(&mut process, kill_grace).await;
                    let _ = events.send(ProviderEvent::Exited {
                        code: status.and_then(|s| s.code()),
                        message: process.exit_report(status),
                    });
                    return;
                }
                Some(cmd) => engine.on_command(cmd, Instant::now()),
            },
            _ = timer::sleep_until(deadline), if deadline.is_some() => engine.on_timer(Instant::now()),
        }
        flush(&mut engine, &mut process, &events).await;
    }
}

/// Closes stdin, gives the agent a moment to exit on EOF, then terminates the
/// whole process group (SIGTERM, SIGKILL after `grace`). claude-code-acp and
/// codex-acp ignore EOF.
async fn shut_down(
    process: &mut AgentProcess,
    grace: Duration,
) -> Option<std::process::ExitStatus> {
    process.close_stdin();
    let _ = tokio::time::timeout(EOF_GRACE, process.wait()).await;
    // Also when it exited: stragglers in its group (tool commands) go too.
    process.terminate(grace).await
}

async fn flush(engine: &mut Engine, process: &mut AgentProcess, events: &EventSink) {
    for effect in engine.drain() {
        match effect {
            Effect::Write(line) => write_line(process, events, &line).await,
            Effect::Emit(ev) => {
                let _ = events.send(*ev);
            }
            Effect::File(job) => {
                let done = match tokio::task::spawn_blocking(move || job.run()).await {
                    Ok(done) => done,
                    Err(e) => {
                        tracing::error!(error = %e, "file request task failed");
                        continue;
                    }
                };
                if let Some(message) = done.refusal {
                    events.diagnostic(DiagnosticLevel::Warn, message);
                }
                write_line(process, events, &done.line).await;
            }
        }
    }
}

async fn write_line(process: &mut AgentProcess, events: &EventSink, line: &str) {
    match tokio::time::timeout(WRITE_TIMEOUT, process.write_line(line)).await {
        Ok(Ok(())) => {}
        // A dead agent shows up as stdout EOF right after.
        Ok(Err(e)) => tracing::debug!(error = %e, "write to agent failed"),
        Err(_) => events.diagnostic(
            DiagnosticLevel::Error,
            "the agent stopped reading its input",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hive_tools_add_hives_server_to_session_new() {
        let mut agent = AgentConfig::new("z", "acp");
        let mut table = toml::Table::new();
        table.insert("command".into(), "other-mcp".into());
        table.insert("name".into(), "other".into());
        agent.options.insert(
            "mcp_servers".into(),
            toml::Value::Array(vec![toml::Value::Table(table)]),
        );
        assert_eq!(
            AcpOptions::from_config(&agent).unwrap().mcp_servers.len(),
            1
        );
        agent.hive_mcp =
            crate::provider::operations::server_for("z", std::path::Path::new("/run/h.sock"));
        let servers = AcpOptions::from_config(&agent).unwrap().mcp_servers;
        let hive = serde_json::to_value(&servers[1]).unwrap();
        assert_eq!(hive["name"], "hive");
        assert_eq!(
            hive["args"],
            serde_json::json!(["mcp", "--socket", "/run/h.sock", "--agent", "z"])
        );
        assert_eq!(hive["env"], serde_json::json!([]));
    }

    /// Issue 51: the user's `[[mcp_server]]`s go into `session/new`'s
    /// `mcpServers` in ACP's shape, after the agent's own `options` ones.
    #[test]
    fn the_users_mcp_servers_go_into_session_new() {
        let mut agent = AgentConfig::new("z", "acp");
        agent.shared_mcp = crate::config::mcp::sample_servers();
        let servers = AcpOptions::from_config(&agent).unwrap().mcp_servers;
        let json = serde_json::to_value(&servers).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"name": "files", "command": "npx", "args": ["-y", "mcp-files", "/srv"],
                 "env": [{"name": "FILES_TOKEN", "value": "s3cr3t-env"}]},
                {"type": "http", "name": "docs", "url": "https://mcp.example.com/mcp",
                 "headers": [{"name": "Authorization", "value": "Bearer s3cr3t-hdr"}]},
            ])
        );
    }
}
