//! How an `[[agent]]` table with `provider = "codex"` becomes command lines
//! and protocol parameters. Every key is documented in docs/codex.md.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::AgentConfig;
use crate::provider::ProviderError;
use crate::provider::process::CommandSpec;

/// Which machine interface of the CLI drives the pane.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Transport {
    #[default]
    AppServer,
    Exec,
}

const SANDBOXES: &[&str] = &["read-only", "workspace-write", "danger-full-access"];
const APPROVALS: &[&str] = &["untrusted", "on-failure", "on-request", "never"];
const OPTION_KEYS: &[&str] = &[
    "sandbox",
    "approval_policy",
    "profile",
    "config",
    "skip_git_repo_check",
    "interrupt_grace_ms",
    "startup_timeout_ms",
];

/// `permission_mode` shortcuts beyond the plain approval policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bypass {
    /// No approvals, no sandbox (`--dangerously-bypass-approvals-and-sandbox`).
    Full,
    /// Sandboxed writes inside the workspace, ask on request (`--full-auto`).
    FullAuto,
}

#[derive(Debug, Clone)]
pub(crate) struct CodexSettings {
    pub transport: Transport,
    /// Program and its leading arguments (`agent.command` or `codex`).
    pub program: String,
    pub(crate) program_args: Vec<String>,
    pub model: Option<String>,
    pub(crate) sandbox: Option<String>,
    pub approval_policy: Option<String>,
    pub(crate) bypass: Option<Bypass>,
    pub profile: Option<String>,
    /// Dotted config keys with their values (`-c key=value`).
    pub config: Vec<(String, toml::Value)>,
    /// Reasoning effort (`agent.thinking`).
    pub effort: Option<String>,
    pub system_prompt: Option<String>,
    pub(crate) extra_args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// The longest line read from codex (`[limits] max_line_bytes`).
    pub(crate) max_line: usize,
    /// The pane's host (issue 49).
    pub(crate) exec: Option<crate::exec::ExecHost>,
    pub(crate) limits: crate::exec::Resources,
    pub(crate) skip_git_repo_check: bool,
    /// SIGINT → SIGKILL grace of the exec transport; also how long the
    /// app-server transport waits for `turn/completed` after `turn/interrupt`.
    pub(crate) interrupt_grace: Duration,
    /// How long the app-server may take to answer `initialize` / `thread/start`.
    pub(crate) startup_timeout: Duration,
}

/// The agent's `options` table, read with errors that name the option.
struct Opts<'a> {
    agent: &'a AgentConfig,
    table: &'a toml::Table,
}

impl<'a> Opts<'a> {
    fn of(agent: &'a AgentConfig) -> Result<Self, ProviderError> {
        let opts = Self {
            agent,
            table: &agent.options,
        };
        if let Some(key) = opts
            .table
            .keys()
            .find(|k| !OPTION_KEYS.contains(&k.as_str()))
        {
            return Err(opts.err(format!(
                "codex: unknown option `options.{key}`; known: {}",
                OPTION_KEYS.join(", ")
            )));
        }
        Ok(opts)
    }

    fn err(&self, message: String) -> ProviderError {
        ProviderError::config(&self.agent.id, message)
    }

    fn string(&self, key: &str) -> Result<Option<String>, ProviderError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(format!(
                "codex: `options.{key}` must be a string, found {}",
                other.type_str()
            ))),
        }
    }

    fn millis(&self, key: &str, default: u64) -> Result<Duration, ProviderError> {
        match self.table.get(key) {
            None => Ok(Duration::from_millis(default)),
            Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Duration::from_millis(*n as u64)),
            Some(other) => Err(self.err(format!(
                "codex: `options.{key}` must be a non-negative integer (milliseconds), found {other}"
            ))),
        }
    }

    fn flag(&self, key: &str) -> Result<bool, ProviderError> {
        match self.table.get(key) {
            None => Ok(false),
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(other) => Err(self.err(format!(
                "codex: `options.{key}` must be true or false, found {other}"
            ))),
        }
    }

    /// `options.config`, flattened to `-c key=value` pairs.
    fn config(&self) -> Result<Vec<(String, toml::Value)>, ProviderError> {
        let mut config = Vec::new();
        match self.table.get("config") {
            None => {}
            Some(toml::Value::Table(t)) => flatten("", t, &mut config),
            Some(other) => {
                return Err(self.err(format!(
                    "codex: `options.config` must be a table of config overrides, found {}",
                    other.type_str()
                )));
            }
        }
        Ok(config)
    }
}

