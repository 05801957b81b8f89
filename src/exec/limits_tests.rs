use super::*;
use crate::exec::{Bwrap, Container, Engine, ExecHost, Kind, Network};

fn run() -> Wrapped {
    Wrapped {
        program: "claude".into(),
        args: vec!["-p".into()],
        cwd: Some("/w".into()),
        env: [("K".to_owned(), "V".to_owned())].into(),
    }
}

fn both() -> Resources {
    Resources {
        cpu: Some(150),
        memory: Some(2 << 30),
    }
}

#[test]
fn the_cgroup_path_is_one_systemd_run_scope_over_the_command() {
    let w = both().wrap_with(Method::Cgroup, run());
    assert_eq!(
        w.argv(),
        [
            "systemd-run",
            "--user",
            "--scope",
            "--quiet",
            "--collect",
            "-p",
            "MemoryMax=2147483648",
            "-p",
            "MemorySwapMax=0",
            "-p",
            "CPUQuota=150%",
            "--",
            "claude",
            "-p"
        ]
    );
    // The agent's own cwd and environment stay on the process.
    assert_eq!(w.cwd, run().cwd);
    assert_eq!(w.env, run().env);
}

#[test]
fn the_rlimit_path_bounds_each_process_data_and_leaves_cpu_alone() {
    let w = both().wrap_with(Method::Rlimit, run());
    assert_eq!(
        w.argv(),
        [
            "prlimit",
            "--data=2147483648:2147483648",
            "--",
            "claude",
            "-p"
        ]
    );
    let cpu_only = Resources {
        cpu: Some(50),
        memory: None,
    };
    assert_eq!(cpu_only.wrap_with(Method::Rlimit, run()), run());
    let said = cpu_only.describe_at(Where::Here(Method::Rlimit));
    assert_eq!(said.len(), 1);
    assert!(
        said[0].starts_with("cpu 0.5 cores: not applied"),
        "{said:?}"
    );
}

#[test]
fn no_limits_wrap_nothing() {
    assert_eq!(Resources::default().wrap(None, run()), run());
    assert!(Resources::default().describe(None).is_empty());
}

#[test]
fn each_host_says_where_its_limits_go() {
    let docker = ExecHost::new(
        "ctr",
        Kind::Container(Container {
            engine: Engine::Docker,
            program: "docker".into(),
            container: None,
            image: Some("img".into()),
            network: None,
            pids_limit: 10,
            user: "1:1".into(),
            run_args: vec![],
        }),
    );
    // A per-pane container takes them as its engine's flags; the docker
    // client is not wrapped.
    assert_eq!(both().wrap(Some(&docker), run()), run());
    assert_eq!(
        both().run_args(),
        [
            "--memory=2147483648b",
            "--memory-swap=2147483648b",
            "--cpus=1.5"
        ]
    );
    assert_eq!(
        both().describe(Some(&docker)),
        [
            "memory 2G: the container's (docker run --memory)",
            "cpu 1.5 cores: the container's (docker run --cpus)"
        ]
    );
    // A container of yours runs where hive cannot make it: not applied.
    let mut yours = docker;
    if let Kind::Container(c) = &mut yours.kind {
        c.container = Some("dev".into());
    }
    assert_eq!(both().wrap(Some(&yours), run()), run());
    let said = both().describe(Some(&yours));
    assert!(
        said[0].ends_with("not applied: the agent runs on a container of yours"),
        "{said:?}"
    );
    // A box runs on this machine: the wrapper goes around bwrap.
    let boxed = ExecHost::new(
        "sandbox",
        Kind::Bwrap(Bwrap {
            program: "bwrap".into(),
            network: Network::None,
            home: "/h".into(),
            homes: "/s".into(),
            hide: vec![],
            read_only: vec![],
            read_write: vec![],
        }),
    );
    assert_eq!(
        both().place(Some(&boxed)),
        Some(Where::Here(method())),
        "bwrap is this machine"
    );
}

#[test]
fn running_out_is_told_by_how_the_limit_bites() {
    let m = Resources {
        cpu: None,
        memory: Some(64 << 20),
    };
    let rl = Where::Here(Method::Rlimit);
    let cg = Where::Here(Method::Cgroup);
    let over = |at: Where, said: &str, sig: Option<i32>| m.exceeded_at(at, said, sig).is_some();
    assert!(over(rl, "Traceback…\nMemoryError", None));
    assert!(over(
        rl,
        "FATAL ERROR: Reached heap limit Allocation failed",
        None
    ));
    assert!(over(rl, "", Some(libc::SIGABRT)));
    assert!(!over(rl, "fatal error: boom", None));
    assert!(over(cg, "", Some(libc::SIGKILL)));
    assert!(!over(cg, "MemoryError", None));
    assert!(over(Where::Container, "", Some(libc::SIGKILL)));
    assert!(!over(
        Where::Elsewhere("an ssh host"),
        "MemoryError",
        Some(libc::SIGKILL)
    ));
    assert_eq!(
        m.exceeded_at(rl, "MemoryError", None).as_deref(),
        Some(
            "hive: the agent ran out of memory: it is limited to 64M (`memory`, by an rlimit on each process)"
        )
    );
    // Through the real entry point, on this machine's method.
    use std::os::unix::process::ExitStatusExt;
    let killed = std::process::ExitStatus::from_raw(libc::SIGKILL);
    let line = m.exceeded(None, "MemoryError", killed).unwrap();
    assert!(line.contains("limited to 64M (`memory`, by "), "{line}");
    let termed = std::process::ExitStatus::from_raw(libc::SIGTERM);
    assert!(m.exceeded(None, "boom", termed).is_none());
    let ok = std::process::ExitStatus::from_raw(0);
    assert!(m.exceeded(None, "MemoryError", ok).is_none());
    assert!(
        Resources::default()
            .exceeded(None, "MemoryError", killed)
            .is_none()
    );
}

#[test]
fn sizes_and_cores_parse_as_docker_and_systemd_read_them() {
    assert_eq!(parse_memory("2G"), Ok(2 << 30));
    assert_eq!(parse_memory("512M"), Ok(512 << 20));
    assert_eq!(parse_memory("1.5GiB"), Ok(3 << 29));
    assert!(parse_memory("1M").unwrap_err().contains("less than 16M"));
    assert!(parse_memory("lots").unwrap_err().contains("\"512M\""));
    assert_eq!(parse_cpu(1.5), Ok(150));
    assert_eq!(parse_cpu(0.25), Ok(25));
    assert!(parse_cpu(0.0).is_err());
    assert!(parse_cpu(f64::NAN).is_err());
    assert_eq!(size(64 << 20), "64M");
    assert_eq!(size(3 << 29), "1.5G");
}
