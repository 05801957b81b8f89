//! The console with per-agent worktrees (issue 19), without a terminal: two
//! demo agents with `worktree = true` in a temporary repository, the real
//! git service, and the diff view drawn on ratatui's `TestBackend`
//! (insta snapshots in `tests/console/snapshots/`).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use hive::app::state::{App, Overlay};
use hive::app::{build_app, frame};
use hive::config::{Config, ConfigSource};
use hive::event::Origin;
use hive::runner::{PaneEvent, PaneUpdate};
use hive::ui::ViewState;
use hive::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};
use hive::worktree::{self, WorktreeEvent, WorktreeRequest};
use support::git::{git, init_repo};

pub(crate) fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    init_repo(&root);
    std::fs::write(root.join("README.md"), "# demo\n\nfirst\nsecond\n").unwrap();
    std::fs::write(root.join("main.rs"), "fn main() {\n    old();\n}\n").unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "initial"]);
    (dir, root)
}

/// Two demo agents with worktrees and one without, as the console starts them.
pub(crate) fn console(root: &Path) -> App {
    let text = format!(
        r#"
[[agent]]
id = "a"
name = "Alpha"
provider = "script"
script = "demo:tour"
cwd = "{root}"
worktree = true

[[agent]]
id = "b"
name = "Beta"
provider = "script"
script = "demo:reviewer"
cwd = "{root}"
worktree = true

[[agent]]
id = "plain"
provider = "script"
script = "demo:tour"
cwd = "{root}"
"#,
        root = root.display()
    );
    let mut config = Config::parse(&text, ConfigSource::Builtin).unwrap();
    let prepared = worktree::prepare(&mut config.agents, config.worktrees.root.as_deref());
    assert_eq!(prepared.len(), 2);
    let (mut app, warnings) = build_app(&config);
    assert!(warnings.is_empty(), "{warnings:?}");
    app.attach_worktrees(&prepared);
    support::console::with_try_words(&mut app);
    app.now = app.started;
    app
}

pub(crate) fn service(
    app: &App,
) -> (
    UnboundedSender<WorktreeRequest>,
    UnboundedReceiver<WorktreeEvent>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let panes = app
        .panes
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p.worktree.clone()?)))
        .collect();
    (worktree::spawn_service(panes, tx), rx)
}

/// Hands the app's git requests to the service and applies its events until
/// `done` holds.
pub(crate) async fn pump(
    app: &mut App,
    svc: &UnboundedSender<WorktreeRequest>,
    rx: &mut UnboundedReceiver<WorktreeEvent>,
    done: impl Fn(&App) -> bool,
) {
    for req in app.outbox.take_git_requests() {
        svc.send(req).unwrap();
    }
    while !done(app) {
        // Only a guard against a hang; the assertion is `done`.
        let ev = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("a git event")
            .expect("service alive");
        app.on_worktree(ev);
        for req in app.outbox.take_git_requests() {
            svc.send(req).unwrap();
        }
    }
}

pub(crate) fn render(app: &mut App, w: u16, h: u16) -> String {
    let mut view = ViewState::default();
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| frame(app, &mut view, f.area(), f.buffer_mut()))
        .unwrap();
    term.backend().to_string()
}

