//! The container kinds' command lines, as their engines document them
//! (no engine runs here: tests/providers/sandbox.rs records what a fake
//! binary receives and checks the error of a missing daemon).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;

fn docker(container: Option<&str>) -> Container {
    Container {
        engine: Engine::Docker,
        program: "docker".into(),
        container: container.map(str::to_owned),
        image: Some("ghcr.io/x/agent:1".into()),
        network: None,
        pids_limit: PIDS_LIMIT,
        user: "1000:1000".into(),
        run_args: vec!["--memory=2g".into()],
    }
}

fn pane() -> Pane {
    Pane {
        id: "a1".into(),
        ..Pane::default()
    }
}

fn words(s: &[&str]) -> Vec<String> {
    s.iter().map(|w| (*w).to_owned()).collect()
}

#[test]
fn docker_exec_carries_stdio_and_names_env_without_values() {
    let env = BTreeMap::from([("ANTHROPIC_API_KEY".to_owned(), "sk-secret".to_owned())]);
    let args = words(&["-p", "--output-format", "stream-json"]);
    let cwd = PathBuf::from("/w/wt");
    let inner = Inner {
        program: "claude",
        args: &args,
        cwd: Some(&cwd),
        env: &env,
        tty: false,
    };
    let w = docker(None).wrap(&pane(), &inner);
    assert_eq!(
        w.argv(),
        words(&[
            "docker",
            "exec",
            "-i",
            "-w",
            "/w/wt",
            "-e",
            "ANTHROPIC_API_KEY",
            "hive-a1",
            "claude",
            "-p",
            "--output-format",
            "stream-json"
        ])
    );
    assert!(
        !w.argv().join(" ").contains("sk-secret"),
        "the key is not on the command line"
    );
    assert_eq!(w.env["ANTHROPIC_API_KEY"], "sk-secret");
    let tty = docker(Some("mine")).wrap(&pane(), &Inner { tty: true, ..inner });
    assert_eq!(tty.argv()[..4], words(&["docker", "exec", "-i", "-t"]));
    assert!(tty.args.contains(&"mine".to_owned()));
}

#[test]
fn a_per_pane_container_is_made_hardened_and_removed_and_the_users_is_left_alone() {
    let cwd = PathBuf::from("/w/wt");
    let steps = docker(None).create_steps(&pane(), Some(&cwd));
    assert_eq!(
        steps[0].unless,
        Some(words(&["docker", "container", "inspect", "hive-a1"]))
    );
    assert_eq!(
        steps[0].argv,
        words(&[
            "docker",
            "run",
            "-d",
            "--name",
            "hive-a1",
            "--init",
            "--cap-drop=ALL",
            "--security-opt=no-new-privileges",
            "--pids-limit=4096",
            "--user",
            "1000:1000",
            "--label",
            "hive.pane",
            "-v",
            "/w/wt:/w/wt",
            "-w",
            "/w/wt",
            "--memory=2g",
            "ghcr.io/x/agent:1",
            "sleep",
            "infinity"
        ])
    );
    assert_eq!(steps[1].argv, words(&["docker", "start", "hive-a1"]));
    assert_eq!(
        docker(None).stop_steps(&pane())[0].argv,
        words(&["docker", "rm", "-f", "hive-a1"])
    );
    assert!(
        docker(Some("mine"))
            .create_steps(&pane(), Some(&cwd))
            .is_empty()
    );
    assert!(docker(Some("mine")).stop_steps(&pane()).is_empty());
    let podman = Container {
        engine: Engine::Podman,
        program: "podman".into(),
        ..docker(None)
    };
    assert_eq!(
        podman.create_steps(&pane(), None)[0].argv[..2],
        words(&["podman", "run"])
    );
}

#[test]
fn devcontainer_exec_and_up_name_the_workspace() {
    let d = Devcontainer {
        program: "devcontainer".into(),
        config: None,
        engine: "docker".into(),
    };
    let env = BTreeMap::from([("K".to_owned(), "v".to_owned())]);
    let args = words(&["app-server"]);
    let cwd = PathBuf::from("/w/wt");
    let inner = Inner {
        program: "codex",
        args: &args,
        cwd: Some(&cwd),
        env: &env,
        tty: false,
    };
    assert_eq!(
        d.wrap(&inner).argv(),
        words(&[
            "devcontainer",
            "exec",
            "--workspace-folder",
            "/w/wt",
            "--remote-env",
            "K=v",
            "--",
            "codex",
            "app-server"
        ])
    );
    assert_eq!(
        d.create_steps(Some(&cwd))[0].argv,
        words(&["devcontainer", "up", "--workspace-folder", "/w/wt"])
    );
    let stop = &d.stop_steps(Some(&cwd))[0].argv;
    assert_eq!(stop[stop.len() - 2..], words(&["docker", "/w/wt"]));
}

#[test]
fn kubectl_exec_runs_in_the_pods_workdir_and_waits_for_a_claim() {
    let k = Kubectl {
        program: "kubectl".into(),
        context: Some("kind".into()),
        namespace: "agents".into(),
        pod: "claim-1".into(),
        container: Some("agent".into()),
        workdir: Some("/workspace".into()),
        create: words(&["kubectl", "apply", "-f", "claim.yaml"]),
        stop: words(&["kubectl", "delete", "-f", "claim.yaml"]),
    };
    let env = BTreeMap::new();
    let args = words(&["--mode", "rpc"]);
    let inner = Inner {
        program: "pi",
        args: &args,
        cwd: None,
        env: &env,
        tty: false,
    };
    assert_eq!(
        k.wrap(&inner).argv(),
        words(&[
            "kubectl",
            "--context",
            "kind",
            "exec",
            "-i",
            "-n",
            "agents",
            "claim-1",
            "-c",
            "agent",
            "--",
            "sh",
            "-c",
            "cd '/workspace' && exec 'pi' '--mode' 'rpc'"
        ])
    );
    let steps = k.create_steps();
    assert_eq!(steps[0].argv, k.create);
    assert_eq!(
        steps[1].argv,
        words(&[
            "kubectl",
            "--context",
            "kind",
            "wait",
            "--for=condition=Ready",
            "--timeout=120s",
            "-n",
            "agents",
            "pod/claim-1"
        ])
    );
    assert_eq!(k.stop_steps()[0].argv, k.stop);
}

#[test]
fn a_missing_engine_is_named_with_what_installs_it() {
    let kube = Kubectl {
        program: "hive-no-such-kubectl".into(),
        context: None,
        namespace: "default".into(),
        pod: "p".into(),
        container: None,
        workdir: None,
        create: vec![],
        stop: vec![],
    };
    let dev = Devcontainer {
        program: "hive-no-such-devcontainer".into(),
        config: None,
        engine: "docker".into(),
    };
    for (kind, want) in [
        (
            super::super::Kind::Kubectl(kube),
            "host `h` (kubectl) needs `hive-no-such-kubectl`, which is not on PATH: install kubectl and a kubeconfig",
        ),
        (
            super::super::Kind::Devcontainer(dev),
            "host `h` (devcontainer) needs `hive-no-such-devcontainer`, which is not on PATH: npm install -g @devcontainers/cli, and a container engine",
        ),
    ] {
        let e = super::super::ExecHost::new("h", kind)
            .prepare(None)
            .unwrap_err();
        assert_eq!(e.to_string(), want);
    }
}
