//! End-to-end: drives the real `hive` binary inside tmux (a private server
//! socket, a fixed 160x45 window, every XDG/HIVE dir in a tempdir) and reads
//! the screen with `capture-pane`. Skips with a message when tmux is missing.
//!
//! Covers: start on the built-in config, a streamed reply with a tool call,
//! a second prompt queued while the first streams and run after it, Esc
//! interrupting, focus switching, the shell pane (skipped while `pty` is an
//! unknown provider), and a clean quit that restores the terminal; then a
//! quit and restart that brings the conversation back and continues it.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

#[path = "e2e_tmux/best_of.rs"]
mod best_of;
#[path = "e2e_tmux/inbox.rs"]
mod inbox;
#[path = "support/openai_server.rs"]
mod openai_server;
#[path = "e2e_tmux/remote.rs"]
mod remote;
#[path = "e2e_tmux/server.rs"]
mod server;
mod support;
#[path = "e2e_tmux/web.rs"]
mod web;
#[path = "e2e_tmux/web_push.rs"]
mod web_push;
#[path = "e2e_tmux/workspace.rs"]
mod workspace;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::tmux::{self, Tmux};

fn start(bin: &Path, dir: tempfile::TempDir) -> Tmux {
    start_runs(bin, dir, 1)
}

/// Every directory hive writes to inside `d`, and a plain terminal.
fn private_env(d: &Path) -> Vec<String> {
    let env = |name: &str| format!("{name}={}", d.join(name.to_ascii_lowercase()).display());
    vec![
        env("HIVE_DATA_DIR"),
        env("HIVE_STATE_DIR"),
        env("XDG_CONFIG_HOME"),
        env("XDG_DATA_HOME"),
        env("XDG_STATE_HOME"),
        "TERM=xterm-256color".into(),
        format!("HOME={}", d.display()),
        "SHELL=/bin/sh".into(),
    ]
}

/// Runs hive `runs` times in a row in the same directories (a restart).
fn start_runs(bin: &Path, dir: tempfile::TempDir, runs: usize) -> Tmux {
    let hive = shlex::try_quote(&bin.display().to_string())
        .expect("quotable path")
        .into_owned();
    let earlier: String = (1..runs)
        // The marker file tells a test that run i has ended: the screen alone
        // cannot, since the next run shows the same conversation.
        .map(|i| format!("{hive} ; echo RUN{i}-EXIT=$? | tee run{i}.exit ; "))
        .collect();
    // The shell prints how hive left the terminal, then keeps the pane open.
    let script = format!(
        "{earlier}{hive} ; echo HIVE-EXIT=$? ; stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' ' ; echo ; sleep 600"
    );
    let vars = private_env(dir.path());
    Tmux::start("hive", dir, (160, 45), &vars, &["sh", "-c", &script])
}

/// The binary under test, or `None` (with a message) when tmux is missing.
fn hive_bin() -> Option<PathBuf> {
    tmux::available().then(|| PathBuf::from(env!("CARGO_BIN_EXE_hive")))
}

