//! A symlink planted in the history directory (in place of the session file
//! hive will append to) must not make hive write the conversation through
//! it: history files are opened without following links, and must be
//! regular files of the user's own.

use super::hive;

#[test]
fn history_writer_refuses_a_planted_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = dir.join("hive.toml");
    std::fs::write(
        &config,
        "[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"demo:tour\"\n",
    )
    .unwrap();
    let run = || {
        hive(dir)
            .args([
                "--config",
                config.to_str().unwrap(),
                "run",
                "--agent",
                "a",
                "hi",
            ])
            .output()
            .unwrap()
    };
    let first = run();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let history = super::history_dir(&dir.join("data"), "a");
    let session = std::fs::read_dir(&history)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a session file");
    let outside = dir.join("outside.txt");
    std::fs::write(&outside, "not hive's\n").unwrap();
    std::fs::remove_file(&session).unwrap();
    std::os::unix::fs::symlink(&outside, &session).unwrap();

    let second = run();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "not hive's\n",
        "the conversation was written through the link; stderr: {stderr}"
    );
    assert!(
        stderr.contains("symlink") || stderr.contains("not a regular file"),
        "says why the history is not saved: {stderr}"
    );
}
