//! `/account` and `on_limit = "next-account"` (issue 51): a Claude or a
//! Codex pane goes on under another `[[account]]` with its conversation.
//! The fake claude keeps its transcript where Claude Code does (the
//! account's `CLAUDE_CONFIG_DIR`), the fake codex its rollout where Codex
//! does (`CODEX_HOME`); each fails a resume whose session is not in its
//! home, and says how many earlier turns it read, so a pane whose session
//! was not carried gets an error, and one that was carried answers on it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hive::config::{AccountConfig, AgentConfig, OnLimit};
use hive::event::Origin;
use hive::protocol::pane::PaneEvent;
use hive::provider::{ProviderSpec, Registry};
use hive::runner::{RunnerCommand, RunnerOptions, SubmitMode};

use crate::support::{Pane, fake_command, tempdir};

fn account(name: &str, home: &Path) -> AccountConfig {
    account_of("claude", name, home)
}

fn account_of(provider: &str, name: &str, home: &Path) -> AccountConfig {
    AccountConfig {
        name: name.into(),
        provider: provider.into(),
        home: Some(home.to_owned()),
        env: BTreeMap::new(),
    }
}

/// A Claude pane under account `work` of (`work`, `personal`), in `dir`.
fn start(dir: &Path, on_limit: OnLimit, limited: Option<&Path>) -> (Pane, PathBuf, PathBuf) {
    let (work, personal) = (dir.join("work"), dir.join("personal"));
    let mut agent = AgentConfig::new("cl", "claude");
    agent.command = fake_command("fake_claude.py");
    agent.cwd = Some(dir.to_owned());
    agent.on_limit = on_limit;
    agent.account = Some("work".into());
    agent
        .env
        .insert("FAKE_CLAUDE_TRANSCRIPTS".into(), "1".into());
    agent.env.insert("FAKE_CLAUDE_DELAY_MS".into(), "0".into());
    agent
        .env
        .insert("CLAUDE_CONFIG_DIR".into(), work.display().to_string());
    if let Some(home) = limited {
        agent
            .env
            .insert("FAKE_CLAUDE_LIMIT_HOME".into(), home.display().to_string());
    }
    let options = RunnerOptions {
        accounts: vec![account("work", &work), account("personal", &personal)],
        ..RunnerOptions::default()
    };
    let factory = Registry::builtin().get("claude").expect("claude");
    let spec = ProviderSpec {
        agent,
        resume: None,
    };
    (Pane::start_with(factory, spec, options), work, personal)
}

fn last_answer(p: &Pane) -> String {
    p.final_messages(Origin::Agent)
        .last()
        .cloned()
        .unwrap_or_default()
}

/// The prompts Claude's transcript holds under `home`.
fn transcript_lines(home: &Path) -> usize {
    let projects = home.join("projects");
    let Ok(dirs) = std::fs::read_dir(&projects) else {
        return 0;
    };
    dirs.flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .filter(|f| f.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|f| std::fs::read_to_string(f.path()).unwrap().lines().count())
        .sum()
}

async fn switched(p: &mut Pane, to: &str) {
    let want = format!("now on account {to}");
    p.until(
        "the switch",
        |e| matches!(e, PaneEvent::Notice { text, .. } if text.starts_with(&want)),
    )
    .await;
}