fn status_line(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn console_end_to_end() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));

    // Start: the built-in config's panes.
    let s = t.wait("the demo panes", |s| {
        s.contains("Architect (demo)")
            && s.contains("Reviewer (demo)")
            && s.contains("Message Architect")
    });
    assert!(status_line(&s).contains("Architect (demo)"), "{s}");

    // A prompt, and a second one queued while the first streams.
    t.type_text("give me a tour");
    t.keys(&["Enter"]);
    t.wait_for("working");
    t.type_text("and then fix it");
    t.keys(&["Enter"]);
    t.wait_for("queued (1)");
    t.wait("the streamed reply and the tool call", |s| {
        s.contains("Repository tour") && s.contains("✓ Bash") && s.contains("ls -la src/")
    });
    let s = t.wait("the queued prompt to run", |s| {
        s.contains("Fixed the greeting") && !s.contains("queued (1)")
    });
    assert!(s.contains("and then fix it"), "{s}");
    t.wait("the second turn to finish", |s| !s.contains("working"));

    // Interrupt with Esc.
    t.type_text("go slow");
    t.keys(&["Enter"]);
    t.wait_for("Streaming slowly");
    t.keys(&["Escape"]);
    t.wait_for("⏹ interrupted");

    // Focus the reviewer (Alt+2) and talk to it.
    t.keys(&["M-2"]);
    let s = t.wait("reviewer focus", |s| {
        status_line(s).contains("Reviewer (demo)")
    });
    assert!(!status_line(&s).contains("Architect"), "{s}");
    t.type_text("please review");
    t.keys(&["Enter"]);
    t.wait_for("Review of your change");

    // The shell pane, once the PTY provider exists.
    let s = t.screen();
    if s.contains("could not start") && s.contains("`pty`") {
        eprintln!("SKIP shell part: the `pty` provider is not built in yet");
    } else {
        t.keys(&["M-3"]);
        t.wait("shell focus", |s| status_line(s).contains("Shell"));
        t.type_text("echo hive-$((40+2))");
        t.keys(&["Enter"]);
        t.wait_for("hive-42");
        t.keys(&["M-1"]);
        t.wait("back to the demo", |s| {
            status_line(s).contains("Architect (demo)")
        });
    }

    // Quit: Ctrl+Q, then s stops every agent and restores the terminal.
    t.wait("all turns to end", |s| !s.contains("working"));
    t.keys(&["C-q", "s"]);
    let s = t.wait_for("HIVE-EXIT=");
    assert!(s.contains("HIVE-EXIT=0"), "{s}");
    let s = t.wait("stty report", |s| {
        s.contains("icanon") && s.contains("echo")
    });
    assert!(
        !s.contains("-icanon") && !s.contains("-echo"),
        "raw mode left on:\n{s}"
    );
    assert_eq!(
        t.cmd(&["display", "-p", "-t", "hive", "#{alternate_on}"])
            .trim(),
        "0"
    );
    assert_eq!(
        t.cmd(&["display", "-p", "-t", "hive", "#{cursor_flag}"])
            .trim(),
        "1"
    );
    assert_eq!(
        t.cmd(&["display", "-p", "-t", "hive", "#{mouse_any_flag}"])
            .trim(),
        "0"
    );
    assert!(
        !s.contains("Reviewer (demo)"),
        "the console should be gone:\n{s}"
    );
}

#[test]
fn history_survives_quit_and_restart_and_the_session_continues() {
    let Some(bin) = hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("hive_data_dir");
    let run1_exit = dir.path().join("run1.exit");
    let t = start_runs(&bin, dir, 2);
    t.wait_for("Architect (demo)");
    t.type_text("remember the word walnut");
    t.keys(&["Enter"]);
    t.wait("first answer", |s| {
        s.contains("You asked: remember the word walnut")
    });
    t.wait("idle after the turn", |s| status_line(s).contains("idle"));
    t.keys(&["C-q", "s"]);
    t.wait("the first run to end", |_| run1_exit.exists());
    let code = std::fs::read_to_string(&run1_exit).unwrap_or_default();
    assert!(code.contains("RUN1-EXIT=0"), "first run failed: {code}");
    // The second run shows the first conversation before anything is typed.
    let s = t.wait("restored transcript", |s| {
        s.contains("remember the word walnut") && s.contains("Architect (demo)")
    });
    assert!(s.contains("You asked: remember the word walnut"), "{s}");
    t.type_text("and now a second turn");
    t.keys(&["Enter"]);
    t.wait("second answer", |s| {
        s.contains("You asked: and now a second turn")
    });
    t.wait("idle after the second turn", |s| {
        status_line(s).contains("idle")
    });
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
    // Both turns are in one session: the restart continued it.
    let out = Command::new(&bin)
        .args(["history", "show", "demo"])
        .env("HIVE_DATA_DIR", &data)
        .output()
        .expect("hive history show");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("remember the word walnut") && text.contains("and now a second turn"),
        "one session holds both turns:\n{text}"
    );
}

#[test]
fn an_approval_in_an_unfocused_pane_is_answered_from_the_inbox() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));
    t.wait_for("Message Architect");
    t.type_text("please approve this");
    t.keys(&["Enter"]);
    t.wait_for("approval needed");
    t.keys(&["M-2"]);
    t.wait("the inbox count", |s| {
        status_line(s).contains("Reviewer (demo)") && status_line(s).contains("1 waiting")
    });
    t.keys(&["M-i"]);
    t.wait("the inbox entry", |s| {
        s.contains("inbox · 1 waiting") && s.contains("asks to run Bash: mkdir -p build")
    });
    t.keys(&["y"]);
    let s = t.wait("the demo pane to continue", |s| {
        s.contains("Done: the command ran only after you answered")
    });
    assert!(!s.contains("inbox · "), "answered: the inbox closed\n{s}");
    assert!(
        status_line(&s).contains("Reviewer (demo)"),
        "focus stayed\n{s}"
    );
    // What waits now is the finished turn, not the answered approval.
    t.keys(&["M-i"]);
    let s = t.wait_for("turn finished");
    assert!(!s.contains("asks to run"), "{s}");
}

