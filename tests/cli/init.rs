//! `hive init` against a PATH made for the test: tiny shell scripts stand in
//! for the agent CLIs (found, not found, not logged in), in a directory that
//! is a git repository or not. The file it writes must load without
//! warnings and pass `hive doctor`; `--yes` never replaces a file; a local
//! OpenAI-compatible server is found; the demo's status line names
//! `hive init`; and, in tmux, the questions answered by keys and the hint
//! in the real console.

use crate::support::tmux;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hive::config::{Config, ConfigSource};
use hive::doctor::{self, Env};

struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    /// `bin/` (with git in it, nothing else of the real PATH), `work/`.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let git = Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap();
        let git = String::from_utf8(git.stdout).unwrap();
        std::os::unix::fs::symlink(git.trim(), dir.path().join("bin/git")).unwrap();
        Self { dir }
    }

    fn home(&self) -> &Path {
        self.dir.path()
    }

    fn work(&self) -> PathBuf {
        self.home().join("work")
    }

    fn bin(&self) -> PathBuf {
        self.home().join("bin")
    }

    /// A fake CLI that answers `--version` with `version`.
    fn cli(&self, name: &str, version: &str) {
        let p = self.bin().join(name);
        std::fs::write(&p, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The CLI's login file, where doctor looks for it.
    fn login(&self, file: &str) {
        let p = self.home().join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "{}").unwrap();
    }

    fn git_init(&self) {
        let ok = Command::new("git")
            .args(["init", "-q", "-b", "main"])
            .current_dir(self.work())
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// A first commit, for worktrees to start from.
    fn commit(&self) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["commit", "-q", "--allow-empty", "-m", "first"])
            .current_dir(self.work())
            .status()
            .unwrap();
        assert!(ok.success());
    }

    fn hive(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hive"));
        cmd.args(args)
            .env_clear()
            .env("PATH", self.bin())
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join("config"))
            .env("HIVE_INIT_PORTS", "")
            .envs(vars.iter().copied())
            .current_dir(self.work())
            .stdin(std::process::Stdio::null());
        cmd.output().unwrap()
    }

    fn env(&self) -> Env {
        Env {
            path: self.bin().into_os_string(),
            home: self.home().to_owned(),
            cwd: self.work(),
            vars: HashMap::new(),
        }
    }

    fn written(&self) -> String {
        std::fs::read_to_string(self.work().join("hive.toml")).unwrap()
    }

    /// The written file through the real loader (no warnings) and
    /// doctor, in the library and as `hive doctor` in the directory.
    fn check_written(&self, vars: &[(&str, &str)]) -> Config {
        let path = self.work().join("hive.toml");
        let config = Config::from_file(&path, &hive::provider::Registry::builtin()).unwrap();
        let (_, warnings) = hive::app::build_app(&config);
        assert!(warnings.is_empty(), "{warnings:?}");
        let mut env = self.env();
        env.vars = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let report = doctor::diagnose(&config, Vec::new(), &env);
        assert!(report.ok(), "{}", doctor::render::text(&report, false));
        let out = self.hive(&["doctor"], vars);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(text.contains("hive.toml"), "the project's file: {text}");
        every_key_documented(&self.written());
        config
    }
}

