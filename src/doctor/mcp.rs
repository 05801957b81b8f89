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
    // The built-in agent starts stdio servers only.
    let http: Vec<&str> = agent
        .shared_mcp
        .iter()
        .filter(|s| s.url.is_some())
        .map(|s| s.name.as_str())
        .collect();
    if channel.contains("stdio servers only") && !http.is_empty() {
        return Some(
            Check::new(
                "mcp",
                Level::Warn,
                format!("{} through {channel}", shown.join("; ")),
            )
            .fix(format!(
                "{} cannot start here (HTTP); narrow `mcp = [...]` on this agent",
                http.join(", ")
            )),
        );
    }
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
            format!("http: {}", public_url(url)),
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

/// `url` without `user:password@` and without its query, where tokens go.
fn public_url(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = host.rsplit('@').next().unwrap_or(host);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_owned(),
    }
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
    fn a_provider_without_mcp_or_an_http_server_it_cannot_start_is_a_warning() {
        let c = check(&agent("pi")).expect("a check");
        assert_eq!(c.level, Level::Warn);
        assert!(
            c.detail
                .starts_with("not given: provider `pi` takes no MCP servers")
        );
        let c = check(&agent("openai")).expect("a check");
        assert_eq!(c.level, Level::Warn);
        assert!(
            c.fix
                .unwrap_or_default()
                .starts_with("docs cannot start here")
        );
        let mut none = agent("claude");
        none.shared_mcp.clear();
        assert!(check(&none).is_none());
    }
}
