//! The `openai` agent's coding tools (issue 35) against the scripted Chat
//! Completions server: a task that greps, reads, edits and runs a command;
//! each tool's errors going back to the model; the ACP file system's
//! escapes refused for these tools too; approvals; interrupt killing a
//! running command's process group.

use std::path::Path;

use hive::config::AgentConfig;
use hive::event::{FinalItem, Payload, ResponseStatus};
use hive::provider::openai::OpenAiFactory;
use hive::provider::{PermissionDecision, ProviderCommand, ProviderEvent};
use serde_json::{Value, json};

use super::openai::server::{Reply, Server, answer_text, finish, status, tool_call};
use super::openai::{Driven, coding_agent, done};
use crate::support;

fn factory() -> OpenAiFactory {
    OpenAiFactory::default().with_store(hive::history::Store::at(
        tempfile::tempdir().unwrap().keep(),
    ))
}

/// An agent working in `dir` with `permission_mode = mode`.
fn agent_in(server: &Server, dir: &Path, mode: &str) -> AgentConfig {
    let mut a = coding_agent(server);
    a.cwd = Some(dir.to_path_buf());
    a.set("permission_mode", mode).unwrap();
    a
}

/// One step calling these tools (id, name, arguments) at once.
fn calls(list: &[(&str, &str, Value)]) -> Reply {
    let mut chunks: Vec<Value> = list
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| tool_call(i, id, name, &args.to_string()))
        .collect();
    chunks.push(finish("tool_calls"));
    Reply::Chunks(chunks)
}

/// What the model was told for call `id` (in the last request).
fn result_of(server: &Server, id: &str) -> String {
    let n = server.requests().len() - 1;
    server
        .messages(n)
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {id}"))
        .to_owned()
}

#[tokio::test]
async fn a_task_greps_reads_edits_and_runs_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn answer() -> u32 {\n    41\n}\n").unwrap();
    std::fs::write(root.join("target/junk.rs"), "fn answer() {}\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(root.join("AGENTS.md"), "Run the tests before you answer.\n").unwrap();
    let server = Server::start(vec![
        calls(&[
            ("g1", "grep", json!({"pattern": "fn answer"})),
            ("g2", "glob", json!({"pattern": "*.rs"})),
        ]),
        calls(&[("r1", "read", json!({"path": "src/lib.rs"}))]),
        calls(&[(
            "e1",
            "edit",
            json!({"path": "src/lib.rs", "edits": [{"old_text": "    41", "new_text": "    42"}]}),
        )]),
        calls(&[(
            "b1",
            "bash",
            json!({"command": "grep -c 42 src/lib.rs && echo tests pass"}),
        )]),
        answer_text("Fixed: the answer is 42.", 1, 1),
    ]);
    let mut p = Driven::start(&factory(), agent_in(&server, root, "yolo"), None);
    let events = p.turn("make answer return 42").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);

    let names: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["read", "write", "edit", "glob", "grep", "bash"]);
    // The project's instructions are the system prompt's context.
    let system = &server.messages(0)[0];
    assert_eq!(system["role"], "system");
    let system = system["content"].as_str().unwrap();
    assert!(
        system.contains("(AGENTS.md):\n\nRun the tests before you answer."),
        "{system}"
    );
    assert!(
        system.contains("Environment: working directory"),
        "{system}"
    );
    let reqs = server.requests();
    let tool = |n: usize, id: &str| {
        server
            .messages(n)
            .iter()
            .find(|m| m["tool_call_id"] == id)
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(reqs.len(), 5);
    // .gitignore'd target/ is neither searched nor listed.
    assert_eq!(tool(1, "g1"), "src/lib.rs:1: fn answer() -> u32 {");
    assert_eq!(tool(1, "g2"), "src/lib.rs");
    assert_eq!(tool(2, "r1"), "fn answer() -> u32 {\n    41\n}\n");
    assert_eq!(tool(3, "e1"), "applied 1 edit(s) to src/lib.rs");
    assert_eq!(tool(4, "b1"), "1\ntests pass\n");
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "fn answer() -> u32 {\n    42\n}\n"
    );
    // The edit shows as a diff in its widget.
    let edit_display = super::openai::finals(&events)
        .into_iter()
        .find_map(|f| match f {
            FinalItem::FunctionCall { name, display, .. } if name == "edit" => display.clone(),
            _ => None,
        });
    let edit_display = edit_display.unwrap();
    assert_eq!(edit_display.summary, "src/lib.rs");
    assert_eq!(edit_display.diff.as_deref(), Some("-    41\n+    42"));
    // The command's output was shown live in its widget.
    assert!(events.iter().any(|e| matches!(e, ProviderEvent::Stream(s)
        if matches!(&s.payload, Payload::ToolProgress { output_delta: Some(d), .. } if d.contains("tests pass")))));
    p.kill().await;
}

