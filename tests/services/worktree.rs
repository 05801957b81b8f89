//! Per-agent worktrees against real temporary git repositories (issue 19):
//! creation and reuse, isolation, diffs overall and per turn, bringing work
//! home (merge, cherry-pick, conflicts never half-applied), overlap
//! warnings, and remove/prune.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;

use std::path::{Path, PathBuf};

use hive::config::{AgentConfig, WorktreeSetting};
use hive::worktree::{
    self, BringMode, DiffScope, FileStatus, WorktreeError, WorktreeEvent, WorktreeRequest,
};
use support::git::{git, init_repo};

/// A repository with one commit on `main`.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir(&root).unwrap();
    init_repo(&root);
    std::fs::write(
        root.join("README.md"),
        "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n",
    )
    .unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn x() {}\n").unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "initial"]);
    (dir, root)
}

fn agent(id: &str, cwd: &Path) -> AgentConfig {
    let mut a = AgentConfig::new(id, "script");
    a.cwd = Some(cwd.to_owned());
    a.worktree = Some(WorktreeSetting::Enabled(true));
    a
}

fn ensure(a: &AgentConfig) -> worktree::Worktree {
    let spec = a.worktree_spec(None).expect("worktree requested");
    worktree::ensure(a.cwd.as_deref().unwrap(), &spec).expect("worktree")
}

fn status(dir: &Path) -> String {
    git(dir, &["status", "--porcelain"])
}

#[test]
fn two_agents_get_distinct_isolated_worktrees() {
    let (_d, root) = repo();
    let a = ensure(&agent("a", &root));
    let b = ensure(&agent("b", &root));
    assert_ne!(a.path, b.path);
    assert_eq!(a.path, root.join(".hive/worktrees/a"));
    assert_eq!((a.branch.as_str(), b.branch.as_str()), ("hive/a", "hive/b"));
    assert!(a.created && b.created);
    assert_eq!(git(&a.path, &["branch", "--show-current"]).trim(), "hive/a");

    std::fs::write(a.path.join("only_a.txt"), "from a\n").unwrap();
    assert!(!b.path.join("only_a.txt").exists());
    assert!(!root.join("only_a.txt").exists());
    // The worktrees do not show up in the main checkout's status.
    assert_eq!(status(&root), "");

    let files = worktree::diff::overall(&a.repo, &a.path).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, "only_a.txt");
    assert_eq!(files[0].status, FileStatus::Added);
    assert!(
        worktree::diff::overall(&b.repo, &b.path)
            .unwrap()
            .is_empty()
    );
    // A snapshot does not touch the agent's own index.
    assert!(status(&a.path).contains("?? only_a.txt"));
}

#[test]
fn restart_reuses_the_same_worktree() {
    let (_d, root) = repo();
    let cfg = agent("a", &root);
    let first = ensure(&cfg);
    std::fs::write(first.path.join("work.txt"), "kept\n").unwrap();
    let again = ensure(&cfg);
    assert!(!again.created);
    assert_eq!(again.path, first.path);
    assert_eq!(again.branch, "hive/a");
    assert_eq!(
        std::fs::read_to_string(again.path.join("work.txt")).unwrap(),
        "kept\n"
    );
}

#[test]
fn branch_name_root_and_subdirectory_are_honoured() {
    let (_d, root) = repo();
    let mut cfg = agent("a", &root.join("src"));
    cfg.worktree = Some(WorktreeSetting::Branch("feature/x".into()));
    let spec = cfg.worktree_spec(Some(Path::new("../wt"))).unwrap();
    let w = worktree::ensure(&root.join("src"), &spec).unwrap();
    assert_eq!(w.branch, "feature/x");
    assert_eq!(w.path, root.join("../wt/a"));
    assert_eq!(w.cwd, w.path.join("src"));
    assert!(w.cwd.join("lib.rs").is_file());
    // `worktree = false` is the same as no worktree.
    cfg.worktree = Some(WorktreeSetting::Enabled(false));
    assert!(cfg.worktree_spec(None).is_none());
}

