//! `hive doctor` for the exec transport's local kinds (issue 49): the
//! engine is installed, and it answers: a bubblewrap box starts, the docker
//! or podman daemon answers (and the named container exists), the
//! devcontainer CLI runs, kubectl reaches the pod. Each check has a time
//! limit; what an engine says is sanitized (`exec::steps::run`).

use std::time::Duration;

use super::{Check, Level};
use crate::exec::{ExecHost, Kind, steps};

/// How long one engine may take to answer a check.
const LIMIT: Duration = Duration::from_secs(15);

/// The checks of a host of kind bwrap, docker, podman, devcontainer or
/// kubectl (ssh hosts: `hosts::check_host`).
pub(super) fn check_exec(host: &ExecHost) -> Vec<Check> {
    let mut checks = Vec::new();
    let kind = host.kind_name();
    let (program, hint) = host.engine();
    let Some(found) = crate::exec::find_program(&program) else {
        checks.push(Check::new(kind, Level::Fail, format!("`{program}` is not on PATH")).fix(hint));
        return checks;
    };
    checks.push(Check::new(kind, Level::Ok, format!("{}", found.display())));
    let probes = probes(host, &program);
    for (name, argv, fix) in probes {
        checks.push(match steps::run(&argv, LIMIT) {
            Ok(()) => Check::new(name, Level::Ok, "answers"),
            Err(said) => Check::new(name, Level::Fail, said).fix(fix),
        });
    }
    checks
}

/// A probe: its check's name, the command, the fix when it fails.
type Probe = (&'static str, Vec<String>, &'static str);

/// What to run to see that a host of this kind answers.
fn probes(host: &ExecHost, program: &str) -> Vec<Probe> {
    let program = program.to_owned();
    let words = |w: &[&str]| -> Vec<String> {
        std::iter::once(program.clone())
            .chain(w.iter().map(|s| (*s).to_owned()))
            .collect()
    };
    match &host.kind {
        Kind::Ssh(_) => Vec::new(),
        Kind::Bwrap(_) => vec![(
            "box",
            words(&[
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--unshare-pid",
                "--unshare-net",
                "--die-with-parent",
                "--",
                "true",
            ]),
            "bubblewrap needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or a setuid bwrap",
        )],
        Kind::Container(c) => {
            let mut p = vec![(
                "daemon",
                words(&["info", "--format", "{{.ServerVersion}}"]),
                "start the engine's daemon (systemctl start docker), or use podman",
            )];
            if let Some(ctr) = &c.container {
                p.push((
                    "container",
                    words(&["container", "inspect", ctr]),
                    "create the container, or give `image` for one per pane",
                ));
            }
            p
        }
        Kind::Devcontainer(d) => vec![
            (
                "cli",
                words(&["--version"]),
                "npm install -g @devcontainers/cli",
            ),
            (
                "daemon",
                vec![d.engine.clone(), "info".into()],
                "the devcontainer CLI needs a running docker (or podman) daemon",
            ),
        ],
        Kind::Kubectl(k) => {
            let mut w = vec![program.clone()];
            if let Some(c) = &k.context {
                w.extend(["--context".into(), c.clone()]);
            }
            w.extend([
                "get".into(),
                "pod".into(),
                "-n".into(),
                k.namespace.clone(),
                k.pod.clone(),
            ]);
            vec![(
                "pod",
                w,
                "the cluster must answer and the pod exist (or give `create` to make it)",
            )]
        }
    }
}

/// An agent's `cpu` and `memory`: how each applies here (a cgroup, an
/// rlimit, its container's), a warning for one that does not.
pub(super) fn check_limits(agent: &crate::config::AgentConfig) -> Option<Check> {
    let host = crate::provider::process::exec_for(agent);
    let lines = crate::provider::process::limits_of(agent).describe(host.as_ref());
    if lines.is_empty() {
        return None;
    }
    let unapplied = lines.iter().any(|l| l.contains("not applied"));
    let check = Check::new(
        "limits",
        if unapplied { Level::Warn } else { Level::Ok },
        lines.join("; "),
    );
    Some(if unapplied {
        check.fix("a CPU share needs a systemd user manager (`loginctl enable-linger`, a login session); on another host, set it there")
    } else {
        check
    })
}

/// Whether no check failed.
#[cfg(test)]
fn ok(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.level != Level::Fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{Bwrap, Container, Engine, Network};

    fn bwrap(program: &str) -> ExecHost {
        ExecHost::new(
            "sandbox",
            Kind::Bwrap(Bwrap {
                program: program.into(),
                network: Network::None,
                home: "/nonexistent-home".into(),
                homes: "/nonexistent-homes".into(),
                hide: vec![],
                read_only: vec![],
                read_write: vec![],
            }),
        )
    }

    #[test]
    fn a_missing_bwrap_names_the_package_and_a_real_one_boxes() {
        let r = check_exec(&bwrap("hive-no-such-bwrap"));
        assert!(!ok(&r));
        assert_eq!(r[0].fix.as_deref(), Some("apt-get install bubblewrap"));
        if std::path::Path::new("/usr/bin/bwrap").exists() {
            let r = check_exec(&bwrap("/usr/bin/bwrap"));
            assert!(ok(&r), "{r:?}");
            assert_eq!(r[1].name, "box");
        }
    }

    #[test]
    fn a_docker_without_its_daemon_fails_in_its_own_words() {
        if crate::exec::find_program("docker").is_none()
            || steps::run(&["docker".into(), "info".into()], LIMIT).is_ok()
        {
            return; // no docker CLI, or a daemon that answers
        }
        let host = ExecHost::new(
            "ctr",
            Kind::Container(Container {
                engine: Engine::Docker,
                program: "docker".into(),
                container: Some("mine".into()),
                image: None,
                network: None,
                pids_limit: 4096,
                user: "0:0".into(),
                run_args: vec![],
            }),
        );
        let r = check_exec(&host);
        let daemon = r.iter().find(|c| c.name == "daemon").unwrap();
        assert_eq!(daemon.level, Level::Fail);
        assert!(daemon.detail.contains("daemon"), "{}", daemon.detail);
    }
}
