//! Best-of-N (issue 31 point 5) end to end, with a real git repository and
//! the real console in tmux: `/fanout 3 …` makes three copies of an agent,
//! each in a worktree and branch of its own, fans the prompt out to them
//! and compares the answers; taking the second merges its work into the
//! main checkout, and one more `y` closes the other two copies and removes
//! their worktrees and branches.

use std::path::Path;

use super::support::git::{git, init_repo};
use super::{hive_bin, start};

fn branches(repo: &Path) -> Vec<String> {
    git(repo, &["branch", "--format=%(refname:short)"])
        .lines()
        .filter(|b| b.starts_with("hive/"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn best_of_three_makes_three_branches_and_removes_the_two_not_taken() {
    let Some(bin) = hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().to_owned();
    init_repo(&repo);
    std::fs::write(repo.join("README.md"), "hello\n").unwrap();
    std::fs::write(
        repo.join("hive.toml"),
        "[[agent]]\nid = \"coder\"\nname = \"Coder\"\nprovider = \"script\"\nscript = \"demo:tour\"\n",
    )
    .unwrap();
    std::fs::write(repo.join(".gitignore"), ".hive/\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "initial"]);
    let t = start(&bin, dir);
    t.wait_for("Message Coder");
    t.type_text("/fanout 3 plan the greeting");
    t.keys(&["Enter"]);
    let s = t.wait("three answers", |s| s.contains("compare · 3 of 3 answered"));
    assert!(s.contains("Coder #1") && s.contains("Coder #3"), "{s}");
    assert_eq!(
        branches(&repo),
        ["hive/coder-best1", "hive/coder-best2", "hive/coder-best3"]
    );
    // The second copy's work (as its agent would have written it).
    let second = repo.join(".hive/worktrees/coder-best2");
    assert!(second.is_dir(), "{}", second.display());
    std::fs::write(second.join("greeting.txt"), "hi from two\n").unwrap();

    t.keys(&["Right"]);
    t.keys(&["t"]);
    t.wait_for("merge its worktree into the main checkout? [y/N]");
    t.keys(&["y"]);
    t.wait_for("and remove their worktrees and branches? [y/N]");
    t.keys(&["y"]);
    let start = std::time::Instant::now();
    while branches(&repo) != ["hive/coder-best2"] {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "branches left: {:?}",
            branches(&repo)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        std::fs::read_to_string(repo.join("greeting.txt")).unwrap(),
        "hi from two\n"
    );
    assert!(!repo.join(".hive/worktrees/coder-best1").exists());
    assert!(!repo.join(".hive/worktrees/coder-best3").exists());
    t.keys(&["Escape"]);
    t.wait("the copies gone from the screen", |s| {
        !s.contains("Coder #1") && !s.contains("Coder #3") && s.contains("Coder #2")
    });
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}