#[tokio::test]
async fn each_tools_errors_go_back_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("twice.txt"), "a a\n").unwrap();
    std::fs::write(dir.path().join("bin.dat"), b"\x00\x01binary").unwrap();
    let server = Server::start(vec![
        calls(&[
            ("missing", "read", json!({"path": "nope.txt"})),
            ("binary", "read", json!({"path": "bin.dat"})),
            (
                "twice",
                "edit",
                json!({"path": "twice.txt", "edits": [{"old_text": "a", "new_text": "b"}]}),
            ),
            (
                "partial",
                "edit",
                json!({"path": "twice.txt", "edits": [{"old_text": "a a", "new_text": "c"}, {"old_text": "zzz", "new_text": "d"}]}),
            ),
            ("args", "read", json!({"file": "x"})),
            ("badre", "grep", json!({"pattern": "("})),
            (
                "slow",
                "bash",
                json!({"command": "echo begun; sleep 5", "timeout_ms": 300}),
            ),
            ("exit", "bash", json!({"command": "echo out; exit 3"})),
        ]),
        answer_text("I see the errors.", 1, 1),
    ]);
    let mut p = Driven::start(&factory(), agent_in(&server, dir.path(), "yolo"), None);
    let events = p.turn("try things").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let expect = [
        ("missing", "not found"),
        ("binary", "binary"),
        ("twice", "occurs 2 times"),
        ("partial", "edit 2"),
        ("args", "bad arguments"),
        ("badre", "bad pattern"),
        ("slow", "timed out after 300 ms"),
        ("exit", "exit code 3\nout"),
    ];
    for (id, want) in expect {
        let got = result_of(&server, id);
        assert!(
            got.starts_with("error:") && got.contains(want),
            "{id}: {got}"
        );
    }
    assert!(result_of(&server, "slow").contains("begun"));
    // All or none: the first edit of `partial` was not written either.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("twice.txt")).unwrap(),
        "a a\n"
    );
    p.kill().await;
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[tokio::test]
async fn escapes_from_the_cwd_are_refused() {
    let top = tempfile::tempdir().unwrap();
    let (work, outside) = (top.path().join("work"), top.path().join("outside"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let secret = outside.join("secret.txt");
    std::fs::write(&secret, "TOPSECRET\n").unwrap();
    let ln =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, work.join(name)).unwrap();
    ln(&secret, "link_out");
    ln(&outside, "dir_out");
    ln(&outside.join("new.txt"), "dangling");
    mkfifo(&work.join("fifo"));
    let abs = secret.display().to_string();
    let attempts = [
        ("dotdot", "read", json!({"path": "../outside/secret.txt"})),
        ("absolute", "read", json!({"path": abs})),
        ("link", "read", json!({"path": "link_out"})),
        ("linkdir", "read", json!({"path": "dir_out/secret.txt"})),
        ("fifo", "read", json!({"path": "fifo"})),
        (
            "dangling",
            "write",
            json!({"path": "dangling", "content": "x"}),
        ),
        (
            "wdotdot",
            "write",
            json!({"path": "../escape.txt", "content": "x"}),
        ),
        (
            "elink",
            "edit",
            json!({"path": "link_out", "edits": [{"old_text": "TOP", "new_text": "x"}]}),
        ),
        ("gdotdot", "glob", json!({"pattern": "*", "path": ".."})),
        (
            "grepdir",
            "grep",
            json!({"pattern": "SECRET", "path": "dir_out"}),
        ),
    ];
    let mut script: Vec<(&str, &str, Value)> = attempts.to_vec();
    script.push(("grepall", "grep", json!({"pattern": "SECRET"})));
    let server = Server::start(vec![calls(&script), answer_text("refused", 1, 1)]);
    let mut p = Driven::start(&factory(), agent_in(&server, &work, "yolo"), None);
    let events = p.turn("escape").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    for (id, _, _) in &attempts {
        let got = result_of(&server, id);
        assert!(got.starts_with("error:"), "{id} was not refused: {got}");
        assert!(!got.contains("TOPSECRET"), "{id} leaked: {got}");
    }
    // The walk follows no symlink out.
    assert_eq!(result_of(&server, "grepall"), "no matches found");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "TOPSECRET\n");
    assert!(!outside.join("new.txt").exists());
    assert!(!top.path().join("escape.txt").exists());
    p.kill().await;
}

