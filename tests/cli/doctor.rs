//! `hive doctor` against a fake PATH of tiny shell scripts standing in for
//! the agent CLIs (missing CLI, old version, missing auth, failing dry
//! start): snapshots of the plain report, plus the binary's exit status and
//! JSON. Never reads the real environment: HOME, PATH and variables are
//! the test's own.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use hive::config::{AgentConfig, Config};
use hive::doctor::{self, Env, render};

struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Self { dir }
    }

    /// A fake CLI: `#!/bin/sh` with `body`.
    fn script(&self, name: &str, body: &str) {
        let p = self.dir.path().join("bin").join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn env(&self, vars: &[(&str, &str)]) -> Env {
        let home = self.dir.path().to_owned();
        Env {
            path: home.join("bin").into_os_string(),
            cwd: home.join("work"),
            home,
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<HashMap<_, _>>(),
        }
    }

    /// The plain report for these agents, times pinned.
    fn report(&self, agents: &[AgentConfig], vars: &[(&str, &str)]) -> (String, bool) {
        let mut config = Config::builtin();
        config.agents = agents.to_vec();
        let mut report = doctor::diagnose(&config, Vec::new(), &self.env(vars));
        report.zero_times();
        (render::text(&report, false), report.ok())
    }
}

fn agent(id: &str, provider: &str) -> AgentConfig {
    AgentConfig::new(id, provider)
}

#[test]
fn doctor_missing_cli() {
    let lab = Lab::new();
    let (text, ok) = lab.report(&[agent("claude", "claude")], &[("ANTHROPIC_API_KEY", "x")]);
    assert!(!ok);
    insta::assert_snapshot!(text);
}

#[test]
fn doctor_old_version() {
    let lab = Lab::new();
    lab.script("codex", "echo 'codex-cli 0.100.0'");
    let secret = "sk-do-not-print-me";
    let (text, ok) = lab.report(&[agent("codex", "codex")], &[("OPENAI_API_KEY", secret)]);
    assert!(ok, "an old version still starts");
    assert!(!text.contains(secret));
    insta::assert_snapshot!(text);
}

#[test]
fn doctor_missing_auth() {
    let lab = Lab::new();
    lab.script("claude", "echo '2.1.330 (Claude Code)'");
    let (text, ok) = lab.report(&[agent("claude", "claude")], &[]);
    assert!(ok, "missing auth is a warning");
    insta::assert_snapshot!(text);

    // The agent's own login file counts.
    let creds = lab.dir.path().join(".claude/.credentials.json");
    std::fs::create_dir_all(creds.parent().unwrap()).unwrap();
    std::fs::write(&creds, "{}").unwrap();
    let (text, _) = lab.report(&[agent("claude", "claude")], &[]);
    assert!(
        text.contains("ok    auth       login file ~/.claude/.credentials.json"),
        "{text}"
    );
    // So does a key in the agent's own env table.
    std::fs::remove_file(&creds).unwrap();
    let mut with_key = agent("claude", "claude");
    with_key.env.insert("ANTHROPIC_API_KEY".into(), "k".into());
    let (text, _) = lab.report(&[with_key], &[]);
    assert!(text.contains("ANTHROPIC_API_KEY is set"), "{text}");
}

#[test]
fn doctor_failing_dry_start() {
    let lab = Lab::new();
    lab.script("pi", "echo 'Error: Cannot find module pi-ai' >&2\nexit 3");
    let (text, ok) = lab.report(&[agent("pi", "pi")], &[("ANTHROPIC_API_KEY", "x")]);
    assert!(!ok);
    insta::assert_snapshot!(text);
}

/// A CLI slow to print its version works (#46's walk: on a loaded machine
/// Gemini CLI took 6.4 s and `hive init` called it broken, asking "it did
/// not start" with No as the answer).
#[test]
fn doctor_waits_for_a_slow_cli() {
    let lab = Lab::new();
    lab.script("gemini", "sleep 6\necho 0.61.0");
    let (text, ok) = lab.report(&[agent("gemini", "gemini")], &[("GEMINI_API_KEY", "x")]);
    assert!(ok, "{text}");
    assert!(text.contains("--version` exited 0"), "{text}");
}

#[test]
fn doctor_shell_scripted_unknown_and_no_cwd() {
    let lab = Lab::new();
    let mut script = agent("demo", "script");
    script.script = Some("demo:tour".into());
    let mut broken = agent("nope", "script");
    broken.script = Some("demo:absent".into());
    let mut homeless = agent("homeless", "pty");
    homeless.cwd = Some("../missing".into());
    let (text, ok) = lab.report(
        &[
            script,
            agent("shell", "pty"),
            broken,
            agent("odd", "telepathy"),
            homeless,
        ],
        &[("SHELL", "/bin/sh")],
    );
    assert!(!ok);
    insta::assert_snapshot!(text);
}

