//! The `codex` provider: drives OpenAI's Codex CLI through one of its two
//! machine interfaces (realcli/README.md "Codex 0.169.0"):
//!
//! - `app-server` (default): one persistent `codex app-server` per pane,
//!   JSON-RPC over stdio with streamed deltas, interrupt, steer and approvals;
//! - `exec`: one `codex exec --json` process per turn, later turns
//!   continuing the thread with `resume <thread_id>` (seed 000 mapping table).
//!
//! Both share the item mapping in `items`, so a command, a file change or an
//! unknown item looks the same in a pane whichever transport produced it.

pub mod app_server;
pub(crate) mod doctor;
pub mod exec;
pub(crate) mod import;
pub mod items;
mod rollout;
pub(crate) mod settings;

use std::sync::Arc;

use super::{
    Capabilities, EventSink, ProviderEvent, ProviderFactory, ProviderHandle, ProviderSpec,
    SessionInfo, Spawned,
};
use crate::config::AgentConfig;

pub(crate) use settings::{CodexSettings, Transport};

/// The provider id in `response_start` and on thinking items.
pub(crate) const PROVIDER_ID: &str = "codex";

/// The `codex` provider as the registry knows it. hive's operations reach
/// codex as an MCP server on its command line (`-c mcp_servers.hive…`).
pub(crate) fn descriptor() -> super::ProviderDescriptor {
    super::ProviderDescriptor {
        doctor: |agent, probe| Ok(doctor::facts(agent, probe)),
        importer: Some(&import::Rollout),
        npm: &[super::NpmProgram {
            program: "codex",
            package: "@openai/codex",
        }],
        operations: super::operations::Operations::Mcp(None),
        mcp_channel: Some("`-c mcp_servers.NAME.*` overrides on its command line"),
        ..super::ProviderDescriptor::bare("codex", std::sync::Arc::new(CodexFactory))
    }
}

pub(crate) struct CodexFactory;

impl ProviderFactory for CodexFactory {
    fn capabilities(&self, agent: &AgentConfig) -> Capabilities {
        let transport = CodexSettings::from_agent(agent)
            .map(|s| s.transport)
            .unwrap_or_default();
        match transport {
            // The thread keeps a failed turn's prompt (issue 46 item 4).
            Transport::AppServer => Capabilities {
                queue_while_streaming: true,
                permissions: true,
                images: true,
                keeps_failed_prompt: true,
                ..Capabilities::structured()
            },
            // One process per turn: nothing can be handed to it mid-turn, so
            // the runner queues; SIGINT is the only interrupt. Model, effort
            // and images (`--image`) go on the next turn's command line.
            Transport::Exec => Capabilities {
                images: true,
                keeps_failed_prompt: true,
                ..Capabilities::structured()
            },
        }
    }

    fn spawn(&self, spec: ProviderSpec, events: EventSink) -> Spawned {
        let settings = Arc::new(CodexSettings::from_agent(&spec.agent)?);
        let resume = spec.resume;
        Ok(ProviderHandle::spawn(move |rx| async move {
            match settings.transport {
                Transport::Exec => exec::run(settings, resume, events, rx).await,
                Transport::AppServer => app_server::run(settings, resume, events, rx).await,
            }
        }))
    }
}

/// Announces what is known about the session (resume handle, model).
pub(crate) fn announce(events: &EventSink, thread: Option<&str>, model: Option<&str>) {
    let _ = events.send(ProviderEvent::Session(SessionInfo {
        resume_handle: thread.map(str::to_owned),
        model: model.map(str::to_owned),
        commands: Vec::new(),
    }));
}

pub(crate) use super::json::excerpt;