/// Waits for the next approval card and answers it.
async fn answer_card(p: &mut Driven, tool: &str, decision: PermissionDecision) {
    let ev = p
        .live
        .until("an approval card", |e| {
            matches!(e, ProviderEvent::Permission(_))
        })
        .await;
    let ProviderEvent::Permission(req) = ev else {
        unreachable!()
    };
    assert_eq!(req.tool_name, tool);
    // The card shows what the call changes.
    let shown = req.display.expect("the card's display");
    if tool == "write" {
        assert_eq!(
            (shown.summary.as_str(), shown.diff.as_deref()),
            ("notes.txt", Some("+x"))
        );
    } else {
        assert!(shown.summary.starts_with("echo"), "{shown:?}");
    }
    assert!(p.live.handle.send(ProviderCommand::Permission {
        request_id: req.request_id,
        decision,
    }));
}

#[tokio::test]
async fn a_denied_approval_reaches_the_model_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        calls(&[("w1", "write", json!({"path": "notes.txt", "content": "x"}))]),
        answer_text("ok, not writing", 1, 1),
        calls(&[("b1", "bash", json!({"command": "echo hi"}))]),
        calls(&[("b2", "bash", json!({"command": "echo again"}))]),
        answer_text("ran", 1, 1),
    ]);
    // The default mode: ask.
    let mut a = coding_agent(&server);
    a.cwd = Some(dir.path().to_path_buf());
    let mut p = Driven::start(&factory(), a, None);
    p.send("write notes");
    answer_card(
        &mut p,
        "write",
        PermissionDecision::Deny {
            reason: "put notes in docs/".into(),
        },
    )
    .await;
    assert_eq!(done(&p.until_done().await).0, ResponseStatus::Completed);
    assert_eq!(
        result_of(&server, "w1"),
        "error: the user denied this `write` call: put notes in docs/"
    );
    assert!(!dir.path().join("notes.txt").exists());

    // Allowed always: the second command runs without a card.
    p.send("run it");
    answer_card(&mut p, "bash", PermissionDecision::AllowAlways).await;
    let events = p.until_done().await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    assert_eq!(result_of(&server, "b2"), "again\n");
    let cards = p
        .live
        .seen
        .iter()
        .filter(|e| matches!(e, ProviderEvent::Permission(_)))
        .count();
    assert_eq!(cards, 2);
    p.kill().await;
}

