//! `hive run` end to end: the real binary on the built-in demo agents and on
//! scenario files, as a script would use it.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::process::{Command, Output};

use serde_json::Value;

fn hive(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hive"))
        .args(args)
        .current_dir(dir)
        .env("HIVE_DATA_DIR", dir.join("data"))
        .env("HIVE_STATE_DIR", dir.join("state"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .output()
        .expect("hive runs")
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

#[test]
fn demo_agent_json_prints_create_update_complete_and_turn_complete() {
    let dir = tempfile::tempdir().unwrap();
    let out = hive(&["run", "--agent", "demo", "--json", "hello"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let user = &lines[0];
    assert_eq!(user["type"], "message");
    assert_eq!(user["origin"], "user");
    assert_eq!(user["content"], "hello");
    // One agent message item goes create → update(s) → complete.
    let agent_msgs: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "message" && l["origin"] == "agent")
        .collect();
    let item = agent_msgs[0]["item_id"].as_str().unwrap();
    let statuses: Vec<&str> = agent_msgs
        .iter()
        .filter(|l| l["item_id"] == item)
        .map(|l| l["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.first(), Some(&"create"));
    assert!(statuses.contains(&"update"), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&"complete"));
    let final_text = agent_msgs.last().unwrap()["content"].as_str().unwrap();
    assert!(final_text.contains("You asked: *hello*"), "{final_text}");
    // A thinking item and a completed tool call with output.
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "thinking" && l["status"] == "complete")
    );
    assert!(lines.iter().any(|l| {
        l["type"] == "tool_call"
            && l["status"] == "complete"
            && l["tool_name"] == "Bash"
            && l["output"]
                .as_str()
                .is_some_and(|o| o.contains("processor.rs"))
    }));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "turn_complete");
    assert_eq!(last["status"], "completed");
    assert!(last["usage"]["output_tokens"].as_u64().unwrap() > 0);
    // Every event of the turn carries the same turn id.
    let turn = last["turn_id"].as_str().unwrap();
    assert!(lines.iter().all(|l| l["turn_id"] == turn));
}

#[test]
fn plain_output_is_the_final_assistant_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = hive(&["run", "--agent", "reviewer", "ship it?"], dir.path());
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Review of your change"), "{text}");
    assert!(!text.contains("\"turn_id\""), "not JSON");
}

#[test]
fn error_scenario_prints_turn_error_and_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = hive(
        &["run", "--agent", "demo", "--json", "trigger an error"],
        dir.path(),
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rate_limit") && stderr.contains("429"),
        "{stderr}"
    );
    let lines = json_lines(&out);
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "turn_error");
    assert_eq!(last["error_code"], "rate_limit");
    assert!(!lines.iter().any(|l| l["type"] == "turn_complete"));
}

#[test]
fn crash_scenario_reports_the_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let out = hive(
        &["run", "--agent", "demo", "--json", "please crash"],
        dir.path(),
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("agent_exited") && stderr.contains("status 3"),
        "{stderr}"
    );
}

#[test]
fn unknown_agent_and_broken_config_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = hive(&["run", "--agent", "nobody", "hi"], dir.path());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no agent `nobody`") && stderr.contains("demo"),
        "{stderr}"
    );

    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[agent]]\nid = \"x\"\nprovider = \"script\"\nmodel = [1]\n",
    )
    .unwrap();
    let out = hive(
        &[
            "--config",
            bad.to_str().unwrap(),
            "run",
            "--agent",
            "x",
            "hi",
        ],
        dir.path(),
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.toml:4:"), "{stderr}");

    let unknown = dir.path().join("unknown.toml");
    std::fs::write(&unknown, "[[agent]]\nid = \"x\"\nprovider = \"nope\"\n").unwrap();
    let out = hive(
        &[
            "--config",
            unknown.to_str().unwrap(),
            "run",
            "--agent",
            "x",
            "hi",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown provider `nope`") && stderr.contains("script"),
        "{stderr}"
    );
}

#[test]
fn scenario_file_with_permission_is_denied_headless() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("perm.toml");
    std::fs::write(
        &scenario,
        r#"
delay_ms = 0
[capabilities]
permissions = true
[[turn]]
[[turn.step]]
permission = "write files"
tool = "Write"
args = { file_path = "x" }
output = "written"
[[turn.step]]
text = "after"
"#,
    )
    .unwrap();
    let config = dir.path().join("hive.toml");
    std::fs::write(
        &config,
        "[[agent]]\nid = \"p\"\nprovider = \"script\"\nscript = \"perm.toml\"\n",
    )
    .unwrap();
    let out = hive(&["run", "--agent", "p", "--json", "go"], dir.path());
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("denied"));
    let lines = json_lines(&out);
    assert!(lines.iter().any(|l| {
        l["type"] == "tool_call"
            && l["status"] == "complete"
            && l["output_is_error"] == true
            && l["output"]
                .as_str()
                .is_some_and(|o| o.contains("Permission denied"))
    }));
}

