//! The approval policy (issue 47) against real provider paths: the fake
//! Claude Code (its `can_use_tool` control requests) and the script
//! provider (the demo's approval step), behind a real runner. A rule's
//! allow answers without a card, a deny reaches the model as the tool's
//! result, an ask shows the card, a destructive request needs a second
//! card's own confirm, and every decision is a line of the audit log.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hive::config::AgentConfig;
use hive::policy::audit::{Audit, Entry};
use hive::policy::learned::LearnedRules;
use hive::policy::{Action, Gate, PanePolicy, Preset, RuleSpec};
use hive::provider::PermissionDecision;
use hive::provider::claude::ClaudeFactory;
use hive::provider::script::ScriptFactory;
use hive::provider::{ProviderFactory, ProviderSpec};
use hive::runner::{CONFIRM_OPTION, Decider, PaneEvent, RunnerCommand, RunnerOptions, SubmitMode};

use crate::support::{Pane, completed, fake_command};

fn rule(action: Action, tool: &str, command: &str) -> (String, RuleSpec) {
    (
        format!("{action:?}-{command}").to_lowercase(),
        RuleSpec {
            action,
            tool: tool.into(),
            command: Some(command.into()),
            path: None,
        },
    )
}

struct Setup {
    dir: tempfile::TempDir,
    agent: AgentConfig,
}

impl Setup {
    fn claude() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut agent = AgentConfig::new("claude-policy", "claude");
        agent.command = fake_command("fake_claude.py");
        agent.cwd = Some(dir.path().to_owned());
        agent
            .env
            .insert("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into());
        Self { dir, agent }
    }

    /// A script whose one turn asks to run `command` (as the demo's
    /// `approve` turn does), then says whether it ran.
    fn script(command: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("s.toml");
        let text = format!(
            "[capabilities]\npermissions = true\n[[turn]]\n[[turn.step]]\npermission = \"Run it\"\ntool = \"Bash\"\nargs = {{ command = {command:?} }}\noutput = \"ran\"\n[[turn.step]]\ntext = \"it ran\"\ndenied_text = \"it did not run\"\n"
        );
        std::fs::write(&file, text).expect("scenario");
        let mut agent = AgentConfig::new("script-policy", "script");
        agent.script = Some(file);
        agent.cwd = Some(dir.path().to_owned());
        Self { dir, agent }
    }

    /// The fake ACP agent: its `permission` turn asks to run `touch x`,
    /// offering allow always, allow and reject, and says which it got.
    fn acp() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut agent = AgentConfig::new("acp-policy", "acp");
        agent.command = fake_command("fake_acp.py");
        agent.cwd = Some(dir.path().to_owned());
        Self { dir, agent }
    }

    /// The fake Codex app-server: its `approve` turn asks to run
    /// `/bin/bash -lc 'echo approved'` (`item/commandExecution/requestApproval`).
    fn codex() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut agent = AgentConfig::new("codex-policy", "codex");
        agent.command = fake_command("fake_codex.py");
        agent.transport = Some("app-server".into());
        agent.cwd = Some(dir.path().to_owned());
        Self { dir, agent }
    }

    fn audit_path(&self) -> std::path::PathBuf {
        self.dir.path().join("state").join("approvals.jsonl")
    }

    fn start(
        &self,
        factory: Arc<dyn ProviderFactory>,
        rules: Vec<(String, RuleSpec)>,
        preset: Preset,
        timeout: Option<Duration>,
    ) -> Pane {
        let cwd = self.dir.path().to_owned();
        let policy = PanePolicy {
            pane: self.agent.id.clone(),
            vendor: self.agent.provider.clone(),
            gate: Gate::new(rules, preset, &cwd).expect("rules"),
            cwd,
            audit: Some(Arc::new(Audit::at(self.audit_path()))),
            learned: Some(Arc::new(LearnedRules::in_dir(
                &self.dir.path().join("state"),
            ))),
            timeout,
        };
        let spec = ProviderSpec {
            agent: self.agent.clone(),
            resume: None,
        };
        let options = RunnerOptions {
            policy: Some(policy),
            ..RunnerOptions::default()
        };
        Pane::start_with(factory, spec, options)
    }

    fn audit(&self) -> Vec<Entry> {
        Audit::at(self.audit_path()).last(100)
    }
}

fn cards(pane: &Pane) -> usize {
    pane.seen
        .iter()
        .filter(|e| matches!(e, PaneEvent::Permission(_)))
        .count()
}