/// The approval policy and sandbox bypass from `permission_mode` and
/// `options.approval_policy` (the option wins).
fn permissions(
    agent: &AgentConfig,
    opts: &Opts<'_>,
) -> Result<(Option<String>, Option<Bypass>), ProviderError> {
    let mut bypass = None;
    let mut approval_policy = None;
    if let Some(mode) = agent.permission_mode.as_deref() {
        match mode {
            m if APPROVALS.contains(&m) => approval_policy = Some(m.to_owned()),
            "bypass" | "yolo" | "bypassPermissions" | "danger-full-access" => {
                bypass = Some(Bypass::Full)
            }
            "full-auto" | "auto" => bypass = Some(Bypass::FullAuto),
            other => {
                return Err(opts.err(format!(
                    "codex: `permission_mode = \"{other}\"`; expected one of {}, full-auto, bypass",
                    APPROVALS.join(", ")
                )));
            }
        }
    }
    if let Some(a) = opts.string("approval_policy")? {
        if !APPROVALS.contains(&a.as_str()) {
            return Err(opts.err(format!(
                "codex: `options.approval_policy = \"{a}\"`; expected one of {}",
                APPROVALS.join(", ")
            )));
        }
        approval_policy = Some(a);
    }
    Ok((approval_policy, bypass))
}

/// The agent's MCP servers (hive's own with `hive_tools`, then the
/// user's `[[mcp_server]]`s) as `-c mcp_servers.NAME.*` overrides, for
/// exec and app-server alike. Values of `env` and `headers` (tokens) stay
/// off the command line, which every local user can read: they go into
/// Codex's environment, and its config names them (`env_vars`,
/// `env_http_headers`) so Codex forwards them to the server.
fn with_mcp(
    mut config: Vec<(String, toml::Value)>,
    agent: &AgentConfig,
) -> (Vec<(String, toml::Value)>, BTreeMap<String, String>) {
    let strings =
        |v: Vec<String>| toml::Value::Array(v.into_iter().map(toml::Value::String).collect());
    let mut env = BTreeMap::new();
    for server in agent.mcp_servers() {
        let key = |k: &str| format!("mcp_servers.{}.{k}", server.name);
        if let Some(url) = &server.url {
            config.push((key("url"), toml::Value::String(url.clone())));
            let mut names = toml::Table::new();
            for (i, (header, value)) in server.headers.iter().enumerate() {
                let var = format!(
                    "HIVE_MCP_{}_H{i}",
                    server.name.to_ascii_uppercase().replace('-', "_")
                );
                env.insert(var.clone(), value.clone());
                names.insert(header.clone(), toml::Value::String(var));
            }
            if !names.is_empty() {
                config.push((key("env_http_headers"), toml::Value::Table(names)));
            }
            continue;
        }
        config.push((key("command"), toml::Value::String(server.command.clone())));
        config.push((key("args"), strings(server.args.clone())));
        if !server.env.is_empty() {
            for (k, v) in &server.env {
                env.entry(k.clone()).or_insert_with(|| v.clone());
            }
            config.push((
                key("env_vars"),
                strings(server.env.keys().cloned().collect()),
            ));
        }
    }
    (config, env)
}