/// `hive run` applies the agent's policy before its headless deny: a
/// rule's allow runs the tool without a card, what the gate leaves asking
/// is denied as before, and both are lines of the project's audit log
/// (the second by `headless`).
#[test]
fn hive_run_applies_the_policy_before_denying_headless() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = |name: &str, command: &str| {
        std::fs::write(
            dir.path().join(name),
            format!(
                "delay_ms = 0\n[capabilities]\npermissions = true\n[[turn]]\n[[turn.step]]\n\
                 permission = \"run it\"\ntool = \"Bash\"\nargs = {{ command = \"{command}\" }}\n\
                 output = \"ran\"\n[[turn.step]]\ntext = \"after\"\n"
            ),
        )
        .unwrap();
    };
    scenario("ok.toml", "git status");
    scenario("no.toml", "make deploy");
    std::fs::write(
        dir.path().join("hive.toml"),
        "[[policy]]\nid = \"status\"\naction = \"allow\"\ntool = \"Bash\"\ncommand = \"git status*\"\n\n\
         [[agent]]\nid = \"ok\"\nprovider = \"script\"\nscript = \"ok.toml\"\n\n\
         [[agent]]\nid = \"no\"\nprovider = \"script\"\nscript = \"no.toml\"\n",
    )
    .unwrap();
    let tool = |out: &Output| {
        json_lines(out)
            .into_iter()
            .find(|l| l["type"] == "tool_call" && l["status"] == "complete")
            .unwrap()
    };
    let out = hive(&["run", "--agent", "ok", "--json", "go"], dir.path());
    assert!(out.status.success());
    let t = tool(&out);
    assert_eq!(
        (t["output"].as_str(), t["output_is_error"].as_bool()),
        (Some("ran"), Some(false)),
        "{t}"
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("denied"));
    let out = hive(&["run", "--agent", "no", "--json", "go"], dir.path());
    assert!(String::from_utf8_lossy(&out.stderr).contains("denied"));
    assert_eq!(tool(&out)["output_is_error"], true);
    let log = walk(&dir.path().join("state"), "approvals.jsonl").expect("an audit log");
    let lines: Vec<Value> = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let said: Vec<(&str, &str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["pane"].as_str().unwrap(),
                l["decision"].as_str().unwrap(),
                l["by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            ("ok", "allow", "status"),
            ("no", "ask", "preset:edit"),
            ("no", "deny", "headless")
        ]
    );
}

/// The file named `name` under `dir`.
fn walk(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(found) = walk(&p, name) {
                return Some(found);
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
    }
    None
}

/// `hive run … | head`: a reader that closed its end ends the command
/// quietly (status 0, nothing on stderr), as other CLIs do.
#[test]
fn a_closed_output_ends_run_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for json in [true, false] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hive"));
        cmd.args(["run", "--agent", "demo"])
            .args(json.then_some("--json"))
            .arg("hello")
            .current_dir(d)
            .env("HIVE_DATA_DIR", d.join("data"))
            .env("HIVE_STATE_DIR", d.join("state"))
            .env("XDG_CONFIG_HOME", d.join("xdg"))
            .stdout(writer);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "json {json}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "json {json}");
    }
}