async fn card(pane: &mut Pane) -> hive::provider::PermissionRequest {
    let PaneEvent::Permission(req) = pane
        .until("a card", |e| matches!(e, PaneEvent::Permission(_)))
        .await
    else {
        unreachable!()
    };
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_a_rules_allow_answers_without_a_card() {
    let s = Setup::claude();
    let rules = vec![rule(Action::Allow, "Bash", "mkdir perm-dir")];
    let mut pane = s.start(Arc::new(ClaudeFactory), rules, Preset::Edit, None);
    pane.submit("permission please", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 0, "no card: {:#?}", pane.seen);
    let tools = pane.completed_tools();
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert_ne!(tools[0].2, Some(true), "the command ran: {tools:?}");
    let log = s.audit();
    assert_eq!(log.len(), 1, "{log:?}");
    let e = &log[0];
    assert_eq!(
        (e.pane.as_str(), e.vendor.as_str(), e.tool.as_str()),
        ("claude-policy", "claude", "Bash")
    );
    assert_eq!(e.command.as_deref(), Some("mkdir perm-dir"));
    assert_eq!(
        (e.decision.as_str(), e.by.as_str()),
        ("allow", "allow-mkdir perm-dir")
    );
    assert!(e.at.ends_with('Z'), "{}", e.at);
    pane.runner.send(RunnerCommand::Shutdown);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_a_deny_reaches_the_model_as_the_reason() {
    let s = Setup::claude();
    let rules = vec![rule(Action::Deny, "Bash", "mkdir*")];
    let mut pane = s.start(Arc::new(ClaudeFactory), rules, Preset::Yolo, None);
    pane.submit("permission please", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 0);
    let tools = pane.completed_tools();
    let output = tools[0].1.clone().unwrap_or_default();
    assert!(
        output.contains("denied by hive policy (deny-mkdir*)"),
        "{tools:?}"
    );
    let log = s.audit();
    assert_eq!(
        (log[0].decision.as_str(), log[0].by.as_str()),
        ("deny", "deny-mkdir*")
    );
    pane.runner.send(RunnerCommand::Shutdown);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_what_no_rule_allows_shows_its_card() {
    let s = Setup::claude();
    // `allow Bash(git status*)` does not cover `mkdir`; the edit preset asks.
    let rules = vec![rule(Action::Allow, "Bash", "git status*")];
    let mut pane = s.start(Arc::new(ClaudeFactory), rules, Preset::Edit, None);
    pane.submit("permission please", SubmitMode::Auto);
    let req = card(&mut pane).await;
    pane.runner.send(RunnerCommand::Permission {
        request_id: req.request_id,
        decision: PermissionDecision::AllowOnce,
        by: Decider::Console,
    });
    assert!(completed(&pane.turn_end().await));
    let log = s.audit();
    let words: Vec<(&str, &str)> = log
        .iter()
        .map(|e| (e.decision.as_str(), e.by.as_str()))
        .collect();
    assert_eq!(words, [("ask", "preset:edit"), ("allow", "console")]);
    pane.runner.send(RunnerCommand::Shutdown);
}

/// `rm -rf` under `yolo` and an allow rule: a card that says so, whose
/// plain allow only brings a second card, which only its confirm option
/// passes (a second plain allow does not).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_a_destructive_request_needs_a_second_distinct_confirm() {
    let s = Setup::script("rm -rf build");
    let rules = vec![rule(Action::Allow, "Bash", "rm*")];
    let mut pane = s.start(Arc::new(ScriptFactory), rules, Preset::Yolo, None);
    pane.submit("go", SubmitMode::Auto);
    let first = card(&mut pane).await;
    assert!(
        first
            .description
            .as_deref()
            .unwrap_or_default()
            .contains("DESTRUCTIVE (rm -rf"),
        "{first:?}"
    );
    pane.runner.send(RunnerCommand::Permission {
        request_id: first.request_id.clone(),
        decision: PermissionDecision::AllowOnce,
        by: Decider::Console,
    });
    pane.until("the first card settled", |e| {
        matches!(e, PaneEvent::PermissionSettled { request_id } if *request_id == first.request_id)
    })
    .await;
    let second = card(&mut pane).await;
    assert_ne!(second.request_id, first.request_id);
    assert!(
        second.options.iter().any(|o| o.option_id == CONFIRM_OPTION),
        "{second:?}"
    );
    // `y` again is not a confirmation.
    pane.runner.send(RunnerCommand::Permission {
        request_id: second.request_id.clone(),
        decision: PermissionDecision::AllowOnce,
        by: Decider::Console,
    });
    pane.until(
        "told it needs the option",
        |e| matches!(e, PaneEvent::Notice { text, .. } if text.contains("confirm option")),
    )
    .await;
    pane.runner.send(RunnerCommand::Permission {
        request_id: second.request_id.clone(),
        decision: PermissionDecision::Option {
            option_id: CONFIRM_OPTION.into(),
        },
        by: Decider::Ctl,
    });
    assert!(completed(&pane.turn_end().await));
    let said = pane.final_messages(hive::event::Origin::Agent);
    assert_eq!(said.last().map(String::as_str), Some("it ran"), "{said:?}");
    let log = s.audit();
    let words: Vec<(&str, &str)> = log
        .iter()
        .map(|e| (e.decision.as_str(), e.by.as_str()))
        .collect();
    assert_eq!(
        words,
        [
            ("ask", "destructive"),
            ("confirm", "console"),
            ("allow", "ctl")
        ]
    );
    pane.runner.send(RunnerCommand::Shutdown);
}

/// Lines that hide a destructive or unvetted part behind an allowed
/// command are never allowed by the allow rule: each shows a card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_hidden_commands_are_never_allowed_by_an_allow_rule() {
    for line in [
        "git status && rm -rf ~",
        "git status; rm -rf /",
        "git status $(rm -rf ~)",
        "git status `rm -rf ~`",
        "FOO=1 rm -rf ~",
        "env rm -rf ~",
        "git status | sh",
    ] {
        let s = Setup::script(line);
        let rules = vec![rule(Action::Allow, "Bash", "git status*")];
        let mut pane = s.start(Arc::new(ScriptFactory), rules, Preset::Edit, None);
        pane.submit("go", SubmitMode::Auto);
        let req = card(&mut pane).await;
        pane.runner.send(RunnerCommand::Permission {
            request_id: req.request_id,
            decision: PermissionDecision::Deny {
                reason: "no".into(),
            },
            by: Decider::Console,
        });
        assert!(completed(&pane.turn_end().await));
        let log = s.audit();
        assert_eq!(log[0].decision, "ask", "{line}: {log:?}");
        assert!(
            !log.iter().any(|e| e.decision == "allow"),
            "{line}: {log:?}"
        );
        pane.runner.send(RunnerCommand::Shutdown);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_an_unanswered_card_is_denied_at_the_timeout() {
    let s = Setup::script("make deploy");
    let mut pane = s.start(
        Arc::new(ScriptFactory),
        Vec::new(),
        Preset::ReadOnly,
        Some(Duration::from_millis(300)),
    );
    pane.submit("go", SubmitMode::Auto);
    let req = card(&mut pane).await;
    assert!(completed(&pane.turn_end().await));
    let said = pane.final_messages(hive::event::Origin::Agent);
    assert_eq!(said.last().map(String::as_str), Some("it did not run"));
    assert!(
        pane.seen.iter().any(|e| matches!(e, PaneEvent::PermissionSettled { request_id } if *request_id == req.request_id)),
        "the card left every view"
    );
    let log = s.audit();
    assert_eq!(
        log.last().map(|e| e.by.as_str()),
        Some("timeout"),
        "{log:?}"
    );
    // The log is the user's alone.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(s.audit_path())
        .expect("log")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(Path::new(&s.audit_path()).is_file());
    pane.runner.send(RunnerCommand::Shutdown);
}

/// `allow always` on a card is a learned rule of the project: the next
/// request for the same command is answered by it, without a card (the
/// vendor was told "once", so the gate, not Claude, remembers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_allow_always_is_a_learned_rule_and_the_next_ask_has_no_card() {
    let s = Setup::claude();
    let mut pane = s.start(Arc::new(ClaudeFactory), Vec::new(), Preset::Edit, None);
    pane.submit("permission please", SubmitMode::Auto);
    let req = card(&mut pane).await;
    pane.runner.send(RunnerCommand::Permission {
        request_id: req.request_id,
        decision: PermissionDecision::AllowAlways,
        by: Decider::Console,
    });
    assert!(completed(&pane.turn_end().await));
    assert!(
        pane.notices()
            .iter()
            .any(|n| n.contains("learned learned.1")),
        "{:?}",
        pane.notices()
    );
    pane.submit("permission again", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 1, "the second request had no card");
    let rules = LearnedRules::in_dir(&s.dir.path().join("state")).rules();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].rule.command.as_deref(), Some("mkdir perm-dir"));
    let log = s.audit();
    let last = log.last().expect("lines");
    assert_eq!(
        (last.decision.as_str(), last.by.as_str()),
        ("allow", "learned.1")
    );
    pane.runner.send(RunnerCommand::Shutdown);
}