#[test]
fn uncommitted_changes_come_along_only_when_asked() {
    let (_d, root) = repo();
    std::fs::write(root.join("README.md"), "edited\n").unwrap();
    std::fs::write(root.join("scratch.txt"), "untracked\n").unwrap();
    let plain = ensure(&agent("plain", &root));
    assert!(status(&plain.path).is_empty());
    let mut cfg = agent("copy", &root);
    cfg.worktree_copy_uncommitted = true;
    let copy = ensure(&cfg);
    assert_eq!(
        std::fs::read_to_string(copy.path.join("README.md")).unwrap(),
        "edited\n"
    );
    assert_eq!(
        std::fs::read_to_string(copy.path.join("scratch.txt")).unwrap(),
        "untracked\n"
    );
}

/// Issue 53: an untracked symlink planted in the project (pointing outside
/// it) comes along as the link it is, never as its target's content; the
/// files beside it are copied as before.
#[test]
fn copying_uncommitted_files_never_follows_a_planted_symlink() {
    let (_d, root) = repo();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "the user's key\n").unwrap();
    std::os::unix::fs::symlink(&secret, root.join("leak")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linked")).unwrap();
    std::fs::create_dir(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/todo.txt"), "untracked\n").unwrap();
    let mut cfg = agent("copy", &root);
    cfg.worktree_copy_uncommitted = true;
    let copy = ensure(&cfg);
    for (name, target) in [("leak", secret.as_path()), ("linked", outside.path())] {
        let at = copy.path.join(name);
        let meta = std::fs::symlink_metadata(&at).unwrap();
        assert!(
            meta.file_type().is_symlink(),
            "{name} was copied as its target's content, not as a link"
        );
        assert_eq!(std::fs::read_link(&at).unwrap(), target);
    }
    assert_eq!(
        std::fs::read_to_string(copy.path.join("notes/todo.txt")).unwrap(),
        "untracked\n"
    );
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "the user's key\n"
    );
}

#[test]
fn merge_brings_the_work_into_the_main_checkout() {
    let (_d, root) = repo();
    let a = ensure(&agent("a", &root));
    std::fs::write(a.path.join("feature.txt"), "done\n").unwrap();
    let out =
        worktree::bring_home(&a.repo, &a.path, &a.branch, BringMode::Merge, "hive: work").unwrap();
    assert!(out.committed_first);
    assert_eq!(out.commits, 1);
    assert_eq!(out.files, ["feature.txt"]);
    assert_eq!(
        std::fs::read_to_string(root.join("feature.txt")).unwrap(),
        "done\n"
    );
    assert_eq!(status(&root), "");
    // Nothing is left to bring home.
    assert!(
        worktree::diff::overall(&a.repo, &a.path)
            .unwrap()
            .is_empty()
    );
    let again =
        worktree::bring_home(&a.repo, &a.path, &a.branch, BringMode::Merge, "hive: work").unwrap();
    assert_eq!(again.commits, 0);
}

#[test]
fn cherry_pick_replays_the_agents_commits() {
    let (_d, root) = repo();
    let a = ensure(&agent("a", &root));
    std::fs::write(a.path.join("one.txt"), "1\n").unwrap();
    worktree::commit_all(&a.path, "one").unwrap();
    std::fs::write(a.path.join("two.txt"), "2\n").unwrap();
    let out =
        worktree::bring_home(&a.repo, &a.path, &a.branch, BringMode::CherryPick, "two").unwrap();
    assert_eq!(out.commits, 2);
    assert!(root.join("one.txt").is_file() && root.join("two.txt").is_file());
    let log = git(&root, &["log", "--format=%s", "-3"]);
    assert_eq!(log.lines().collect::<Vec<_>>(), ["two", "one", "initial"]);
}

