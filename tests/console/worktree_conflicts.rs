//! Predicted conflicts and the conflict hand-off in the console (issue 31):
//! two demo agents edit the same line in their worktrees; the panes'
//! borders and the overview say which merge would conflict and in which
//! file, with a merge order; merging the second is refused with the files
//! (wrapped in the diff view) and `h` hands the conflict to the agent as
//! its next prompt. Snapshots at 80 and 160 columns.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use hive::app::state::{App, Overlay};
use hive::runner::RunnerCommand;
use hive::worktree::WorktreeRequest;

use super::worktree::{console, key, loaded, pump, render, repo, service};

fn merge_result(app: &App) -> bool {
    app.diff
        .as_ref()
        .is_some_and(|v| v.message.as_ref().is_some_and(|m| m.1 != "working…"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_predicted_conflict_shows_and_the_hand_off_prompts_the_agent() {
    let (_d, root) = repo();
    let mut app = console(&root);
    let (svc, mut rx) = service(&app);
    let wa = app.panes[0].worktree.clone().unwrap();
    let wb = app.panes[1].worktree.clone().unwrap();
    std::fs::write(wa.path.join("README.md"), "# demo\n\nfirst, by a\nsecond\n").unwrap();
    std::fs::write(wb.path.join("README.md"), "# demo\n\nfirst, by b\nsecond\n").unwrap();
    std::fs::write(wb.path.join("main.rs"), "fn main() {\n    by_b();\n}\n").unwrap();
    app.outbox.git(WorktreeRequest::CheckOverlaps);
    pump(&mut app, &svc, &mut rx, |a| {
        !a.conflicts.conflicts.is_empty() && !a.overlaps.is_empty()
    })
    .await;
    assert_eq!(
        app.conflicts_of(0),
        [("b".to_owned(), "README.md".to_owned())]
    );
    assert_eq!(
        app.conflicts_of(1),
        [("a".to_owned(), "README.md".to_owned())]
    );
    assert!(app.conflicts_of(2).is_empty());
    assert_eq!(
        app.merge_plan().describe().as_deref(),
        Some("merge order: a; then b (conflicts with a in README.md)")
    );
    for w in [80, 160] {
        let screen = render(&mut app, w, 14);
        assert!(screen.contains("✗ conflict with"), "{screen}");
        insta::assert_snapshot!(format!("panes_with_a_predicted_conflict_{w}"), screen);
    }
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::ALT));
    assert_eq!(app.overlay, Overlay::Overview);
    for w in [80, 160] {
        let screen = render(&mut app, w, 14);
        assert!(
            screen.contains("Alpha and Beta would conflict in README.md"),
            "{screen}"
        );
        insta::assert_snapshot!(format!("overview_with_a_predicted_conflict_{w}"), screen);
    }
    app.on_key(key(KeyCode::Esc));

    // a goes home; b's merge is refused before anything is touched.
    for pane in [0, 1] {
        app.set_focus(pane);
        app.on_key(key(KeyCode::F(3)));
        pump(&mut app, &svc, &mut rx, loaded).await;
        app.on_key(key(KeyCode::Char('m')));
        app.on_key(key(KeyCode::Char('y')));
        pump(&mut app, &svc, &mut rx, merge_result).await;
        if pane == 0 {
            app.on_key(key(KeyCode::Esc));
        }
    }
    let v = app.diff.as_ref().unwrap();
    assert_eq!(v.conflict.as_deref(), Some(&["README.md".to_owned()][..]));
    assert!(
        git_clean(&wb.path).contains("README.md"),
        "b's edit stays uncommitted"
    );
    for w in [80, 160] {
        let screen = render(&mut app, w, 16);
        assert!(
            screen.contains("h: rebase hive/b onto the main checkout"),
            "{screen}"
        );
        insta::assert_snapshot!(format!("diff_view_conflict_offer_{w}"), screen);
    }

    // h: b's branch is rebased onto main in its worktree and b gets the
    // conflict as its next prompt.
    app.outbox.clear_runner_commands();
    app.on_key(key(KeyCode::Char('h')));
    pump(&mut app, &svc, &mut rx, |a| {
        a.diff.as_ref().is_some_and(|v| {
            v.message
                .as_ref()
                .is_some_and(|m| m.1.contains("got the conflict"))
        })
    })
    .await;
    let sent: Vec<String> = app
        .outbox
        .runner_commands()
        .into_iter()
        .filter_map(|(pane, c)| match c {
            RunnerCommand::Submit { text, .. } if pane == 1 => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1, "{:?}", app.outbox);
    assert!(
        sent[0].contains("- README.md: conflict markers at lines 3-"),
        "{}",
        sent[0]
    );
    assert!(sent[0].contains("git rebase --continue"));
    let text = std::fs::read_to_string(wb.path.join("README.md")).unwrap();
    assert!(text.contains("<<<<<<<"), "{text}");
    assert_eq!(
        std::fs::read_to_string(root.join("README.md")).unwrap(),
        "# demo\n\nfirst, by a\nsecond\n",
        "the main checkout is untouched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_merge_can_be_aborted() {
    let (_d, root) = repo();
    let mut app = console(&root);
    let (svc, mut rx) = service(&app);
    let wb = app.panes[1].worktree.clone().unwrap();
    std::fs::write(root.join("README.md"), "# demo\n\nfirst, by main\nsecond\n").unwrap();
    super::support::git::git(&root, &["commit", "-qam", "main"]);
    std::fs::write(wb.path.join("README.md"), "# demo\n\nfirst, by b\nsecond\n").unwrap();
    app.set_focus(1);
    app.on_key(key(KeyCode::F(3)));
    pump(&mut app, &svc, &mut rx, loaded).await;
    app.on_key(key(KeyCode::Char('m')));
    app.on_key(key(KeyCode::Char('y')));
    pump(&mut app, &svc, &mut rx, merge_result).await;
    assert!(app.diff.as_ref().unwrap().conflict.is_some());
    app.on_key(key(KeyCode::Char('a')));
    let v = app.diff.as_ref().unwrap();
    assert!(v.conflict.is_none());
    assert_eq!(
        v.message,
        Some((true, "merge aborted: nothing was applied".to_owned()))
    );
    assert!(app.outbox.git_requests().is_empty());
    assert_eq!(git_clean(&wb.path).trim(), "M README.md");
}

fn git_clean(dir: &std::path::Path) -> String {
    super::support::git::git(dir, &["status", "--porcelain"])
}
