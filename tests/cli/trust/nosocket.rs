//! The control socket cannot be created (here: a file planted where its
//! directory goes): the console says so, and a `hive_tools` agent's pane
//! says it gets no hive operations, instead of a line in hive.log only.

use crate::support::tmux::{Tmux, available};

#[test]
fn a_control_socket_that_cannot_be_made_is_said_in_the_console() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_owned();
    let runtime = d.join("rt");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::write(runtime.join("hive"), "planted\n").unwrap();
    // An ACP agent reaches hive's operations through `hive mcp`, which needs
    // the socket (the script agent takes none, so it is told nothing more).
    let work = d.join("work");
    std::fs::create_dir(&work).unwrap();
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_acp.py");
    std::fs::write(
        d.join("hive.toml"),
        format!(
            "[[agent]]\nid = \"a\"\nprovider = \"acp\"\ncommand = [\"python3\", {:?}]\ncwd = {:?}\nhive_tools = true\n",
            fake.display().to_string(),
            work.display().to_string(),
        ),
    )
    .unwrap();
    let env = [
        format!("XDG_RUNTIME_DIR={}", runtime.display()),
        format!("HIVE_DATA_DIR={}", d.join("data").display()),
        format!("HIVE_STATE_DIR={}", d.join("state").display()),
        format!("XDG_CONFIG_HOME={}", d.join("xdg").display()),
    ];
    let bin = env!("CARGO_BIN_EXE_hive");
    let t = Tmux::start("nosock", dir, (160, 40), &env, &[bin]);
    // Words, not lines: the notice wraps wherever the pane's width says
    // (the pane's borders are not words).
    let words = |s: &str| {
        let s: String = s
            .chars()
            .map(|c| {
                if ('\u{2500}'..='\u{257f}').contains(&c) {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let screen = t.wait("the missing socket said on screen", |s| {
        let w = words(s);
        w.contains("no control socket") && w.contains("gets no hive operations")
    });
    assert!(words(&screen).contains("hive ctl"), "{screen}");
}
