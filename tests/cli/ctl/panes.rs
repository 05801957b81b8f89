//! Panes made at runtime (issue 32 point 1) through `hive ctl`, against the
//! real console in tmux: a pane added from a template streams a turn and
//! is on screen at once; renamed, moved, another pane closed; after `hive
//! kill` and a new start the layout comes back as it was left (with the
//! new pane's conversation), and `--fresh` starts from the config again.
//! Each refusal has its reason and exit status.

use std::process::Command;

use serde_json::Value;

use super::Lab;

/// Pane `id`'s model and finished turns, as `hive ctl list --json` says.
fn model_and_turns(lab: &Lab, id: &str) -> (Value, Value) {
    let list: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    let pane = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap()
        .clone();
    (pane["model"].clone(), pane["turns"].clone())
}

fn ids(lab: &Lab) -> Vec<(String, String)> {
    let list: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let id = p["id"].as_str().unwrap().to_owned();
            (id, p["name"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[test]
fn a_pane_added_at_runtime_streams_and_survives_a_restart() {
    let Some(lab) = Lab::new() else { return };
    lab.launch("one", "ctltest.sock");

    let added = lab.ok(&["new", "helper", "--template", "echo"]);
    assert_eq!(added, "added helper in window 1");
    lab.wait_until("the new pane on screen", || {
        lab.screen("one").contains("helper")
    });
    let turn = lab.ok(&["send", "helper", "first", "task"]);
    let answer = lab.ok(&["wait", &turn]);
    assert!(answer.starts_with("Reply to: first task"), "{answer}");

    lab.ok(&["rename", "helper", "Helper One"]);
    lab.ok(&["move", "helper", "--to", "1"]);
    lab.ok(&["close", "stubborn"]);
    let expected = [
        ("helper", "Helper One"),
        ("echo", "echo"),
        ("broken", "broken"),
    ];
    let now = ids(&lab);
    assert_eq!(
        now.iter()
            .map(|(i, n)| (i.as_str(), n.as_str()))
            .collect::<Vec<_>>(),
        expected
    );
    lab.wait_until("the console's new layout", || {
        let s = lab.screen("one");
        s.contains("Helper One") && !s.contains("stubborn")
    });

    // A restart brings the layout back, and the pane's conversation, and
    // `list` says what the pane ran before its next turn (#46 item 16: it
    // said model `-` and turns 0).
    let before = model_and_turns(&lab, "helper");
    assert_eq!(before.1, 1, "{before:?}");
    lab.stop("one");
    lab.launch("two", "ctltest.sock");
    assert_eq!(ids(&lab), now);
    assert_eq!(model_and_turns(&lab, "helper"), before);
    let history = lab.ok(&["history", "helper"]);
    assert!(history.contains("first task"), "{history}");
    let turn = lab.ok(&["send", "helper", "second"]);
    assert!(lab.ok(&["wait", &turn]).starts_with("Reply to: second"));

    // `--fresh`: the config's panes as written.
    lab.stop("two");
    let out = lab
        .hive_cmd(&["serve", "--fresh", "--config"])
        .arg(lab.path("ctltest.toml"))
        .env("HIVE_DATA_DIR", lab.path("hive_data_dir"))
        .spawn()
        .unwrap();
    let mut server = out;
    let socket = lab.socket_dir().join("ctltest.sock");
    lab.wait_until("the fresh server", || {
        std::os::unix::net::UnixStream::connect(&socket).is_ok()
    });
    let fresh_ids: Vec<String> = ids(&lab).into_iter().map(|(i, _)| i).collect();
    assert_eq!(fresh_ids, ["echo", "stubborn", "broken"]);
    lab.hive_cmd(&["kill", "--all"]).output().unwrap();
    let _ = server.wait();
}

#[test]
fn pane_edits_that_cannot_be_are_refused_with_the_reason() {
    let Some(lab) = Lab::new() else { return };
    lab.launch("edits", "ctltest.sock");
    let out = lab.fails(&["new", "echo", "--template", "echo"], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("there is a pane `echo` already"),
        "{}",
        out.stderr
    );
    let out = lab.fails(&["new", "x", "--template", "nobody"], 2, "BAD_REQUEST");
    assert!(
        out.stderr
            .contains("no agent `nobody` in the config or among the panes"),
        "{}",
        out.stderr
    );
    let out = lab.fails(&["new", "x", "--provider", "nope"], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("unknown provider `nope`"),
        "{}",
        out.stderr
    );
    let out = lab.fails(&["new", "../x", "--provider", "script"], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("must be 1 to 64 letters"),
        "{}",
        out.stderr
    );
    let out = lab.fails(
        &["new", "x", "--template", "echo", "--cwd", "/no/such/dir"],
        2,
        "BAD_REQUEST",
    );
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
    lab.fails(&["close", "nobody"], 3, "SESSION_NOT_FOUND");
    let out = lab.fails(&["rename", "echo", "two\nlines"], 2, "BAD_REQUEST");
    assert!(out.stderr.contains("one line"), "{}", out.stderr);
    let out = lab.fails(&["move", "echo", "--window", "5"], 2, "BAD_REQUEST");
    assert!(
        out.stderr.contains("the windows are 1 to 1"),
        "{}",
        out.stderr
    );
    lab.ok(&["close", "stubborn"]);
    lab.ok(&["close", "broken"]);
    let out = lab.fails(&["close", "echo"], 2, "BAD_REQUEST");
    assert!(out.stderr.contains("the last pane"), "{}", out.stderr);
    // A closed pane is gone for every verb, and its id free again.
    lab.fails(&["status", "stubborn"], 3, "SESSION_NOT_FOUND");
    lab.ok(&["new", "stubborn", "--template", "echo"]);
    lab.stop("edits");
}

/// A git repository with one commit, in the lab.
fn repo(lab: &Lab) -> std::path::PathBuf {
    let repo = lab.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    ] {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }
    repo
}

/// Issue 31 point 6: what `worktree_setup` printed shows in the pane it
/// ran for (here a pane made at runtime, in a new worktree).
#[test]
fn a_worktree_setups_output_shows_in_its_pane() {
    let Some(lab) = Lab::new() else { return };
    let repo = repo(&lab);
    let echo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let config = lab.path("setuptest.toml");
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nid = \"echo\"\nprovider = \"script\"\nscript = \"{}\"\ncwd = \"{}\"\n\
             worktree_setup = [\"sh\", \"-c\", \"echo deps-installed-ok\"]\n",
            echo.display(),
            repo.display()
        ),
    )
    .unwrap();
    lab.launch_with("setup", &config, "setuptest.sock");
    lab.ok(&["new", "wt", "--template", "echo", "--worktree"]);
    lab.wait_until("the setup's output in the new pane", || {
        let s = lab.screen("setup");
        s.contains("worktree setup `sh -c echo deps-installed-ok` ran:")
            && s.contains("deps-installed-ok")
    });
    lab.stop("setup");
}