/// An `openai` agent runs in hive: no program or login file to check,
/// its own settings are its config (doctor once called it an unknown
/// provider, issue #28).
#[test]
fn doctor_passes_an_openai_agent() {
    let lab = Lab::new();
    let mut direct = agent("direct", "openai");
    direct.model = Some("gpt-4.1".into());
    direct.set("base_url", "http://localhost:11434/v1").unwrap();
    direct.set("max_steps", 20).unwrap();
    let (text, ok) = lab.report(&[direct], &[]);
    assert!(ok, "{text}");
    assert!(!text.contains("unknown provider"), "{text}");

    let mut bad = agent("bad", "openai");
    bad.model = Some("gpt-4.1".into());
    bad.set("max_steps", "many").unwrap();
    let (text, ok) = lab.report(&[bad], &[]);
    assert!(!ok);
    assert!(text.contains("max_steps"), "{text}");
}

/// Every agent of the shipped example config names a provider doctor
/// knows, and the example loads with each provider's own keys checked.
#[test]
fn the_example_config_names_only_known_providers() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/hive.example.toml");
    let config = Config::load(Some(&path), &hive::provider::Registry::builtin()).unwrap();
    assert!(config.agents.iter().any(|a| a.provider == "openai"));
    let lab = Lab::new();
    let report = doctor::diagnose(&config, Vec::new(), &lab.env(&[]));
    for agent in &report.agents {
        for check in &agent.checks {
            assert!(
                !check.detail.contains("unknown provider"),
                "{}: {}",
                agent.id,
                check.detail
            );
        }
    }
}

/// The binary: exit 1 when an agent cannot start, 0 when all can; JSON
/// with the same verdict.
#[test]
fn doctor_command_exit_status_and_json() {
    let lab = Lab::new();
    lab.script("claude", "echo '2.1.330 (Claude Code)'");
    let config = lab.dir.path().join("hive.toml");
    let write = |agents: &str| std::fs::write(&config, agents).unwrap();
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hive"));
        cmd.arg("--config").arg(&config).arg("doctor");
        if json {
            cmd.arg("--json");
        }
        cmd.env("PATH", lab.dir.path().join("bin"))
            .env("HOME", lab.dir.path())
            .env("XDG_CONFIG_HOME", lab.dir.path().join("config"))
            .env_remove("ANTHROPIC_API_KEY")
            .current_dir(lab.dir.path().join("work"))
            .output()
            .unwrap()
    };
    write("[[agent]]\nid = \"c\"\nprovider = \"claude\"\n");
    let out = run(false);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    write(
        "[[agent]]\nid = \"c\"\nprovider = \"claude\"\n[[agent]]\nid = \"g\"\nprovider = \"gemini\"\n",
    );
    let out = run(false);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 of 2 agents cannot start: g"), "{stdout}");
    let out = run(true);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["agents"][1]["checks"][1]["level"], "fail");
    write("[[agent]]\nid = \"c\"\nprovider = \"claude\"\nmodel = 3\n");
    let out = run(false);
    assert_eq!(out.status.code(), Some(1), "a config error fails");
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL"));
}

/// Issue 30: each `[[host]]` is checked over real ssh: reached, its hive,
/// its agents; a host that cannot be reached fails the doctor with ssh's
/// own reason.
#[test]
fn doctor_checks_each_host_over_ssh() {
    let dir = tempfile::tempdir().unwrap();
    let Some(sshd) = crate::support::sshd::Sshd::start(dir.path(), None) else {
        return;
    };
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_hive"));
    sshd.seed_binary(bin);
    let project = sshd.remote_home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let local = dir.path().join("local");
    std::fs::create_dir_all(&local).unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        local.join("hive.toml"),
        format!(
            "[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"demo:reviewer\"\n\n\
             [[host]]\nname = \"box\"\nssh = \"{}@127.0.0.1:{}\"\npath = \"{}\"\n\n\
             [[host]]\nname = \"gone\"\nssh = \"127.0.0.1:{closed}\"\n",
            crate::support::sshd::user(),
            sshd.port,
            project.display()
        ),
    )
    .unwrap();
    sshd.masters_in(local.join("state/run/ssh"));
    let out = Command::new(bin)
        .arg("doctor")
        .current_dir(&local)
        .env("HIVE_SSH", sshd.ssh_command())
        .env("HIVE_STATE_DIR", local.join("state"))
        .env("HOME", &local)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("host box"), "{text}");
    assert!(text.contains("reached"), "{text}");
    assert!(text.contains("cache/hive/bin/hive-"), "its hive: {text}");
    assert!(
        text.contains("all 3 can start there"),
        "the demo's agents: {text}"
    );
    assert!(text.contains("host gone"), "{text}");
    assert!(text.contains("Connection refused"), "ssh's reason: {text}");
    assert!(text.contains("host not usable: gone"), "{text}");
}
