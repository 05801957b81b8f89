//! `/account` and `on_limit = "next-account"` (issue 51): a Claude pane
//! goes on under another `[[account]]` with its conversation. The fake
//! claude keeps its transcript where Claude Code does (the account's
//! `CLAUDE_CONFIG_DIR`), fails a `--resume` whose transcript is not in its
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
    AccountConfig {
        name: name.into(),
        provider: "claude".into(),
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