#[test]
fn a_conflict_is_reported_with_files_and_nothing_is_applied() {
    let (_d, root) = repo();
    let a = ensure(&agent("a", &root));
    std::fs::write(a.path.join("README.md"), "agent's line 1\n").unwrap();
    std::fs::write(a.path.join("clean.txt"), "no conflict here\n").unwrap();
    std::fs::write(root.join("README.md"), "user's line 1\n").unwrap();
    git(&root, &["commit", "-q", "-am", "user edit"]);
    let head = git(&root, &["rev-parse", "HEAD"]);
    for mode in [BringMode::Merge, BringMode::CherryPick] {
        let err = worktree::bring_home(&a.repo, &a.path, &a.branch, mode, "work").unwrap_err();
        match err {
            WorktreeError::Conflict { files, .. } => assert_eq!(files, ["README.md"]),
            other => panic!("expected a conflict, got {other}"),
        }
        assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
        assert_eq!(status(&root), "");
        assert!(!root.join("clean.txt").exists());
    }
}

#[test]
fn overlapping_edits_raise_a_warning_with_the_files() {
    let (_d, root) = repo();
    let a = ensure(&agent("a", &root));
    let b = ensure(&agent("b", &root));
    let c = ensure(&agent("c", &root));
    std::fs::write(
        a.path.join("README.md"),
        "A\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n",
    )
    .unwrap();
    std::fs::write(
        b.path.join("README.md"),
        "B\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n",
    )
    .unwrap();
    std::fs::write(c.path.join("src/lib.rs"), "pub fn y() {}\n").unwrap();
    let changes: Vec<_> = [&a, &b, &c]
        .iter()
        .map(|w| {
            (
                w.agent_id.clone(),
                worktree::diff::overall(&w.repo, &w.path).unwrap(),
            )
        })
        .collect();
    let found = worktree::overlaps(&changes);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].a.as_str(), found[0].b.as_str()), ("a", "b"));
    assert_eq!(found[0].files.len(), 1);
    assert_eq!(found[0].files[0].path, "README.md");
    assert!(found[0].files[0].same_hunk);
}

