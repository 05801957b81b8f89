//! `notify_command` runs in the server (src/server/notifier.rs): with no
//! console attached (the agents work on after the terminal closed, and the
//! phone still hears of it), once with two consoles attached (each ran it
//! before), and a `/mute` typed in a console is the server's, kept across
//! a restart.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Lab;

/// Two panes: consoles look at `front` (first), the turns run in `echo`.
fn config(lab: &Lab) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl");
    let notes = lab.path("notes.txt");
    let script = format!("printf '%s %s\\n' \"$1\" \"$2\" >> '{}'", notes.display());
    let config = format!(
        r#"
[ui]
notify_command = ["sh", "-c", "{script}", "sh", "{{type}}", "{{pane}}"]

[[agent]]
id = "front"
provider = "script"
script = "{echo}"

[[agent]]
id = "echo"
provider = "script"
script = "{echo}"
"#,
        script = script.replace('\\', "\\\\").replace('"', "\\\""),
        echo = fixtures.join("echo.toml").display(),
    );
    let path = lab.path("notify.toml");
    std::fs::write(&path, config).unwrap();
    path
}

/// The lines the command wrote, once `want` of them are there (or what
/// there is after a while, to show that no more came).
fn notes(lab: &Lab, want: usize) -> Vec<String> {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(lab.path("notes.txt")).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        if lines.len() >= want || start.elapsed() > Duration::from_secs(3) {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn turn(lab: &Lab, text: &str) {
    let id = lab.ok(&["send", "echo", text]);
    lab.ok(&["wait", &id]);
}

/// A server with no console, started as a systemd unit would.
fn serve(lab: &Lab, config: &Path) -> std::process::Child {
    let child = lab
        .hive_cmd(&["serve", "--config"])
        .arg(config)
        .env("HIVE_DATA_DIR", lab.path("hive_data_dir"))
        .spawn()
        .unwrap();
    let socket = lab.socket_dir().join("notify.sock");
    lab.wait_until("the server", || {
        std::os::unix::net::UnixStream::connect(&socket).is_ok()
    });
    child
}

/// Failed before: with no console attached nothing ran the command, and
/// two consoles ran it twice.
#[test]
fn the_server_notifies_with_no_console_and_once_with_two() {
    let Some(lab) = Lab::new() else { return };
    let config = config(&lab);
    let mut server = serve(&lab, &config);
    turn(&lab, "alone");
    assert_eq!(notes(&lab, 1), ["finished echo"]);
    lab.hive_cmd(&["kill", "--all"]).output().unwrap();
    let _ = server.wait();

    lab.launch_with("one", &config, "notify.sock");
    lab.launch_with("two", &config, "notify.sock");
    lab.wait_until("two consoles", || lab.clients("notify") == Some(2));
    turn(&lab, "watched twice");
    let lines = notes(&lab, 3);
    assert_eq!(
        lines,
        ["finished echo", "finished echo"],
        "one more, not two"
    );
}

/// Failed before: `/mute` was the console's own, gone with it.
#[test]
fn a_mute_typed_in_a_console_holds_after_a_restart() {
    let Some(lab) = Lab::new() else { return };
    let config = config(&lab);
    lab.launch_with("one", &config, "notify.sock");
    lab.wait_until("the console", || lab.screen("one").contains("echo"));
    lab.keys("one", &["M-2"]);
    lab.type_line("one", "/mute");
    lab.wait_until("the mute", || lab.screen("one").contains("⊘"));
    lab.keys("one", &["M-1"]);
    turn(&lab, "muted");
    assert!(notes(&lab, 1).is_empty(), "muted");

    lab.stop("one");
    let mut server = serve(&lab, &config);
    turn(&lab, "still muted");
    assert!(
        notes(&lab, 1).is_empty(),
        "the mute came back with the server"
    );
    lab.hive_cmd(&["kill", "--all"]).output().unwrap();
    let _ = server.wait();
}
