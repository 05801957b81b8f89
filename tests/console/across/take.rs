//! The compare view acts (issue 31): after a fan-out to two agents with
//! worktrees, each answer shows what its worktree changed, `d` marks what
//! differs, `t` takes the selected answer (its
//! worktree merged into the main checkout after `y`) and then offers to
//! reset the other's worktree, which `y` does. Real git repositories.

use crossterm::event::KeyCode;

use super::console::{completed, message, started};
use crate::support::git::git;
use crate::worktree::{console, key, pump, render, repo, service};
use hive::app::overlay::Take;
use hive::app::state::{App, Overlay};
use hive::event::Origin;
use hive::runner::PaneUpdate;
use hive::worktree::WorktreeRequest;

const PROMPT: &str = "fix the greeting";

fn answer(app: &mut App, pane: usize, text: &str) {
    for event in [
        started("t1"),
        message("t1", "u1", Origin::User, PROMPT),
        message("t1", "m1", Origin::Agent, text),
        completed("t1"),
    ] {
        app.apply(PaneUpdate { pane, event });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_one_answer_merges_it_and_resets_the_others() {
    let (_d, root) = repo();
    let mut app = console(&root);
    let (svc, mut rx) = service(&app);
    let wa = app.panes[0].worktree.clone().unwrap();
    let wb = app.panes[1].worktree.clone().unwrap();
    std::fs::write(
        wa.path.join("README.md"),
        "# demo\n\nfirst, fixed by a\nsecond\n",
    )
    .unwrap();
    std::fs::write(wb.path.join("main.rs"), "fn main() {\n    by_b();\n}\n").unwrap();

    fan_out_to_alpha_and_beta(&mut app);
    assert_eq!(app.overlay, Overlay::Compare);
    answer(&mut app, 0, "I fixed the greeting in README.md.");
    answer(&mut app, 1, "I fixed the greeting in main.rs instead.");

    // Each cell says what its worktree holds.
    app.outbox.git(WorktreeRequest::CheckOverlaps);
    pump(&mut app, &svc, &mut rx, |a| a.worktree_changes.len() == 2).await;
    assert!(render(&mut app, 160, 14).contains("worktree: README.md +1 -1"));
    app.on_key(key(KeyCode::Char('d')));
    assert!(app.fanout.words);
    for w in [80, 160] {
        insta::assert_snapshot!(format!("compare_differences_{w}"), render(&mut app, w, 14));
    }

    // t, y: Alpha's worktree goes home; then Beta's is offered for reset.
    app.on_key(key(KeyCode::Char('t')));
    assert_eq!(app.fanout.take, Some(Take::Confirm(0)));
    assert!(render(&mut app, 160, 14).contains("Take Alpha's answer: merge its worktree"));
    app.on_key(key(KeyCode::Char('y')));
    pump(&mut app, &svc, &mut rx, |a| {
        matches!(a.fanout.take, Some(Take::ResetOthers(_) | Take::Done(..)))
    })
    .await;
    assert_eq!(app.fanout.take, Some(Take::ResetOthers(vec![1])));
    assert_eq!(
        std::fs::read_to_string(root.join("README.md")).unwrap(),
        "# demo\n\nfirst, fixed by a\nsecond\n"
    );
    for w in [80, 160] {
        insta::assert_snapshot!(
            format!("compare_reset_the_others_{w}"),
            render(&mut app, w, 14)
        );
    }
    app.on_key(key(KeyCode::Char('y')));
    pump(
        &mut app,
        &svc,
        &mut rx,
        |a| matches!(&a.fanout.take, Some(Take::Done(_, t)) if t.starts_with("reset ")),
    )
    .await;
    assert_eq!(
        app.fanout.take,
        Some(Take::Done(true, "reset Beta to the main checkout".into()))
    );
    assert_eq!(
        git(&wb.path, &["rev-parse", "HEAD"]),
        git(&root, &["rev-parse", "HEAD"])
    );
    assert_eq!(git(&wb.path, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(wb.path.join("main.rs")).unwrap(),
        "fn main() {\n    old();\n}\n",
        "Beta's work is gone"
    );
}

/// F4: Alpha (focused) and Beta get `PROMPT`.
fn fan_out_to_alpha_and_beta(app: &mut App) {
    app.on_key(key(KeyCode::F(4)));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Char(' ')));
    app.on_key(key(KeyCode::Enter));
    for c in PROMPT.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Enter));
}