/// The agent's text of its last turn.
fn said(pane: &Pane) -> String {
    pane.final_messages(hive::event::Origin::Agent)
        .last()
        .cloned()
        .unwrap_or_default()
}

/// ACP: the adapter's own "always" option, picked on a card, is hive's
/// allow always: the adapter is told "allow once" (it keeps no always of
/// its own past the gate), hive learns the rule, and the next request is
/// answered by it without a card. A deny rule answers with the reject
/// option, the model told why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_its_own_allow_always_does_not_bypass_the_gate() {
    let s = Setup::acp();
    let factory: Arc<dyn ProviderFactory> = Arc::new(hive::provider::acp::AcpFactory);
    let mut pane = s.start(factory.clone(), Vec::new(), Preset::Edit, None);
    pane.submit("permission please", SubmitMode::Auto);
    let req = card(&mut pane).await;
    assert!(
        req.options.iter().any(|o| o.option_id == "yes-always"),
        "{req:?}"
    );
    pane.runner.send(RunnerCommand::Permission {
        request_id: req.request_id,
        decision: PermissionDecision::Option {
            option_id: "yes-always".into(),
        },
        by: Decider::Device("d1".into()),
    });
    assert!(completed(&pane.turn_end().await));
    assert_eq!(said(&pane), "decision: yes", "the adapter was told once");
    pane.submit("permission again", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 1, "the learned rule answered the second");
    assert_eq!(said(&pane), "decision: yes");
    let words: Vec<(String, String)> = s
        .audit()
        .iter()
        .map(|e| (e.decision.clone(), e.by.clone()))
        .collect();
    let want = [
        ("ask", "preset:edit"),
        ("allow_always", "device:d1"),
        ("allow", "learned.1"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(words, want);
    pane.runner.send(RunnerCommand::Shutdown);

    let s = Setup::acp();
    let rules = vec![rule(Action::Deny, "Bash", "touch*")];
    let mut pane = s.start(factory, rules, Preset::Yolo, None);
    pane.submit("permission please", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 0);
    assert_eq!(said(&pane), "decision: no");
    pane.runner.send(RunnerCommand::Shutdown);
}

/// The tool call's final output and whether it failed.
fn tool_output(pane: &Pane) -> (Option<String>, Option<bool>) {
    let tools = pane.completed_tools();
    let t = tools.last().expect("a tool call");
    (t.1.clone(), t.2)
}

/// Codex app-server: the gate reads the command without its `bash -lc`
/// wrapper; a rule's allow runs it with no card, a deny declines it with
/// no card, and with no rule the card shows (its answer logged by who).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_app_server_allow_deny_and_ask() {
    let factory = || -> Arc<dyn ProviderFactory> {
        hive::provider::Registry::builtin()
            .get("codex")
            .expect("codex")
    };
    let s = Setup::codex();
    let rules = vec![rule(Action::Allow, "Bash", "echo approved")];
    let mut pane = s.start(factory(), rules, Preset::Edit, None);
    pane.submit("approve", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 0);
    assert_eq!(tool_output(&pane).0.as_deref(), Some("approved\n"));
    assert_eq!(s.audit()[0].command.as_deref(), Some("echo approved"));
    pane.runner.send(RunnerCommand::Shutdown);

    let s = Setup::codex();
    let rules = vec![rule(Action::Deny, "Bash", "echo*")];
    let mut pane = s.start(factory(), rules, Preset::Yolo, None);
    pane.submit("approve", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 0);
    assert_eq!(tool_output(&pane), (Some("(declined)".into()), Some(true)));
    assert_eq!(s.audit()[0].by, "deny-echo*");
    pane.runner.send(RunnerCommand::Shutdown);

    let s = Setup::codex();
    let mut pane = s.start(factory(), Vec::new(), Preset::Edit, None);
    pane.submit("approve", SubmitMode::Auto);
    let req = card(&mut pane).await;
    pane.runner.send(RunnerCommand::Permission {
        request_id: req.request_id,
        decision: PermissionDecision::AllowOnce,
        by: Decider::Agent("lead".into()),
    });
    assert!(completed(&pane.turn_end().await));
    let words: Vec<(String, String)> = s
        .audit()
        .iter()
        .map(|e| (e.decision.clone(), e.by.clone()))
        .collect();
    assert_eq!(
        words,
        [
            ("ask".to_string(), "preset:edit".to_string()),
            ("allow".into(), "agent:lead".into())
        ]
    );
    pane.runner.send(RunnerCommand::Shutdown);
}