#[tokio::test]
async fn interrupt_kills_a_running_commands_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let command = "echo $$ > group.pid; sleep 300 & echo $! > child.pid; echo started; wait";
    let server = Server::start(vec![
        calls(&[("b1", "bash", json!({"command": command}))]),
        answer_text("after", 1, 1),
    ]);
    let mut p = Driven::start(&factory(), agent_in(&server, dir.path(), "yolo"), None);
    p.send("run a long command");
    p.live
        .until("the command's live output", |e| matches!(e, ProviderEvent::Stream(s)
            if matches!(&s.payload, Payload::ToolProgress { output_delta: Some(d), .. } if d.contains("started"))))
        .await;
    let pid = |f: &str| -> i32 {
        std::fs::read_to_string(dir.path().join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (group, child) = (pid("group.pid"), pid("child.pid"));
    assert!(support::alive(child));
    assert!(p.live.handle.send(ProviderCommand::Cancel));
    assert_eq!(done(&p.until_done().await).0, ResponseStatus::Cancelled);
    assert!(
        support::gone(child).await,
        "the command's child outlived the interrupt"
    );
    assert!(
        support::group_gone(group, std::time::Duration::from_secs(5)).await,
        "the command's group outlived the interrupt"
    );
    p.kill().await;
}

/// #53 item 11: children that leave the command's process group (`setsid`,
/// and `setsid` after a double fork) end with the call, when the command
/// exits and when the call is interrupted. Failed before: both lived on
/// until the server ended.
#[tokio::test]
async fn children_that_setsid_end_with_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let escape = |name: &str| {
        format!(
            "setsid sh -c 'echo $$ > {name}.tmp; mv {name}.tmp {name}.pid; exec sleep 300' >/dev/null 2>&1"
        )
    };
    let wait_for = |names: &[&str]| {
        let files: Vec<String> = names.iter().map(|n| format!("[ -s {n}.pid ]")).collect();
        format!("until {}; do sleep 0.01; done", files.join(" && "))
    };
    let exits = format!(
        "{} & ({} &); {}; echo started",
        escape("daemon"),
        escape("double"),
        wait_for(&["daemon", "double"])
    );
    let cancelled = format!(
        "({} &); {}; echo started; sleep 300",
        escape("late"),
        wait_for(&["late"])
    );
    let server = Server::start(vec![
        calls(&[("b1", "bash", json!({"command": exits}))]),
        answer_text("after", 1, 1),
        calls(&[("b2", "bash", json!({"command": cancelled}))]),
        answer_text("never", 1, 1),
    ]);
    let mut p = Driven::start(&factory(), agent_in(&server, dir.path(), "yolo"), None);
    let pid = |f: &str| -> i32 {
        std::fs::read_to_string(dir.path().join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    p.send("start two daemons");
    assert_eq!(done(&p.until_done().await).0, ResponseStatus::Completed);
    assert_eq!(result_of(&server, "b1"), "started\n");
    for f in ["daemon.pid", "double.pid"] {
        assert!(support::gone(pid(f)).await, "{f} outlived its call");
    }

    p.send("start one and wait");
    p.live
        .until("the command's live output", |e| matches!(e, ProviderEvent::Stream(s)
            if matches!(&s.payload, Payload::ToolProgress { output_delta: Some(d), .. } if d.contains("started"))))
        .await;
    let late = pid("late.pid");
    assert!(support::alive(late));
    assert!(p.live.handle.send(ProviderCommand::Cancel));
    assert_eq!(done(&p.until_done().await).0, ResponseStatus::Cancelled);
    assert!(
        support::gone(late).await,
        "the setsid child outlived the interrupt"
    );
    p.kill().await;
}

#[tokio::test]
async fn tools_can_be_turned_off_and_a_server_rejecting_them_names_the_setting() {
    let server = Server::start(vec![
        status(400, "this model does not support tools", None),
        answer_text("plain", 1, 1),
    ]);
    let mut p = Driven::start(&factory(), coding_agent(&server), None);
    let (st, _, error, _) = done(&p.turn("hi").await);
    assert_eq!(st, ResponseStatus::Error);
    let error = error.unwrap();
    assert!(error.contains("`tools = false`"), "{error}");
    p.kill().await;

    let mut a = coding_agent(&server);
    a.set("tools", false).unwrap();
    let mut p = Driven::start(&factory(), a, None);
    assert_eq!(done(&p.turn("hi").await).0, ResponseStatus::Completed);
    assert!(server.requests()[1].body.get("tools").is_none());
    p.kill().await;
}

#[tokio::test]
async fn older_tool_outputs_are_cleared_near_the_context_window() {
    let dir = tempfile::tempdir().unwrap();
    let bash = |id: &str, command: &str| calls(&[(id, "bash", json!({"command": command}))]);
    // Each output fits its cap (a quarter of the window); four of them
    // pass three quarters of it.
    let big = "head -c 8000 /dev/zero | tr '\\0' x";
    let server = Server::start(vec![
        bash("b1", big),
        bash("b2", big),
        bash("b3", big),
        bash("b4", big),
        answer_text("done", 1, 1),
    ]);
    let mut a = agent_in(&server, dir.path(), "yolo");
    a.set("context_window", 9000).unwrap();
    let mut p = Driven::start(&factory(), a, None);
    let events = p.turn("print a lot").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let b1 = |n: usize| {
        server
            .messages(n)
            .iter()
            .find(|m| m["tool_call_id"] == "b1")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .unwrap()
    };
    // Kept while it is among the two newest outputs, cleared after.
    assert_eq!(b1(2).len(), 8000);
    assert!(
        b1(4).starts_with("[cleared: an earlier tool output"),
        "{}",
        b1(4)
    );
    let notes = super::openai::notices(&events);
    assert!(
        notes.iter().any(
            |n| n.starts_with("context: cleared 1 earlier tool output(s)")
                && n.contains("9000-token window")
        ),
        "{notes:?}"
    );
    p.kill().await;
}

#[tokio::test]
async fn a_conversation_past_the_window_is_summarised_before_the_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let big = "y".repeat(8000);
    let server = Server::start(vec![
        answer_text(&big, 1, 1),
        answer_text("SUMMARY: the user asked for many y's.", 1, 1),
        answer_text("ok", 1, 1),
    ]);
    let mut a = agent_in(&server, dir.path(), "yolo");
    a.set("context_window", 2000).unwrap();
    let mut p = Driven::start(&factory(), a, None);
    assert_eq!(done(&p.turn("many y's").await).0, ResponseStatus::Completed);
    let events = p.turn("next").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);

    // The summary request: the old conversation, no tools, shown nowhere.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[1].body.get("tools").is_none());
    let asked = server.messages(1);
    assert!(
        asked.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .starts_with("The conversation is nearing")
    );
    assert!(!events.iter().any(|e| matches!(e, ProviderEvent::Stream(s)
        if matches!(&s.payload, Payload::ItemDone { final_item: FinalItem::Message { content, .. }, .. } if content.contains("SUMMARY")))));
    // The next request carries the summary instead of the old turn.
    let m = server.messages(2);
    assert_eq!(m.len(), 4, "{m:?}");
    assert!(
        m[1]["content"]
            .as_str()
            .unwrap()
            .contains("SUMMARY: the user asked for many y's.")
    );
    assert_eq!(m[3]["content"], "next");
    let notes = super::openai::notices(&events);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("context: summarised 2 earlier message(s)")),
        "{notes:?}"
    );
    p.kill().await;
}

