//! Review in the diff view (issue 31): step through hunks, accept one,
//! comment on another, reject (revert) a hunk after `y`, send the comments
//! to the agent as one prompt with file:line; the last turn's diff is
//! headed by its prompt. Snapshots at 80 and 160 columns.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crossterm::event::KeyCode;

use hive::app::state::App;
use hive::event::Origin;
use hive::runner::{PaneEvent, PaneUpdate, RunnerCommand};
use hive::upsert::{Upsert, UpsertKind, UpsertStatus};

use super::support::git::git;
use super::worktree::{console, key, loaded, pump, render, repo, service};

fn numbered(edit: &[usize]) -> String {
    (1..=30)
        .map(|i| {
            if edit.contains(&i) {
                format!("LINE {i} by the agent\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect()
}

fn typ(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

/// `C`, `text`, Enter: a comment, whose prompt reads `shown` as it is typed.
fn comment(app: &mut App, text: &str, shown: &str) {
    app.on_key(key(KeyCode::Char('C')));
    typ(app, text);
    let screen = render(app, 100, 20);
    assert!(screen.contains(shown), "{screen}");
    app.on_key(key(KeyCode::Enter));
}

fn user_message(app: &mut App, text: &str) {
    app.apply(PaneUpdate {
        pane: 0,
        event: PaneEvent::Upsert(Upsert {
            turn_id: "t1".into(),
            session_id: "s".into(),
            item_id: "u1".into(),
            source_timestamp: chrono::DateTime::UNIX_EPOCH,
            emitted_at: chrono::DateTime::UNIX_EPOCH,
            status: UpsertStatus::Complete,
            error_code: None,
            error_message: None,
            kind: UpsertKind::Message {
                content: text.into(),
                origin: Origin::User,
            },
        }),
    });
}

/// A diff view open on `long.txt` (30 lines, committed) with the lines
/// `edit` changed in the pane's worktree.
struct Review {
    _dir: tempfile::TempDir,
    app: App,
    svc: tokio::sync::mpsc::UnboundedSender<hive::worktree::WorktreeRequest>,
    rx: tokio::sync::mpsc::UnboundedReceiver<hive::worktree::WorktreeEvent>,
    wa: hive::worktree::Worktree,
}

async fn review_of(edit: &[usize]) -> Review {
    let (_dir, root) = repo();
    std::fs::write(root.join("long.txt"), numbered(&[])).unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "long file"]);
    let mut app = console(&root);
    let (svc, mut rx) = service(&app);
    let wa = app.panes[0].worktree.clone().unwrap();
    std::fs::write(wa.path.join("long.txt"), numbered(edit)).unwrap();
    app.on_key(key(KeyCode::F(3)));
    pump(&mut app, &svc, &mut rx, loaded).await;
    Review {
        _dir,
        app,
        svc,
        rx,
        wa,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_reject_and_comment_on_hunks_then_send_the_review() {
    let Review {
        _dir,
        mut app,
        svc,
        mut rx,
        wa,
    } = review_of(&[2, 15, 28]).await;
    assert_eq!(app.diff.as_ref().unwrap().files[0].hunks_len(), 3);
    // a: the first hunk is accepted, the second selected; C comments on it.
    app.on_key(key(KeyCode::Char('a')));
    comment(
        &mut app,
        "why capitals?",
        "comment on long.txt:15 › why capitals?",
    );
    let v = app.diff.as_ref().unwrap();
    assert_eq!(v.review.comments.len(), 1);
    assert_eq!(
        (
            v.review.comments[0].path.as_str(),
            v.review.comments[0].line
        ),
        ("long.txt", 15)
    );
    assert!(v.review.is_accepted("long.txt", 0));
    // [ goes back to the first hunk: ticked; the comment under the second.
    app.on_key(key(KeyCode::Char('[')));
    for w in [80, 160] {
        insta::assert_snapshot!(format!("diff_view_review_{w}"), render(&mut app, w, 30));
    }
    app.on_key(key(KeyCode::Char(']')));

    // x, y: the selected (second) hunk is reverted; the others stay.
    app.on_key(key(KeyCode::Char('x')));
    assert!(render(&mut app, 160, 22).contains("Revert hunk 2 of long.txt in the worktree"));
    app.on_key(key(KeyCode::Char('y')));
    pump(&mut app, &svc, &mut rx, |a| {
        a.diff.as_ref().is_some_and(|v| {
            !v.loading
                && v.message
                    .as_ref()
                    .is_some_and(|m| m.1.starts_with("reverted"))
        })
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(wa.path.join("long.txt")).unwrap(),
        numbered(&[2, 28])
    );
    assert_eq!(app.diff.as_ref().unwrap().files[0].hunks_len(), 2);

    // S: the comments go to the agent as one prompt.
    app.outbox.clear_runner_commands();
    app.on_key(key(KeyCode::Char('S')));
    let sent: Vec<String> = app
        .outbox
        .runner_commands()
        .into_iter()
        .filter_map(|(pane, c)| match c {
            RunnerCommand::Submit { text, .. } if pane == 0 => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].contains("long.txt:15\n```diff\n@@ -12,7 +12,7 @@"),
        "{}",
        sent[0]
    );
    assert!(sent[0].contains("+LINE 15 by the agent"), "{}", sent[0]);
    assert!(sent[0].contains("why capitals?"), "{}", sent[0]);
    assert!(app.diff.as_ref().unwrap().review.comments.is_empty());

    // X, y: the whole file goes back.
    app.on_key(key(KeyCode::Char('X')));
    app.on_key(key(KeyCode::Char('y')));
    pump(&mut app, &svc, &mut rx, |a| {
        a.diff.as_ref().is_some_and(|v| {
            !v.loading
                && v.message
                    .as_ref()
                    .is_some_and(|m| m.1 == "reverted long.txt")
        })
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(wa.path.join("long.txt")).unwrap(),
        numbered(&[])
    );
}

/// Issue 46 item 19: a line picked with `J` stayed picked in the next
/// file, so `C` there commented on whatever line had that index. Failed
/// before: the line was still picked after `j`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_picked_line_does_not_follow_into_the_next_file() {
    let Review {
        _dir,
        mut app,
        svc,
        mut rx,
        wa,
    } = review_of(&[5, 7]).await;
    std::fs::write(wa.path.join("main.rs"), "fn main() {\n    new();\n}\n").unwrap();
    app.on_key(key(KeyCode::Char('r')));
    pump(&mut app, &svc, &mut rx, |a| {
        a.diff.as_ref().is_some_and(|v| v.files.len() == 2)
    })
    .await;
    let paths: Vec<&str> = app
        .diff
        .as_ref()
        .unwrap()
        .files
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(paths, ["long.txt", "main.rs"]);
    for _ in 0..4 {
        app.on_key(KeyCode::Char('J').into());
    }
    assert!(app.diff.as_ref().unwrap().review.line.is_some());
    app.on_key(key(KeyCode::Char('j')));
    let v = app.diff.as_ref().unwrap();
    assert_eq!(v.selected, 1);
    assert_eq!(v.review.line, None, "the pick stays with long.txt");
    comment(&mut app, "why new?", "comment on main.rs");
    let c = &app.diff.as_ref().unwrap().review.comments;
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].path.as_str(), c[0].diff_line), ("main.rs", None));
    // Back in long.txt, `J` starts again at the hunk's first change.
    app.on_key(key(KeyCode::Char('k')));
    assert_eq!(app.diff.as_ref().unwrap().review.line, None);
    app.on_key(KeyCode::Char('J').into());
    assert_eq!(app.diff.as_ref().unwrap().review.line, Some(3));
}

#[test]
fn the_last_turns_diff_is_headed_by_its_prompt() {
    let (_d, root) = repo();
    let mut app = console(&root);
    user_message(&mut app, "Rename old() to new()\nand keep the tests green");
    app.on_key(key(KeyCode::F(3)));
    app.on_key(key(KeyCode::Tab));
    let screen = render(&mut app, 100, 12);
    assert!(
        screen.contains("last turn: “Rename old() to new()”"),
        "{screen}"
    );
}

/// Issue 31 point 1: a comment on one line of a hunk (`J`/`K` pick the
/// line, `C` comments on it) names that line and sits under it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_on_one_line_names_that_line() {
    // One hunk that changes lines 5 and 7.
    let Review { _dir, mut app, .. } = review_of(&[5, 7]).await;
    assert_eq!(app.diff.as_ref().unwrap().files[0].hunks_len(), 1);
    // J: the hunk's first changed line ("-line 5", after three lines of
    // context); J J J: past "+LINE 5" and " line 6", to "-line 7".
    for _ in 0..4 {
        app.on_key(KeyCode::Char('J').into());
    }
    comment(
        &mut app,
        "why change 7?",
        "comment on long.txt:7 › why change 7?",
    );
    // K K K: back to "-line 5", a comment there too.
    for _ in 0..3 {
        app.on_key(KeyCode::Char('K').into());
    }
    app.on_key(key(KeyCode::Char('C')));
    typ(&mut app, "and 5?");
    app.on_key(key(KeyCode::Enter));
    let v = app.diff.as_ref().unwrap();
    let at: Vec<(u32, Option<usize>)> = v
        .review
        .comments
        .iter()
        .map(|c| (c.line, c.diff_line))
        .collect();
    assert_eq!(at, [(7, Some(6)), (5, Some(3))]);
    for w in [80, 160] {
        insta::assert_snapshot!(
            format!("diff_view_line_comments_{w}"),
            render(&mut app, w, 24)
        );
    }
    app.outbox.clear_runner_commands();
    app.on_key(key(KeyCode::Char('S')));
    let sent: Vec<String> = app
        .outbox
        .runner_commands()
        .into_iter()
        .filter_map(|(_, c)| match c {
            RunnerCommand::Submit { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(sent[0].contains("\nlong.txt:7\n```diff\n"), "{}", sent[0]);
    assert!(sent[0].contains("\nlong.txt:5\n```diff\n"), "{}", sent[0]);
}
