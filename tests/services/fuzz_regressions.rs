//! The fuzz harness (fuzz/harness.rs) in the normal test suite: every fuzz
//! seed source in tests/fixtures and every crash input the fuzzers found
//! (kept in tests/fixtures/fuzz/<target>/) goes through the same code the
//! fuzz targets run, so a fixed crash stays fixed without nightly.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

#[path = "../../fuzz/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Runs `f` on every kept crash input of `target` and on the fixtures it is
/// seeded from; returns how many inputs ran.
fn run(target: &str, seeds: &[&str], f: fn(&[u8])) -> usize {
    let mut inputs = files(&fixtures().join("fuzz").join(target));
    for s in seeds {
        inputs.extend(files(&fixtures().join(s)));
    }
    for p in &inputs {
        let data = std::fs::read(p).unwrap();
        f(&data);
    }
    inputs.len()
}

#[test]
fn acp_engine() {
    assert!(
        run(
            "acp_engine",
            &["acp-claude", "acp-codex", "acp-gemini"],
            harness::acp_engine
        ) > 0
    );
}

#[test]
fn claude_line() {
    assert!(run("claude_line", &["claude"], harness::claude_line) > 0);
}

#[test]
fn codex_exec_line() {
    assert!(run("codex_exec_line", &["codex"], harness::codex_exec_line) > 0);
}

#[test]
fn codex_app_server() {
    assert!(run("codex_app_server", &["codex"], harness::codex_app_server) > 0);
}

#[test]
fn gemini_line() {
    assert!(run("gemini_line", &["gemini"], harness::gemini_line) > 0);
}

#[test]
fn pi_line() {
    assert!(run("pi_line", &["pi"], harness::pi_line) > 0);
}

#[test]
fn stream_event() {
    let n = run("stream_event", &[], harness::stream_event);
    let text = std::fs::read_to_string(fixtures().join("events/canonical.jsonl")).unwrap();
    for line in text.lines() {
        hive::event::StreamEvent::from_json(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        harness::stream_event(line.as_bytes());
    }
    assert!(n + text.lines().count() > 0);
}

#[test]
fn history_load() {
    assert!(run("history_load", &["history"], harness::history_load) > 0);
}

#[test]
fn config_parse() {
    assert!(run("config_parse", &["history"], harness::config_parse) > 0);
}

#[test]
fn pty_scan() {
    assert!(run("pty_scan", &["pty"], harness::pty_scan) > 0);
}

#[test]
fn control_request() {
    assert!(run("control_request", &["ctl-wire"], harness::control_request) > 0);
}

#[test]
fn mcp_request() {
    assert!(run("mcp_request", &["mcp-wire"], harness::mcp_request) > 0);
}

#[test]
fn openai_tool_args() {
    assert!(
        run(
            "openai_tool_args",
            &["openai-tools"],
            harness::openai_tool_args
        ) > 0
    );
}