impl CodexSettings {
    pub(crate) fn from_agent(agent: &AgentConfig) -> Result<Self, ProviderError> {
        let opts = Opts::of(agent)?;
        let transport = match agent.transport.as_deref() {
            None | Some("app-server") | Some("app_server") => Transport::AppServer,
            Some("exec") => Transport::Exec,
            Some(other) => {
                return Err(opts.err(format!(
                    "codex: unknown transport `{other}`; expected `app-server` or `exec`"
                )));
            }
        };
        let sandbox = opts.string("sandbox")?;
        if let Some(s) = &sandbox
            && !SANDBOXES.contains(&s.as_str())
        {
            return Err(opts.err(format!(
                "codex: `options.sandbox = \"{s}\"`; expected one of {}",
                SANDBOXES.join(", ")
            )));
        }
        let (approval_policy, bypass) = permissions(agent, &opts)?;
        let (program, program_args) = agent.program("codex");
        let cwd = agent.cwd.as_ref().map(|c| {
            if c.is_absolute() {
                c.clone()
            } else {
                std::env::current_dir()
                    .map(|d| d.join(c))
                    .unwrap_or_else(|_| c.clone())
            }
        });
        let (config, mcp_env) = with_mcp(opts.config()?, agent);
        let mut env = agent.env.clone();
        for (k, v) in mcp_env {
            // The agent's own env wins: it is what the user set for it.
            env.entry(k).or_insert(v);
        }
        Ok(Self {
            transport,
            program,
            program_args,
            model: agent.model.clone(),
            sandbox,
            approval_policy,
            bypass,
            profile: opts.string("profile")?,
            config,
            effort: agent.thinking.clone(),
            // Codex reads AGENTS.md itself; another instruction file's
            // text goes after the agent's own (issue 51).
            system_prompt: match crate::provider::instructions::Instructions::for_agent(agent)
                .and_then(|i| i.unless_read_as("AGENTS.md"))
            {
                Some(i) => Some(i.after(agent.system_prompt.as_deref())),
                None => agent.system_prompt.clone(),
            },
            extra_args: agent.args.clone(),
            env,
            cwd,
            max_line: agent.max_line_bytes,
            exec: crate::provider::process::exec_for(agent),
            limits: crate::provider::process::limits_of(agent),
            skip_git_repo_check: opts.flag("skip_git_repo_check")?,
            interrupt_grace: opts.millis("interrupt_grace_ms", 500)?,
            startup_timeout: opts.millis("startup_timeout_ms", 30_000)?,
        })
    }

    /// `-c key=value` pairs that go before the subcommand (the CLI's global
    /// config overrides). Values are TOML, as the CLI parses them.
    fn root_overrides(&self) -> Vec<String> {
        let mut args = Vec::new();
        for (key, value) in &self.config {
            args.push("-c".into());
            args.push(format!("{key}={}", toml_inline(value)));
        }
        args
    }

    /// `codex [-c ..] exec --json [flags] [resume <thread>] -`; the prompt
    /// goes to stdin (`-`), so a prompt starting with `-` is never a flag.
    /// Each image is one `--image=PATH` (the attached form: `--image` takes
    /// several values and would swallow the `-` after it).
    pub(crate) fn exec_command(&self, resume: Option<&str>, images: &[PathBuf]) -> CommandSpec {
        let mut args = self.program_args.clone();
        args.extend(self.root_overrides());
        args.push("exec".into());
        args.push("--json".into());
        if let Some(m) = &self.model {
            args.extend(["--model".into(), m.clone()]);
        }
        if let Some(p) = &self.profile {
            args.extend(["--profile".into(), p.clone()]);
        }
        match self.bypass {
            Some(Bypass::Full) => args.push("--dangerously-bypass-approvals-and-sandbox".into()),
            Some(Bypass::FullAuto) => args.push("--full-auto".into()),
            None => {}
        }
        if let Some(s) = &self.sandbox {
            args.extend(["--sandbox".into(), s.clone()]);
        }
        if let Some(e) = &self.effort {
            args.extend(["-c".into(), format!("model_reasoning_effort={}", quote(e))]);
        }
        if let Some(p) = &self.system_prompt {
            args.extend(["-c".into(), format!("developer_instructions={}", quote(p))]);
        }
        if self.skip_git_repo_check {
            args.push("--skip-git-repo-check".into());
        }
        args.extend(images.iter().map(|i| format!("--image={}", i.display())));
        args.extend(self.extra_args.iter().cloned());
        if let Some(thread) = resume {
            args.extend(["resume".into(), thread.to_owned()]);
        }
        args.push("-".into());
        self.command(args)
    }

    /// `codex [-c ..] app-server [args]`.
    pub(crate) fn app_server_command(&self) -> CommandSpec {
        let mut args = self.program_args.clone();
        args.extend(self.root_overrides());
        args.push("app-server".into());
        args.extend(self.extra_args.iter().cloned());
        self.command(args)
    }