/// A long `worktree_setup` holds up neither the server nor the other
/// panes: the console is up and answering while it runs, a message sent to
/// the pane meanwhile waits and is answered once the agent started.
#[test]
fn a_slow_worktree_setup_runs_in_the_background() {
    let Some(lab) = Lab::new() else { return };
    let repo = repo(&lab);
    let echo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let gate = lab.path("setup-may-end");
    let config = lab.path("slowsetup.toml");
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nid = \"quick\"\nprovider = \"script\"\nscript = \"{echo}\"\n\n\
             [[agent]]\nid = \"slow\"\nprovider = \"script\"\nscript = \"{echo}\"\ncwd = \"{repo}\"\n\
             worktree = true\nworktree_setup = [\"sh\", \"-c\", \"while [ ! -e {gate} ]; do sleep 0.1; done; echo slow-setup-done\"]\n",
            echo = echo.display(),
            repo = repo.display(),
            gate = gate.display()
        ),
    )
    .unwrap();
    lab.launch_with("slow", &config, "slowsetup.sock");
    // The server answers and the other pane works while the setup waits.
    let status = lab.status("slow");
    assert_eq!(status["alive"], false, "{status}");
    assert_eq!(status["state"], "starting", "{status}");
    assert!(status["failed"].is_null(), "{status}");
    let turn = lab.ok(&["send", "quick", "hi"]);
    assert!(lab.ok(&["wait", &turn]).starts_with("Reply to: hi"));
    // A message for the pane in setup is kept for its agent.
    let send = lab
        .ctl_cmd(&["send", "slow", "after", "setup"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::fs::write(&gate, "").unwrap();
    let out = send.wait_with_output().unwrap();
    let turn = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(turn.starts_with("turn"), "{turn}");
    assert!(
        lab.ok(&["wait", &turn])
            .starts_with("Reply to: after setup")
    );
    lab.wait_until("the setup's output in the pane", || {
        lab.screen("slow").contains("slow-setup-done")
    });
    lab.stop("slow");
}

/// #46 item 22: a `worktree_setup` that failed runs again on the restart
/// key (Ctrl+R) once what it lacked is there, and the agent starts; the key
/// did nothing, and only a new server ran the setup again.
#[test]
fn a_failed_worktree_setup_runs_again_on_ctrl_r() {
    let Some(lab) = Lab::new() else { return };
    let repo = repo(&lab);
    let echo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let gate = lab.path("lockfile-there");
    let config = lab.path("retrysetup.toml");
    std::fs::write(
        &config,
        format!(
            "[[agent]]\nid = \"wt\"\nprovider = \"script\"\nscript = \"{echo}\"\ncwd = \"{repo}\"\n\
             worktree = true\nworktree_setup = [\"sh\", \"-c\", \"test -e {gate} || {{ echo 'npm ERR! missing lockfile' >&2; exit 3; }}; echo setup-$((40+2))-ok\"]\n",
            echo = echo.display(),
            repo = repo.display(),
            gate = gate.display()
        ),
    )
    .unwrap();
    lab.launch_with("retry", &config, "retrysetup.sock");
    lab.wait_until("the failed setup in the pane", || {
        lab.screen("retry")
            .contains("runs its worktree_setup again")
    });
    assert!(!lab.status("wt")["failed"].is_null());
    std::fs::write(&gate, "").unwrap();
    lab.keys("retry", &["C-r"]);
    // What it printed, not its command line (the error quotes that).
    lab.wait_until("the setup's output after the retry", || {
        lab.screen("retry").contains("setup-42-ok")
    });
    let turn = lab.ok(&["send", "wt", "hi"]);
    assert!(lab.ok(&["wait", &turn]).starts_with("Reply to: hi"));
    lab.stop("retry");
}

/// Issue 46 item 12: nine panes to a window, whoever makes the pane: one
/// asked into a full window goes where there is room.
#[test]
fn a_pane_asked_into_a_full_window_goes_to_the_next() {
    let Some(lab) = Lab::new() else { return };
    lab.launch("full", "ctltest.sock");
    // The config's three and six more fill window 1.
    for i in 0..6 {
        let added = lab.ok(&["new", &format!("h{i}"), "--template", "echo"]);
        assert_eq!(added, format!("added h{i} in window 1"));
    }
    let added = lab.ok(&["new", "tenth", "--template", "echo", "--window", "1"]);
    assert_eq!(added, "added tenth in window 2");
}