#[test]
fn help_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let out = hive(&["--help"], dir.path());
    assert!(String::from_utf8_lossy(&out.stdout).contains("run"));
    let out = hive(&["--version"], dir.path());
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn ctrl_c_interrupts_the_turn_which_ends_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_hive"))
        .args(["run", "--agent", "demo", "--json", "go slow"])
        .current_dir(dir.path())
        .env("HIVE_DATA_DIR", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the turn streams, then interrupt it like a user would.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        out.status.success(),
        "a cancelled turn is not a failure: {stderr}"
    );
    let lines = json_lines(&out);
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "turn_complete");
    assert_eq!(last["status"], "cancelled");
}

/// Issue 46 item 21: `hive` in a subdirectory of a project finds the
/// project's `hive.toml` above it (as git finds a repository), and the
/// config's `cwd = "."` is the config's directory, not where hive started.
#[test]
fn a_subdirectory_finds_the_projects_config_and_its_cwd_is_the_projects() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    let deep = project.join("src/deep");
    std::fs::create_dir_all(&deep).unwrap();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    std::fs::copy(fixture, project.join("echo.toml")).unwrap();
    std::fs::write(
        project.join("hive.toml"),
        "[[agent]]\nid = \"sub\"\nprovider = \"script\"\nscript = \"echo.toml\"\ncwd = \".\"\n",
    )
    .unwrap();
    let out = hive(&["run", "--agent", "sub", "found"], &deep);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Reply to: found"));

    let config = hive::config::Config::from_file(
        &project.join("src/../hive.toml"),
        &hive::provider::Registry::builtin(),
    )
    .unwrap();
    let cwd = config.agents[0].cwd.clone().unwrap();
    assert_eq!(
        std::fs::canonicalize(&cwd).unwrap(),
        std::fs::canonicalize(&project).unwrap()
    );
    assert!(cwd.is_absolute(), "{}", cwd.display());
}

