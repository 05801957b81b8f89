//! `[[mcp_server]]`: MCP servers declared once at the top of the config and
//! given to every agent through its vendor's own channel (issue 51). Here
//! they are checked and each agent's share resolved into
//! `AgentConfig::shared_mcp`; the providers render them. The config's
//! `instructions` file is resolved beside them, the same way.

use serde::{Deserialize, Serialize};

use super::{AgentConfig, Config, McpServerConfig};

/// An agent's `mcp = true | false | ["name", …]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum McpChoice {
    /// `true`: every `[[mcp_server]]` (as unset); `false`: none.
    All(bool),
    /// Only the servers named.
    Only(Vec<String>),
}

/// The name hive's own operations server takes in every vendor's config.
const HIVE: &str = "hive";

impl Config {
    /// Every `[[mcp_server]]` well-formed and of a name of its own; each
    /// agent's `mcp` naming only declared ones; then each agent given its
    /// servers.
    pub(super) fn resolve_mcp(&mut self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for s in &self.mcp_servers {
            check_server(s)?;
            if !seen.insert(s.name.as_str()) {
                return Err(format!("mcp_server name `{}` is used twice", s.name));
            }
        }
        for a in &mut self.agents {
            a.shared_mcp = servers_for(a, &self.mcp_servers)?;
        }
        Ok(())
    }

    /// `agent`'s share of the `[[mcp_server]]`s, for an agent made after
    /// the config was loaded (a new pane of a provider, no template).
    pub fn give_mcp(&self, agent: &mut AgentConfig) -> Result<(), String> {
        agent.shared_mcp = servers_for(agent, &self.mcp_servers)?;
        Ok(())
    }

    /// An agent of `provider` made after the config was loaded (a pane
    /// made at runtime with no template): given what loading gives every
    /// `[[agent]]` table (the line cap, the `[[mcp_server]]`s), so that it
    /// starts as a configured agent of that provider would.
    pub fn runtime_agent(&self, id: &str, provider: &str) -> Result<AgentConfig, String> {
        let mut agent = AgentConfig::new(id, provider);
        agent.max_line_bytes = self.limits.max_line_bytes.max(1024);
        self.give_mcp(&mut agent)?;
        agent.instructions.clone_from(&self.instructions);
        // The `[sandbox]` default holds for a pane made at runtime too.
        agent.exec = self.exec_for(&agent)?;
        Ok(agent)
    }
}

impl Config {
    /// Each agent's instruction file: its own, else the config's; a name
    /// is a relative path inside the agent's directory.
    pub(super) fn resolve_instructions(&mut self) -> Result<(), String> {
        let bad = |what: &str, name: &str| {
            let p = std::path::Path::new(name);
            let inside = p.is_relative()
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
            (!inside || name.is_empty()).then(|| {
                format!(
                    "{what}instructions `{name}` must be a file's relative path inside the agent's directory (no `..`, not absolute)"
                )
            })
        };
        if let Some(e) = self.instructions.as_deref().and_then(|n| bad("", n)) {
            return Err(e);
        }
        for a in &mut self.agents {
            if let Some(e) = a
                .instructions
                .as_deref()
                .and_then(|n| bad(&format!("agent `{}`: ", a.id), n))
            {
                return Err(e);
            }
            if a.instructions.is_none() {
                a.instructions.clone_from(&self.instructions);
            }
        }
        Ok(())
    }
}

fn check_server(s: &McpServerConfig) -> Result<(), String> {
    let ok_name = !s.name.is_empty()
        && s.name.len() <= 64
        && s.name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    if !ok_name {
        // The name becomes a TOML key (Codex) and part of tool names
        // (`mcp__NAME__tool`), so it is kept plain.
        return Err(format!(
            "mcp_server name `{}` must be 1 to 64 letters, digits, `-` and `_`",
            s.name
        ));
    }
    if s.name == HIVE {
        return Err(format!(
            "mcp_server name `{HIVE}` is hive's own operations server's (`hive_tools`); pick another"
        ));
    }
    let what = format!("mcp_server `{}`", s.name);
    match (&s.url, s.command.is_empty()) {
        (None, true) => Err(format!(
            "{what} needs `command` (a stdio server) or `url` (an HTTP one)"
        )),
        (Some(_), false) => Err(format!(
            "{what} has both `command` and `url`; a server is one or the other"
        )),
        (Some(url), true) if !(url.starts_with("http://") || url.starts_with("https://")) => Err(
            format!("{what}: url `{url}` must start with http:// or https://"),
        ),
        (Some(_), true) if !s.args.is_empty() || !s.env.is_empty() => Err(format!(
            "{what}: `args` and `env` are for a stdio server (`command`), not a `url`"
        )),
        (None, false) if !s.headers.is_empty() => Err(format!(
            "{what}: `headers` are for an HTTP server (`url`), not a `command`"
        )),
        _ => Ok(()),
    }
}

