//! `hive doctor`'s line for an agent's `[[mcp_server]]`s (issue 51): each
//! server as its vendor will be given it and through which channel. Env
//! and header values are never shown (they hold tokens), only their
//! names; an address loses its user part and query for the same reason.

use super::{Check, Level};
use crate::config::{AgentConfig, McpServerConfig};

/// The `mcp` check of `agent`, or none for an agent given no server.
pub(super) fn check(agent: &AgentConfig) -> Option<Check> {
    if agent.shared_mcp.is_empty() {
        return None;
    }
    let registry = crate::provider::Registry::builtin();
    let channel = registry
        .descriptor(&agent.provider)
        .ok()
        .and_then(|d| d.mcp_channel);
    let shown: Vec<String> = agent.shared_mcp.iter().map(describe).collect();
    let Some(channel) = channel else {
        return Some(
            Check::new(
                "mcp",
                Level::Warn,
                format!(
                    "not given: provider `{}` takes no MCP servers ({})",
                    agent.provider,
                    shown.join("; ")
                ),
            )
            .fix("set `mcp = false` on this agent"),
        );
    };
    Some(Check::new(
        "mcp",
        Level::Ok,
        format!("{} through {channel}", shown.join("; ")),
    ))
}

/// `files (stdio: npx -y mcp-files; env FILES_TOKEN)`,
/// `docs (http: https://mcp.example.com/mcp; headers Authorization)`.
fn describe(s: &McpServerConfig) -> String {
    let (how, names) = match &s.url {
        Some(url) => (
            format!("http: {}", crate::config::mcp::public_url(url)),
            (&s.headers, "headers"),
        ),
        None => {
            let line = std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            (format!("stdio: {line}"), (&s.env, "env"))
        }
    };
    let keys: Vec<&str> = names.0.keys().map(String::as_str).collect();
    let extra = if keys.is_empty() {
        String::new()
    } else {
        format!("; {} {}", names.1, keys.join(", "))
    };
    crate::sanitize::neutralize(&format!("{} ({how}{extra})", s.name)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(provider: &str) -> AgentConfig {
        let mut a = AgentConfig::new("a", provider);
        a.shared_mcp = crate::config::mcp::sample_servers();
        a
    }

    #[test]
    fn each_server_is_shown_with_its_channel_and_no_secret() {
        let c = check(&agent("claude")).expect("a check");
        assert_eq!(c.level, Level::Ok);
        assert_eq!(
            c.detail,
            "files (stdio: npx -y mcp-files /srv; env FILES_TOKEN); \
             docs (http: https://mcp.example.com/mcp; headers Authorization) \
             through `--mcp-config` (a 0600 JSON file hive writes for the pane)"
        );
        assert!(!c.detail.contains("s3cr3t"));
        let mut leaky = agent("codex");
        leaky.shared_mcp[1].url = Some("https://me:tok3n@h.example/mcp?key=tok3n".into());
        let c = check(&leaky).expect("a check");
        assert!(
            c.detail.contains("http: https://h.example/mcp;"),
            "{}",
            c.detail
        );
        assert!(!c.detail.contains("tok3n"), "{}", c.detail);
    }

    #[test]
    fn a_provider_without_mcp_is_a_warning_and_the_built_in_agent_takes_http_too() {
        let c = check(&agent("pi")).expect("a check");
        assert_eq!(c.level, Level::Warn);
        assert!(
            c.detail
                .starts_with("not given: provider `pi` takes no MCP servers")
        );
        let c = check(&agent("openai")).expect("a check");
        assert_eq!(c.level, Level::Ok, "{c:?}");
        assert!(c.detail.contains("docs (http: "), "{}", c.detail);
        let mut none = agent("claude");
        none.shared_mcp.clear();
        assert!(check(&none).is_none());
    }
}
