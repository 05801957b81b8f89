//! `hive worktree prune` touches hive's own worktrees only: a user's
//! worktree whose drive is momentarily unmounted keeps its registration, and
//! a hive worktree whose only content is an ignored `.env` is work, kept.

use super::hive;
use crate::support::git::{git, init_repo};

#[test]
fn prune_keeps_a_users_unmounted_worktree_and_ignored_files() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let repo = base.join("repo");
    std::fs::create_dir(&repo).unwrap();
    init_repo(&repo);
    std::fs::write(repo.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(
        repo.join("hive.toml"),
        "[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"demo:tour\"\nworktree = true\n",
    )
    .unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "initial"]);

    let run = hive(&base)
        .current_dir(&repo)
        .args(["run", "--agent", "a", "hello"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let wa = repo.join(".hive/worktrees/a");
    std::fs::write(wa.join(".env"), "API_KEY=secret\n").unwrap();

    // The user's own worktree, on a drive that is not mounted right now.
    let mine = base.join("usb/mine");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "mine",
            mine.to_str().unwrap(),
        ],
    );
    std::fs::rename(base.join("usb"), base.join("usb-unmounted")).unwrap();

    let out = hive(&base)
        .current_dir(&repo)
        .args(["worktree", "prune"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        wa.join(".env").is_file(),
        "an ignored file was deleted: {stdout}"
    );
    assert!(
        stdout.contains("kept a:") && stdout.contains("ignored"),
        "says why it kept it: {stdout}"
    );
    let list = git(&repo, &["worktree", "list", "--porcelain"]);
    assert!(
        list.contains(mine.to_str().unwrap()),
        "the user's worktree lost its registration: {list}"
    );
    std::fs::rename(base.join("usb-unmounted"), base.join("usb")).unwrap();
    assert_eq!(git(&mine, &["branch", "--show-current"]).trim(), "mine");
}