pub(crate) fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn typ(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

pub(crate) fn loaded(app: &App) -> bool {
    app.diff.as_ref().is_some_and(|v| !v.loading)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_demo_agents_work_apart_and_the_diff_view_brings_work_home() {
    let (_d, root) = repo();
    let mut app = console(&root);
    let (wa, wb) = (
        app.panes[0].worktree.clone().unwrap(),
        app.panes[1].worktree.clone().unwrap(),
    );
    assert_ne!(wa.path, wb.path);
    assert_eq!(
        (wa.branch.as_str(), wb.branch.as_str()),
        ("hive/a", "hive/b")
    );
    assert_eq!(app.panes[0].agent.cwd.as_deref(), Some(wa.path.as_path()));
    assert!(app.panes[2].worktree.is_none());
    assert_eq!(app.panes[2].agent.cwd.as_deref(), Some(root.as_path()));
    let (svc, mut rx) = service(&app);

    // Alpha's turn writes a file; nobody else sees it. The server tells
    // the service of each turn (src/server/worktrees.rs), not the console.
    let started = TurnEvent::TurnStarted {
        turn_id: "t1".into(),
        session_id: "s".into(),
        model_id: "demo".into(),
        provider_id: "script".into(),
    };
    svc.send(WorktreeRequest::of_turn(0, &started)).unwrap();
    app.apply(PaneUpdate {
        pane: 0,
        event: PaneEvent::Turn(started),
    });
    assert!(app.outbox.git_requests().is_empty(), "{:?}", app.outbox);
    // The service works in order: once a later request is answered, the
    // turn's start snapshot is taken.
    svc.send(WorktreeRequest::Diff {
        pane: 1,
        scope: worktree::DiffScope::LastTurn,
    })
    .unwrap();
    assert!(matches!(
        rx.recv().await,
        Some(WorktreeEvent::Diff { pane: 1, .. })
    ));
    std::fs::write(
        wa.path.join("hello.rs"),
        "fn hello() -> &'static str {\n    \"hi\"\n}\n",
    )
    .unwrap();
    std::fs::write(wa.path.join("main.rs"), "fn main() {\n    new();\n}\n").unwrap();
    let ended = TurnEvent::TurnComplete {
        turn_id: "t1".into(),
        session_id: "s".into(),
        status: TurnStatus::Completed,
        usage: None,
        finish_reason: None,
    };
    svc.send(WorktreeRequest::of_turn(0, &ended)).unwrap();
    app.apply(PaneUpdate {
        pane: 0,
        event: PaneEvent::Turn(ended),
    });
    assert!(!wb.path.join("hello.rs").exists());
    assert!(!root.join("hello.rs").exists());

    // `/diff` in Alpha's composer opens the view; it lists both files.
    typ(&mut app, "/diff");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::Diff);
    assert!(
        app.outbox.runner_commands().is_empty(),
        "/diff is not sent to the agent"
    );
    pump(&mut app, &svc, &mut rx, loaded).await;
    insta::assert_snapshot!("diff_view_overall", render(&mut app, 100, 18));
    app.on_key(key(KeyCode::Down));
    insta::assert_snapshot!("diff_view_second_file", render(&mut app, 100, 18));

    // Tab: what the last turn changed.
    app.on_key(key(KeyCode::Tab));
    pump(&mut app, &svc, &mut rx, loaded).await;
    let v = app.diff.as_ref().unwrap();
    assert_eq!(v.scope, worktree::DiffScope::LastTurn);
    let names: Vec<_> = v.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["hello.rs", "main.rs"]);

    // m, y: merged into the main checkout.
    app.on_key(key(KeyCode::Char('m')));
    assert!(render(&mut app, 100, 18).contains("Merge hive/a into the main checkout"));
    app.on_key(key(KeyCode::Char('y')));
    pump(&mut app, &svc, &mut rx, |a| {
        a.diff.as_ref().is_some_and(|v| {
            v.message
                .as_ref()
                .is_some_and(|m| m.1.starts_with("merged"))
        })
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(root.join("hello.rs")).unwrap(),
        "fn hello() -> &'static str {\n    \"hi\"\n}\n"
    );
    assert!(git(&root, &["status", "--porcelain"]).is_empty());
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
    assert!(app.diff.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_edits_warn_in_both_panes() {
    let (_d, root) = repo();
    let mut app = console(&root);
    let (svc, mut rx) = service(&app);
    let wa = app.panes[0].worktree.clone().unwrap();
    let wb = app.panes[1].worktree.clone().unwrap();
    std::fs::write(wa.path.join("README.md"), "# demo\n\nfirst, by a\nsecond\n").unwrap();
    std::fs::write(wb.path.join("README.md"), "# demo\n\nfirst, by b\nsecond\n").unwrap();
    app.outbox.git(WorktreeRequest::CheckOverlaps);
    pump(&mut app, &svc, &mut rx, |a| !a.overlaps.is_empty()).await;
    assert_eq!(app.overlaps.len(), 1);
    assert_eq!(
        app.overlaps_of(0),
        [("b".to_owned(), "README.md (same lines)".to_owned())]
    );
    assert_eq!(
        app.overlaps_of(1),
        [("a".to_owned(), "README.md (same lines)".to_owned())]
    );
    assert!(app.overlaps_of(2).is_empty());
    let screen = render(&mut app, 150, 16);
    assert!(
        screen.contains("⚠ b also changed README.md (same lines)"),
        "{screen}"
    );
    assert!(
        screen.contains("⚠ a also changed README.md (same lines)"),
        "{screen}"
    );
    assert!(
        app.panes[1].attention.flagged,
        "the unfocused pane is flagged"
    );
    insta::assert_snapshot!("worktree_panes_with_overlap", screen);

    // a goes home first; b's merge then conflicts, is reported with the
    // file, and leaves the main checkout as it was.
    for pane in [0, 1] {
        app.set_focus(pane);
        app.on_key(key(KeyCode::F(3)));
        pump(&mut app, &svc, &mut rx, loaded).await;
        app.on_key(key(KeyCode::Char('m')));
        app.on_key(key(KeyCode::Char('y')));
        pump(&mut app, &svc, &mut rx, |a| {
            a.diff
                .as_ref()
                .is_some_and(|v| v.message.as_ref().is_some_and(|m| m.1 != "working…"))
        })
        .await;
        if pane == 0 {
            app.on_key(key(KeyCode::Esc));
        }
    }
    let v = app.diff.as_ref().unwrap();
    assert_eq!(
        v.message,
        Some((
            false,
            "merging hive/b would conflict in: README.md".to_owned()
        ))
    );
    assert!(render(&mut app, 150, 16).contains("merging hive/b would conflict in: README.md"));
    assert_eq!(
        std::fs::read_to_string(root.join("README.md")).unwrap(),
        "# demo\n\nfirst, by a\nsecond\n"
    );
    assert!(git(&root, &["status", "--porcelain"]).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_reuses_the_worktrees_and_keys_open_the_view() {
    let (_d, root) = repo();
    let first = console(&root);
    let path = first.panes[0].worktree.clone().unwrap().path;
    std::fs::write(path.join("left.txt"), "from the first run\n").unwrap();
    drop(first);
    let mut app = console(&root);
    let again = app.panes[0].worktree.clone().unwrap();
    assert_eq!(again.path, path);
    assert!(!again.created);
    assert!(again.path.join("left.txt").is_file());

    // Ctrl+B g (prefix d detaches now) and F3 open the view; without a
    // worktree they say so.
    app.on_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL));
    app.on_key(key(KeyCode::Char('g')));
    assert_eq!(app.overlay, Overlay::Diff);
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::F(3)));
    assert_eq!(app.overlay, Overlay::Diff);
    app.on_key(key(KeyCode::Esc));
    app.set_focus(2);
    app.outbox.clear_git_requests();
    app.on_key(key(KeyCode::F(3)));
    assert_eq!(app.overlay, Overlay::None);
    assert!(app.status.as_ref().unwrap().0.contains("no worktree"));
    // `/diff` is hive's command (issue 14): without a worktree it says so
    // and nothing reaches the agent.
    app.status = None;
    typ(&mut app, "/diff");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::None);
    assert!(app.status.as_ref().unwrap().0.contains("no worktree"));
    assert!(app.outbox.runner_commands().is_empty(), "{:?}", app.outbox);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s_commits_on_the_branch_with_the_agents_summary() {
    let (_d, root) = repo();
    let mut app = console(&root);
    let (svc, mut rx) = service(&app);
    let wa = app.panes[0].worktree.clone().unwrap();
    std::fs::write(wa.path.join("hello.rs"), "fn hello() {}\n").unwrap();
    app.apply(PaneUpdate {
        pane: 0,
        event: PaneEvent::Upsert(Upsert {
            turn_id: "t1".into(),
            session_id: "s".into(),
            item_id: "m1".into(),
            source_timestamp: chrono::DateTime::UNIX_EPOCH,
            emitted_at: chrono::DateTime::UNIX_EPOCH,
            status: UpsertStatus::Complete,
            error_code: None,
            error_message: None,
            kind: UpsertKind::Message {
                content: "## Add a hello function\n\nIt says hi.".into(),
                origin: Origin::Agent,
            },
        }),
    });
    app.on_key(key(KeyCode::F(3)));
    pump(&mut app, &svc, &mut rx, loaded).await;
    app.on_key(key(KeyCode::Char('s')));
    let screen = render(&mut app, 120, 12);
    assert!(
        screen.contains("Commit everything on hive/a as “Add a hello function”? [y/N]"),
        "{screen}"
    );
    app.on_key(key(KeyCode::Char('y')));
    pump(&mut app, &svc, &mut rx, |a| {
        a.diff.as_ref().is_some_and(|v| {
            v.message
                .as_ref()
                .is_some_and(|m| m.1.starts_with("committed"))
        })
    })
    .await;
    assert_eq!(
        git(&wa.path, &["log", "-1", "--format=%s"]).trim(),
        "Add a hello function"
    );
    assert!(git(&wa.path, &["status", "--porcelain"]).is_empty());
    assert!(
        !root.join("hello.rs").exists(),
        "a commit on the branch is not a merge"
    );
}

#[test]
fn terminal_output_in_a_worktree_schedules_one_overlap_check() {
    let (_d, root) = repo();
    let mut app = console(&root);
    app.apply(PaneUpdate {
        pane: 2,
        event: PaneEvent::Terminal(Default::default()),
    });
    assert!(app.overlap_check_at.is_none(), "no worktree, no check");
    app.apply(PaneUpdate {
        pane: 0,
        event: PaneEvent::Terminal(Default::default()),
    });
    let due = app.overlap_check_at.expect("a check is scheduled");
    app.now += Duration::from_secs(1);
    app.apply(PaneUpdate {
        pane: 1,
        event: PaneEvent::Terminal(Default::default()),
    });
    assert_eq!(app.overlap_check_at, Some(due), "one check per burst");
    assert!(app.outbox.git_requests().is_empty());
    app.due_overlap_check();
    assert_eq!(app.outbox.git_requests(), [&WorktreeRequest::CheckOverlaps]);
    assert!(app.overlap_check_at.is_none());
}
