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

/// The project's audit log (`approvals.jsonl` under the state dir).
fn audit_lines(lab: &Lab) -> Vec<Value> {
    fn find(dir: &std::path::Path) -> Option<std::path::PathBuf> {
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                if let Some(found) = find(&p) {
                    return Some(found);
                }
            } else if p.file_name().is_some_and(|n| n == "approvals.jsonl") {
                return Some(p);
            }
        }
        None
    }
    let Some(path) = find(&lab.state_dir()) else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn decided(entries: &[Value]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|e| {
            (
                e["decision"].as_str().unwrap().to_owned(),
                e["by"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(words: &[(&str, &str)]) -> Vec<(String, String)> {
    words
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// A config (`NAME.toml`) of the asker under hive's `read-only` preset
/// (its `write_file` writes: it asks) and a pane whose one turn asks to
/// run `rm -rf build` (destructive: two cards, even under `yolo`).
fn policy_config(lab: &Lab, name: &str) -> std::path::PathBuf {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/asker.toml");
    let wiper = lab.path("wiper.toml");
    std::fs::write(
        &wiper,
        "[capabilities]\npermissions = true\n[[turn]]\n[[turn.step]]\npermission = \"Clean the build\"\ntool = \"Bash\"\nargs = { command = \"rm -rf build\" }\noutput = \"ran\"\n[[turn.step]]\ntext = \"it ran\"\ndenied_text = \"it did not run\"\n",
    )
    .unwrap();
    let config = lab.path(&format!("{name}.toml"));
    let text = format!(
        "[[agent]]\nid = \"asker\"\nprovider = \"script\"\nscript = \"{}\"\npolicy = \"read-only\"\n\n[[agent]]\nid = \"wiper\"\nprovider = \"script\"\nscript = \"{}\"\npolicy = \"yolo\"\n",
        fixture.display(),
        wiper.display()
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// Who answered each card is the audit log's `by`: `hive ctl approve` is
/// `ctl`, the console's `y` is `console` (it said `user` for both).
/// `hive ctl approvals` lists what waits across panes, `--log` what was
/// decided, `--rules` the preset and the learned rule, `--forget` takes
/// it away (the next request asks again).
#[test]
fn ctl_approvals_lists_the_queue_the_log_and_the_rules() {
    let Some(lab) = Lab::new() else { return };
    let config = policy_config(&lab, "policytest");
    lab.launch_with("policy", &config, "policytest.sock");
    assert_eq!(lab.ok(&["approvals"]), "no approval waits");

    let (turn, approval) = ask(&lab, "first");
    let queue: Value = serde_json::from_str(&lab.ok(&["approvals", "--json"])).unwrap();
    let cards = queue["approvals"].as_array().unwrap();
    assert_eq!(cards.len(), 1, "{queue}");
    assert_eq!(cards[0]["pane"], "asker");
    assert_eq!(cards[0]["request_id"], approval["request_id"]);
    let text = lab.ok(&["approvals"]);
    assert!(
        text.starts_with("asker") && text.contains("write_file") && text.contains("notes.txt"),
        "{text}"
    );
    lab.ok(&["approve", "asker"]);
    lab.ok(&["wait", &turn]);

    // The console's own key.
    let (turn, _) = ask(&lab, "second");
    lab.wait_until("the card in the console", || {
        lab.screen("policy").contains("Write notes.txt?")
    });
    lab.keys("policy", &["y"]);
    assert_eq!(lab.ok(&["wait", &turn]), "Finished: second");
    assert_eq!(
        decided(&audit_lines(&lab)),
        pairs(&[
            ("ask", "preset:read-only"),
            ("allow", "ctl"),
            ("ask", "preset:read-only"),
            ("allow", "console"),
        ])
    );
    let log: Value =
        serde_json::from_str(&lab.ok(&["approvals", "--log", "--last", "2", "--json"])).unwrap();
    assert_eq!(
        decided(log["entries"].as_array().unwrap()),
        pairs(&[("ask", "preset:read-only"), ("allow", "console")])
    );
    let text = lab.ok(&["approvals", "--log"]);
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.lines().all(|l| l.contains("asker")), "{text}");
    assert!(
        text.contains("by ctl") && text.contains("by console"),
        "{text}"
    );

    // Allow always: a learned rule, listed; the next request has no card.
    let (turn, _) = ask(&lab, "third");
    lab.ok(&["approve", "asker", "--always"]);
    lab.ok(&["wait", &turn]);
    let rules: Value = serde_json::from_str(&lab.ok(&["approvals", "--rules", "--json"])).unwrap();
    assert_eq!(rules["learned"][0]["id"], "learned.1", "{rules}");
    assert_eq!(rules["learned"][0]["tool"], "write_file", "{rules}");
    let text = lab.ok(&["approvals", "--rules"]);
    assert!(text.contains("pane asker preset read-only"), "{text}");
    assert!(
        text.contains("learned.1") && text.contains("allow write_file(path: notes.txt)"),
        "{text}"
    );
    let turn = lab.ok(&["send", "asker", "fourth"]);
    assert_eq!(lab.ok(&["wait", &turn]), "Finished: fourth");
    let last = audit_lines(&lab).last().cloned().unwrap();
    assert_eq!(
        (last["decision"].as_str(), last["by"].as_str()),
        (Some("allow"), Some("learned.1"))
    );
    assert_eq!(
        lab.ok(&["approvals", "--forget", "learned.1"]),
        "forgot learned.1"
    );
    lab.fails(&["approvals", "--forget", "learned.1"], 7, "INVALID_STATE");
    let (_, again) = ask(&lab, "fifth");
    assert_eq!(again["tool"], "write_file");
    lab.ok(&["deny", "asker"]);
}

/// A destructive request over `hive ctl`: `--confirm` on its first card is
/// refused, a plain approve brings the second card, which a plain approve
/// does not pass and `--confirm` does; the log says who at each step.
#[test]
fn ctl_approve_confirm_runs_a_destructive_request() {
    let Some(lab) = Lab::new() else { return };
    let config = policy_config(&lab, "wipetest");
    lab.launch_with("wipe", &config, "wipetest.sock");
    let turn = lab.ok(&["send", "wiper", "go"]);
    lab.wait_until("the first card", || {
        lab.status("wiper")["state"] == "awaiting_approval"
    });
    let out = lab.fails(&["approve", "wiper", "--confirm"], 7, "INVALID_STATE");
    assert!(
        out.stderr
            .contains("not a destructive request's second card"),
        "{}",
        out.stderr
    );
    assert!(lab.ok(&["approve", "wiper"]).starts_with("allow_once"));
    let mut second = Value::Null;
    lab.wait_until("the second card", || {
        second = lab.status("wiper")["approvals"][0].clone();
        second["confirm"] == true
    });
    let out = lab.fails(&["approve", "wiper"], 7, "INVALID_STATE");
    assert!(out.stderr.contains("--confirm"), "{}", out.stderr);
    let queue = lab.ok(&["approvals"]);
    assert!(
        queue.contains("destructive") && queue.contains("--confirm"),
        "{queue}"
    );
    let answered = lab.ok(&["approve", "wiper", "--confirm"]);
    assert!(answered.starts_with("confirm "), "{answered}");
    assert_eq!(lab.ok(&["wait", &turn]), "it ran");
    assert_eq!(
        decided(&audit_lines(&lab)),
        pairs(&[("ask", "destructive"), ("confirm", "ctl"), ("allow", "ctl")])
    );
}