/// The built-in agent (`provider = "openai"`) against the scripted model
/// server: its `bash` call is read as `Bash(command)`; a rule's allow runs
/// it with no card, a deny answers the model with the rule's reason and no
/// card, and with no rule the card shows and its answer (a paired phone's)
/// is logged by who.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_bash_allow_deny_and_ask() {
    use super::openai::server::{Reply, Server, answer_text, finish, tool_call};
    let factory = || -> Arc<dyn ProviderFactory> {
        Arc::new(hive::provider::openai::OpenAiFactory::default().with_store(
            hive::history::Store::at(tempfile::tempdir().expect("tempdir").keep()),
        ))
    };
    let bash = |command: &str| {
        let args = serde_json::json!({ "command": command }).to_string();
        Reply::Chunks(vec![
            tool_call(0, "b1", "bash", &args),
            finish("tool_calls"),
        ])
    };
    // What the model was told of the call, in its second request.
    let told = |server: &Server| -> String {
        server
            .messages(1)
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == "b1")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let setup = |server: &Server| {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut agent = super::openai::coding_agent(server);
        agent.id = "oa-policy".into();
        agent.cwd = Some(dir.path().to_owned());
        Setup { dir, agent }
    };

    let server = Server::start(vec![bash("echo approved"), answer_text("done", 1, 1)]);
    let s = setup(&server);
    let rules = vec![rule(Action::Allow, "Bash", "echo approved")];
    let mut pane = s.start(factory(), rules, Preset::Edit, None);
    pane.submit("run it", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 0, "no card: {:#?}", pane.seen);
    assert_eq!(told(&server), "approved\n");
    let log = s.audit();
    assert_eq!(
        (
            log[0].vendor.as_str(),
            log[0].tool.as_str(),
            log[0].command.as_deref()
        ),
        ("openai", "Bash", Some("echo approved"))
    );
    assert_eq!(log[0].by, "allow-echo approved");
    pane.runner.send(RunnerCommand::Shutdown);

    let server = Server::start(vec![bash("echo denied"), answer_text("ok", 1, 1)]);
    let s = setup(&server);
    let rules = vec![rule(Action::Deny, "Bash", "echo*")];
    let mut pane = s.start(factory(), rules, Preset::Yolo, None);
    pane.submit("run it", SubmitMode::Auto);
    assert!(completed(&pane.turn_end().await));
    assert_eq!(cards(&pane), 0);
    let said = told(&server);
    assert!(
        said.contains("denied by hive policy (deny-echo*)"),
        "{said}"
    );
    assert!(!said.contains("denied\n"), "it ran: {said}");
    assert_eq!(s.audit()[0].decision, "deny");
    pane.runner.send(RunnerCommand::Shutdown);

    let server = Server::start(vec![bash("echo asked"), answer_text("done", 1, 1)]);
    let s = setup(&server);
    let mut pane = s.start(factory(), Vec::new(), Preset::Edit, None);
    pane.submit("run it", SubmitMode::Auto);
    let req = card(&mut pane).await;
    assert_eq!(req.tool_name, "bash");
    pane.runner.send(RunnerCommand::Permission {
        request_id: req.request_id,
        decision: PermissionDecision::AllowOnce,
        by: Decider::Device("phone".into()),
    });
    assert!(completed(&pane.turn_end().await));
    assert_eq!(told(&server), "asked\n");
    let words: Vec<(String, String)> = s
        .audit()
        .iter()
        .map(|e| (e.decision.clone(), e.by.clone()))
        .collect();
    assert_eq!(
        words,
        [
            ("ask".to_string(), "preset:edit".to_string()),
            ("allow".into(), "device:phone".into())
        ]
    );
    pane.runner.send(RunnerCommand::Shutdown);
}