/// #46 item 22: the demo's approval, denied, is told as not run (the demo
/// said "Done: the command ran…" whatever the answer).
#[test]
fn a_denied_demo_command_is_told_as_not_run() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));
    t.wait_for("Message Architect");
    t.type_text("please approve this");
    t.keys(&["Enter"]);
    t.wait_for("approval needed");
    t.keys(&["n"]);
    t.keys(&["Enter"]);
    let s = t.wait("the demo's answer", |s| s.contains("I did not run it"));
    assert!(!s.contains("the command ran"), "{s}");
}

#[test]
fn search_finds_a_tool_output_word_in_another_pane_and_jumps_there() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));
    t.wait_for("Message Architect");
    t.type_text("give me a tour");
    t.keys(&["Enter"]);
    t.wait("the tour's tool output", |s| {
        s.contains("drwxr-xr-x") && s.contains("Repository tour")
    });
    t.wait("idle after the turn", |s| status_line(s).contains("idle"));
    t.keys(&["M-2"]);
    t.wait("reviewer focus", |s| {
        status_line(s).contains("Reviewer (demo)")
    });
    t.keys(&["C-b", "/"]);
    t.wait_for("search all panes");
    t.type_text("drwxr");
    t.wait("the tool output matches", |s| {
        s.contains("3 matches") && s.contains("tool Bash")
    });
    t.keys(&["Enter"]);
    let s = t.wait("focus on the architect", |s| {
        status_line(s).contains("Architect (demo)")
    });
    assert!(!s.contains("search all panes"), "{s}");
}

