//! Subjects of the real captures' requests (tests/fixtures, copied from
//! the real CLIs' runs), built the way each provider raises them; then
//! the gate's answer on them under one cross-vendor rule set.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::policy::gate::{Action, Gate, Preset, RuleSpec};

/// The agent-side requests of a timeline capture whose method is `method`.
fn requests(timeline: &str, method: &str) -> Vec<Value> {
    timeline
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| {
            let line = l.get("line")?.as_str()?.to_owned();
            serde_json::from_str::<Value>(&line).ok()
        })
        .filter(|m| {
            m.get("method").and_then(Value::as_str) == Some(method)
                || m.pointer("/request/subtype").and_then(Value::as_str) == Some(method)
        })
        .collect()
}

fn acp_request(msg: &Value) -> PermissionRequest {
    let tc = &msg["params"]["toolCall"];
    PermissionRequest {
        request_id: "r".into(),
        tool_name: tc["title"].as_str().unwrap_or("tool").into(),
        input: tc
            .get("rawInput")
            .cloned()
            .filter(|v| !v.is_null())
            .unwrap_or(json!({})),
        kind: tc["kind"].as_str().map(str::to_owned),
        locations: tc["locations"]
            .as_array()
            .map(|l| {
                l.iter()
                    .filter_map(|p| p["path"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        ..PermissionRequest::default()
    }
}

fn req(tool: &str, input: Value) -> PermissionRequest {
    PermissionRequest {
        request_id: "r".into(),
        tool_name: tool.into(),
        input,
        ..PermissionRequest::default()
    }
}

const WORK: &str = "/tmp/hive-lab-work";
const LINE: &str = "mkdir -p perm-dir && echo made > perm-dir/x.txt && cat perm-dir/x.txt";

#[test]
fn claudes_can_use_tool_is_a_bash_command() {
    let reqs = requests(
        include_str!("../../tests/fixtures/claude/permission_allow.timeline.jsonl"),
        "can_use_tool",
    );
    let r = &reqs[0]["request"];
    let s = subject(
        "claude",
        &req(r["tool_name"].as_str().unwrap(), r["input"].clone()),
        Path::new(WORK),
    );
    assert_eq!(s.tool, "Bash");
    assert_eq!(s.command.as_deref(), Some(LINE));
    let edit = subject(
        "claude",
        &req(
            "Edit",
            json!({"file_path": "src/../a.rs", "old_string": "x", "new_string": "y"}),
        ),
        Path::new(WORK),
    );
    assert_eq!(edit.paths, vec![PathBuf::from("/tmp/hive-lab-work/a.rs")]);
    assert!(edit.writes);
}

#[test]
fn codex_app_server_commands_lose_their_shell_wrapper() {
    let reqs = requests(
        include_str!("../../tests/fixtures/codex/appserver_approval.timeline.jsonl"),
        "item/commandExecution/requestApproval",
    );
    let p = &reqs[0]["params"];
    // As `provider::codex::app_server` raises it: `shell` with command and cwd.
    let input = json!({"command": p["command"], "cwd": p["cwd"]});
    let s = subject("codex", &req("shell", input), Path::new(WORK));
    assert_eq!(
        (s.tool.as_str(), s.command.as_deref()),
        ("Bash", Some(LINE))
    );
    let patch = json!({"changes": [{"path": "src/x.rs", "kind": "update"}], "grant_root": "/etc"});
    let s = subject("codex", &req("apply_patch", patch), Path::new(WORK));
    assert_eq!(s.tool, "Edit");
    assert_eq!(
        s.paths,
        vec![
            PathBuf::from("/tmp/hive-lab-work/src/x.rs"),
            PathBuf::from("/etc")
        ]
    );
}

#[test]
fn acp_tool_calls_of_every_adapter() {
    let of = |capture: &str| {
        let reqs = requests(capture, "session/request_permission");
        subject("acp", &acp_request(&reqs[0]), Path::new(WORK))
    };
    // Claude's adapter: no kind, the command in rawInput.
    let s = of(include_str!(
        "../../tests/fixtures/acp-claude/tool.timeline.jsonl"
    ));
    assert_eq!(
        (s.tool.as_str(), s.command.as_deref()),
        ("Bash", Some(LINE))
    );
    // Codex's: kind execute, argv wrapped in bash -lc.
    let s = of(include_str!(
        "../../tests/fixtures/acp-codex/tool.timeline.jsonl"
    ));
    assert_eq!(
        (s.tool.as_str(), s.command.as_deref()),
        ("Bash", Some(LINE))
    );
    // Gemini's: kind execute, the command only in the title.
    let s = of(include_str!(
        "../../tests/fixtures/acp-gemini/tool.timeline.jsonl"
    ));
    assert_eq!(
        (s.tool.as_str(), s.command.as_deref()),
        ("Bash", Some(LINE))
    );
    // Edits: the locations and the change set's paths.
    let s = of(include_str!(
        "../../tests/fixtures/acp-codex/write.timeline.jsonl"
    ));
    assert_eq!(s.tool, "Edit");
    assert!(s.writes);
    assert_eq!(
        s.paths,
        vec![PathBuf::from("/tmp/hive-lab-work/mock-written.txt")]
    );
    let s = of(include_str!(
        "../../tests/fixtures/acp-gemini/write_missing_as_empty.timeline.jsonl"
    ));
    assert_eq!((s.tool.as_str(), s.writes), ("Edit", true));
    assert_eq!(
        s.paths,
        vec![PathBuf::from("/tmp/hive-lab-work/mock-written.txt")]
    );
}

#[test]
fn the_builtin_agents_tools() {
    let s = subject(
        "openai",
        &req("bash", json!({"command": "ls -la"})),
        Path::new("/w"),
    );
    assert_eq!(
        (s.tool.as_str(), s.command.as_deref()),
        ("Bash", Some("ls -la"))
    );
    let s = subject(
        "openai",
        &req("write", json!({"path": "../out.txt", "content": "x"})),
        Path::new("/w/repo"),
    );
    assert_eq!((s.tool.as_str(), s.writes), ("Write", true));
    assert_eq!(s.paths, vec![PathBuf::from("/w/out.txt")]);
    let s = subject(
        "openai",
        &req("read", json!({"path": "a"})),
        Path::new("/w"),
    );
    assert_eq!((s.tool.as_str(), s.writes), ("Read", false));
}

/// A tool hive cannot read is never taken for a read: the `edit` preset,
/// which allows reads and edits inside the repository, asks about it.
#[test]
fn an_unknown_tool_is_asked_about_not_waved_through() {
    let gate = Gate::new(Vec::new(), Preset::Edit, Path::new(WORK)).unwrap();
    for (provider, r) in [
        ("claude", req("mcp__evil__wipe", json!({"all": true}))),
        ("claude", req("Bash", json!({}))),
        ("claude", req("Write", json!({"content": "no path"}))),
        ("codex", req("apply_patch", json!({}))),
        ("openai", req("write", json!({"content": "x"}))),
        (
            "acp",
            PermissionRequest {
                tool_name: "Do a thing".into(),
                ..PermissionRequest::default()
            },
        ),
    ] {
        let s = subject(provider, &r, Path::new(WORK));
        assert_eq!(gate.decide(&s).action, Action::Ask, "{provider} {s:?}");
    }
}

/// One rule set, every vendor: `allow Bash(mkdir -p*)` does not allow the
/// capture's line (it also writes with a redirection), `deny Bash(cat*)`
/// denies it in all four shapes.
#[test]
fn one_rule_set_decides_every_vendor_alike() {
    let rule = |action, command: &str| RuleSpec {
        action,
        tool: "Bash".into(),
        command: Some(command.into()),
        path: None,
    };
    let allow = Gate::new(
        vec![("a".into(), rule(Action::Allow, "mkdir -p*"))],
        Preset::Edit,
        Path::new(WORK),
    )
    .unwrap();
    let deny = Gate::new(
        vec![("d".into(), rule(Action::Deny, "cat*"))],
        Preset::Edit,
        Path::new(WORK),
    )
    .unwrap();
    let claude = req("Bash", json!({"command": LINE}));
    let codex = req(
        "shell",
        json!({"command": format!("/bin/bash -lc '{LINE}'")}),
    );
    let gemini = PermissionRequest {
        tool_name: LINE.into(),
        kind: Some("execute".into()),
        ..PermissionRequest::default()
    };
    let builtin = req("bash", json!({"command": LINE}));
    for (p, r) in [
        ("claude", &claude),
        ("codex", &codex),
        ("acp", &gemini),
        ("openai", &builtin),
    ] {
        let s = subject(p, r, Path::new(WORK));
        assert_eq!(allow.decide(&s).action, Action::Ask, "{p}");
        let v = deny.decide(&s);
        assert_eq!((v.action, v.by.as_str()), (Action::Deny, "d"), "{p}");
    }
}
