//! Bad protocol input loses nothing and kills nothing: lone surrogates and
//! over-long lines from a fake ACP agent, through `hive run`.

use serde_json::Value;

use super::{fake_acp_config, hive};

fn run(prompt: &str, env: &[(&str, &str)], top: &str) -> (bool, Vec<Value>, String) {
    let tmp = tempfile::tempdir().unwrap();
    let config = fake_acp_config(tmp.path(), env, top);
    let out = hive(tmp.path())
        .args([
            "--config",
            config.to_str().unwrap(),
            "run",
            "--agent",
            "fake",
            "--json",
            prompt,
        ])
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        out.status.success(),
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_lone_surrogate_keeps_the_tool_output() {
    let (ok, lines, stderr) = run("surrogate", &[], "");
    assert!(ok, "{stderr}");
    let outputs: Vec<&Value> = lines
        .iter()
        .filter(|l| l["status"] == "complete" && !l["output"].is_null())
        .collect();
    assert_eq!(outputs.len(), 1, "{lines:#?}");
    assert_eq!(outputs[0]["output"], "bee \u{fffd} cut");
    assert!(!stderr.contains("malformed"), "{stderr}");
}

#[test]
fn an_over_long_line_is_refused_visibly_and_the_agent_goes_on() {
    let (ok, lines, stderr) = run(
        "longline",
        &[("FAKE_ACP_LONG", "3145728")],
        "[limits]\nmax_line_bytes = 1048576\n",
    );
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("the agent wrote a line longer than 1048576 bytes"),
        "{stderr}"
    );
    let text = lines
        .iter()
        .rev()
        .find(|l| l["type"] == "message" && l["origin"] == "agent")
        .map(|l| l["content"].as_str().unwrap_or("").to_owned());
    assert_eq!(text.as_deref(), Some("still here after the long line"));
}
