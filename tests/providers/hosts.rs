//! Agents on hosts through the one exec transport (issue 49): each
//! provider's protocol rides the host's pipe unchanged. ssh against a real
//! sshd on 127.0.0.1; docker by the command line a fake binary records (no
//! container daemon runs here, and none is faked), and the real docker CLI's
//! own error when no daemon answers.

use std::path::Path;
use std::sync::Arc;

use hive::config::AgentConfig;
use hive::event::Origin;
use hive::exec::{Container, Engine, ExecHost, Kind, SshHost};
use hive::provider::ProviderSpec;
use hive::provider::claude::ClaudeFactory;
use hive::remote::{Ssh, Target};
use hive::runner::SubmitMode;
use serde_json::Value;

use crate::support::sshd::Sshd;
use crate::support::{Live, Pane, completed, fake_command, jsonl};

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
    // Not made here: the host makes it (0700) before its first agent.
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
    let control = dir.path().join("run/ssh");
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
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&control).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

/// A `docker` of the test's own: it records each argv it gets, says no
/// container exists yet, and runs an `exec`'s command here (no daemon:
/// what it proves is the command line hive hands a real engine).
fn fake_engine(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("docker");
    let log = dir.join("engine.log");
    let script = format!(
        r#"#!/bin/sh
printf '%s\n' "$*" >> '{log}'
case "$1" in
  container) exit 1 ;;
  run|start) exit 0 ;;
  exec)
    shift
    while [ $# -gt 0 ]; do
      case "$1" in
        -i|-t) shift ;;
        -w) cd "$2"; shift 2 ;;
        -e) shift 2 ;;
        *) break ;;
      esac
    done
    shift
    exec "$@" ;;
esac
exit 2
"#,
        log = log.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn docker_host(name: &str, program: &str) -> ExecHost {
    ExecHost::new(
        name,
        Kind::Container(Container {
            engine: Engine::Docker,
            program: program.to_owned(),
            container: None,
            image: Some("agent:1".into()),
            network: Some("none".into()),
            pids_limit: 4096,
            user: "1000:1000".into(),
            run_args: vec![],
        }),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_docker_host_makes_a_hardened_container_and_the_protocol_rides_docker_exec() {
    let dir = tempfile::tempdir().unwrap();
    let docker = fake_engine(dir.path());
    let mut agent = AgentConfig::new("docked", "claude");
    agent.command = fake_command("fake_claude.py");
    agent.cwd = Some(dir.path().to_owned());
    agent
        .env
        .insert("ANTHROPIC_API_KEY".into(), "sk-test-secret".into());
    agent.exec = Some(docker_host("ctr", &docker.display().to_string()));
    let mut pane = Pane::start(Arc::new(ClaudeFactory), agent, None);
    pane.submit("hello in a container", SubmitMode::Queue);
    let end = pane.turn_end().await;
    assert!(completed(&end), "{end:?}");
    assert!(
        pane.final_messages(Origin::Agent)
            .iter()
            .any(|m| m.contains("hello in a container"))
    );
    let log = std::fs::read_to_string(dir.path().join("engine.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let cwd = dir.path().display();
    assert_eq!(lines[0], "container inspect hive-docked");
    assert_eq!(
        lines[1],
        format!(
            "run -d --name hive-docked --init --cap-drop=ALL --security-opt=no-new-privileges \
             --pids-limit=4096 --user 1000:1000 --label hive.pane --network=none \
             -v {cwd}:{cwd} -w {cwd} agent:1 sleep infinity"
        )
    );
    assert_eq!(lines[2], "start hive-docked");
    assert!(
        lines[3].starts_with(&format!(
            "exec -i -w {cwd} -e ANTHROPIC_API_KEY hive-docked python3 "
        )),
        "{}",
        lines[3]
    );
    assert!(!log.contains("sk-test-secret"), "the key is passed by name");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_engine_or_daemon_is_a_clear_start_error() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = |host: ExecHost| {
        let mut agent = AgentConfig::new("nodaemon", "claude");
        agent.command = fake_command("fake_claude.py");
        agent.cwd = Some(dir.path().to_owned());
        agent.exec = Some(host);
        Live::spawn(
            &ClaudeFactory,
            ProviderSpec {
                agent,
                resume: None,
            },
        )
        .err()
        .map(|e| e.to_string())
    };
    let e = spawn(docker_host("gone", "hive-no-such-docker")).expect("an error");
    assert_eq!(
        e,
        "agent `nodaemon`: cannot start `python3`: host `gone` (docker) needs \
         `hive-no-such-docker`, which is not on PATH: install Docker (docker.io) or use \
         kind = \"podman\""
    );
    // The real docker CLI with no daemon behind it (as on this machine):
    // its own words, at once.
    if hive::exec::find_program("docker").is_none() {
        eprintln!("SKIP: no docker CLI here for the no-daemon case");
        return;
    }
    let daemon = std::process::Command::new("docker")
        .arg("info")
        .output()
        .is_ok_and(|o| o.status.success());
    if daemon {
        eprintln!("SKIP: a docker daemon answers here");
        return;
    }
    let started = std::time::Instant::now();
    let e = spawn(docker_host("nodaemon-box", "docker")).expect("an error");
    assert!(
        e.contains(
            "host `nodaemon-box`: create the container (`docker run -d --name hive-nodaemon"
        ) && e.contains("failed: ")
            && e.contains("daemon"),
        "{e}"
    );
    eprintln!("no-daemon error after {:?}: {e}", started.elapsed());
}
