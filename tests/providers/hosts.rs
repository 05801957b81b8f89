//! Agents on hosts through the one exec transport (issue 49): each
//! provider's protocol rides the host's pipe unchanged. ssh against a real
//! sshd on 127.0.0.1.

use std::path::Path;
use std::sync::Arc;

use hive::config::AgentConfig;
use hive::event::Origin;
use hive::exec::{ExecHost, Kind, SshHost};
use hive::provider::claude::ClaudeFactory;
use hive::remote::{Ssh, Target};
use hive::runner::SubmitMode;
use serde_json::Value;

use crate::support::sshd::Sshd;
use crate::support::{Pane, completed, fake_command, jsonl};

/// A host `box` at `sshd`, its project `project`.
fn ssh_host(sshd: &Sshd, project: &Path, control: &Path) -> ExecHost {
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let target = Target::from_host(
        "box",
        &format!("{user}@127.0.0.1:{}", sshd.port),
        &project.display().to_string(),
        Some(&sshd.ssh_command()),
    )
    .unwrap();
    std::fs::create_dir_all(control).unwrap();
    let ssh = Ssh::for_target(&target, control).unwrap();
    ExecHost::new("box", Kind::Ssh(SshHost::new(ssh, target, true)))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_structured_agent_on_an_ssh_host_answers_through_the_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let Some(sshd) = Sshd::start(dir.path(), None) else {
        return;
    };
    let project = dir.path().join("far-project");
    std::fs::create_dir_all(&project).unwrap();
    let control = dir.path().join("control");
    sshd.masters_in(control.clone());
    let mut agent = AgentConfig::new("remote-claude", "claude");
    agent.command = fake_command("fake_claude.py");
    // A local cwd means nothing on the host: the agent runs in its project.
    agent.cwd = Some(dir.path().to_owned());
    let argv_file = project.join("argv.jsonl");
    agent.env.insert(
        "FAKE_CLAUDE_ARGV_FILE".into(),
        argv_file.display().to_string(),
    );
    agent.exec = Some(ssh_host(&sshd, &project, &control));
    let mut pane = Pane::start(Arc::new(ClaudeFactory), agent, None);
    pane.submit("hello over ssh", SubmitMode::Queue);
    let end = pane.turn_end().await;
    assert!(completed(&end), "{end:?}");
    let replies = pane.final_messages(Origin::Agent);
    assert!(
        replies.iter().any(|m| m.contains("hello over ssh")),
        "{replies:?}"
    );
    let starts: Vec<Value> = jsonl(&argv_file);
    assert_eq!(starts.len(), 1);
    assert_eq!(starts[0]["cwd"], project.display().to_string());
    // The environment crossed on the command line ssh runs there.
    assert_eq!(
        starts[0]["env"]["FAKE_CLAUDE_ARGV_FILE"],
        argv_file.display().to_string()
    );
    assert!(
        starts[0]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "stream-json")
    );
}
