//! `hive ctl` against a fake hive whose panes report hostile text: a model
//! name, a failure, a turn's error and its answer carrying OSC 52 (clipboard
//! write), a window title and a screen clear. No escape reaches the user's
//! terminal in text output; `--json` keeps the exact text, escaped.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;

use serde_json::{Value, json};

use super::hive;

const EVIL: &str = "evil\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}]0;PWNED\u{7}\u{1b}[2J";

fn pane() -> Value {
    json!({
        "id": "p1", "name": "pane", "provider": "acp", "model": EVIL,
        "state": "idle", "alive": true, "failed": EVIL, "turn_id": null,
        "turns": 1, "queue": [EVIL], "can_steer": false, "can_interrupt": true,
    })
}

/// The result a fake hive gives `method`; `watch` also streams events.
fn answer(method: &str) -> Value {
    match method {
        "list" => json!({ "panes": [pane()] }),
        "status" => pane(),
        "wait" => json!({
            "pane": "p1", "turn_id": "t1", "status": "error", "text": EVIL,
            "error_code": EVIL, "error_message": EVIL,
        }),
        _ => json!({}),
    }
}

fn watch_events() -> Vec<Value> {
    let stamp = "2026-01-01T00:00:00Z";
    vec![
        json!({"pane": "p1", "event": {"type": "turn_started", "turn_id": "t1",
            "session_id": "s", "model_id": EVIL, "provider_id": "acp"}}),
        json!({"pane": "p1", "event": {"type": "turn_error", "turn_id": "t1",
            "session_id": "s", "error_code": EVIL, "error_message": EVIL}}),
        json!({"pane": "p1", "event": {"turn_id": "t1", "session_id": "s", "item_id": "i",
            "source_timestamp": stamp, "emitted_at": stamp, "status": "create",
            "type": "tool_call", "tool_name": EVIL, "call_id": "c", "arguments": {},
            "output": EVIL}}),
    ]
}

/// A fake hive on `sock` answering one connection per request line.
fn fake_hive(sock: &Path) {
    let listener = UnixListener::bind(sock).unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let mut w = conn.try_clone().unwrap();
            let mut line = String::new();
            if BufReader::new(conn).read_line(&mut line).unwrap_or(0) == 0 {
                continue;
            }
            let req: Value = serde_json::from_str(&line).unwrap();
            let method = req["method"].as_str().unwrap_or_default();
            let reply = json!({"id": req["id"], "result": answer(method)});
            let _ = writeln!(w, "{reply}");
            if method == "watch" {
                for ev in watch_events() {
                    let _ = writeln!(w, "{ev}");
                }
            }
        }
    });
}

fn ctl(dir: &Path, sock: &Path, args: &[&str]) -> (String, String) {
    let out = hive(dir)
        .arg("ctl")
        .arg("--socket")
        .arg(sock)
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `hive ctl` on a pseudo-terminal, as a user runs it: all it wrote.
fn on_terminal(dir: &Path, sock: &Path, args: &[&str]) -> String {
    let sock = sock.to_string_lossy();
    let mut argv = vec!["ctl", "--socket", sock.as_ref()];
    argv.extend_from_slice(args);
    let (out, _) = super::on_terminal(dir, &argv);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn agent_text_in_ctl_output_never_carries_an_escape() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let sock = dir.join("fake.sock");
    fake_hive(&sock);
    for verb in [
        &["list"][..],
        &["status", "p1"],
        &["wait", "t1"],
        &["watch"],
        &["watch", "p1"],
    ] {
        let (mut stdout, stderr) = ctl(dir, &sock, verb);
        if verb[0] == "wait" {
            // The answer itself is the agent's exact text in a pipe (as
            // `hive history show`); on a terminal it is sanitized.
            assert_eq!(stdout.trim_end(), EVIL);
            stdout = on_terminal(dir, &sock, verb);
        }
        for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "raw escape on {name} of `hive ctl {}`: {text:?}",
                verb.join(" ")
            );
        }
        assert!(
            stdout.contains("evil␛]52;c;") || stderr.contains("evil␛]52;c;"),
            "shown through the sanitizer, `hive ctl {}`: {stdout:?} {stderr:?}",
            verb.join(" ")
        );
    }
    // JSON output escapes: the exact text survives a parse.
    let (stdout, _) = ctl(dir, &sock, &["--json", "list"]);
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(v["panes"][0]["model"], EVIL);
    let (stdout, _) = ctl(dir, &sock, &["--json", "watch"]);
    let first: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["model_id"], EVIL);
}
