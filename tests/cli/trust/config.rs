//! Config mistakes are reported as what they are, where they are.

use super::hive;

fn run_with(config: &str) -> (bool, String, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("hive.toml");
    std::fs::write(&path, config).unwrap();
    let out = hive(tmp.path())
        .args([
            "--config",
            path.to_str().unwrap(),
            "run",
            "--agent",
            "a",
            "hello",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), stderr, tmp)
}

#[test]
fn a_missing_cwd_is_named_as_such() {
    let (ok, stderr, _tmp) = run_with(
        "[[agent]]\nid = \"a\"\nprovider = \"acp\"\ncommand = [\"python3\"]\n\
         cwd = \"/nonexistent/hive-test-dir\"\n",
    );
    assert!(!ok);
    assert!(
        stderr.contains("working directory `/nonexistent/hive-test-dir` (cwd) does not exist"),
        "{stderr}"
    );
    assert!(!stderr.contains("No such file"), "{stderr}");
}

#[test]
fn demo_scripts_in_a_config_file_are_built_in() {
    let (ok, stderr, _tmp) =
        run_with("[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"demo:tour\"\n");
    assert!(ok, "{stderr}");
}

#[test]
fn duplicate_and_invalid_agent_ids_have_a_position() {
    let (ok, stderr, tmp) = run_with(
        "[[agent]]\nid = \"a\"\nprovider = \"script\"\n\n[[agent]]\nid = \"a\"\nprovider = \"script\"\n",
    );
    assert!(!ok);
    let file = tmp.path().join("hive.toml");
    assert!(
        stderr.contains(&format!(
            "{}:6:6: agent id `a` is used twice",
            file.display()
        )),
        "{stderr}"
    );
    let (ok, stderr, tmp) = run_with("[[agent]]\nprovider = \"script\"\n  id = \"no/slash\"\n");
    assert!(!ok);
    let file = tmp.path().join("hive.toml");
    assert!(
        stderr.contains(&format!("{}:3:8: agent id `no/slash`", file.display())),
        "{stderr}"
    );
}

/// #53 item 14: a provider's own integer key too large for TOML is named,
/// with its line. Failed before: "hive.toml:1:1: u64 value was too large".
#[test]
fn an_integer_too_large_is_named_where_it_is() {
    let (ok, stderr, _tmp) = run_with(
        "[[agent]]\nid = \"a\"\nprovider = \"openai\"\nmodel = \"m\"\n\
         base_url = \"http://127.0.0.1:1/v1\"\nmax_steps = 18446744073709551615\n",
    );
    assert!(!ok);
    assert!(stderr.contains("hive.toml:6:"), "{stderr}");
    assert!(stderr.contains("`max_steps`"), "{stderr}");
}