/// Issue 14: `/model` lists the agent's models and the next turn uses the new one.
#[test]
fn model_switch_is_carried_by_the_next_request() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));
    t.wait_for("Message Architect");
    // The picker lists what the demo agent offers.
    t.type_text("/model");
    t.wait_for("/model");
    t.keys(&["Enter"]);
    t.wait_for("demo-architect-mini");
    t.keys(&["Escape"]);
    t.wait("the picker to close", |s| {
        !s.contains("demo-architect-mini")
    });
    // By name: hive takes it, the model never sees "/model …".
    t.type_text("/model demo-architect-2");
    t.keys(&["Enter"]);
    t.wait_for("model set to demo-architect-2");
    t.type_text("which model answers?");
    t.keys(&["Enter"]);
    let s = t.wait_for("This answer comes from demo-architect-2");
    assert!(!s.contains("You asked: */model"), "{s}");
    assert!(status_line(&s).contains("demo-architect-2"), "{s}");
    t.wait("idle", |s| status_line(s).contains("idle"));
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// Issue 19: two shell agents with `worktree = true` in a git repository; a
/// file written in one pane shows in its diff view (`Ctrl+B g`), and `m`,
/// `y` merge it into the main checkout.
#[test]
fn worktree_diff_view_end_to_end() {
    let Some(bin) = hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().to_owned();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "Test"]);
    git(&["config", "user.email", "test@example.com"]);
    std::fs::write(repo.join("README.md"), "hello\n").unwrap();
    std::fs::write(
        repo.join("hive.toml"),
        "[[agent]]\nid = \"a\"\nprovider = \"pty\"\ncommand = [\"sh\"]\nworktree = true\n\n\
         [[agent]]\nid = \"b\"\nprovider = \"pty\"\ncommand = [\"sh\"]\nworktree = true\n",
    )
    .unwrap();
    git(&["add", "README.md", "hive.toml"]);
    git(&["commit", "-q", "-m", "initial"]);
    let t = start(&bin, dir);
    t.wait("both worktree panes", |s| {
        s.contains("a ⎇ hive/a") && s.contains("b ⎇ hive/b")
    });
    // The shells are up (their prompts show) before anything is typed.
    t.wait("both shell prompts", |s| {
        ["┃# ", "│# ", "┃$ ", "│$ "]
            .iter()
            .map(|p| s.matches(p).count())
            .sum::<usize>()
            >= 2
    });
    t.type_text("echo from-a > note.txt && echo changed-a >> README.md && echo WROTE-A");
    t.keys(&["Enter"]);
    t.wait_for("WROTE-A");
    assert!(!repo.join("note.txt").exists());
    assert!(!repo.join(".hive/worktrees/b/note.txt").exists());
    // Pane b edits the same lines: both panes warn (terminal output
    // schedules the check).
    t.keys(&["M-2"]);
    t.type_text("echo changed-b >> README.md && echo WROTE-B");
    t.keys(&["Enter"]);
    t.wait_for("WROTE-B");
    // Same lines: a warning, and once the merge is predicted (right after)
    // the conflict, which the border shows instead.
    t.wait("the overlap or conflict warning in both panes", |s| {
        (s.contains("⚠ b also changed README.md (same lines)")
            || s.contains("✗ conflict with b: README.md"))
            && (s.contains("⚠ a also changed README.md (same lines)")
                || s.contains("✗ conflict with a: README.md"))
    });
    t.keys(&["M-1"]);
    t.keys(&["C-b", "g"]);
    let s = t.wait("the diff view", |s| {
        s.contains("diff · a · hive/a · overall")
            && s.contains("M README.md")
            && s.contains("A note.txt")
            && s.contains("+changed-a")
    });
    assert!(
        s.contains("✗ merging with b would conflict in README.md"),
        "{s}"
    );
    t.keys(&["Down"]);
    t.wait_for("+from-a");
    t.keys(&["m"]);
    t.wait_for("Merge hive/a into the main checkout");
    t.keys(&["y"]);
    t.wait_for("merged hive/a (1 commit) into the main checkout: README.md, note.txt");
    assert_eq!(
        std::fs::read_to_string(repo.join("note.txt")).unwrap(),
        "from-a\n"
    );
    t.keys(&["Escape"]);
    t.wait("the panes again", |s| !s.contains("diff · a"));
    // b's merge now conflicts: refused before anything is touched, the
    // error wraps, and the hand-off is offered (a terminal pane takes no
    // prompt, so it says so); `a` aborts.
    t.keys(&["M-2"]);
    t.keys(&["C-b", "g"]);
    t.wait_for("diff · b · hive/b");
    t.keys(&["m"]);
    t.wait_for("Merge hive/b into the main checkout");
    t.keys(&["y"]);
    t.wait("the refused merge's offer", |s| {
        s.contains("merging hive/b would conflict in: README.md")
            && s.contains("h: rebase hive/b onto the main checkout")
    });
    t.keys(&["h"]);
    t.wait_for("a terminal pane takes no prompt");
    t.keys(&["a"]);
    t.wait_for("merge aborted: nothing was applied");
    assert_eq!(
        std::fs::read_to_string(repo.join("README.md")).unwrap(),
        "hello\nchanged-a\n"
    );
    t.keys(&["Escape"]);
    t.wait("the panes again", |s| !s.contains("diff · b"));
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// Issue 14: an `openai` pane against the scripted Chat Completions server:
/// after `/model other-model` the next request names the new model.
#[test]
fn openai_model_switch_reaches_the_servers_request() {
    use openai_server::{Server, answer_text};
    let Some(bin) = hive_bin() else { return };
    let server = Server::start(vec![
        answer_text("FIRST-ANSWER", 1, 1),
        answer_text("SECOND-ANSWER", 1, 1),
    ]);
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("hive.toml"),
        format!(
            "[[agent]]\nid = \"llm\"\nname = \"Direct\"\nprovider = \"openai\"\n\
             model = \"first-model\"\nbase_url = \"{}\"\n",
            server.base_url
        ),
    )
    .unwrap();
    let t = start(&bin, dir);
    t.wait_for("Message Direct");
    t.type_text("hello");
    t.keys(&["Enter"]);
    t.wait_for("FIRST-ANSWER");
    t.wait("idle", |s| status_line(s).contains("idle"));
    t.type_text("/model other-model");
    t.keys(&["Enter"]);
    t.wait_for("model set to other-model");
    t.type_text("again");
    t.keys(&["Enter"]);
    t.wait_for("SECOND-ANSWER");
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(models, ["first-model", "other-model"]);
    let s = t.screen();
    assert!(status_line(&s).contains("other-model"), "{s}");
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// Issue 14: `@` and a few letters, then Tab, puts the file's path in the
/// composer (the finder walks the pane's directory).
#[test]
fn at_and_tab_insert_a_file_path() {
    let Some(bin) = hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("src/widgets")).unwrap();
    std::fs::write(dir.path().join("src/widgets/gauge_meter.rs"), "").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "").unwrap();
    let t = start(&bin, dir);
    t.wait_for("Message Architect");
    t.type_text("read @gaugem");
    t.wait_for("gauge_meter.rs");
    t.keys(&["Tab"]);
    t.wait("the path in the composer", |s| {
        s.contains("read @src/widgets/gauge_meter.rs")
    });
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// Issue 14 item 5: `/clear` starts a new session; Alt+R lists both and
/// opening the first brings its conversation back into the pane.
#[test]
fn clear_then_resume_the_earlier_session() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));
    t.wait_for("Message Architect");
    t.type_text("first topic alpha");
    t.keys(&["Enter"]);
    // The turn's footer and an idle pane: the typed prompt alone is still
    // in the composer, and a starting turn shows no "working" yet.
    t.wait("the first turn to finish", |s| {
        s.contains("── demo-architect-1 ·") && status_line(s).contains("idle")
    });
    t.type_text("/clear");
    t.keys(&["Enter"]);
    // The pane's notice ("new session <id>"), not the menu's "start a new session".
    let s = t.wait_for("ⓘ new session");
    assert!(!s.contains("first topic alpha"), "{s}");
    t.type_text("second topic beta");
    t.keys(&["Enter"]);
    t.wait("the second turn to finish", |s| {
        s.contains("── demo-architect-1 ·") && status_line(s).contains("idle")
    });
    t.keys(&["M-r"]);
    t.wait("both sessions in the picker", |s| {
        s.contains("resume a session") && s.contains("first topic alpha")
    });
    t.type_text("alpha");
    t.keys(&["Enter"]);
    let s = t.wait_for("resumed session");
    assert!(!s.contains("second topic beta"), "{s}");
    // Its conversation is in the pane (scrolled to the top: the reply is long).
    t.keys(&["Home"]);
    t.wait_for("You asked: first topic alpha");
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// Focuses the built-in config's shell pane (pane 3), zoomed, at a prompt.
fn shell_pane(t: &Tmux) {
    t.wait_for("Message Architect");
    t.keys(&["M-3"]);
    t.wait("shell focus", |s| status_line(s).contains("Shell"));
    t.keys(&["M-z"]);
    t.type_text("echo ready-$((20+1))");
    t.keys(&["Enter"]);
    t.wait_for("ready-21");
}

