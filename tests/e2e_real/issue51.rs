//! Issue 51 against the real CLIs: one `[[mcp_server]]` (the project's own
//! stdio server, tests/fake/fake_mcp.py) and one instruction file declared
//! once reach Claude Code, Codex (app-server), Gemini CLI and the ACP
//! agents, each through its own channel, as seen in the requests the mock
//! model gets: the server's `add` tool in the tool list, the file's text in
//! the prompt (ACP has no channel for it), and the scripted call of the
//! tool (scenario `mcp_add`) answered by the server. And `/account`
//! mid-conversation on a real Claude Code and Codex.
//!
//! Run by scripts/e2e-real.sh (`scripts/e2e-real.sh issue51`).

use super::*;

const FAKE_MCP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake/fake_mcp.py");
/// fake_mcp.py's `add` tool's description: in the tool list whatever name
/// each vendor gives the tool (`mcp__files__add`, `files__add`, …).
const ADD_TOOL: &str = "Add two integers.";
/// The instruction file's one rule, found in the prompt.
const RULE: &str = "RULE-51: answer in one word";

fn setup_once(cli: Cli) {
    // ACP's `session/new` has no field for instructions (docs/config.md).
    let instructions = !matches!(cli, Cli::AcpClaude | Cli::AcpCodex | Cli::AcpGemini);
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
    cmd.args([
        "run",
        "--agent",
        "e2e",
        "--json",
        "Add two numbers. SCENARIO:mcp_add",
    ]);
    let out = run(cmd);
    assert!(out.status.is_some_and(|s| s.success()), "{}", out.stderr);
    let asked: Vec<Value> = lab
        .mock
        .requests()
        .into_iter()
        .filter(|r| r["side"] == false)
        .collect();
    let first = asked.first().expect("a model request").to_string();
    // Claude Code 2.1.330 and Codex 0.169 defer MCP tools: Claude names
    // `mcp__files__add` for its ToolSearch, Codex the namespace
    // `mcp__files` for its tool_search; the schema comes on demand.
    assert!(
        first.contains(ADD_TOOL) || first.contains("mcp__files"),
        "no `add` tool offered: {first}"
    );
    if instructions {
        assert!(
            first.contains(RULE),
            "no instructions in the prompt: {first}"
        );
    }
    // The scripted call reached the server: its sum is in the next request.
    let answered = asked
        .iter()
        .filter(|r| r["scenario"] == "mcp_add" && r["step"] == 1)
        .any(|r| r.to_string().contains("5555"));
    assert!(
        answered,
        "the add tool's result never reached the model: {asked:?}"
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

#[test]
#[ignore = "needs the real CLIs: scripts/e2e-real.sh"]
fn issue51_mcp_server_reaches_acp_claude() {
    setup_once(Cli::AcpClaude);
}

#[test]
#[ignore = "needs the real CLIs: scripts/e2e-real.sh"]
fn issue51_mcp_server_reaches_acp_codex() {
    setup_once(Cli::AcpCodex);
}

/// A hive server (`hive serve`) on `config`, stopped with its agents when
/// dropped.
struct Served<'a> {
    lab: &'a Lab,
    config: PathBuf,
    child: std::process::Child,
}

impl<'a> Served<'a> {
    fn start(lab: &'a Lab, config: PathBuf) -> Self {
        let mut cmd = hive_command(lab, &config);
        cmd.arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().expect("hive serve");
        let served = Served { lab, config, child };
        served.until("the pane idle", |s| s.state() == "idle");
        served
    }

    /// `hive ctl ARGS`: its stdout, or a panic with its stderr.
    fn ctl(&self, args: &[&str]) -> String {
        let mut cmd = hive_command(self.lab, &self.config);
        cmd.arg("ctl").args(args);
        let out = run(cmd);
        assert!(
            out.status.is_some_and(|s| s.success()),
            "hive ctl {args:?}: {}",
            out.stderr
        );
        out.stdout.trim().to_owned()
    }

    fn state(&self) -> String {
        let mut cmd = hive_command(self.lab, &self.config);
        cmd.args(["ctl", "status", "e2e", "--json"]);
        let out = run(cmd);
        serde_json::from_str::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v["state"].as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    fn until(&self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + RUN_TIMEOUT;
        while !done(self) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The agent's answer to `text`.
    fn ask(&self, text: &str) -> String {
        let turn = self.ctl(&["send", "e2e", text]);
        self.ctl(&["wait", &turn])
    }
}

impl Drop for Served<'_> {
    fn drop(&mut self) {
        let mut cmd = hive_command(self.lab, &self.config);
        cmd.arg("kill");
        let _ = run(cmd);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every regular file under `dir` whose text holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if std::fs::read_to_string(&p).is_ok_and(|t| t.contains(needle)) {
                found.push(p);
            }
        }
    }
    found
}

/// `/account` mid-conversation on a real CLI (through `hive ctl account`,
/// the same verb): the second turn's request carries the first turn, and
/// the conversation is then in the other account's home, where the CLI
/// went on with it.
fn account_switch(cli: Cli) {
    let Some(lab) = Lab::new() else { return };
    let Some(agent) = agent(&lab, cli) else {
        return;
    };
    let provider = agent.table["provider"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // Two homes, each set up as the lab sets up a CLI's own.
    let (a, b) = (lab.home("account-a"), lab.home("account-b"));
    let (var, home_a, home_b) = match cli {
        Cli::Claude => ("CLAUDE_CONFIG_DIR", a.join(".claude"), b.join(".claude")),
        _ => {
            let _ = codex_env(&lab, &a);
            let _ = codex_env(&lab, &b);
            ("CODEX_HOME", a.join(".codex"), b.join(".codex"))
        }
    };
    std::fs::create_dir_all(&home_a).expect("home a");
    std::fs::create_dir_all(&home_b).expect("home b");
    let mut table = agent.table;
    if let Some(toml::Value::Table(env)) = table.get_mut("env") {
        env.remove(var);
    }
    table.insert("account".into(), "a".into());
    let account = |name: &str, home: &Path| {
        let mut t = toml::Table::new();
        t.insert("name".into(), name.into());
        t.insert("provider".into(), provider.clone().into());
        t.insert("home".into(), home.display().to_string().into());
        toml::Value::Table(t)
    };
    let mut config = toml::Table::new();
    config.insert(
        "account".into(),
        toml::Value::Array(vec![account("a", &home_a), account("b", &home_b)]),
    );
    config.insert("agent".into(), toml::Value::Array(vec![table.into()]));
    let path = lab.root.path().join("hive.toml");
    write(&path, &toml::to_string(&config).expect("config serializes"));

    let served = Served::start(&lab, path);
    served.ask("Remember the word PAPAYA-51.");
    assert!(
        !files_holding(&home_a, "PAPAYA-51").is_empty(),
        "the first turn is not in account a's home"
    );
    let said = served.ctl(&["account", "e2e", "b"]);
    assert!(said.contains("account b"), "{said}");
    let before = lab.mock.requests().len();
    served.ask("Say the word again, ZEBRA-51.");
    let later: Vec<Value> = lab
        .mock
        .requests()
        .into_iter()
        .skip(before)
        .filter(|r| r["side"] == false)
        .collect();
    let second = later
        .iter()
        .find(|r| r.to_string().contains("ZEBRA-51"))
        .expect("the second turn's request")
        .to_string();
    assert!(
        second.contains("PAPAYA-51"),
        "the second request does not carry the first turn: {second}"
    );
    // Made under account b: its home holds the whole conversation now.
    let in_b = files_holding(&home_b, "ZEBRA-51");
    assert!(
        !in_b.is_empty(),
        "the second turn is not in account b's home"
    );
    assert!(
        in_b.iter()
            .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("PAPAYA-51"))),
        "account b's session does not hold the first turn: {in_b:?}"
    );
    assert!(
        files_holding(&home_a, "ZEBRA-51").is_empty(),
        "the second turn went to account a's home"
    );
}

#[test]
#[ignore = "needs the real CLIs: scripts/e2e-real.sh"]
fn issue51_account_switch_claude() {
    account_switch(Cli::Claude);
}

#[test]
#[ignore = "needs the real CLIs: scripts/e2e-real.sh"]
fn issue51_account_switch_codex() {
    account_switch(Cli::CodexAppServer);
}
