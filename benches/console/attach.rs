//! `attach` (issue 29): a console attaching to a server that already holds
//! `PANES` (default 9) panes of `ITEMS` (default 10,000) items each. The
//! server (`hive serve`, no terminal) runs a `script` agent per pane whose
//! one turn is `ITEMS` tool calls; once every turn has ended, `hive attach`
//! starts in tmux (three seconds after, once the server has recorded
//! them: a server one comes back to is idle). Reports the time from starting the console to its
//! first full frame (the screen showing the focused pane's last item),
//! the console's peak RSS, and the server's RSS; then the time from `hive
//! ctl new` to the added pane on the console's screen (issue 32).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::support::status_mb;

/// The scenario: one turn of `items` tool calls, the last one named.
fn scenario(items: usize) -> String {
    let mut s = String::from("model = \"bench\"\nchunk_chars = 4000\ndelay_ms = 0\n\n[[turn]]\n");
    for i in 0..items {
        s.push_str(&format!(
            "[[turn.step]]\ntool = \"Read\"\nargs = {{ file_path = \"src/file{i}.rs\" }}\noutput = \"line one of {i}\\nline two\"\n"
        ));
    }
    s.push_str("[[turn.step]]\ntext = \"all items done\"\n");
    s
}

fn hive(dir: &Path, bin: &str) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(dir);
    for var in ["HIVE_DATA_DIR", "HIVE_STATE_DIR", "XDG_CONFIG_HOME", "HOME"] {
        cmd.env(var, dir);
    }
    cmd
}

/// (first frame ms, console peak RSS MB, server RSS MB).
pub(super) fn attach(cols: u16, rows: u16, panes: usize, items: usize) -> [f64; 3] {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("attach: skipped (no tmux)");
        return [f64::NAN; 3];
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("scenario.toml"), scenario(items)).expect("scenario");
    let config: String = (1..=panes)
        .map(|i| {
            format!(
                "[[agent]]\nid = \"p{i}\"\nprovider = \"script\"\nscript = \"{}\"\n\n",
                d.join("scenario.toml").display()
            )
        })
        .collect();
    std::fs::write(d.join("hive.toml"), config).expect("config");
    let bin = std::env::var("HIVE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_hive").into());
    let mut server = hive(d, &bin)
        .args(["--config", "hive.toml", "--fresh", "serve"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hive serve");
    // Named after the directory (a `hive.toml` names its project).
    let in_run = |ext: &str| {
        std::fs::read_dir(d.join("run"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == ext))
    };
    let started = Instant::now();
    while in_run("sock").is_none_or(|s| std::os::unix::net::UnixStream::connect(s).is_err()) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no server socket"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let filled = Instant::now();
    let turns: Vec<String> = (1..=panes)
        .map(|i| {
            let out = hive(d, &bin)
                .args([
                    "--config",
                    "hive.toml",
                    "ctl",
                    "send",
                    &format!("p{i}"),
                    "go",
                ])
                .output()
                .expect("hive ctl send");
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        })
        .collect();
    for turn in &turns {
        let ok = hive(d, &bin)
            .args(["--config", "hive.toml", "ctl", "wait", turn])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "turn {turn} did not complete");
    }
    println!(
        "attach: the server made {panes} panes of {items} items in {:.1} s",
        filled.elapsed().as_secs_f64()
    );
    // The server has just recorded 90k items: let it settle, as a server
    // someone comes back to has.
    std::thread::sleep(Duration::from_secs(3));
    let server_pid = in_run("pid")
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|s| s.trim().parse::<u32>().ok())
        .expect("the server's pid");
    // In tmux, which answers the console's terminal queries at once (the
    // bare pty here does not, and the keyboard-protocol query then waits
    // out its two seconds).
    let tmux = format!("hive-attach-bench-{}", std::process::id());
    let mut cmd = Command::new("tmux");
    cmd.args([
        "-L",
        &tmux,
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "a",
    ])
    .args(["-x", &cols.to_string(), "-y", &rows.to_string(), "-c"])
    .arg(d);
    for var in ["HIVE_DATA_DIR", "HIVE_STATE_DIR", "XDG_CONFIG_HOME", "HOME"] {
        cmd.args(["-e", &format!("{var}={}", d.display())]);
    }
    cmd.args([
        "-e",
        "TERM=xterm-256color",
        &bin,
        "--config",
        "hive.toml",
        "attach",
    ]);
    let start = Instant::now();
    assert!(cmd.status().is_ok_and(|s| s.success()), "tmux");
    let screen = || {
        let out = Command::new("tmux")
            .args(["-L", &tmux, "capture-pane", "-p", "-t", "a"])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut first_frame = f64::NAN;
    while start.elapsed() < Duration::from_secs(30) {
        if screen().contains("all items done") {
            first_frame = start.elapsed().as_secs_f64() * 1000.0;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(500));
    // Issue 32: a pane added while attached reaches this console as a
    // `Layout` (the panes it has by id, the new one whole; before, a fresh
    // snapshot of every pane); from `hive ctl new` to its tab on screen
    // (the tenth pane opens a second window).
    let asked = Instant::now();
    let added = hive(d, &bin)
        .args([
            "--config",
            "hive.toml",
            "ctl",
            "new",
            "extra",
            "--template",
            "p1",
        ])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut add_ms = f64::NAN;
    while added && asked.elapsed() < Duration::from_secs(30) {
        if screen().contains("extra") {
            add_ms = asked.elapsed().as_secs_f64() * 1000.0;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    println!(
        "attach: a pane added while attached is on screen in {add_ms:.0} ms (hive ctl included)"
    );
    let client: Option<u32> = Command::new("tmux")
        .args(["-L", &tmux, "display", "-p", "-t", "a", "#{pane_pid}"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok());
    let client_mb = client.map_or(f64::NAN, |p| status_mb(p, "VmHWM:"));
    let server_mb = status_mb(server_pid, "VmRSS:");
    let _ = Command::new("tmux")
        .args(["-L", &tmux, "kill-server"])
        .status();
    let _ = hive(d, &bin)
        .args(["--config", "hive.toml", "kill"])
        .status();
    let _ = server.wait();
    println!(
        "attach ({panes} panes × {items} items): first full frame {first_frame:.0} ms (tmux included), console peak RSS {client_mb:.1} MB, server RSS {server_mb:.1} MB"
    );
    [first_frame, client_mb, server_mb]
}