/// Every `key = value` line carries its own comment.
fn every_key_documented(text: &str) {
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with('[') {
            continue;
        }
        assert!(l.contains(" # "), "undocumented key: {line}\n{text}");
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ids(config: &Config) -> Vec<&str> {
    config.agents.iter().map(|a| a.id.as_str()).collect()
}

#[test]
fn found_not_found_and_not_logged_in() {
    let lab = Lab::new();
    lab.cli("claude", "2.1.330 (Claude Code)");
    lab.login(".claude/.credentials.json");
    lab.cli("codex", "codex-cli 0.169.0");
    let out = lab.hive(&["init"], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("stdin is not a terminal: taking the defaults"),
        "{text}"
    );
    assert!(
        text.contains("found         claude  Claude Code  ~/bin/claude 2.1.330"),
        "{text}"
    );
    assert!(text.contains("not logged in codex"), "{text}");
    assert!(text.contains("run `codex login`"), "{text}");
    assert!(text.contains("not found     gemini"), "{text}");
    assert!(text.contains("npm install -g @google/gemini-cli"), "{text}");
    assert!(text.contains("not found     pi"), "{text}");
    assert!(text.contains("not a git repository"), "{text}");
    assert!(
        text.contains("Add a Codex pane (not logged in yet)? [Y/n] y"),
        "{text}"
    );
    assert!(text.contains("Add a shell pane? [Y/n] y"), "{text}");
    assert!(
        !text.contains("worktree"),
        "no question outside git: {text}"
    );
    assert!(text.contains("Wrote "), "{text}");
    let config = lab.check_written(&[]);
    assert_eq!(ids(&config), ["claude", "codex", "shell"]);
    assert!(config.agents.iter().all(|a| a.worktree.is_none()));
    assert_eq!(
        config.source,
        ConfigSource::File(lab.work().join("hive.toml"))
    );
}

#[test]
fn git_repository_worktrees_default_with_two_agents() {
    let lab = Lab::new();
    lab.git_init();
    lab.commit();
    lab.cli("claude", "2.1.330 (Claude Code)");
    lab.cli("gemini", "0.20.0");
    lab.login(".gemini/oauth_creds.json");
    let out = lab.hive(&["init", "--yes"], &[("ANTHROPIC_API_KEY", "x")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("stdin is not a terminal"),
        "--yes says nothing: {text}"
    );
    assert!(
        text.contains("this directory is a git repository"),
        "{text}"
    );
    assert!(text.contains("own git worktree"), "{text}");
    let config = lab.check_written(&[("ANTHROPIC_API_KEY", "x")]);
    assert_eq!(ids(&config), ["claude", "gemini", "shell"]);
    // Gemini's pane cannot code without permission_mode (#46 item 7): the
    // line is written, commented, and uncommenting it gives the mode.
    let written = std::fs::read_to_string(lab.work().join("hive.toml")).unwrap();
    assert!(config.agents.iter().all(|a| a.permission_mode.is_none()));
    let on = written.replace("# permission_mode = ", "permission_mode = ");
    let edited = hive::config::Config::parse(&on, hive::config::ConfigSource::Builtin).unwrap();
    let gemini = edited.agent("gemini").unwrap();
    assert_eq!(
        gemini.permission_mode.as_deref(),
        Some("auto_edit"),
        "{written}"
    );
    assert!(edited.agent("claude").unwrap().permission_mode.is_none());
    let wt: Vec<bool> = config.agents.iter().map(|a| a.worktree.is_some()).collect();
    assert_eq!(wt, [true, true, false], "the shell stays in the checkout");

    // One agent: worktrees default to no.
    let lab = Lab::new();
    lab.git_init();
    lab.cli("pi", "0.9.1");
    lab.login(".pi/agent/auth.json");
    let out = lab.hive(&["init", "--yes", "--dir", "."], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("own git worktree"));
    let config = lab.check_written(&[]);
    assert_eq!(ids(&config), ["pi", "shell"]);
    assert!(config.agents.iter().all(|a| a.worktree.is_none()));

    // No commit yet: nothing for a worktree to start from, so no by default.
    let lab = Lab::new();
    lab.git_init();
    lab.cli("claude", "2.1.330 (Claude Code)");
    lab.cli("codex", "codex-cli 0.169.0");
    let out = lab.hive(&["init", "--yes"], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("no commit yet"), "{text}");
    assert!(
        text.contains("own git worktree (.hive/worktrees/<id>, branch hive/<id>)? [y/N] n"),
        "{text}"
    );
    let config = lab.check_written(&[]);
    assert!(config.agents.iter().all(|a| a.worktree.is_none()));
}

#[test]
fn yes_never_overwrites() {
    let lab = Lab::new();
    lab.cli("claude", "2.1.330 (Claude Code)");
    let file = lab.work().join("hive.toml");
    std::fs::write(&file, "# mine\n").unwrap();
    for args in [&["init", "--yes"][..], &["init"][..]] {
        let out = lab.hive(args, &[]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("hive.toml exists; not overwriting it (--force replaces it)"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "# mine\n");
    }
    let out = lab.hive(&["init", "--yes", "--force"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(lab.written().contains("provider = \"claude\""));
}

#[test]
fn nothing_found_writes_nothing() {
    let lab = Lab::new();
    let out = lab.hive(&["init", "--yes"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to set up"), "{err}");
    assert!(!lab.work().join("hive.toml").exists());
    let out = lab.hive(&["init", "--yes", "--dir", "missing"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
}

/// A `/v1/models` server on a free loopback port listing `model`.
fn models_server(model: &'static str) -> u16 {
    models_list(serde_json::json!([{ "id": model }]))
}

/// A `/v1/models` server on a free loopback port listing `data`.
fn models_list(data: serde_json::Value) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let body = serde_json::json!({ "object": "list", "data": data }).to_string();
            let _ = write!(
                s,
                "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn openai_key_and_local_server() {
    let lab = Lab::new();
    let port = models_server("qwen3:8b");
    let found = hive::init::detect::probe(port, "Ollama").unwrap();
    assert_eq!(found.base_url, format!("http://127.0.0.1:{port}/v1"));
    assert_eq!(found.model, "qwen3:8b");
    let key = ("OPENAI_API_KEY", "sk-never-printed");
    let ports = port.to_string();
    let out = lab.hive(&["init", "--yes"], &[key, ("HIVE_INIT_PORTS", &ports)]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("OpenAI (OPENAI_API_KEY)"), "{text}");
    assert!(
        text.contains(&format!("local server on 127.0.0.1:{port} (qwen3:8b)")),
        "{text}"
    );
    let written = lab.written();
    assert!(!written.contains("sk-never"), "{written}");
    let config = lab.check_written(&[key]);
    // The first way in is taken by default, the others offered.
    assert_eq!(ids(&config), ["openai", "shell"]);
    assert_eq!(
        config.agents[0]
            .settings
            .get("api_key_env")
            .and_then(|v| v.as_str()),
        Some("OPENAI_API_KEY")
    );

    // Only the local server: no key needed.
    let lab = Lab::new();
    let out = lab.hive(&["init", "--yes"], &[("HIVE_INIT_PORTS", &ports)]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let config = lab.check_written(&[]);
    assert_eq!(config.agents[0].model.as_deref(), Some("qwen3:8b"));
    assert_eq!(config.agents[0].settings.get("api_key_env"), None);
}

#[test]
fn demo_status_line_names_hive_init() {
    let lab = Lab::new();
    let config = Config::builtin();
    assert_eq!(
        hive::init::demo_hint(&config, &lab.env()),
        None,
        "nothing installed"
    );
    lab.cli("claude", "2.1.330 (Claude Code)");
    lab.cli("codex", "codex-cli 0.169.0");
    let hint = hive::init::demo_hint(&config, &lab.env()).unwrap();
    assert_eq!(hint, "found claude, codex: `hive init` sets them up");
    let own = Config::parse("", ConfigSource::File("hive.toml".into())).unwrap();
    assert_eq!(
        hive::init::demo_hint(&own, &lab.env()),
        None,
        "not the demo"
    );

    let (mut app, _) = hive::app::build_app(&config);
    app.now = app.started;
    app.status = Some((hint, app.now + hive::init::HINT_FOR));
    let mut view = hive::ui::ViewState::default();
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 12)).unwrap();
    term.draw(|f| hive::app::frame(&mut app, &mut view, f.area(), f.buffer_mut()))
        .unwrap();
    let screen = term.backend().to_string();
    let status = screen.lines().last().unwrap();
    insta::assert_snapshot!(status);
}

/// The real binary in tmux: the questions answered by keys.
#[test]
fn e2e_questions_in_tmux() {
    if !tmux::available() {
        return;
    }
    let lab = Lab::new();
    lab.git_init();
    lab.cli("claude", "2.1.330 (Claude Code)");
    lab.login(".claude/.credentials.json");
    lab.cli("codex", "codex-cli 0.169.0");
    lab.login(".codex/auth.json");
    let hive = env!("CARGO_BIN_EXE_hive");
    // The environment in the script too: tmux's own PATH would win over `-e`;
    // `read` holds the pane open (no `sleep` on this PATH).
    let script = format!(
        "export PATH='{}' HOME='{}' HIVE_INIT_PORTS= OPENAI_API_KEY= OPENROUTER_API_KEY=; \
         '{hive}' init; echo INIT-EXIT=$?; read x",
        lab.bin().display(),
        lab.home().display()
    );
    let vars = [
        format!("PATH={}", lab.bin().display()),
        format!("HOME={}", lab.home().display()),
        "HIVE_INIT_PORTS=".into(),
        "OPENAI_API_KEY=".into(),
        "OPENROUTER_API_KEY=".into(),
        "TERM=xterm-256color".into(),
    ];
    let work = lab.work();
    // `hive init` in the work directory, in a tmux session of its own.
    let start = |session: &'static str| {
        let cmd = format!("cd '{}' && {script}", work.display());
        tmux::Tmux::start(
            session,
            tempfile::tempdir().unwrap(),
            (120, 40),
            &vars,
            &["/bin/sh", "-c", &cmd],
        )
    };
    let t = start("init");
    t.wait_for("Add a Claude Code pane? [Y/n]");
    t.keys(&["Enter"]);
    t.wait_for("Add a Codex pane? [Y/n]");
    t.type_text("n");
    t.keys(&["Enter"]);
    t.wait_for("own git worktree");
    t.type_text("y");
    t.keys(&["Enter"]);
    t.wait_for("Add a shell pane? [Y/n]");
    t.type_text("no");
    t.keys(&["Enter"]);
    let screen = t.wait_for("INIT-EXIT=");
    assert!(screen.contains("INIT-EXIT=0"), "{screen}");
    assert!(screen.contains("Wrote "), "{screen}");
    let config = lab.check_written(&[]);
    assert_eq!(ids(&config), ["claude"]);
    assert!(config.agents[0].worktree.is_some());

    // Again: it asks before replacing, and no keeps the file.
    let before = lab.written();
    let t = start("again");
    t.wait_for("exists. Replace it? [y/N]");
    t.keys(&["Enter"]);
    let screen = t.wait_for("INIT-EXIT=");
    assert!(screen.contains("INIT-EXIT=1"), "{screen}");
    assert!(screen.contains("was left as it is"), "{screen}");
    assert_eq!(lab.written(), before);
}

/// The real console on the demo config, with an agent CLI installed: its
/// status line names `hive init`.
#[test]
fn e2e_demo_hint_in_tmux() {
    if !tmux::available() {
        return;
    }
    let lab = Lab::new();
    lab.cli("claude", "2.1.330 (Claude Code)");
    let hive = env!("CARGO_BIN_EXE_hive");
    let h = lab.home().display().to_string();
    let script = format!(
        "export PATH='{}' HOME='{h}' SHELL=/bin/sh TERM=xterm-256color \
         HIVE_DATA_DIR='{h}/data' HIVE_STATE_DIR='{h}/state' XDG_CONFIG_HOME='{h}/config' \
         XDG_DATA_HOME='{h}/data' XDG_STATE_HOME='{h}/state' XDG_RUNTIME_DIR='{h}/run' \
         OPENAI_API_KEY= OPENROUTER_API_KEY=; cd '{}' && '{hive}'; echo HIVE-EXIT=$?; read x",
        lab.bin().display(),
        lab.work().display()
    );
    let t = tmux::Tmux::start(
        "demo",
        tempfile::tempdir().unwrap(),
        (160, 40),
        &[],
        &["/bin/sh", "-c", &script],
    );
    let screen = t.wait_for("found claude: `hive init` sets them up");
    assert!(screen.contains("Architect (demo)"), "{screen}");
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// Issue 46 item 21: a Codex that uses a `model_provider` of its own config
/// logs in through it, not with `codex login`: never "not logged in".
#[test]
fn a_codex_with_its_own_model_provider_is_not_called_logged_out() {
    let lab = Lab::new();
    lab.cli("codex", "codex-cli 0.169.0");
    let codex_home = lab.home().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        "model_provider = \"local\"\n\n[model_providers.local]\nname = \"Local\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let out = lab.hive(&["init"], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("not logged in codex"), "{text}");
    assert!(!text.contains("codex login"), "{text}");
    assert!(text.contains("Add a Codex pane? [Y/n] y"), "{text}");

    // With a key variable it reads, the key must be set.
    std::fs::write(
        codex_home.join("config.toml"),
        "model_provider = \"corp\"\n\n[model_providers.corp]\nenv_key = \"CORP_KEY\"\n",
    )
    .unwrap();
    std::fs::remove_file(lab.work().join("hive.toml")).unwrap();
    let text = stdout(&lab.hive(&["init"], &[]));
    assert!(text.contains("not logged in codex"), "{text}");
    std::fs::remove_file(lab.work().join("hive.toml")).unwrap();
    let text = stdout(&lab.hive(&["init"], &[("CORP_KEY", "k")]));
    assert!(!text.contains("not logged in codex"), "{text}");
}

/// A hostile local model server (#53 item 2): a model id that closes the
/// comment it is pasted into and adds a `pty` agent of its own command,
/// with escapes for the terminal. The id is refused (the server's next,
/// plausible one is taken), the file holds exactly the chosen agents, and
/// nothing `hive init` prints holds an escape.
#[test]
fn a_hostile_model_id_neither_writes_the_config_nor_reaches_the_terminal() {
    let lab = Lab::new();
    let evil = "m)\x1b]0;pwned\x07\n[[agent]]\nid = \"pwn\"\nprovider = \"pty\"\n\
                command = [\"sh\", \"-c\", \"touch PWNED\"]\n# (";
    let long = "x".repeat(100_000);
    let port = models_list(serde_json::json!([
        { "id": evil },
        { "id": "\u{1b}[2Jqwen" },
        { "id": long },
        { "id": "qwen3:8b" },
    ]));
    let ports = port.to_string();
    let out = lab.hive(&["init", "--yes"], &[("HIVE_INIT_PORTS", &ports)]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for bytes in [&out.stdout, &out.stderr] {
        assert!(
            !bytes.contains(&0x1b),
            "an escape reached the terminal: {text}"
        );
    }
    assert!(text.contains("(qwen3:8b)"), "{text}");
    let config = lab.check_written(&[]);
    assert_eq!(ids(&config), ["localserver", "shell"], "{}", lab.written());
    assert_eq!(config.agents[0].model.as_deref(), Some("qwen3:8b"));
    assert!(!lab.written().contains("pwn"), "{}", lab.written());

    // Only hostile ids: that server is not offered at all.
    let lab = Lab::new();
    let port = models_list(serde_json::json!([{ "id": evil }]));
    let ports = port.to_string();
    let out = lab.hive(&["init", "--yes"], &[("HIVE_INIT_PORTS", &ports)]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(!out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b));
    assert!(!lab.work().join("hive.toml").exists());
}
