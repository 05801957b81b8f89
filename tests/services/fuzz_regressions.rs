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

#[test]
fn wire_frames() {
    // Kept inputs, then frames of both sides' messages made here.
    run("wire_frames", &[], harness::wire_frames);
    let mut bytes = hive::wire::frame::encode_hello(&hive::wire::Hello::ours());
    for msg in [hive::wire::ClientMsg::Resync, hive::wire::ClientMsg::Detach] {
        bytes.extend(hive::wire::frame::encode(&msg).unwrap());
    }
    harness::wire_frames(&bytes);
    // A frame that claims the most and brings little.
    let mut torn = u32::try_from(hive::wire::frame::MAX_FRAME)
        .unwrap()
        .to_be_bytes()
        .to_vec();
    torn.extend_from_slice(b"abc");
    harness::wire_frames(&torn);
}

#[test]
fn wire_delta() {
    assert!(run("wire_delta", &[], harness::wire_delta) > 0);
}

/// vt100 0.16 panicked at one row (`col_wrap`) and at one column (a wide
/// character); every size the clamp gives survives the pty fixtures and
/// the inputs that broke the raw emulator.
#[test]
fn vt100_tiny() {
    assert!(run("vt100_tiny", &["pty"], harness::vt100_tiny) > 0);
    for size in 0..16u8 {
        let mut wrap = vec![size];
        wrap.extend_from_slice("abcdefgh漢字漢字\r\n\t\x1b[1;1r\x1b[M".as_bytes());
        wrap.extend_from_slice(&[0xff, 0x05]);
        wrap.extend_from_slice("漢字 wraps again".as_bytes());
        harness::vt100_tiny(&wrap);
    }
}

#[test]
fn init_render() {
    assert!(run("init_render", &[], harness::init_render) > 0);
}

#[test]
fn state_files() {
    assert!(run("state_files", &[], harness::state_files) > 0);
}

/// The fuzz target `vt100_tiny` found (issue 53) that vt100 0.16 panics at
/// any size once a resize cuts a wide character in two and it is written
/// over (`screen.rs:870`, an unwrap). Not ours to fix; through hive's own
/// feeder the panic stays in its pane, whose screen then says so.
#[test]
fn a_vt100_panic_the_fuzzer_found_is_contained_to_its_pane() {
    let inputs = files(&fixtures().join("vt100-crashes"));
    assert!(!inputs.is_empty());
    for p in inputs {
        let data = std::fs::read(&p).unwrap();
        let why = harness::vt100_tiny_contained(&data);
        assert!(why.is_some(), "{}: vt100 no longer fails here", p.display());
    }
}