    fn command(&self, args: Vec<String>) -> CommandSpec {
        CommandSpec {
            program: self.program.clone(),
            args,
            cwd: self.cwd.clone(),
            env: self.env.clone(),
            max_line: self.max_line,
            exec: self.exec.clone(),
            limits: self.limits,
        }
    }

    /// Parameters shared by `thread/start` and `thread/resume`.
    pub(crate) fn thread_params(&self) -> Map<String, Value> {
        let mut p = Map::new();
        if let Some(m) = &self.model {
            p.insert("model".into(), m.clone().into());
        }
        if let Some(cwd) = &self.cwd {
            p.insert("cwd".into(), cwd.to_string_lossy().into_owned().into());
        }
        let (approval, sandbox) = match self.bypass {
            Some(Bypass::Full) => (Some("never"), Some("danger-full-access")),
            Some(Bypass::FullAuto) => (Some("on-request"), Some("workspace-write")),
            None => (None, None),
        };
        if let Some(a) = self.approval_policy.as_deref().or(approval) {
            p.insert("approvalPolicy".into(), a.into());
        }
        if let Some(s) = self.sandbox.as_deref().or(sandbox) {
            p.insert("sandbox".into(), s.into());
        }
        if let Some(sp) = &self.system_prompt {
            p.insert("developerInstructions".into(), sp.clone().into());
        }
        let mut config = Map::new();
        if let Some(profile) = &self.profile {
            config.insert("profile".into(), profile.clone().into());
        }
        for (key, value) in &self.config {
            config.insert(key.clone(), toml_to_json(value));
        }
        if !config.is_empty() {
            p.insert("config".into(), Value::Object(config));
        }
        p
    }
}

impl CodexSettings {
    /// The model a turn will use, for display: the agent's `model`, a `model`
    /// config override, else what Codex's own config.toml names (the profile's
    /// first). `codex exec --json` never reports it.
    pub(crate) fn display_model(&self) -> Option<String> {
        if let Some(m) = &self.model {
            return Some(m.clone());
        }
        if let Some((_, toml::Value::String(m))) = self.config.iter().find(|(k, _)| k == "model") {
            return Some(m.clone());
        }
        let home = self.home()?;
        let text = std::fs::read_to_string(home.join("config.toml")).ok()?;
        let table: toml::Table = toml::from_str(&text).ok()?;
        let profile = self.profile.clone().or_else(|| {
            table
                .get("profile")
                .and_then(toml::Value::as_str)
                .map(str::to_owned)
        });
        let from_profile = profile.and_then(|p| {
            table
                .get("profiles")?
                .get(p.as_str())?
                .get("model")?
                .as_str()
                .map(str::to_owned)
        });
        from_profile.or_else(|| table.get("model")?.as_str().map(str::to_owned))
    }
}

impl CodexSettings {
    /// The models hive's configuration and Codex's own `config.toml` name
    /// (the agent's `model`, a `model` override, the file's `model` and
    /// its profiles'), for a `/model` picker the agent did not fill.
    pub(crate) fn configured_models(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |m: &str| {
            if !m.is_empty() && !out.iter().any(|o| o == m) {
                out.push(m.to_owned());
            }
        };
        if let Some(m) = &self.model {
            add(m);
        }
        if let Some((_, toml::Value::String(m))) = self.config.iter().find(|(k, _)| k == "model") {
            add(m);
        }
        let table = self
            .home()
            .and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok())
            .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
            .unwrap_or_default();
        if let Some(m) = table.get("model").and_then(toml::Value::as_str) {
            add(m);
        }
        let profiles = table.get("profiles").and_then(toml::Value::as_table);
        for profile in profiles.into_iter().flat_map(|p| p.values()) {
            if let Some(m) = profile.get("model").and_then(toml::Value::as_str) {
                add(m);
            }
        }
        out
    }

    /// Codex's own directory (config, rollouts): `$CODEX_HOME` as the agent
    /// runs it, else `~/.codex`.
    pub(crate) fn home(&self) -> Option<PathBuf> {
        let var = |k: &str| {
            self.env
                .get(k)
                .cloned()
                .or_else(|| std::env::var(k).ok())
                .filter(|v| !v.is_empty())
        };
        var("CODEX_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".codex")))
    }
}