#[test]
fn list_remove_and_prune() {
    let (_d, root) = repo();
    let a = ensure(&agent("a", &root));
    ensure(&agent("b", &root));
    ensure(&agent("c", &root));
    std::fs::write(a.path.join("unsaved.txt"), "x\n").unwrap();
    let listed = worktree::list(&root, None).unwrap();
    let ids: Vec<_> = listed.iter().map(|w| w.agent_id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(listed[0].dirty, 1);
    assert!(listed[0].has_unmerged_work() && !listed[1].has_unmerged_work());

    let err = worktree::remove(&root, None, "a", false).unwrap_err();
    assert!(matches!(err, WorktreeError::Unmerged { .. }), "{err}");
    assert!(a.path.exists());
    worktree::remove(&root, None, "b", false).unwrap();
    assert!(!root.join(".hive/worktrees/b").exists());
    assert!(
        git(&root, &["branch", "--list", "hive/b"])
            .trim()
            .is_empty()
    );
    assert!(matches!(
        worktree::remove(&root, None, "zzz", false),
        Err(WorktreeError::Unknown(_))
    ));

    let report = worktree::prune(&root, None).unwrap();
    assert_eq!(report.removed, ["c"]);
    assert_eq!(report.kept.len(), 1);
    assert_eq!(report.kept[0].0, "a");
    worktree::remove(&root, None, "a", true).unwrap();
    assert!(worktree::list(&root, None).unwrap().is_empty());
}

#[test]
fn prune_and_remove_refuse_a_worktree_a_running_hive_uses() {
    let (_d, root) = repo();
    // `prepare` is what a starting hive runs: it marks the worktrees it uses.
    let mut agents = [agent("live", &root), agent("idle", &root)];
    let prepared = worktree::prepare(&mut agents[..1], None);
    let live = prepared[0].1.as_ref().unwrap().clone();
    ensure(&agents[1]);

    let listed = worktree::list(&root, None).unwrap();
    let in_use = |id: &str| {
        let w = listed.iter().find(|w| w.agent_id == id).unwrap();
        w.in_use.clone()
    };
    let why = format!("in use by a running hive (pid {})", std::process::id());
    assert_eq!(in_use("live").as_deref(), Some(why.as_str()));
    assert_eq!(in_use("idle"), None);
    // Clean and merged, so prune would remove it, but a pane runs in it.
    let report = worktree::prune(&root, None).unwrap();
    assert_eq!(report.removed, ["idle"]);
    assert_eq!(report.kept, [("live".to_owned(), why.clone())]);
    assert!(live.path.is_dir());
    // Not even with --force.
    let err = worktree::remove(&root, None, "live", true).unwrap_err();
    assert!(matches!(err, WorktreeError::Live { .. }), "{err}");
    assert!(err.to_string().contains(&why), "{err}");
    assert!(live.path.is_dir());

    // Once the hive lets go (it exits, or removes it itself), prune may.
    worktree::live::release(&live.path);
    assert!(
        worktree::list(&root, None)
            .unwrap()
            .iter()
            .all(|w| w.in_use.is_none())
    );
    assert_eq!(worktree::prune(&root, None).unwrap().removed, ["live"]);
    assert!(!live.path.exists());
}

/// Another listing's probe holds a worktree's lock exclusively for an
/// instant; that is not a running hive (the best-of-N cleanup closed two
/// copies at once and one of them was refused as "in use").
#[test]
fn a_probe_of_the_lock_is_not_taken_for_a_running_hive() {
    let (_d, root) = repo();
    let mut agents = [agent("a", &root), agent("b", &root), agent("c", &root)];
    let prepared = worktree::prepare(&mut agents, None);
    let paths: Vec<PathBuf> = prepared
        .iter()
        .map(|(_, w)| w.as_ref().unwrap().path.clone())
        .collect();
    for p in &paths {
        worktree::live::release(p);
    }
    let lock = root.join(".git/worktrees/a/hive.lock");
    assert!(lock.is_file(), "{}", lock.display());
    let (held, release) = std::sync::mpsc::channel::<()>();
    let prober = std::thread::spawn(move || {
        let f = std::fs::File::open(&lock).unwrap();
        f.lock().unwrap();
        held.send(()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(40));
        drop(f);
    });
    release.recv().unwrap();
    let listed = worktree::list(&root, None).unwrap();
    prober.join().unwrap();
    let a = listed.iter().find(|w| w.agent_id == "a").unwrap();
    assert_eq!(a.in_use, None);

    // And the three closed at once all go, branches too.
    let removers: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|id| {
            let root = root.clone();
            std::thread::spawn(move || worktree::remove(&root, None, id, true).map(|_| ()))
        })
        .collect();
    for r in removers {
        r.join().unwrap().unwrap();
    }
    assert!(worktree::list(&root, None).unwrap().is_empty());
    assert!(!git(&root, &["branch"]).contains("hive/"));
}

