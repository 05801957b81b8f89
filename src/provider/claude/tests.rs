//! The Claude provider's command line and session tests.

use super::*;

#[test]
fn default_command_line() {
    let agent = AgentConfig::new("a", "claude");
    let spec = command_spec(&agent, None);
    assert_eq!(spec.program, "claude");
    assert_eq!(
        spec.args,
        [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
            "--verbose",
            "--permission-prompt-tool",
            "stdio"
        ]
    );
}

#[test]
fn configured_command_line() {
    let mut agent = AgentConfig::new("a", "claude");
    agent.command = vec!["/opt/claude".into(), "--debug".into()];
    agent.model = Some("claude-sonnet-4-5".into());
    agent.permission_mode = Some("bypassPermissions".into());
    agent.allowed_tools = vec!["Read".into(), "Bash(git:*)".into()];
    agent.system_prompt = Some("Be brief.".into());
    agent.args = vec!["--max-turns".into(), "3".into()];
    agent.thinking = Some("high".into());
    agent.cwd = Some("/tmp".into());
    agent
        .env
        .insert("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into());
    let spec = command_spec(&agent, Some("5e551011"));
    assert_eq!(spec.program, "/opt/claude");
    let line = spec.args.join(" ");
    assert!(line.starts_with("--debug -p --input-format stream-json"));
    assert!(line.contains("--model claude-sonnet-4-5"));
    assert!(line.contains("--permission-mode bypassPermissions"));
    assert!(!line.contains("--permission-prompt-tool"));
    assert!(line.contains("--allowedTools Read,Bash(git:*)"));
    assert!(line.contains("--append-system-prompt Be brief."));
    assert!(line.contains("--effort high"));
    assert!(line.ends_with("--resume 5e551011 --max-turns 3"));
    assert_eq!(spec.env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:9");
    agent.thinking = Some("off".into());
    assert_eq!(command_spec(&agent, None).env["MAX_THINKING_TOKENS"], "0");
    agent.thinking = Some("12000".into());
    assert_eq!(
        command_spec(&agent, None).env["MAX_THINKING_TOKENS"],
        "12000"
    );
    assert_eq!(spec.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
    assert!(!ClaudeFactory.capabilities(&agent).permissions);
}

/// Issue 51: the user's `[[mcp_server]]`s go into the same
/// `--mcp-config` file as hive's own, each in Claude Code's shape; an
/// agent without hive_tools gets the file for them alone.
#[test]
fn the_users_mcp_servers_go_into_the_mcp_config_file() {
    let mut agent = AgentConfig::new("arch", "claude");
    agent.shared_mcp = crate::config::mcp::sample_servers();
    let args = command_spec(&agent, None).args;
    assert!(args.contains(&"--mcp-config".to_owned()), "{args:?}");
    assert!(!args.join(" ").contains("mcp__"), "{args:?}");
    let config = mcp_config(&agent);
    assert_eq!(
        config["mcpServers"]["files"],
        serde_json::json!({"type": "stdio", "command": "npx",
            "args": ["-y", "mcp-files", "/srv"], "env": {"FILES_TOKEN": "s3cr3t-env"}})
    );
    assert_eq!(
        config["mcpServers"]["docs"],
        serde_json::json!({"type": "http", "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer s3cr3t-hdr"}})
    );
    agent.hive_mcp =
        crate::provider::operations::server_for("arch", std::path::Path::new("/run/h.sock"));
    let config = mcp_config(&agent);
    let names: Vec<&String> = config["mcpServers"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(names, ["hive", "files", "docs"]);
    // Another set of servers is another file.
    let mut other = agent.clone();
    other.shared_mcp.pop();
    assert_ne!(MCP_CONFIG.path(&other), MCP_CONFIG.path(&agent));
}

#[test]
fn hive_tools_add_an_mcp_config_file() {
    let mut agent = AgentConfig::new("arch", "claude");
    agent.allowed_tools = vec!["Read".into()];
    agent.hive_mcp =
        crate::provider::operations::server_for("arch", std::path::Path::new("/run/hive/p.sock"));
    let args = command_spec(&agent, None).args;
    let at = args.iter().position(|a| a == "--mcp-config").unwrap();
    let file = std::path::Path::new(&args[at + 1]);
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("arch.claude.") && name.ends_with(".json"),
        "{args:?}"
    );
    // The same agent id of another project (another server) has a file
    // of its own (issue 46 item 1).
    let mut twin = agent.clone();
    twin.hive_mcp =
        crate::provider::operations::server_for("arch", std::path::Path::new("/run/hive/q.sock"));
    assert_ne!(MCP_CONFIG.path(&twin), file);
    assert!(args.join(" ").contains("--allowedTools Read,mcp__hive"));
    let config = mcp_config(&agent);
    let hive = &config["mcpServers"]["hive"];
    assert_eq!(hive["type"], "stdio");
    assert_eq!(
        hive["args"],
        serde_json::json!(["mcp", "--socket", "/run/hive/p.sock", "--agent", "arch"])
    );
    // Without hive_tools the command line has no MCP config.
    agent.hive_mcp = None;
    assert!(
        !command_spec(&agent, None)
            .args
            .contains(&"--mcp-config".into())
    );
}

/// Issue 51: Claude Code reads CLAUDE.md itself; the config's other
/// instruction file reaches it after the agent's own prompt.
#[test]
fn an_instruction_file_other_than_claude_md_is_appended_to_the_prompt() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("AGENTS.md"), "run make test").expect("write");
    let mut agent = AgentConfig::new("a", "claude");
    agent.cwd = Some(dir.path().to_owned());
    agent.system_prompt = Some("Be brief.".into());
    let args = command_spec(&agent, None).args;
    let at = args
        .iter()
        .position(|a| a == "--append-system-prompt")
        .expect("flag");
    assert_eq!(
        args[at + 1],
        "Be brief.\n\nThe project's instructions (AGENTS.md):\n\nrun make test"
    );
    // Named CLAUDE.md, it is Claude Code's own: nothing added.
    std::fs::write(dir.path().join("CLAUDE.md"), "use tabs").expect("write");
    agent.instructions = Some("CLAUDE.md".into());
    let args = command_spec(&agent, None).args;
    let at = args
        .iter()
        .position(|a| a == "--append-system-prompt")
        .expect("flag");
    assert_eq!(args[at + 1], "Be brief.");
    // Nothing is written into the project.
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    files.sort();
    assert_eq!(files, ["AGENTS.md", "CLAUDE.md"]);
}

/// Issue 52: a workspace's repositories are extra roots (`--add-dir`).
#[test]
fn a_workspaces_repositories_are_added_dirs() {
    let mut agent = AgentConfig::new("a", "claude");
    agent.extra_roots = vec!["/ws/api".into(), "/ws/web".into()];
    let line = command_spec(&agent, None).args.join(" ");
    assert!(
        line.contains("--add-dir /ws/api --add-dir /ws/web"),
        "{line}"
    );
}