/// Nested tables become dotted keys: `{a = {b = 1}}` → `a.b = 1`.
fn flatten(prefix: &str, table: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => flatten(&key, t, out),
            other => out.push((key, other.clone())),
        }
    }
}

fn quote(s: &str) -> String {
    toml_inline(&toml::Value::String(s.to_owned()))
}

/// A TOML value on one line, as `-c key=value` expects.
fn toml_inline(v: &toml::Value) -> String {
    match v {
        toml::Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(toml_inline).collect();
            format!("[{}]", parts.join(", "))
        }
        toml::Value::Table(t) => {
            let parts: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{} = {}", quote(k), toml_inline(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(toml_text: &str) -> AgentConfig {
        let mut table: toml::Table = toml::from_str(toml_text).expect("test toml");
        table.insert("id".into(), "cx".into());
        table.insert("provider".into(), "codex".into());
        table.try_into().expect("agent config")
    }

    #[test]
    fn exec_command_line_carries_every_setting() {
        let a = agent(
            r#"
            transport = "exec"
            model = "gpt-5.5"
            thinking = "high"
            args = ["--add-dir", "/tmp"]
            [options]
            sandbox = "workspace-write"
            profile = "work"
            skip_git_repo_check = true
            config = { model_provider = "mock", model_providers = { mock = { base_url = "http://127.0.0.1:9/v1" } } }
            "#,
        );
        let s = CodexSettings::from_agent(&a).expect("settings");
        assert_eq!(s.transport, Transport::Exec);
        let cmd = s.exec_command(Some("T1"), &[]);
        assert_eq!(cmd.program, "codex");
        let line = cmd.args.join(" ");
        assert!(line.starts_with("-c model_provider=\"mock\" -c model_providers.mock.base_url=\"http://127.0.0.1:9/v1\" exec --json"), "{line}");
        assert!(
            line.contains("--model gpt-5.5 --profile work --sandbox workspace-write"),
            "{line}"
        );
        assert!(
            line.contains("-c model_reasoning_effort=\"high\""),
            "{line}"
        );
        assert!(
            line.ends_with("--skip-git-repo-check --add-dir /tmp resume T1 -"),
            "{line}"
        );
    }

    /// Issue 51: the user's `[[mcp_server]]`s become `-c mcp_servers.NAME…`
    /// overrides after hive's own: a stdio one's command and args, an HTTP
    /// one's url; their env and header values go into Codex's environment,
    /// named by `env_vars` / `env_http_headers`.
    #[test]
    fn the_users_mcp_servers_become_config_overrides() {
        let mut a = agent("transport = \"exec\"");
        a.shared_mcp = crate::config::mcp::sample_servers();
        a.hive_mcp = Some(crate::config::McpServerConfig::stdio(
            "hive",
            "/usr/bin/hive",
            &["mcp"],
        ));
        let s = CodexSettings::from_agent(&a).expect("settings");
        let line = s.app_server_command().args.join(" ");
        let want = [
            "-c mcp_servers.hive.command=\"/usr/bin/hive\" -c mcp_servers.hive.args=[\"mcp\"]",
            "-c mcp_servers.files.command=\"npx\"",
            "-c mcp_servers.files.args=[\"-y\", \"mcp-files\", \"/srv\"]",
            "-c mcp_servers.files.env_vars=[\"FILES_TOKEN\"]",
            "-c mcp_servers.docs.url=\"https://mcp.example.com/mcp\"",
            "-c mcp_servers.docs.env_http_headers={\"Authorization\" = \"HIVE_MCP_DOCS_H0\"}",
            "app-server",
        ]
        .join(" ");
        // The secrets reach Codex through its environment, never argv.
        assert!(!line.contains("s3cr3t"), "{line}");
        let cmd = s.app_server_command();
        assert_eq!(cmd.env["FILES_TOKEN"], "s3cr3t-env");
        assert_eq!(cmd.env["HIVE_MCP_DOCS_H0"], "Bearer s3cr3t-hdr");
        assert_eq!(line, want);
    }

    #[test]
    fn hive_tools_add_the_hive_mcp_server_to_both_transports() {
        let mut a = agent("transport = \"exec\"");
        a.hive_mcp = Some(crate::config::McpServerConfig {
            name: "hive".into(),
            command: "/usr/bin/hive".into(),
            args: vec!["mcp".into(), "--agent".into(), "cx".into()],
            env: BTreeMap::new(),
            url: None,
            headers: BTreeMap::new(),
        });
        let s = CodexSettings::from_agent(&a).expect("settings");
        let want = "-c mcp_servers.hive.command=\"/usr/bin/hive\" -c mcp_servers.hive.args=[\"mcp\", \"--agent\", \"cx\"]";
        let line = s.exec_command(None, &[]).args.join(" ");
        assert!(line.starts_with(&format!("{want} exec")), "{line}");
        let line = s.app_server_command().args.join(" ");
        assert_eq!(line, format!("{want} app-server"));
        a.hive_mcp = None;
        let s = CodexSettings::from_agent(&a).expect("settings");
        assert!(
            !s.exec_command(None, &[])
                .args
                .join(" ")
                .contains("mcp_servers")
        );
    }

    #[test]
    fn app_server_params_follow_permission_mode() {
        let a = agent("permission_mode = \"bypass\"\nmodel = \"m\"\n[options]\nprofile = \"p\"");
        let s = CodexSettings::from_agent(&a).expect("settings");
        assert_eq!(s.transport, Transport::AppServer);
        let p = s.thread_params();
        assert_eq!(p["approvalPolicy"], "never");
        assert_eq!(p["sandbox"], "danger-full-access");
        assert_eq!(p["model"], "m");
        assert_eq!(p["config"]["profile"], "p");
        assert_eq!(s.app_server_command().args, vec!["app-server".to_string()]);
    }

    #[test]
    fn display_model_falls_back_to_codex_config() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("config.toml"),
            "model = \"base-model\"\n[profiles.fast]\nmodel = \"fast-model\"\n",
        )
        .expect("write");
        let home = dir.path().to_string_lossy().into_owned();
        let a = agent(&format!("env = {{ CODEX_HOME = \"{home}\" }}"));
        let s = CodexSettings::from_agent(&a).expect("settings");
        assert_eq!(s.display_model().as_deref(), Some("base-model"));
        let a = agent(&format!(
            "env = {{ CODEX_HOME = \"{home}\" }}\n[options]\nprofile = \"fast\""
        ));
        let s = CodexSettings::from_agent(&a).expect("settings");
        assert_eq!(s.display_model().as_deref(), Some("fast-model"));
        let a = agent(&format!(
            "model = \"m\"\nenv = {{ CODEX_HOME = \"{home}\" }}"
        ));
        let s = CodexSettings::from_agent(&a).expect("settings");
        assert_eq!(s.display_model().as_deref(), Some("m"));
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = CodexSettings::from_agent(&agent("[options]\nsandbox = \"open\""))
            .expect_err("bad sandbox");
        assert!(e.to_string().contains("options.sandbox"), "{e}");
        let e = CodexSettings::from_agent(&agent("[options]\nsandbx = 1")).expect_err("typo");
        assert!(e.to_string().contains("options.sandbx"), "{e}");
        let e = CodexSettings::from_agent(&agent("transport = \"grpc\"")).expect_err("transport");
        assert!(e.to_string().contains("grpc"), "{e}");
        let e = CodexSettings::from_agent(&agent("permission_mode = \"ask\"")).expect_err("mode");
        assert!(e.to_string().contains("permission_mode"), "{e}");
    }

    /// Issue 51: Codex reads AGENTS.md itself; another instruction file
    /// goes to its developer instructions (`-c developer_instructions` for
    /// exec, `developerInstructions` of `thread/start`).
    #[test]
    fn an_instruction_file_other_than_agents_md_becomes_developer_instructions() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("AGENTS.md"), "run make test").expect("write");
        std::fs::write(dir.path().join("CLAUDE.md"), "use tabs").expect("write");
        let mut a = agent("transport = \"exec\"");
        a.cwd = Some(dir.path().to_owned());
        let s = CodexSettings::from_agent(&a).expect("settings");
        assert_eq!(s.system_prompt, None, "AGENTS.md is Codex's own");
        a.instructions = Some("CLAUDE.md".into());
        let s = CodexSettings::from_agent(&a).expect("settings");
        assert_eq!(
            s.system_prompt.as_deref(),
            Some("The project's instructions (CLAUDE.md):\n\nuse tabs")
        );
    }
}