#[test]
fn a_directory_outside_git_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = agent("a", dir.path());
    let spec = cfg.worktree_spec(None).unwrap();
    let err = worktree::ensure(dir.path(), &spec).unwrap_err();
    assert!(matches!(err, WorktreeError::NotARepo(_)), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_reports_per_turn_diffs_and_overlaps() {
    let (_d, root) = repo();
    let a = ensure(&agent("a", &root));
    let b = ensure(&agent("b", &root));
    std::fs::write(a.path.join("before.txt"), "earlier turn\n").unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let svc = worktree::spawn_service(vec![(0, a.clone()), (1, b.clone())], tx);
    svc.send(WorktreeRequest::TurnStarted { pane: 0 }).unwrap();
    svc.send(WorktreeRequest::Diff {
        pane: 0,
        scope: DiffScope::Overall,
    })
    .unwrap();
    let WorktreeEvent::Diff { result, .. } = rx.recv().await.unwrap() else {
        panic!("expected the overall diff first");
    };
    assert_eq!(result.unwrap().len(), 1);
    std::fs::write(a.path.join("this_turn.txt"), "now\n").unwrap();
    std::fs::write(a.path.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    std::fs::write(b.path.join("src/lib.rs"), "pub fn b() {}\n").unwrap();
    svc.send(WorktreeRequest::TurnEnded { pane: 0 }).unwrap();
    // The overlap warning and the predicted conflict (the same line of
    // src/lib.rs), in whichever order the checks finish.
    let (mut found, mut predicted) = (None, None);
    while found.is_none() || predicted.is_none() {
        match rx.recv().await.unwrap() {
            WorktreeEvent::Overlaps(o) => found = Some(o),
            WorktreeEvent::Conflicts(p) if !p.conflicts.is_empty() => predicted = Some(p),
            WorktreeEvent::Conflicts(_) | WorktreeEvent::Changed(_) => {}
            other => panic!("expected overlaps and conflicts, got {other:?}"),
        }
    }
    let (found, predicted) = (found.unwrap(), predicted.unwrap());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].describe_files(), "src/lib.rs (same lines)");
    assert_eq!(predicted.conflicts.len(), 1, "{predicted:?}");
    assert_eq!(predicted.conflicts[0].files, ["src/lib.rs"]);
    svc.send(WorktreeRequest::Diff {
        pane: 0,
        scope: DiffScope::LastTurn,
    })
    .unwrap();
    let (scope, result) = loop {
        match rx.recv().await.unwrap() {
            WorktreeEvent::Diff { scope, result, .. } => break (scope, result),
            WorktreeEvent::Conflicts(_) | WorktreeEvent::Changed(_) => {}
            other => panic!("expected the turn diff, got {other:?}"),
        }
    };
    assert_eq!(scope, DiffScope::LastTurn);
    let names: Vec<_> = result.unwrap().into_iter().map(|f| f.path).collect();
    assert_eq!(names, ["src/lib.rs", "this_turn.txt"]);
    svc.send(WorktreeRequest::Bring {
        pane: 0,
        mode: BringMode::Merge,
        message: Some("add this_turn.txt".into()),
        repos: Vec::new(),
    })
    .unwrap();
    let result = loop {
        match rx.recv().await.unwrap() {
            WorktreeEvent::Brought { result, .. } => break result,
            WorktreeEvent::Conflicts(_) | WorktreeEvent::Changed(_) => {}
            other => panic!("expected the merge result, got {other:?}"),
        }
    };
    assert_eq!(result.unwrap().files.len(), 3);
    assert!(root.join("this_turn.txt").is_file());
    let subject = |rev: &str| {
        git(&root, &["log", "-1", "--format=%s", rev])
            .trim()
            .to_owned()
    };
    assert_eq!(subject("HEAD"), "hive: merge hive/a");
    assert_eq!(subject("HEAD^2"), "add this_turn.txt");
}

/// "Racy git": an edit of the same size made in the second the worktree's
/// index was written must still show, even when the snapshot is taken a
/// second later (the snapshot's index copy keeps the index's mtime).
#[test]
fn a_same_size_edit_in_the_index_second_is_seen() {
    let (_d, root) = repo();
    let a = ensure(&agent("a", &root));
    std::fs::write(a.path.join("src/lib.rs"), "pub fn y() {}\n").unwrap();
    let index = PathBuf::from(
        git(
            &a.path,
            &["rev-parse", "--path-format=absolute", "--git-dir"],
        )
        .trim(),
    )
    .join("index");
    let secs = |p: &Path| {
        std::fs::metadata(p)
            .unwrap()
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    let written = secs(&index);
    // Wait for the next second so a fresh copy of the index would look newer.
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        <= written
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let files = worktree::diff::overall(&a.repo, &a.path).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].path, "src/lib.rs");
}