/// `permission_mode = "yolo"` on an `openai` agent (issue 46 item 3): the
/// key is also a common field, and it must still reach the provider, so a
/// headless write runs instead of being denied for want of a console;
/// `auto-edit` lets the write through too, and a mode the provider does
/// not know is refused at its line.
#[test]
fn openai_permission_mode_written_on_the_agent_table_applies() {
    use crate::openai_server::{Reply, Server, answer_text, finish, tool_call};
    for mode in ["yolo", "auto-edit"] {
        let dir = tempfile::tempdir().unwrap();
        let args = serde_json::json!({"path": "out.txt", "content": "written\n"}).to_string();
        let server = Server::start(vec![
            Reply::Chunks(vec![
                tool_call(0, "w1", "write", &args),
                finish("tool_calls"),
            ]),
            answer_text("done", 1, 1),
        ]);
        let config = format!(
            "[[agent]]\nid = \"oa\"\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"{}\"\npermission_mode = \"{mode}\"\n",
            server.base_url
        );
        std::fs::write(dir.path().join("hive.toml"), config).unwrap();
        let out = hive(&["run", "--agent", "oa", "write it"], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mode}: {stderr}");
        assert!(!stderr.contains("denied"), "{mode}: {stderr}");
        let written = std::fs::read_to_string(dir.path().join("out.txt"));
        assert_eq!(
            written.ok().as_deref(),
            Some("written\n"),
            "{mode}: {stderr}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hive.toml"),
        "[[agent]]\nid = \"oa\"\nprovider = \"openai\"\nmodel = \"m\"\npermission_mode = \"bogus\"\n",
    )
    .unwrap();
    let out = hive(&["run", "--agent", "oa", "hi"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(":5:") && stderr.contains("permission_mode"),
        "{stderr}"
    );
}

/// Issue 51: a `[[mcp_server]]` of the config reaches the Claude Code a
/// pane starts (the fake CLI, tests/fake/fake_claude.py, reads the
/// `--mcp-config` file as the real one does and records it), next to an
/// agent with `mcp = false` that gets no MCP config at all.
#[test]
fn a_config_mcp_server_reaches_the_claude_a_pane_starts() {
    let dir = tempfile::tempdir().unwrap();
    let fake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake/fake_claude.py");
    let log = dir.path().join("argv.jsonl");
    let agent = |id: &str, extra: &str| {
        format!(
            "[[agent]]\nid = \"{id}\"\nprovider = \"claude\"\ncommand = [\"python3\", \"{fake}\"]\n\
             env = {{ FAKE_CLAUDE_ARGV_FILE = \"{}\" }}\n{extra}\n",
            log.display()
        )
    };
    let config = format!(
        "[[mcp_server]]\nname = \"files\"\ncommand = \"mcp-files\"\nargs = [\"/srv\"]\n\
         env = {{ FILES_TOKEN = \"s3cr3t\" }}\n\n{}{}",
        agent("cc", ""),
        agent("bare", "mcp = false")
    );
    std::fs::write(dir.path().join("hive.toml"), config).unwrap();
    for id in ["cc", "bare"] {
        let out = hive(&["run", "--agent", id, "hello"], dir.path());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let starts: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(starts.len(), 2, "{starts:?}");
    assert_eq!(
        starts[0]["mcp_config"],
        serde_json::json!({"mcpServers": {"files": {
            "type": "stdio", "command": "mcp-files", "args": ["/srv"],
            "env": {"FILES_TOKEN": "s3cr3t"},
        }}})
    );
    // The file hive wrote holds a secret: its owner's alone.
    let argv: Vec<String> = serde_json::from_value(starts[0]["argv"].clone()).unwrap();
    let at = argv.iter().position(|a| a == "--mcp-config").unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&argv[at + 1])
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(argv[at + 1].starts_with(&dir.path().join("state").display().to_string()));
    assert!(starts[1]["mcp_config"].is_null(), "{:?}", starts[1]);
    assert!(!starts[1]["argv"].to_string().contains("--mcp-config"));
}

/// Issue 51: the same `[[mcp_server]]` reaches a Codex pane (`-c
/// mcp_servers.NAME.*` on its command line), a Gemini pane (the
/// system-defaults settings file it reads) and an ACP agent (`mcpServers`
/// of `session/new`), each the project's fake CLI recording what it got.
#[test]
fn a_config_mcp_server_reaches_codex_gemini_and_acp_panes() {
    let dir = tempfile::tempdir().unwrap();
    let fake = |name: &str| format!("{}/tests/fake/{name}", env!("CARGO_MANIFEST_DIR"));
    let log = |name: &str| dir.path().join(name).display().to_string();
    let config = format!(
        r#"
[[mcp_server]]
name = "files"
command = "mcp-files"
args = ["/srv"]

[[agent]]
id = "cx"
provider = "codex"
transport = "exec"
command = ["python3", "{}"]
env = {{ FAKE_CODEX_LOG = "{}" }}

[[agent]]
id = "gm"
provider = "gemini"
command = ["python3", "{}"]
env = {{ FAKE_GEMINI_LOG = "{}" }}

[[agent]]
id = "ac"
provider = "acp"
command = ["python3", "{}"]
env = {{ FAKE_ACP_LOG = "{}" }}
"#,
        fake("fake_codex.py"),
        log("codex.jsonl"),
        fake("fake_gemini.py"),
        log("gemini.jsonl"),
        fake("fake_acp.py"),
        log("acp.log"),
    );
    std::fs::write(dir.path().join("hive.toml"), config).unwrap();
    for id in ["cx", "gm", "ac"] {
        let out = hive(&["run", "--agent", id, "hello"], dir.path());
        assert!(
            out.status.success(),
            "{id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let first = |name: &str| -> Value {
        let text = std::fs::read_to_string(log(name)).unwrap();
        serde_json::from_str(text.lines().next().unwrap()).unwrap()
    };
    let argv = first("codex.jsonl")["argv"].to_string();
    assert!(
        argv.contains(r#""-c","mcp_servers.files.command=\"mcp-files\"","-c","mcp_servers.files.args=[\"/srv\"]""#),
        "{argv}"
    );
    assert_eq!(
        first("gemini.jsonl")["system_defaults"]["mcpServers"]["files"],
        serde_json::json!({"command": "mcp-files", "args": ["/srv"], "env": {}})
    );
    let acp = std::fs::read_to_string(log("acp.log")).unwrap();
    let new = acp
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["method"] == "session/new")
        .unwrap_or_else(|| panic!("no session/new: {acp}"));
    assert_eq!(
        new["params"]["mcpServers"],
        serde_json::json!([{"name": "files", "command": "mcp-files", "args": ["/srv"], "env": []}])
    );
}
