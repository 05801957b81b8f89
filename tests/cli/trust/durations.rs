//! Durations in the config that no clock can add: refused at load with the
//! key named, never a panic in the runner ("overflow when adding duration
//! to instant") that leaves the pane waiting.

use super::hive;

fn run_with(top: &str) -> (bool, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("hive.toml");
    std::fs::write(
        &path,
        format!("{top}\n[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"demo:tour\"\n"),
    )
    .unwrap();
    let out = hive(tmp.path())
        .args([
            "--config",
            path.to_str().unwrap(),
            "run",
            "--agent",
            "a",
            "hi",
        ])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn absurd_durations_are_refused_with_their_key() {
    for (key, value) in [
        ("stall_after_s", "9223372036854775807"),
        ("stall_after_s", "18446744073709551615"),
        ("interrupt_timeout_ms", "9223372036854775807"),
        ("display_latency_ms", "9223372036854775807"),
    ] {
        let (ok, stderr) = run_with(&format!("[ui]\n{key} = {value}\n"));
        assert!(!stderr.contains("panicked"), "{key} = {value}: {stderr}");
        assert!(!ok, "{key} = {value} was accepted: {stderr}");
        assert!(stderr.contains(key), "{key} = {value}: {stderr}");
    }
    let (ok, stderr) = run_with("[processor]\nbatch_timeout_ms = 9223372036854775807\n");
    assert!(!ok && stderr.contains("batch_timeout_ms"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // A sensible value still runs.
    let (ok, stderr) = run_with("[ui]\nstall_after_s = 3600\n");
    assert!(ok, "{stderr}");
}
