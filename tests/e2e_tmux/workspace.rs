//! A workspace (issue 52) end to end, in the real console in tmux: a shell
//! pane over two repositories (`repos = ["api", "web"]`) edits both from
//! the workspace root; another pane in a worktree of api edits the same
//! line. The workspace's diff view lists both repositories' files, each
//! group named, says the predicted conflict in `api/README.md`, and `M` on
//! web's file merges web alone: web's main checkout gets the page, api's
//! stays as it was.

use super::support::git::{git, init_repo};
use super::{hive_bin, start};

fn repo(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    init_repo(dir);
    std::fs::write(dir.join("README.md"), "hello\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "initial"]);
}

#[test]
fn a_workspace_pane_diffs_both_repositories_and_merges_one() {
    let Some(bin) = hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().to_owned();
    let (api, web) = (base.join("api"), base.join("web"));
    repo(&api);
    repo(&web);
    std::fs::write(
        base.join("hive.toml"),
        "[[agent]]\nid = \"ws\"\nprovider = \"pty\"\ncommand = [\"sh\"]\nworktree = true\n\
         repos = [\"api\", \"web\"]\n\n\
         [[agent]]\nid = \"b\"\nprovider = \"pty\"\ncommand = [\"sh\"]\ncwd = \"api\"\nworktree = true\n",
    )
    .unwrap();
    let t = start(&bin, dir);
    t.wait("both worktree panes", |s| {
        s.contains("ws ⎇ hive/ws") && s.contains("b ⎇ hive/b")
    });
    t.wait("both shell prompts", |s| {
        ["┃# ", "│# ", "┃$ ", "│$ "]
            .iter()
            .map(|p| s.matches(p).count())
            .sum::<usize>()
            >= 2
    });
    // From the workspace root: one edit in each repository.
    t.type_text("echo from-ws >> api/README.md && echo page > web/page.txt && echo WROTE-WS");
    t.keys(&["Enter"]);
    t.wait_for("WROTE-WS");
    t.keys(&["M-2"]);
    t.type_text("echo from-b >> README.md && echo WROTE-B");
    t.keys(&["Enter"]);
    t.wait_for("WROTE-B");
    t.wait("the conflict in api", |s| s.contains("api/README.md"));
    t.keys(&["M-1"]);
    t.keys(&["C-b", "g"]);
    let s = t.wait("the diff view of both repositories", |s| {
        s.contains("diff · ws · hive/ws · overall")
            && s.contains("M api/README.md")
            && s.contains("A web/page.txt")
            && s.contains("repositories · api: 1 file +1 -0 · web: 1 file +1 -0")
    });
    assert!(
        s.contains("✗ merging with b would conflict in api/README.md"),
        "{s}"
    );
    // web's file, then merge its repository alone.
    t.keys(&["Down"]);
    t.wait_for("+page");
    t.keys(&["M"]);
    t.wait_for("Merge hive/ws into web's main checkout (only web");
    t.keys(&["y"]);
    t.wait_for("merged hive/ws (1 commit) into the main checkout: web/page.txt");
    assert_eq!(
        std::fs::read_to_string(web.join("page.txt")).unwrap(),
        "page\n"
    );
    assert_eq!(
        std::fs::read_to_string(api.join("README.md")).unwrap(),
        "hello\n"
    );
    t.keys(&["Escape"]);
    t.wait("the panes again", |s| !s.contains("diff · ws"));
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}
