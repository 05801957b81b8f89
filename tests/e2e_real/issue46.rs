//! Issue 46 against the real CLIs: what real use found, checked in the
//! mock's request log.
//!
//! Item 4: a turn that failed on a rate limit is sent again when the limit
//! resets. Claude Code and Codex keep the failed turn's prompt in their own
//! session, so the resend must not give it to them again: the model's next
//! request holds the prompt once.

use super::*;

/// A scenario file whose every call fails with a 429 (`limited`) or
/// answers `Counted.`; the mock re-reads it on every request.
fn scenario(path: &Path, limited: bool) {
    let text = if limited {
        r#"{"steps": [{"error": {"status": 429, "message": "mock rate limit"}}], "repeat_last": true}"#
    } else {
        r#"{"steps": [{"text": "Counted."}]}"#
    };
    write(path, text);
}

/// The model requests that carry the test's prompt (not the side ones).
fn asked(lab: &Lab) -> Vec<Value> {
    lab.mock
        .requests()
        .into_iter()
        .filter(|r| r["side"] == false && r["body"].to_string().contains(MARK))
        .collect()
}

const MARK: &str = "QUOTE-ME-ONCE";

fn resent_once(cli: Cli) {
    let Some(lab) = Lab::new() else { return };
    let file = lab.root.path().join("limit.json");
    scenario(&file, true);
    let (status, body) = post(
        &lab.mock,
        "/_mock/scenario",
        &serde_json::json!({"name": file.display().to_string()}),
    );
    assert_eq!(status, 200, "{body}");
    let Some(mut agent) = agent(&lab, cli) else {
        return;
    };
    // Claude Code retries a 429 ten times by itself first.
    if let Some(toml::Value::Table(env)) = agent.table.get_mut("env") {
        env.insert("CLAUDE_CODE_MAX_RETRIES".into(), "0".into());
    }
    let Some(tmux) = Tmux::console(&lab, &agent) else {
        return;
    };
    tmux.type_line(&format!("Count the files. {MARK}"));
    // hive recognises the limit and holds the message for its resend.
    tmux.wait_for("rate limit", Duration::from_secs(600))
        .unwrap_or_else(|s| panic!("no rate limit shown:\n{s}"));
    let failed = asked(&lab).len();
    assert!(failed >= 1);
    scenario(&file, false);
    // No reset named: hive's first backoff is a minute.
    tmux.wait_for("Counted.", Duration::from_secs(180))
        .unwrap_or_else(|s| panic!("the resend was not answered:\n{s}"));
    let last = asked(&lab).pop().expect("the resent request");
    let copies = last["body"].to_string().matches(MARK).count();
    assert_eq!(copies, 1, "the prompt once in the resent request: {last}");
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn resend_after_limit_holds_the_prompt_once_claude() {
    resent_once(Cli::Claude);
}

#[test]
#[ignore = "needs the real CLIs and tmux: scripts/e2e-real.sh"]
fn resend_after_limit_holds_the_prompt_once_codex() {
    resent_once(Cli::CodexAppServer);
}
