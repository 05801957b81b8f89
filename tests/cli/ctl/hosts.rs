//! Hosts for panes made at runtime (issue 49), with the real server: `hive
//! ctl new --host` runs a pane's agent on a `[[host]]` of the config (here
//! a docker host whose `docker` is the test's own recording fake: no
//! daemon runs here), made with the template's `memory` and `cpu`; `hive
//! ctl status` says where it runs, what is mounted and how its limits
//! apply; closing the pane removes its container while hive runs on.

use std::path::Path;

use serde_json::Value;

use super::Lab;

/// A `docker` that records each argv, says no container exists yet, and
/// runs an `exec`'s command here (tests/providers/hosts.rs has its twin).
fn fake_engine(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("docker");
    let script = format!(
        r#"#!/bin/sh
printf '%s\n' "$*" >> '{log}'
case "$1" in
  container) exit 1 ;;
  run|start|rm) exit 0 ;;
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
        log = dir.join("engine.log").display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn engine_log(lab: &Lab) -> String {
    std::fs::read_to_string(lab.path("engine.log")).unwrap_or_default()
}

fn host_lines(lab: &Lab, pane: &str) -> Vec<String> {
    let status: Value = serde_json::from_str(&lab.ok(&["status", pane, "--json"])).unwrap();
    status["host"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_runtime_pane_picks_a_host_shows_it_and_its_container_goes_with_it() {
    let Some(lab) = Lab::new() else { return };
    let docker = fake_engine(lab.dir.path());
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let config = lab.path("hosttest.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[[host]]
name = "ctr"
kind = "docker"
program = "{}"
image = "agent:1"
network = "none"

[[agent]]
id = "echo"
provider = "script"
script = "{}"

[[agent]]
id = "shell"
provider = "pty"
command = ["sh"]
memory = "256M"
cpu = 0.5
"#,
            docker.display(),
            echo.display()
        ),
    )
    .unwrap();
    lab.launch_with("hosts", &config, "hosttest.sock");

    // The template on this machine: its limits as this machine applies them.
    let here = host_lines(&lab, "shell");
    assert_eq!(here.len(), 2, "{here:?}");
    assert!(here[0].starts_with("memory 256M: "), "{here:?}");
    assert!(here[1].starts_with("cpu 0.5 cores: "), "{here:?}");

    let added = lab.ok(&["new", "boxed", "--template", "shell", "--host", "ctr"]);
    assert_eq!(added, "added boxed in window 1");
    lab.wait_until("the container made", || {
        engine_log(&lab).contains("exec -i -t")
    });
    let log = engine_log(&lab);
    let run = log.lines().find(|l| l.starts_with("run -d")).unwrap();
    assert!(run.contains("--name hive-boxed"), "{run}");
    assert!(
        run.contains("--memory=268435456b --memory-swap=268435456b --cpus=0.5 agent:1"),
        "the template's limits are the container's: {run}"
    );
    let boxed = host_lines(&lab, "boxed");
    let wanted = [
        "host ctr (docker)",
        "container hive-boxed",
        "image agent:1",
        "network: none",
        "memory 256M: the container's (docker run --memory)",
        "cpu 0.5 cores: the container's (docker run --cpus)",
    ];
    for w in wanted {
        assert!(boxed.iter().any(|l| l == w), "no `{w}` in {boxed:?}");
    }
    let text = lab.ok(&["status", "boxed"]);
    assert!(text.contains("host:      host ctr (docker)"), "{text}");

    // An unknown host is refused, naming the ones there are.
    let out = lab.ctl(&["new", "lost", "--template", "shell", "--host", "nope"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("names no [[host]] (there are: ctr)"),
        "{}",
        out.stderr
    );

    assert!(!engine_log(&lab).contains("rm -f"));
    lab.ok(&["close", "boxed"]);
    lab.wait_until("the pane's container removed", || {
        engine_log(&lab).contains("rm -f hive-boxed")
    });
    // hive runs on: its other panes answer.
    let turn = lab.ok(&["send", "echo", "still", "here"]);
    assert!(lab.ok(&["wait", &turn]).starts_with("Reply to: still here"));
    lab.stop("hosts");
    // Removed once: not again when hive exits.
    assert_eq!(engine_log(&lab).matches("rm -f hive-boxed").count(), 1);
}