/// `hive doctor` reports an agent's worktree, and a stale one (directory
/// gone) as a warning.
#[test]
fn doctor_reports_the_worktree_and_a_stale_one() {
    use hive::doctor::{Env, Level, check_agent};
    let (_d, root) = repo();
    let mut cfg = agent("a", &root);
    cfg.script = Some("demo:tour".into());
    let env = Env {
        path: std::env::var_os("PATH").unwrap_or_default(),
        home: PathBuf::from("/nonexistent-home"),
        cwd: root,
        vars: Default::default(),
    };
    let level = |env: &Env| {
        let report = check_agent(&cfg, env);
        let c = report
            .checks
            .iter()
            .find(|c| c.name == "worktree")
            .expect("a worktree check")
            .clone();
        (c.level, c.detail)
    };
    assert_eq!(level(&env), (Level::Info, "made on first start".to_owned()));
    let w = ensure(&cfg);
    let (ok, detail) = level(&env);
    assert_eq!(ok, Level::Ok);
    assert!(
        detail.contains("hive/a") && detail.contains("nothing unmerged"),
        "{detail}"
    );
    std::fs::remove_dir_all(&w.path).unwrap();
    let (warn, detail) = level(&env);
    assert_eq!(warn, Level::Warn);
    assert!(detail.starts_with("stale:"), "{detail}");
    let outside = tempfile::tempdir().unwrap();
    let mut lost = agent("a", outside.path());
    lost.script = Some("demo:tour".into());
    let report = check_agent(&lost, &env);
    assert!(
        report
            .checks
            .iter()
            .any(|c| c.name == "worktree" && c.level == Level::Fail)
    );
}

#[test]
fn worktree_setup_runs_once_with_a_port_of_its_own() {
    let (_d, root) = repo();
    let setup = |a: &mut AgentConfig| {
        a.worktree_setup = vec![
            "sh".into(),
            "-c".into(),
            "echo \"port $HIVE_PORT\" >> setup-ran.txt; echo installed".into(),
        ];
    };
    let mut agents = [agent("a", &root), agent("b", &root)];
    agents.iter_mut().for_each(setup);
    let prepared = worktree::prepare(&mut agents, None);
    let port = |a: &AgentConfig| a.env["HIVE_PORT"].parse::<u16>().unwrap();
    let (pa, pb) = (port(&agents[0]), port(&agents[1]));
    assert_ne!(pa, pb, "distinct ports");
    for ((_, w), p) in prepared.iter().zip([pa, pb]) {
        let w = w.as_ref().unwrap();
        // Run where the agent runs, with the agent's environment.
        assert_eq!(
            std::fs::read_to_string(w.cwd.join("setup-ran.txt")).unwrap(),
            format!("port {p}\n")
        );
        // What it printed is for the pane to show (the server puts it there).
        assert_eq!(
            w.setup_output.as_deref(),
            Some(
                "worktree setup `sh -c echo \"port $HIVE_PORT\" >> setup-ran.txt; echo installed` ran:\ninstalled"
            )
        );
    }

    // A restart: the same ports, and the setup does not run again.
    let mut again = [agent("a", &root), agent("b", &root)];
    again.iter_mut().for_each(setup);
    let prepared = worktree::prepare(&mut again, None);
    assert_eq!((port(&again[0]), port(&again[1])), (pa, pb));
    let w = prepared[0].1.as_ref().unwrap();
    assert_eq!(
        std::fs::read_to_string(w.cwd.join("setup-ran.txt")).unwrap(),
        format!("port {pa}\n")
    );
    assert_eq!(w.setup_output, None, "it did not run this time");

    // A port the config sets is kept.
    let mut own = agent("c", &root);
    own.env.insert("HIVE_PORT".into(), "4321".into());
    worktree::prepare(std::slice::from_mut(&mut own), None);
    assert_eq!(own.env["HIVE_PORT"], "4321");
}