#[tokio::test]
async fn slash_compact_summarises_the_conversation_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    // An answer long enough that its summary saves something.
    let first = "first answer. ".repeat(40);
    let server = Server::start(vec![
        answer_text(&first, 1, 1),
        answer_text("SUMMARY: one question answered.", 1, 1),
        answer_text("ok", 1, 1),
    ]);
    let mut p = Driven::start(&factory(), agent_in(&server, dir.path(), "yolo"), None);
    // The agent offers /compact (so hive sends it rather than refusing it).
    let info = p
        .live
        .until("session info", |e| matches!(e, ProviderEvent::Session(_)))
        .await;
    assert!(matches!(info, ProviderEvent::Session(s) if s.commands == ["/compact"]));
    assert_eq!(done(&p.turn("question").await).0, ResponseStatus::Completed);
    let events = p.turn("/compact").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    let notes = super::openai::notices(&events);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("context: summarised 2 earlier message(s)")),
        "{notes:?}"
    );
    assert_eq!(done(&p.turn("next").await).0, ResponseStatus::Completed);
    let m = server.messages(2);
    assert_eq!(m.len(), 4, "{m:?}");
    assert!(
        m[1]["content"]
            .as_str()
            .unwrap()
            .contains("SUMMARY: one question answered.")
    );
    assert_eq!(m[3]["content"], "next");
    p.kill().await;
}

/// The estimated tokens of a recorded request, as hive estimates them
/// (4 bytes of JSON a token): its messages and its tools.
fn request_tokens(server: &Server, n: usize) -> usize {
    let body = &server.requests()[n].body;
    (body["messages"].to_string().len() + body["tools"].to_string().len()) / 4
}

/// Issue 46 item 6: with a 12,000-token window, reading three 22 KB files
/// at once must not end in a request past the window: each output is cut
/// to fit and the pane says so.
#[tokio::test]
async fn three_big_reads_stay_within_the_context_window() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt", "c.txt"] {
        let text: String = (0..700)
            .map(|i| format!("{name} line {i:>4} of fifty bytes.....\n"))
            .collect();
        assert!(text.len() >= 22_000);
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let server = Server::start(vec![
        calls(&[
            ("r1", "read", json!({"path": "a.txt"})),
            ("r2", "read", json!({"path": "b.txt"})),
            ("r3", "read", json!({"path": "c.txt"})),
        ]),
        answer_text("read them", 1, 1),
    ]);
    let mut a = agent_in(&server, dir.path(), "yolo");
    a.set("context_window", 12_000).unwrap();
    let mut p = Driven::start(&factory(), a, None);
    let events = p.turn("read the three files").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    assert_eq!(server.requests().len(), 2);
    let sent = request_tokens(&server, 1);
    assert!(sent <= 12_000, "the second request is ~{sent} tokens");
    let r3 = result_of(&server, "r3");
    assert!(r3.starts_with("c.txt line    0"), "{r3}");
    assert!(r3.contains("[output cut to"), "{r3}");
    p.kill().await;
}