#[tokio::test]
async fn account_moves_a_claude_conversation_to_the_other_home_and_resumes_it_there() {
    let dir = tempdir();
    let (mut p, work, personal) = start(dir.path(), OnLimit::Wait, None);
    p.submit("first", SubmitMode::Auto);
    p.turn_end().await;
    assert!(
        last_answer(&p).starts_with("(earlier turns: 0)"),
        "{}",
        last_answer(&p)
    );

    p.runner
        .send(RunnerCommand::SwitchAccount("personal".into()));
    switched(&mut p, "personal").await;
    p.submit("second", SubmitMode::Auto);
    p.turn_end().await;
    // Resumed on the same session in the other home, which now holds both.
    assert!(
        last_answer(&p).starts_with("(earlier turns: 1)"),
        "{}",
        last_answer(&p)
    );
    assert_eq!(transcript_lines(&personal), 2);
    // The first home keeps its copy whole.
    assert_eq!(transcript_lines(&work), 1);

    // And back: the newer conversation goes with it, the older copy aside.
    p.runner.send(RunnerCommand::SwitchAccount("work".into()));
    switched(&mut p, "work").await;
    p.submit("third", SubmitMode::Auto);
    p.turn_end().await;
    assert!(
        last_answer(&p).starts_with("(earlier turns: 2)"),
        "{}",
        last_answer(&p)
    );
    assert!(
        p.notices()
            .iter()
            .any(|n| n.contains("the copy that was there is kept")),
        "{:?}",
        p.notices()
    );
    p.runner.shutdown().await;
}

#[tokio::test]
async fn a_switch_asked_mid_turn_waits_for_the_turn_and_unknown_names_are_refused() {
    let dir = tempdir();
    let (mut p, _, personal) = start(dir.path(), OnLimit::Wait, None);
    p.runner.send(RunnerCommand::SwitchAccount("nobody".into()));
    p.submit("slow answer", SubmitMode::Auto);
    p.turn_started().await;
    p.runner
        .send(RunnerCommand::SwitchAccount("personal".into()));
    p.turn_end().await;
    switched(&mut p, "personal").await;
    let notices = p.notices();
    assert!(
        notices.iter().any(|n| n.contains("no account `nobody`")),
        "{notices:?}"
    );
    assert!(
        notices.iter().any(|n| n.contains("when this turn ends")),
        "{notices:?}"
    );
    assert_eq!(transcript_lines(&personal), 1);
    p.runner.shutdown().await;
}

#[tokio::test]
async fn a_usage_limit_under_next_account_goes_on_at_once_under_the_next_one() {
    let dir = tempdir();
    let work = dir.path().join("work");
    let (mut p, _, personal) = start(dir.path(), OnLimit::NextAccount, Some(&work));
    p.submit("the task", SubmitMode::Auto);
    // The limit's failed turn, then the same message's turn under `personal`.
    p.turn_end().await;
    switched(&mut p, "personal").await;
    p.turn_end().await;
    let answer = last_answer(&p);
    // The vendor's conversation holds the message once: it is asked to go on.
    assert!(answer.starts_with("(earlier turns: 1)"), "{answer}");
    assert!(answer.contains("Go on with it"), "{answer}");
    assert_eq!(transcript_lines(&personal), 2);
    p.runner.shutdown().await;
}

/// A Codex pane (`transport`: app-server or exec) under account `work`
/// of (`work`, `personal`), in `dir`, the fake keeping its rollouts.
fn start_codex(dir: &Path, transport: &str) -> (Pane, PathBuf, PathBuf) {
    let (work, personal) = (dir.join("work"), dir.join("personal"));
    let mut agent = AgentConfig::new("cx", "codex");
    agent.command = fake_command("fake_codex.py");
    agent.transport = Some(transport.into());
    agent.cwd = Some(dir.to_owned());
    agent.account = Some("work".into());
    agent.env.insert("FAKE_CODEX_ROLLOUTS".into(), "1".into());
    agent
        .env
        .insert("CODEX_HOME".into(), work.display().to_string());
    let options = RunnerOptions {
        accounts: vec![
            account_of("codex", "work", &work),
            account_of("codex", "personal", &personal),
        ],
        ..RunnerOptions::default()
    };
    let factory = Registry::builtin().get("codex").expect("codex");
    let spec = ProviderSpec {
        agent,
        resume: None,
    };
    (Pane::start_with(factory, spec, options), work, personal)
}

/// The user messages Codex's rollouts hold under `home`.
fn rollout_prompts(home: &Path) -> usize {
    fn walk(dir: &Path, n: &mut usize) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, n);
            } else if path.extension().is_some_and(|x| x == "jsonl") {
                let text = std::fs::read_to_string(&path).unwrap();
                *n += text
                    .lines()
                    .filter(|l| l.contains("\"response_item\""))
                    .count();
            }
        }
    }
    let mut n = 0;
    walk(&home.join("sessions"), &mut n);
    n
}

