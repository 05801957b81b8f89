//! A model that writes escape sequences (OSC 52 clipboard write, window
//! title, screen clear) into its answer: the CLI never hands them to a
//! terminal, and Markdown exports never carry them.

use std::path::Path;

use super::hive;

const HOSTILE: &str = r#"
[[turn]]
[[turn.step]]
text = "copied \u001b]52;c;cm0gLXJmIH4=\u0007 title \u001b]0;pwned\u0007 clear \u001b[2J done"
"#;

fn config(dir: &Path) -> std::path::PathBuf {
    std::fs::write(dir.join("hostile.toml"), HOSTILE).unwrap();
    let config = dir.join("hive.toml");
    std::fs::write(
        &config,
        "[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = \"hostile.toml\"\n",
    )
    .unwrap();
    config
}

/// Runs the binary on a pseudo-terminal (as a user would) and returns all
/// it wrote; it must succeed.
fn on_terminal(dir: &Path, args: &[&str]) -> Vec<u8> {
    let (out, ok) = super::on_terminal(dir, args);
    assert!(ok, "{}", String::from_utf8_lossy(&out));
    out
}

#[test]
fn escape_sequences_never_reach_a_terminal_or_a_markdown_export() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cfg = config(dir);
    let cfg = cfg.to_str().unwrap();

    let run = on_terminal(dir, &["--config", cfg, "run", "--agent", "a", "hi"]);
    let text = String::from_utf8_lossy(&run);
    assert!(!run.contains(&0x1b), "raw ESC from `hive run`: {text:?}");
    assert!(
        text.contains("copied ␛]52;c;cm0gLXJmIH4=␇ title"),
        "{text:?}"
    );

    let show = on_terminal(dir, &["history", "show", "a"]);
    let text = String::from_utf8_lossy(&show);
    assert!(
        !show.contains(&0x1b),
        "raw ESC from `history show`: {text:?}"
    );
    assert!(text.contains("␛[2J done"), "{text:?}");

    // Exports to a pipe or file are Markdown to be viewed anywhere: always clean.
    let out = hive(dir)
        .args(["history", "export", "a", "--markdown"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.contains(&0x1b));
    assert!(String::from_utf8_lossy(&out.stdout).contains("␛]0;pwned␇"));

    // A pipe gets the agent's exact text (scripts may want it).
    let piped = hive(dir).args(["history", "show", "a"]).output().unwrap();
    assert!(piped.stdout.contains(&0x1b));
}