/// A request the estimate puts over the window even after compaction is
/// not sent: the turn fails saying why, and the message is not kept.
#[tokio::test]
async fn a_request_over_the_window_is_not_sent() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![answer_text("never", 1, 1), answer_text("ok", 1, 1)]);
    let mut a = agent_in(&server, dir.path(), "yolo");
    a.set("context_window", 4_000).unwrap();
    let mut p = Driven::start(&factory(), a, None);
    let events = p.turn(&"z".repeat(20_000)).await;
    let (status, _, error, _) = done(&events);
    assert_eq!(status, ResponseStatus::Error);
    let error = error.unwrap_or_default();
    assert!(error.contains("4000-token context window"), "{error}");
    assert_eq!(server.requests().len(), 0);
    assert_eq!(done(&p.turn("small").await).0, ResponseStatus::Completed);
    let m = server.messages(0);
    assert!(
        m.iter()
            .all(|m| m["content"].as_str().is_none_or(|c| c.len() < 20_000))
    );
    p.kill().await;
}

/// `/compact` ends with the context the summary leaves, so the gauge
/// falls at once (item 22's first figure); a summary that saves nothing
/// is dropped and said so.
#[tokio::test]
async fn compact_reports_the_context_it_leaves_and_never_grows_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        answer_text(&"w".repeat(8000), 1, 1),
        answer_text("SUMMARY: many w's.", 1, 1),
        answer_text("short", 1, 1),
        answer_text(&"v".repeat(4000), 1, 1),
    ]);
    let mut a = agent_in(&server, dir.path(), "yolo");
    a.set("context_window", 40_000).unwrap();
    let mut p = Driven::start(&factory(), a, None);
    assert_eq!(
        done(&p.turn("w's please").await).0,
        ResponseStatus::Completed
    );
    let (_, _, _, usage) = done(&p.turn("/compact").await);
    let usage = usage.expect("the compact turn's usage");
    assert_eq!(usage.context_window, Some(40_000));
    let left = usage.context_tokens.expect("context tokens");
    assert!(left < 2000, "{left}");
    // A summary longer than what it summarises is not used.
    assert_eq!(done(&p.turn("/compact").await).0, ResponseStatus::Completed);
    let events = p.turn("/compact").await;
    let notes = super::openai::notices(&events);
    assert!(
        notes.iter().any(|n| n.contains("would save nothing")),
        "{notes:?}"
    );
    p.kill().await;
}

/// Issue 46 item 20: a write the confinement will refuse is refused
/// without asking the user, and a read-only call of the same step shows
/// its output while another call's approval card waits.
#[tokio::test]
async fn refused_paths_never_ask_and_reads_do_not_wait_behind_a_card() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "old\n").unwrap();
    let server = Server::start(vec![
        calls(&[(
            "w1",
            "write",
            json!({"path": "../outside.txt", "content": "x"}),
        )]),
        answer_text("refused", 1, 1),
        calls(&[
            ("w2", "write", json!({"path": "notes.txt", "content": "x"})),
            ("g1", "glob", json!({"pattern": "*.txt"})),
        ]),
        answer_text("written", 1, 1),
    ]);
    // The default mode: ask.
    let mut a = coding_agent(&server);
    a.cwd = Some(dir.path().to_path_buf());
    let mut p = Driven::start(&factory(), a, None);
    let events = p.turn("write outside").await;
    assert_eq!(done(&events).0, ResponseStatus::Completed);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ProviderEvent::Permission(_))),
        "no card for a path that is refused anyway"
    );
    assert!(
        result_of(&server, "w1").starts_with("error:"),
        "{}",
        result_of(&server, "w1")
    );
    assert!(!dir.path().parent().unwrap().join("outside.txt").exists());

    p.send("write notes");
    // The glob's output arrives while the write's card still waits.
    p.live
        .until("the glob's output", |e| {
            matches!(e, ProviderEvent::Stream(s) if matches!(&s.payload,
                Payload::ItemDone { final_item: FinalItem::FunctionCallOutput { call_id, .. }, .. } if call_id == "g1"))
        })
        .await;
    let card = p.live.seen.iter().find_map(|e| match e {
        ProviderEvent::Permission(r) => Some(r.request_id.clone()),
        _ => None,
    });
    let card = match card {
        Some(c) => c,
        None => match p
            .live
            .until("the write's card", |e| {
                matches!(e, ProviderEvent::Permission(_))
            })
            .await
        {
            ProviderEvent::Permission(r) => r.request_id,
            _ => unreachable!(),
        },
    };
    assert!(p.live.handle.send(ProviderCommand::Permission {
        request_id: card,
        decision: PermissionDecision::AllowOnce,
    }));
    assert_eq!(done(&p.until_done().await).0, ResponseStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "x"
    );
    p.kill().await;
}
