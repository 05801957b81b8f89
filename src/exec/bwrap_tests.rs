//! The bwrap kind's command line and mounts (the box itself is attacked
//! with real bubblewrap in tests/providers/sandbox.rs).

use std::collections::BTreeMap;

use super::*;

fn sandbox(dir: &Path) -> Bwrap {
    Bwrap {
        program: "bwrap".into(),
        network: Network::None,
        home: dir.join("home"),
        homes: dir.join("homes"),
        hide: vec![dir.join("run")],
        read_only: vec![],
        read_write: vec![],
    }
}

fn pane(seed: &[&str]) -> Pane {
    Pane {
        id: "a1".into(),
        seed: seed.iter().map(PathBuf::from).collect(),
        ..Pane::default()
    }
}

fn args_of(w: &Wrapped) -> String {
    w.args.join(" ")
}

#[test]
fn the_cwd_is_bound_last_and_the_program_runs_after_the_double_dash() {
    let dir = tempfile::tempdir().unwrap();
    let (home, wt) = (dir.path().join("home"), dir.path().join("home/src/wt"));
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::create_dir_all(dir.path().join("run")).unwrap();
    let env = BTreeMap::from([("K".to_owned(), "v".to_owned())]);
    let args = vec!["--print".to_owned()];
    let inner = Inner {
        program: "claude",
        args: &args,
        cwd: Some(&wt),
        env: &env,
        tty: false,
    };
    let w = sandbox(dir.path())
        .wrap("sandbox", &pane(&[]), &inner)
        .unwrap();
    let a = args_of(&w);
    let at = |s: &str| a.find(s).unwrap_or_else(|| panic!("{s} in {a}"));
    for flag in [
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-net",
        "--ro-bind / /",
    ] {
        at(flag);
    }
    // The home is hidden first, the worktree in it bound after, so it wins.
    assert!(
        at(&format!("--tmpfs {}", home.display())) < at(&format!("--bind {0} {0}", wt.display()))
    );
    assert!(at(&format!("--tmpfs {}", dir.path().join("run").display())) > 0);
    assert!(a.ends_with("-- claude --print"), "{a}");
    assert_eq!(w.env, env, "the environment is the local process's");
    // The network, when allowed, is the machine's.
    let mut open = sandbox(dir.path());
    open.network = Network::Host;
    assert!(!args_of(&open.wrap("s", &pane(&[]), &inner).unwrap()).contains("--unshare-net"));
}

#[test]
fn seeded_files_are_copied_into_the_panes_own_home_and_only_they_are_bound() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".claude/projects")).unwrap();
    std::fs::write(home.join(".claude/.credentials.json"), "{\"t\":1}").unwrap();
    std::fs::write(home.join(".claude/projects/other.jsonl"), "secret").unwrap();
    let wt = dir.path().join("wt");
    std::fs::create_dir_all(&wt).unwrap();
    let b = sandbox(dir.path());
    let p = pane(&[".claude/.credentials.json", ".claude.json", "../escape"]);
    let env = BTreeMap::new();
    let inner = Inner {
        program: "claude",
        args: &[],
        cwd: Some(&wt),
        env: &env,
        tty: false,
    };
    let w = b.wrap("sandbox", &p, &inner).unwrap();
    let own = dir.path().join("homes/a1");
    assert_eq!(
        std::fs::read_to_string(own.join(".claude/.credentials.json")).unwrap(),
        "{\"t\":1}"
    );
    assert!(
        !own.join(".claude/projects").exists(),
        "only the seeded files"
    );
    assert!(
        !own.join(".claude.json").exists(),
        "missing at home: not made"
    );
    assert!(!dir.path().join("escape").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&own), 0o700);
    assert_eq!(mode(&own.join(".claude/.credentials.json")), 0o600);
    let a = args_of(&w);
    assert!(
        a.contains(&format!(
            "--bind {} {}",
            own.join(".claude").display(),
            home.join(".claude").display()
        )),
        "{a}"
    );
    // The pane's details list the mounts.
    let host = super::super::ExecHost {
        name: "sandbox".into(),
        kind: super::super::Kind::Bwrap(b),
        pane: p,
    };
    let details = host.describe(&inner).join("\n");
    assert!(
        details.contains("hidden     ")
            && details.contains("read-write ")
            && details.contains("network: none"),
        "{details}"
    );
}

#[test]
fn a_relative_cwd_or_a_bad_pane_id_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let env = BTreeMap::new();
    let rel = Path::new("rel");
    let inner = Inner {
        program: "x",
        args: &[],
        cwd: Some(rel),
        env: &env,
        tty: false,
    };
    let e = sandbox(dir.path())
        .wrap("s", &pane(&[]), &inner)
        .unwrap_err();
    assert!(e.to_string().contains("absolute working directory"), "{e}");
    let bad = Pane {
        id: "../x".into(),
        ..Pane::default()
    };
    let inner = Inner {
        cwd: Some(dir.path()),
        ..inner
    };
    assert!(sandbox(dir.path()).wrap("s", &bad, &inner).is_err());
}
