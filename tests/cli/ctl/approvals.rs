//! `hive ctl approve` / `deny` against a real approval card: a scripted
//! agent that asks before each write runs in the real console (tmux); the
//! pane reads `awaiting_approval` with the request in `list`, `status` and
//! `watch`, each verb answers it, the console's card goes, and a deny's
//! reason is what the agent's tool call gets back.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use serde_json::Value;

use super::Lab;

fn asker_config(lab: &Lab) -> std::path::PathBuf {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/asker.toml");
    let config = lab.path("asktest.toml");
    let text = format!(
        "[[agent]]\nid = \"asker\"\nprovider = \"script\"\nscript = \"{}\"\n",
        fixture.display()
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// Sends `text` and waits until the pane asks for its approval.
fn ask(lab: &Lab, text: &str) -> (String, Value) {
    let turn = lab.ok(&["send", "asker", text]);
    let mut status = Value::Null;
    lab.wait_until("awaiting_approval", || {
        status = lab.status("asker");
        status["state"] == "awaiting_approval"
    });
    (turn, status["approvals"][0].clone())
}

#[test]
fn ctl_approve_and_deny_answer_a_real_approval_card() {
    let Some(lab) = Lab::new() else { return };
    let config = asker_config(&lab);
    lab.launch_with("ask", &config, "asktest.sock");
    lab.fails(&["approve", "asker"], 7, "INVALID_STATE");

    let mut watch = lab
        .ctl_cmd(&["watch", "asker", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The subscription is live once it says so.
    let mut said = String::new();
    BufReader::new(watch.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert!(said.contains("watching"), "{said}");
    let (turn, approval) = ask(&lab, "first");
    assert_eq!(approval["tool"], "write_file", "{approval}");
    assert_eq!(approval["arguments"]["path"], "notes.txt", "{approval}");
    assert_eq!(approval["description"], "Write notes.txt?", "{approval}");
    let list = lab.ok(&["list"]);
    let row = list.lines().find(|l| l.starts_with("asker")).expect(&list);
    assert!(row.contains("awaiting_approval"), "{list}");
    let status = lab.ok(&["status", "asker"]);
    assert!(
        status.contains("approval:") && status.contains("write_file"),
        "{status}"
    );
    lab.wait_until("the card in the console", || {
        lab.screen("ask").contains("Write notes.txt?")
    });
    let mut events = BufReader::new(watch.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("approval_requested") {
        line.clear();
        assert!(events.read_line(&mut line).unwrap() > 0, "watch ended");
    }
    let requested: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(requested["request_id"], approval["request_id"], "{line}");
    assert_eq!(requested["tool"], "write_file", "{line}");

    let answered = lab.ok(&["approve", "asker"]);
    let id = approval["request_id"].as_str().unwrap();
    assert_eq!(answered, format!("allow_once {id} (write_file)"));
    let answer = lab.ok(&["wait", &turn]);
    assert_eq!(answer, "Finished: first");
    lab.wait_until("the card to go", || {
        !lab.screen("ask").contains("Write notes.txt?")
    });
    let history = lab.ok(&["history", "asker"]);
    assert!(history.contains("wrote notes.txt"), "{history}");
    while !line.contains("approval_settled") {
        line.clear();
        assert!(events.read_line(&mut line).unwrap() > 0, "watch ended");
    }
    let _ = watch.kill();
    let _ = watch.wait();

    let (turn, approval) = ask(&lab, "second");
    lab.fails(&["deny", "asker", "--request", "nope"], 7, "INVALID_STATE");
    let denied = lab.ok(&["deny", "asker", "--reason", "not in this repo"]);
    let id = approval["request_id"].as_str().unwrap();
    assert_eq!(denied, format!("deny {id} (write_file)"));
    lab.ok(&["wait", &turn]);
    let history = lab.ok(&["history", "asker"]);
    assert!(
        history.contains("Permission denied: not in this repo"),
        "{history}"
    );
    assert_eq!(lab.status("asker")["state"], "idle");
}