fn servers_for(
    agent: &AgentConfig,
    declared: &[McpServerConfig],
) -> Result<Vec<McpServerConfig>, String> {
    match &agent.mcp {
        None | Some(McpChoice::All(true)) => Ok(declared.to_vec()),
        Some(McpChoice::All(false)) => Ok(Vec::new()),
        Some(McpChoice::Only(names)) => {
            if let Some(unknown) = names
                .iter()
                .find(|n| !declared.iter().any(|s| &s.name == *n))
            {
                let known: Vec<&str> = declared.iter().map(|s| s.name.as_str()).collect();
                return Err(format!(
                    "agent `{}`: mcp names `{unknown}`, which no [[mcp_server]] declares ({})",
                    agent.id,
                    if known.is_empty() {
                        "there are none".to_owned()
                    } else {
                        format!("declared: {}", known.join(", "))
                    }
                ));
            }
            // In the order of the config's tables, each once.
            Ok(declared
                .iter()
                .filter(|s| names.contains(&s.name))
                .cloned()
                .collect())
        }
    }
}

/// Two servers as a config declares them, for the providers' rendering
/// tests: `files`, stdio with args and an env secret; `docs`, HTTP with a
/// header secret.
/// `url` without `user:password@` and without its query, where tokens go.
pub(crate) fn public_url(url: &str) -> String {
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
pub(crate) fn sample_servers() -> Vec<McpServerConfig> {
    let mut files = McpServerConfig::stdio("files", "npx", &["-y", "mcp-files", "/srv"]);
    files.env.insert("FILES_TOKEN".into(), "s3cr3t-env".into());
    let mut docs = McpServerConfig::stdio("docs", "", &[]);
    docs.url = Some("https://mcp.example.com/mcp".into());
    docs.headers
        .insert("Authorization".into(), "Bearer s3cr3t-hdr".into());
    vec![files, docs]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigError, ConfigSource};

    const SERVERS: &str = r#"
[[mcp_server]]
name = "files"
command = "npx"
args = ["-y", "mcp-files"]
env = { FILES_TOKEN = "s3cr3t" }

[[mcp_server]]
name = "docs"
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer s3cr3t" }
"#;

    fn parse(agents: &str) -> Result<Config, ConfigError> {
        Config::parse(&format!("{SERVERS}\n{agents}"), ConfigSource::Builtin)
    }

    fn names(config: &Config, id: &str) -> Vec<String> {
        let agent = config.agent(id).expect("agent");
        agent.shared_mcp.iter().map(|s| s.name.clone()).collect()
    }

    fn error(text: &str) -> String {
        match Config::parse(text, ConfigSource::Builtin) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        }
    }

    #[test]
    fn every_agent_gets_the_servers_unless_it_narrows_them() {
        let config = parse(
            r#"
[[agent]]
id = "all"
provider = "claude"

[[agent]]
id = "yes"
provider = "codex"
mcp = true

[[agent]]
id = "none"
provider = "gemini"
mcp = false

[[agent]]
id = "one"
provider = "acp"
mcp = ["docs"]
"#,
        )
        .expect("valid");
        assert_eq!(names(&config, "all"), ["files", "docs"]);
        assert_eq!(names(&config, "yes"), ["files", "docs"]);
        assert!(names(&config, "none").is_empty());
        assert_eq!(names(&config, "one"), ["docs"]);
        let files = &config.agent("all").expect("agent").shared_mcp[0];
        assert_eq!(files.args, ["-y", "mcp-files"]);
        assert_eq!(files.env["FILES_TOKEN"], "s3cr3t");
        // `mcp` is a common key, not left to the provider's own settings.
        assert!(
            !config
                .agent("one")
                .expect("agent")
                .settings
                .contains_key("mcp")
        );
    }

    #[test]
    fn an_unknown_name_in_mcp_is_a_config_error_naming_the_declared_ones() {
        let e = parse("[[agent]]\nid = \"a\"\nprovider = \"claude\"\nmcp = [\"fils\"]\n")
            .expect_err("unknown name");
        assert!(
            e.to_string()
                .contains("agent `a`: mcp names `fils`, which no [[mcp_server]] declares (declared: files, docs)"),
            "{e}"
        );
        let e = error("[[agent]]\nid = \"a\"\nprovider = \"claude\"\nmcp = [\"x\"]\n");
        assert!(e.contains("(there are none)"), "{e}");
    }

    #[test]
    fn a_broken_mcp_server_is_a_config_error() {
        let cases = [
            ("name = \"\"\ncommand = \"x\"", "must be 1 to 64 letters"),
            ("name = \"a.b\"\ncommand = \"x\"", "must be 1 to 64 letters"),
            (
                "name = \"hive\"\ncommand = \"x\"",
                "hive's own operations server",
            ),
            ("name = \"a\"", "needs `command` (a stdio server) or `url`"),
            (
                "name = \"a\"\ncommand = \"x\"\nurl = \"http://h\"",
                "both `command` and `url`",
            ),
            (
                "name = \"a\"\nurl = \"ftp://h\"",
                "must start with http:// or https://",
            ),
            (
                "name = \"a\"\nurl = \"http://h\"\nargs = [\"x\"]",
                "`args` and `env` are for a stdio",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\nheaders = { A = \"b\" }",
                "`headers` are for an HTTP",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\ncwd = \"/\"",
                "unknown field `cwd`",
            ),
        ];
        for (table, want) in cases {
            let e = error(&format!("[[mcp_server]]\n{table}\n"));
            assert!(e.contains(want), "{table}: {e}");
        }
        let twice = "[[mcp_server]]\nname = \"a\"\ncommand = \"x\"\n";
        let e = error(&format!("{twice}{twice}"));
        assert!(e.contains("mcp_server name `a` is used twice"), "{e}");
    }

    /// A pane made at runtime from a provider alone (`hive ctl new x
    /// --provider codex`, the console's new-pane picker) gets the servers
    /// as a configured agent does (it got none before).
    #[test]
    fn an_agent_made_at_runtime_from_a_provider_gets_the_servers() {
        let config = parse("[[agent]]\nid = \"a\"\nprovider = \"claude\"\n").expect("valid");
        for provider in ["claude", "codex", "gemini", "acp", "openai"] {
            let agent = config.runtime_agent("new", provider).expect("made");
            let names: Vec<&str> = agent.shared_mcp.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(names, ["files", "docs"], "{provider}");
            assert_eq!(
                agent.shared_mcp,
                config.agent("a").expect("agent").shared_mcp
            );
        }
    }

    /// Issue 51: the config's `instructions` reaches every agent (and one
    /// made at runtime) unless its own table names another; a path out of
    /// the agent's directory is a config error.
    #[test]
    fn the_configs_instructions_reach_every_agent() {
        let config = Config::parse(
            "instructions = \"AGENTS.md\"\n[[agent]]\nid = \"a\"\nprovider = \"claude\"\n\
             [[agent]]\nid = \"b\"\nprovider = \"codex\"\ninstructions = \"docs/RULES.md\"\n",
            ConfigSource::Builtin,
        )
        .expect("valid");
        let of = |id: &str| config.agent(id).and_then(|a| a.instructions.clone());
        assert_eq!(of("a").as_deref(), Some("AGENTS.md"));
        assert_eq!(of("b").as_deref(), Some("docs/RULES.md"));
        let new = config.runtime_agent("n", "gemini").expect("made");
        assert_eq!(new.instructions.as_deref(), Some("AGENTS.md"));
        for bad in ["/etc/passwd", "../AGENTS.md", "docs/../../x"] {
            let e = error(&format!("instructions = \"{bad}\"\n"));
            assert!(
                e.contains("must be a file's relative path inside"),
                "{bad}: {e}"
            );
        }
    }

    /// An agent's config is logged with `{:?}` in places; the values of a
    /// server's env and headers (tokens) never are.
    #[test]
    fn the_debug_form_names_env_and_header_keys_but_no_values() {
        let config = parse("[[agent]]\nid = \"a\"\nprovider = \"claude\"\n").expect("valid");
        let shown = format!("{:?}", config.agent("a").expect("agent"));
        assert!(
            shown.contains("FILES_TOKEN") && shown.contains("Authorization"),
            "{shown}"
        );
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
}