/// Issue 14: a shell that exited comes back with the restart key, says so,
/// and its new prompt works.
#[test]
fn an_exited_shell_pane_restarts() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));
    shell_pane(&t);
    t.type_text("exit");
    t.keys(&["Enter"]);
    let s = t.wait_for("restarts");
    assert!(s.contains("exited with status 0"), "{s}");
    t.keys(&["C-r"]);
    t.wait_for("agent restarted");
    t.type_text("echo again-$((1+1))");
    t.keys(&["Enter"]);
    let s = t.wait_for("again-2");
    assert!(!s.contains("restarts"), "{s}");
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// The numbers of the `row-N` lines on screen.
fn rows_shown(screen: &str) -> Vec<u32> {
    screen
        .split("row-")
        .skip(1)
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

/// Issue 14: Shift+PgUp shows a shell's earlier output, from the
/// emulator's scrollback; Shift+PgDn comes back.
#[test]
fn shift_page_up_shows_earlier_shell_output() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));
    shell_pane(&t);
    t.type_text("seq 1 200 | sed 's/^/row-/'");
    t.keys(&["Enter"]);
    let live = t.wait("the last line", |s| rows_shown(s).contains(&200));
    let first = *rows_shown(&live).iter().min().unwrap();
    assert!(first > 100, "a page shows fewer than 100 lines: {live}");
    t.keys(&["S-PPage"]);
    let back = t.wait("earlier lines", |s| !rows_shown(s).contains(&200));
    let shown = rows_shown(&back);
    assert!(
        shown.contains(&(first - 20)),
        "row-{} not shown:\n{back}",
        first - 20
    );
    t.keys(&["S-NPage"]);
    t.wait("the live screen again", |s| rows_shown(s).contains(&200));
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// Issue 14: prefix `[` is copy mode over the shell's screen and history;
/// a selection copied with `y` is reported, and the program got no keys.
#[test]
fn copy_mode_copies_a_selection_of_shell_output() {
    let Some(bin) = hive_bin() else { return };
    let t = start(&bin, tempfile::tempdir().expect("tempdir"));
    shell_pane(&t);
    t.type_text("seq 1 200 | sed 's/^/row-/'");
    t.keys(&["Enter"]);
    t.wait("the last line", |s| rows_shown(s).contains(&200));
    t.keys(&["C-b", "["]);
    t.wait_for("COPY");
    t.keys(&["Up", "v", "Up", "Up", "PPage"]);
    let s = t.wait("the view to page back", |s| !rows_shown(s).contains(&200));
    assert!(s.contains("y copy"), "{s}");
    t.keys(&["y"]);
    // The status line and the live screen may come a frame apart.
    let s = t.wait("the copy reported, back on the live screen", |s| {
        s.contains("copied terminal selection") && rows_shown(s).contains(&200)
    });
    assert!(!s.contains("COPY"), "y leaves copy mode: {s}");
    // None of the copy-mode keys reached the shell.
    t.type_text("echo typed-$((2+3))");
    t.keys(&["Enter"]);
    let s = t.wait_for("typed-5");
    assert!(!s.contains("vy"), "{s}");
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}