/// The fake codex resumes a thread only when its rollout is in the home
/// it runs under, so this fails when the rollout is not carried.
#[tokio::test]
async fn account_moves_a_codex_conversation_to_the_other_home_and_resumes_it_there() {
    for transport in ["app-server", "exec"] {
        let dir = tempdir();
        let (mut p, work, personal) = start_codex(dir.path(), transport);
        p.submit("first", SubmitMode::Auto);
        p.turn_end().await;
        let answer = last_answer(&p);
        assert!(
            answer.starts_with("(earlier turns: 0)"),
            "{transport}: {answer}"
        );

        p.runner
            .send(RunnerCommand::SwitchAccount("personal".into()));
        switched(&mut p, "personal").await;
        p.submit("second", SubmitMode::Auto);
        p.turn_end().await;
        // The same thread, resumed under the other home, which now holds both.
        let answer = last_answer(&p);
        assert!(
            answer.starts_with("(earlier turns: 1)"),
            "{transport}: {answer}"
        );
        assert!(
            p.notices()
                .iter()
                .any(|n| n.contains("conversation carried to")),
            "{transport}: {:?}",
            p.notices()
        );
        assert_eq!(rollout_prompts(&personal), 2, "{transport}");
        // The first home keeps its copy whole.
        assert_eq!(rollout_prompts(&work), 1, "{transport}");
        p.runner.shutdown().await;
    }
}

/// The user prompts Gemini's chats hold under `home`.
fn chat_prompts(home: &Path) -> usize {
    let tmp = home.join(".gemini/tmp");
    let Ok(projects) = std::fs::read_dir(&tmp) else {
        return 0;
    };
    projects
        .flatten()
        .flat_map(|p| {
            std::fs::read_dir(p.path().join("chats"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter(|f| f.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|f| {
            std::fs::read_to_string(f.path())
                .unwrap()
                .lines()
                .filter(|l| l.contains("\"type\": \"user\""))
                .count()
        })
        .sum()
}

/// Gemini CLI keeps its chats under `GEMINI_CLI_HOME`; the fake resumes a
/// session only when its chat is in the home it runs under.
#[tokio::test]
async fn account_moves_a_gemini_conversation_to_the_other_home_and_resumes_it_there() {
    let dir = tempdir();
    let (work, personal) = (dir.path().join("work"), dir.path().join("personal"));
    let project = dir.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let mut agent = AgentConfig::new("gm", "gemini");
    agent.command = fake_command("fake_gemini.py");
    agent.cwd = Some(project);
    agent.account = Some("work".into());
    agent.env.insert("FAKE_GEMINI_SESSIONS".into(), "1".into());
    agent
        .env
        .insert("GEMINI_CLI_HOME".into(), work.display().to_string());
    let options = RunnerOptions {
        accounts: vec![
            account_of("gemini", "work", &work),
            account_of("gemini", "personal", &personal),
        ],
        ..RunnerOptions::default()
    };
    let factory = Registry::builtin().get("gemini").expect("gemini");
    let spec = ProviderSpec {
        agent,
        resume: None,
    };
    let mut p = Pane::start_with(factory, spec, options);
    p.submit("first", SubmitMode::Auto);
    p.turn_end().await;
    let answer = last_answer(&p);
    assert!(answer.starts_with("(earlier turns: 0)"), "{answer}");

    p.runner
        .send(RunnerCommand::SwitchAccount("personal".into()));
    switched(&mut p, "personal").await;
    p.submit("second", SubmitMode::Auto);
    p.turn_end().await;
    let answer = last_answer(&p);
    assert!(answer.starts_with("(earlier turns: 1)"), "{answer}");
    assert_eq!(chat_prompts(&personal), 2);
    assert_eq!(chat_prompts(&work), 1, "the first home keeps its copy");
    p.runner.shutdown().await;
}