/// A port the kernel has free now (the listener is dropped).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `prepare` on another thread: a read that blocks (a FIFO) or never ends
/// (`/dev/zero`) fails the test instead of hanging it.
fn prepare_within(mut a: AgentConfig, secs: u64) -> AgentConfig {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        worktree::prepare(std::slice::from_mut(&mut a), None);
        let _ = tx.send(a);
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .expect("prepare blocked on the planted hive.port (or read it without end)")
}

/// #53 item 8: `.git/worktrees/<id>/hive.port` planted in a cloned repo as
/// a link to a file outside, a link to `/dev/zero`, a FIFO, or a file far
/// larger than a port: each is refused by the one no-follow, regular-file,
/// size-capped open (`private::read_own`), never followed, never blocks,
/// and is replaced by a regular file holding the new port. Failed before
/// (`read_to_string` on a follow-anything open): the link and the
/// oversized file handed their port on, `/dev/zero` was read without end
/// and the FIFO blocked.
#[test]
fn a_planted_port_file_is_refused_not_followed() {
    use std::os::unix::fs::FileTypeExt;
    let (_d, root) = repo();
    let port = |a: &AgentConfig| a.env["HIVE_PORT"].parse::<u16>().unwrap();
    let first = prepare_within(agent("a", &root), 60);
    let admin = PathBuf::from(
        git(
            &root.join(".hive/worktrees/a"),
            &["rev-parse", "--path-format=absolute", "--git-dir"],
        )
        .trim(),
    );
    let file = admin.join("hive.port");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        port(&first).to_string()
    );
    let outside = tempfile::tempdir().unwrap();

    // A link to a file outside naming a free port: not taken from it.
    let lure = free_port();
    let target = outside.path().join("port");
    std::fs::write(&target, lure.to_string()).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&target, &file).unwrap();
    let got = port(&prepare_within(agent("a", &root), 60));
    assert_ne!(got, lure, "the port was read through the planted link");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), lure.to_string());
    let meta = std::fs::symlink_metadata(&file).unwrap();
    assert!(meta.is_file(), "the link was not replaced: {meta:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), got.to_string());

    // A link to /dev/zero, and a FIFO nobody writes: refused at once.
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    let got = port(&prepare_within(agent("a", &root), 30));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), got.to_string());
    std::fs::remove_file(&file).unwrap();
    let c = std::ffi::CString::new(file.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    assert!(
        std::fs::symlink_metadata(&file)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let got = port(&prepare_within(agent("a", &root), 30));
    assert!(std::fs::symlink_metadata(&file).unwrap().is_file());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), got.to_string());

    // A free port followed by 32 MiB of spaces: too large to be hive's.
    let lure = free_port();
    let mut big = lure.to_string().into_bytes();
    big.resize(32 << 20, b' ');
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, &big).unwrap();
    let got = port(&prepare_within(agent("a", &root), 60));
    assert_ne!(got, lure, "the port was taken from an oversized file");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), got.to_string());
}

#[test]
fn a_failing_worktree_setup_is_the_panes_error_and_runs_again_next_time() {
    let (_d, root) = repo();
    let mut a = agent("a", &root);
    a.worktree_setup = vec![
        "sh".into(),
        "-c".into(),
        "echo resolving; echo 'npm ERR! missing lockfile' >&2; exit 3".into(),
    ];
    let prepared = worktree::prepare(std::slice::from_mut(&mut a), None);
    let err = prepared[0].1.as_ref().unwrap_err().to_string();
    assert!(
        err.contains("worktree_setup `sh -c") && err.contains("exited with 3"),
        "{err}"
    );
    assert!(
        err.contains("resolving\nnpm ERR! missing lockfile"),
        "{err}"
    );
    assert!(err.contains("the agent does not start"), "{err}");

    // Fixed: the next start runs it (it never succeeded).
    a.worktree_setup = vec!["sh".into(), "-c".into(), "touch ok".into()];
    let prepared = worktree::prepare(std::slice::from_mut(&mut a), None);
    let w = prepared[0].1.as_ref().unwrap();
    assert!(w.cwd.join("ok").is_file());
}