/// Issue 17: one prompt fanned out to three demo panes comes back as three
/// answers side by side; Enter on one opens its pane.
#[test]
fn a_fan_out_to_three_panes_compares_three_answers() {
    let Some(bin) = hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = |id: &str, name: &str, script: &str| {
        format!(
            "[[agent]]\nid = \"{id}\"\nname = \"{name}\"\nprovider = \"script\"\nscript = \"{script}\"\n\n"
        )
    };
    let config = [
        agent("alpha", "Alpha (demo)", "demo:tour"),
        agent("beta", "Beta (demo)", "demo:reviewer"),
        agent("gamma", "Gamma (demo)", "demo:tour"),
    ]
    .concat();
    std::fs::write(dir.path().join("hive.toml"), config).unwrap();
    let t = start(&bin, dir);
    t.wait_for("Message Alpha");
    t.keys(&["C-b", "f"]);
    t.wait_for("fan-out · 1 of 3 panes");
    t.keys(&["a"]);
    t.wait_for("fan-out · 3 of 3 panes");
    t.keys(&["Enter"]);
    t.type_text("compare your plans");
    t.wait_for("› compare your plans");
    t.keys(&["Enter"]);
    let s = t.wait("three answers", |s| s.contains("compare · 3 of 3 answered"));
    assert_eq!(s.matches("✓ done").count(), 3, "{s}");
    assert_eq!(s.matches("Repository tour").count(), 2, "{s}");
    assert!(s.contains("Review of your change"), "{s}");
    t.keys(&["Right"]);
    t.keys(&["Enter"]);
    let s = t.wait("the reviewer's pane", |s| {
        status_line(s).contains("Beta (demo)")
    });
    assert!(!s.contains("compare · "), "{s}");
}

/// Issue 15: a Claude pane's stdout is read once per live tick
/// (`provider::paced`). The whole answer still reaches the screen, down to
/// its last line and the turn's end, turn after turn.
#[test]
fn a_claude_pane_read_at_the_live_pace_shows_every_line() {
    let Some(bin) = hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let answer: String = (1..=30)
        .map(|i| format!("paced line {i:02}\n"))
        .chain(["END-OF-ANSWER".to_owned()])
        .collect();
    std::fs::write(dir.path().join("answer.txt"), &answer).unwrap();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_claude.py");
    std::fs::write(
        dir.path().join("hive.toml"),
        format!(
            "[[agent]]\nid = \"cc\"\nname = \"Paced\"\nprovider = \"claude\"\n\
             command = [\"python3\", \"{}\"]\n[agent.env]\n\
             FAKE_CLAUDE_TEXT_FILE = \"{}\"\nFAKE_CLAUDE_CHUNK = \"5\"\n",
            fake.display(),
            dir.path().join("answer.txt").display(),
        ),
    )
    .unwrap();
    let t = start(&bin, dir);
    t.wait_for("Message Paced");
    for turn in ["go", "again"] {
        t.type_text(turn);
        t.keys(&["Enter"]);
        t.wait("the answer's last lines and the turn's end", |s| {
            s.contains("paced line 29")
                && s.contains("paced line 30")
                && s.contains("END-OF-ANSWER")
                && status_line(s).contains("idle")
        });
        t.type_text("/clear");
        t.keys(&["Enter"]);
        t.wait("a cleared pane", |s| !s.contains("END-OF-ANSWER"));
    }
    t.keys(&["C-q", "s"]);
    t.wait_for("HIVE-EXIT=0");
}