#[test]
fn a_pane_without_a_worktree_has_nothing_to_take() {
    let (_d, root) = repo();
    let mut app = console(&root);
    app.set_focus(2);
    app.on_key(key(KeyCode::F(4)));
    app.on_key(key(KeyCode::Enter));
    for c in PROMPT.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Enter));
    app.outbox.clear_git_requests();
    app.on_key(key(KeyCode::Char('t')));
    assert!(matches!(app.fanout.take, Some(Take::Done(false, _))));
    assert!(app.outbox.git_requests().is_empty());
}

/// Issue 34 item 13: a refused merge's error is wrapped in the compare view,
/// read whole at any width. Failed before: cut at the view's width.
#[test]
fn a_merge_error_is_wrapped_whole() {
    let (_d, root) = repo();
    let mut app = console(&root);
    fan_out_to_alpha_and_beta(&mut app);
    let error = "merge refused: the main checkout has uncommitted changes in README.md and \
                 src/main.rs; commit or stash them there first, then take the answer again \
                 (nothing was applied)";
    app.fanout.take = Some(Take::Done(false, error.into()));
    let screen = render(&mut app, 80, 16);
    let flat: String = screen
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '"' || c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("(nothing was applied)"), "{screen}");
    insta::assert_snapshot!(screen);
}

/// Issue 46 item 19: the card said `0 files changed` above a worktree
/// file list (the tools' count: the file was not written by a tool) and
/// its cost lost the `~` of an estimate. Failed before: both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_counts_the_worktree_files_and_keeps_an_estimate_marked() {
    use hive::event::Usage;
    use hive::runner::PaneEvent;
    use hive::upsert::{TurnEvent, TurnStatus};
    let (_d, root) = repo();
    let mut app = console(&root);
    let (svc, mut rx) = service(&app);
    let wa = app.panes[0].worktree.clone().unwrap();
    std::fs::write(wa.path.join("README.md"), "# demo\n\nfixed\n").unwrap();
    std::fs::write(wa.path.join("new.txt"), "new\n").unwrap();
    fan_out_to_alpha_and_beta(&mut app);
    for event in [
        started("t1"),
        message("t1", "u1", Origin::User, PROMPT),
        message("t1", "m1", Origin::Agent, "Done."),
        PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: "t1".into(),
            session_id: "s".into(),
            status: TurnStatus::Completed,
            usage: Some(Usage {
                input_tokens: 1200,
                output_tokens: 300,
                cost_usd: Some(0.25),
                cost_estimated: true,
                ..Usage::default()
            }),
            finish_reason: None,
        }),
    ] {
        app.apply(PaneUpdate { pane: 0, event });
    }
    app.outbox.git(WorktreeRequest::CheckOverlaps);
    pump(&mut app, &svc, &mut rx, |a| a.worktree_changes.len() == 2).await;
    let screen = render(&mut app, 200, 14);
    assert!(
        screen.contains("worktree: README.md +1 -2, new.txt +1 -0"),
        "{screen}"
    );
    assert!(
        screen.contains("~$0.25 · 0 tools · 2 files changed"),
        "{screen}"
    );
}

/// Issue 46 item 19: taking an answer committed the worktree with a
/// subject from the last reply's markdown (`Done.** Fixed …`). Failed
/// before: the stray `**` and backticks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_answer_is_committed_with_a_plain_subject() {
    let (_d, root) = repo();
    let mut app = console(&root);
    let (svc, mut rx) = service(&app);
    let wa = app.panes[0].worktree.clone().unwrap();
    std::fs::write(wa.path.join("README.md"), "# demo\n\nfixed\n").unwrap();
    fan_out_to_alpha_and_beta(&mut app);
    answer(
        &mut app,
        0,
        "**Done.** Fixed the greeting in `README.md`.\n\n- one\n- two",
    );
    app.on_key(key(KeyCode::Char('t')));
    app.on_key(key(KeyCode::Char('y')));
    pump(&mut app, &svc, &mut rx, |a| {
        matches!(a.fanout.take, Some(Take::ResetOthers(_) | Take::Done(..)))
    })
    .await;
    assert_eq!(app.fanout.take, Some(Take::ResetOthers(vec![1])));
    assert_eq!(
        git(&root, &["log", "-1", "--format=%s", "HEAD^2"]).trim(),
        "Done. Fixed the greeting in README.md."
    );
}
