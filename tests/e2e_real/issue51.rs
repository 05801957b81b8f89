//! Issue 51 against the real CLIs: one `[[mcp_server]]` (the project's own
//! stdio server, tests/fake/fake_mcp.py) and one instruction file declared
//! once reach Claude Code, Codex (app-server) and Gemini CLI, each through
//! its own channel, as seen in the requests the mock model gets: the
//! server's `add` tool in the tool list, the file's text in the prompt.
//!
//! Written for scripts/e2e-real.sh (`scripts/e2e-real.sh issue51`); the
//! session that wrote it had no real CLIs installed, so it has not been run
//! against them yet.

use super::*;

const FAKE_MCP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake/fake_mcp.py");
/// fake_mcp.py's `add` tool's description: in the tool list whatever name
/// each vendor gives the tool (`mcp__files__add`, `files__add`, …).
const ADD_TOOL: &str = "Add two integers.";
/// The instruction file's one rule, found in the prompt.
const RULE: &str = "RULE-51: answer in one word";

fn setup_once(cli: Cli) {
    let Some(lab) = Lab::new() else { return };
    let Some(agent) = agent(&lab, cli) else {
        return;
    };
    // Not a file any vendor reads by itself: each is handed it by hive.
    write(&lab.work.join("RULES.md"), &format!("{RULE}\n"));
    let mut config = toml::Table::new();
    config.insert("instructions".into(), "RULES.md".into());
    let mut server = toml::Table::new();
    server.insert("name".into(), "files".into());
    server.insert("command".into(), "python3".into());
    server.insert("args".into(), toml::Value::Array(vec![FAKE_MCP.into()]));
    config.insert("mcp_server".into(), toml::Value::Array(vec![server.into()]));
    config.insert("agent".into(), toml::Value::Array(vec![agent.table.into()]));
    let path = lab.root.path().join("hive.toml");
    write(&path, &toml::to_string(&config).expect("config serializes"));
    let mut cmd = hive_command(&lab, &path);
    cmd.args(["run", "--agent", "e2e", "--json", "Say hello."]);
    let out = run(cmd);
    assert!(out.status.is_some_and(|s| s.success()), "{}", out.stderr);
    let asked: Vec<Value> = lab
        .mock
        .requests()
        .into_iter()
        .filter(|r| r["side"] == false)
        .collect();
    let first = asked.first().expect("a model request").to_string();
    assert!(first.contains(ADD_TOOL), "no `add` tool offered: {first}");
    assert!(
        first.contains(RULE),
        "no instructions in the prompt: {first}"
    );
    // Nothing was written into the project.
    let mut files: Vec<_> = std::fs::read_dir(&lab.work)
        .expect("work dir")
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    files.retain(|f| f != "RULES.md");
    assert!(
        files.iter().all(|f| !f.to_string_lossy().ends_with(".md")),
        "{files:?}"
    );
}

#[test]
#[ignore = "needs the real CLIs: scripts/e2e-real.sh"]
fn issue51_mcp_server_and_instructions_reach_claude() {
    setup_once(Cli::Claude);
}

#[test]
#[ignore = "needs the real CLIs: scripts/e2e-real.sh"]
fn issue51_mcp_server_and_instructions_reach_codex() {
    setup_once(Cli::CodexAppServer);
}

#[test]
#[ignore = "needs the real CLIs: scripts/e2e-real.sh"]
fn issue51_mcp_server_and_instructions_reach_gemini() {
    setup_once(Cli::Gemini);
}
