//! Issue 34 against the real Codex CLIs (codex exec, codex app-server,
//! codex-acp): what was built and tested with the fake agents, used as a
//! user would in the console, checked in the mock's request log.

use super::*;

/// The mock's model requests of `scenario` (not the side ones).
fn sent(lab: &Lab, scenario: &str) -> Vec<Value> {
    lab.mock
        .requests()
        .into_iter()
        .filter(|r| r["scenario"] == scenario && r["side"] == false)
        .collect()
}

impl Tmux {
    /// Types `text` and waits until the mock answered `count` requests of
    /// `scenario` and the pane is idle again; returns the last request.
    fn turn(&self, lab: &Lab, text: &str, scenario: &str, count: usize) -> Value {
        self.type_line(text);
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let requests = sent(lab, scenario);
            if requests.len() >= count && self.rows().contains("· idle") {
                return requests.last().cloned().expect("a request");
            }
            assert!(
                Instant::now() < deadline,
                "{count} {scenario} requests and an idle pane:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// (model, reasoning effort) a Responses request carries.
fn choice(request: &Value) -> (String, String) {
    let body = &request["body"];
    (
        body["model"].as_str().unwrap_or("").to_owned(),
        body["reasoning"]["effort"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
    )
}

fn pair(model: &str, effort: &str) -> (String, String) {
    (model.to_owned(), effort.to_owned())
}

/// Item 1: `/model` and `/effort` are part of the pane's session: the first
/// request after `hive kill` + start carries them, and so does the first
/// after `/resume` back to that session from one with other choices; Codex
/// never warns that the thread was recorded with another model.
fn choices_survive(cli: Cli) {
    let Some((lab, agent, tmux)) = console_lab(cli) else {
        return;
    };
    // The configured model in the title: for codex-acp, its session is open
    // (an `/effort` before that gets no note on main; issue 34 item 3).
    tmux.expect("gpt-5.5 · idle");
    // gpt-5.4 is a preset codex-acp knows (it takes an effort only for those).
    tmux.type_line("/model gpt-5.4");
    tmux.expect("model set to gpt-5.4");
    tmux.type_line("/effort low");
    tmux.expect("effort set to low");
    let first = tmux.turn(&lab, "First. SCENARIO:text", "text", 1);
    assert_eq!(choice(&first), pair("gpt-5.4", "low"));

    let config = lab.root.path().join("hive.toml");
    let killed = run({
        let mut cmd = hive_command(&lab, &config);
        cmd.arg("kill");
        cmd
    });
    assert!(
        killed.status.is_some_and(|s| s.success()),
        "{}",
        killed.describe()
    );
    tmux.cmd(&["kill-session", "-t", "e2e"]);
    tmux.start(&lab, &agent);
    tmux.expect("First. SCENARIO:text");
    let restarted = tmux.turn(&lab, "After the restart. SCENARIO:text", "text", 2);
    assert_eq!(
        choice(&restarted),
        pair("gpt-5.4", "low"),
        "after a restart"
    );

    tmux.type_line("/clear");
    tmux.expect("new session");
    tmux.type_line("/model gpt-5.5");
    tmux.expect("model set to gpt-5.5");
    tmux.type_line("/effort high");
    tmux.expect("effort set to high");
    let other = tmux.turn(&lab, "Elsewhere. SCENARIO:text", "text", 3);
    assert_eq!(choice(&other), pair("gpt-5.5", "high"));
    // The picker lists the newest first: the earlier session is second.
    tmux.type_line("/resume");
    tmux.expect("resume a session");
    tmux.cmd(&["send-keys", "-t", "e2e", "Down"]);
    tmux.cmd(&["send-keys", "-t", "e2e", "Enter"]);
    tmux.expect("resumed session");
    let resumed = tmux.turn(&lab, "Back again. SCENARIO:text", "text", 4);
    assert_eq!(choice(&resumed), pair("gpt-5.4", "low"), "after /resume");
    let screen = tmux.screen();
    assert!(!screen.contains("is resuming with"), "{screen}");
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_choices_survive_restart_and_resume_codex_exec() {
    choices_survive(Cli::CodexExec);
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_choices_survive_restart_and_resume_codex_app_server() {
    choices_survive(Cli::CodexAppServer);
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_choices_survive_restart_and_resume_acp_codex_acp() {
    choices_survive(Cli::AcpCodex);
}

/// Item 5: codex-acp asks before an escalated command (`permission_mode =
/// "auto"`: on-request); the user denies it with a reason in the console,
/// and the reason reaches the model with the next message (ACP's answer
/// has no place for it).
#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_acp_codex_acp_deny_reason_reaches_the_model() {
    let Some(lab) = Lab::new() else { return };
    let Some(mut agent) = agent(&lab, Cli::AcpCodex) else {
        return;
    };
    agent.table.insert("permission_mode".into(), "auto".into());
    let Some(tmux) = Tmux::console(&lab, &agent) else {
        return;
    };
    tmux.expect("Message e2e");
    tmux.type_line("Run it outside the sandbox. SCENARIO:escalate");
    tmux.expect("approval needed");
    tmux.cmd(&["send-keys", "-t", "e2e", "n"]);
    tmux.type_line("use printf, not echo");
    tmux.expect("with your next message");
    let next = tmux.turn(&lab, "Fine. SCENARIO:text", "text", 1);
    let input = next["body"]["input"].to_string();
    assert!(
        input.contains("I declined your request to use echo hello-from-tool: use printf, not echo"),
        "{input}"
    );
    // The mode hive set is named once, never as the raw update.
    let screen = tmux.screen();
    assert!(!screen.contains("config_option_update"), "{screen}");
}

/// Item 4: Codex refuses its config at start (0.169.0: `approval_policy =
/// "untrusted" is no longer supported`); the pane shows Codex's own error,
/// not only "exited with status 1".
fn start_failure_shows_codex_error(cli: Cli) {
    let Some(lab) = Lab::new() else { return };
    let Some(agent) = agent(&lab, cli) else {
        return;
    };
    let config = Path::new(&agent.env["CODEX_HOME"]).join("config.toml");
    let text = std::fs::read_to_string(&config).expect("codex config");
    write(
        &config,
        &text.replace(
            r#"approval_policy = "never""#,
            r#"approval_policy = "untrusted""#,
        ),
    );
    let Some(tmux) = Tmux::console(&lab, &agent) else {
        return;
    };
    if cli == Cli::CodexExec {
        // exec starts per turn.
        tmux.expect("Message e2e");
        tmux.type_line("Hello. SCENARIO:text");
    }
    tmux.expect("is no longer supported");
    let screen = tmux.screen();
    assert!(!screen.contains("<unknown>"), "{screen}");
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_start_failure_shows_codex_error_codex_exec() {
    start_failure_shows_codex_error(Cli::CodexExec);
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_start_failure_shows_codex_error_codex_app_server() {
    start_failure_shows_codex_error(Cli::CodexAppServer);
}

/// A 4x4 red PNG: small, and an image Codex can read.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x08, 0x02, 0x00, 0x00, 0x00, 0x26, 0x93, 0x09,
    0x29, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x47, 0x0c, 0xc4, 0x71, 0x00, 0xae, 0x93, 0x0f, 0xf1, 0xd0, 0x5f, 0x23, 0x9e, 0x00, 0x00, 0x00,
    0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Item 9: an image path typed in a message to codex exec goes out as an
/// image (`--image`), not as text.
#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_codex_exec_typed_image_goes_as_an_image() {
    let Some(lab) = Lab::new() else { return };
    let Some(agent) = agent(&lab, Cli::CodexExec) else {
        return;
    };
    std::fs::write(lab.work.join("pic.png"), PNG).expect("png");
    let Some(tmux) = Tmux::console(&lab, &agent) else {
        return;
    };
    tmux.expect("Message e2e");
    let request = tmux.turn(&lab, "What is in pic.png? SCENARIO:text", "text", 1);
    let input = request["body"]["input"].to_string();
    assert!(
        input.contains("\"input_image\"") && input.contains("data:image/png;base64,"),
        "{input}"
    );
    let screen = tmux.screen();
    assert!(!screen.contains("sent as text"), "{screen}");
}

/// Item 9: Esc during a slow turn; once the pane shows the turn
/// interrupted, the status bar no longer says `interrupting…`.
fn interrupt_status_clears(cli: Cli) {
    let Some((lab, _, tmux)) = console_lab(cli) else {
        return;
    };
    tmux.expect("Message e2e");
    tmux.type_line("Take your time. SCENARIO:slow_text");
    let deadline = Instant::now() + Duration::from_secs(120);
    while sent(&lab, "slow_text").is_empty() {
        assert!(Instant::now() < deadline, "no request:\n{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
    // The answer takes ~6 s; interrupt it in the middle.
    std::thread::sleep(Duration::from_secs(1));
    tmux.cmd(&["send-keys", "-t", "e2e", "Escape"]);
    tmux.expect("⏹ interrupted");
    let rows = tmux.rows();
    let status = rows.lines().last().unwrap_or("");
    assert!(!status.contains("interrupting"), "{rows}");
    assert!(
        !rows.contains("Slow end."),
        "the answer was cut short:\n{rows}"
    );
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_interrupt_status_clears_codex_exec() {
    interrupt_status_clears(Cli::CodexExec);
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_interrupt_status_clears_codex_app_server() {
    interrupt_status_clears(Cli::CodexAppServer);
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn console_interrupt_status_clears_acp_codex_acp() {
    interrupt_status_clears(Cli::AcpCodex);
}
