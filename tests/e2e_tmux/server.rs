//! The server outlives its consoles (issue 29), driven as a user would in
//! tmux with the built-in demo's scripted agents: the terminal closing
//! mid-answer, the console killed with SIGKILL, two consoles at once, and
//! `hive ls` / `hive kill`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::support::procs::alive;
use super::support::tmux::Tmux;

/// The slow demo answer's last words: the turn ran to its end.
const END: &str = "deliberately paced answer.";

/// One test's directories and environment; sessions share a tmux server.
struct Lab {
    t: Tmux,
    bin: PathBuf,
    vars: Vec<String>,
}

impl Lab {
    /// Starts session `a` running `hive`.
    fn start(bin: &Path) -> Self {
        Self::running(bin, "")
    }

    /// Starts session `a` running `hive ARGS`.
    fn running(bin: &Path, args: &str) -> Self {
        Self::running_in(bin, args, tempfile::tempdir().expect("tempdir"))
    }

    /// `running`, in `dir`.
    fn running_in(bin: &Path, args: &str, dir: tempfile::TempDir) -> Self {
        let vars = super::private_env(dir.path());
        let script = format!("{} {args} ; echo HIVE-EXIT=$? ; sleep 600", quote(bin));
        let t = Tmux::start("a", dir, (140, 40), &vars, &["sh", "-c", &script]);
        Self {
            t,
            bin: bin.to_owned(),
            vars,
        }
    }

    /// A second terminal (session `name`) running `hive attach`.
    fn attach(&self, name: &str) {
        self.attach_with(name, "", 120);
    }

    /// A second terminal (session `name`, `cols` wide) running `hive
    /// attach ARGS`.
    fn attach_with(&self, name: &str, args: &str, cols: u16) {
        let script = format!(
            "{} attach {args} ; echo HIVE-EXIT=$? ; sleep 600",
            quote(&self.bin)
        );
        let cols = cols.to_string();
        let mut args = vec!["new-session", "-d", "-s", name, "-x", &cols, "-y", "36"];
        for v in &self.vars {
            args.extend(["-e", v.as_str()]);
        }
        args.extend(["sh", "-c", &script]);
        self.t.cmd(&args);
    }

    fn screen(&self, target: &str) -> String {
        self.t.cmd(&["capture-pane", "-p", "-t", target])
    }

    fn keys(&self, target: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", target];
        args.extend_from_slice(keys);
        self.t.cmd(&args);
    }

    fn type_text(&self, target: &str, text: &str) {
        self.t.cmd(&["send-keys", "-t", target, "-l", text]);
    }

    fn wait(&self, target: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen(target);
            if pred(&s) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(40),
                "timed out waiting for {what} in {target}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `hive SUBCOMMAND…` in the test's environment; its stdout.
    fn hive(&self, args: &[&str]) -> String {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args).current_dir(self.t.dir());
        for v in &self.vars {
            let (k, val) = v.split_once('=').expect("NAME=value");
            cmd.env(k, val);
        }
        let out = cmd.output().expect("run hive");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The server's pid, from its pid file.
    fn server_pid(&self) -> i32 {
        let state = self.t.dir().join("hive_state_dir/run/default.pid");
        std::fs::read_to_string(&state)
            .expect("the server's pid file")
            .trim()
            .parse()
            .expect("a pid")
    }

    /// The console process in session `target` (the shell's child).
    fn console_pid(&self, target: &str) -> i32 {
        let sh = self.t.cmd(&["display", "-p", "-t", target, "#{pane_pid}"]);
        let sh = sh.trim();
        let children = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children"))
            .expect("the shell's children");
        children
            .split_whitespace()
            .next()
            .expect("the console under the shell")
            .parse()
            .expect("a pid")
    }
}

fn quote(p: &Path) -> String {
    shlex::try_quote(&p.display().to_string())
        .expect("quotable path")
        .into_owned()
}

/// Starts the slow demo answer in pane 1 and a half-typed draft, then
/// lets `end` take the console away mid-answer; a new console must show
/// the whole answer, finished (never interrupted), and the draft.
fn answer_survives(end: impl FnOnce(&Lab)) {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.wait("a", "the demo panes", |s| s.contains("Message Architect"));
    lab.type_text("a", "slow");
    lab.keys("a", &["Enter"]);
    lab.wait("a", "the answer streaming", |s| {
        s.contains("Streaming slowly")
    });
    lab.type_text("a", "half a thought");
    lab.wait("a", "the draft", |s| s.contains("half a thought"));
    let server = lab.server_pid();
    end(&lab);
    assert!(alive(server), "the server died with its console");
    // Away long enough for the answer to end with nobody attached.
    std::thread::sleep(Duration::from_secs(2));
    lab.attach("b");
    let s = lab.wait("b", "the whole answer", |s| s.contains(END));
    assert!(!s.contains("interrupted"), "the turn was interrupted:\n{s}");
    lab.wait("b", "the turn's end", |s| s.contains("idle"));
    lab.wait("b", "the draft, kept", |s| s.contains("half a thought"));
    let turns = lab.hive(&["ctl", "list", "--json"]);
    assert!(turns.contains("idle"), "{turns}");
    // Stop it all: the test leaves no server behind.
    let said = lab.hive(&["kill"]);
    assert!(said.contains("stopped default"), "{said}");
    assert!(!alive(server), "hive kill left the server running");
    assert!(lab.hive(&["ls"]).contains("no hive server"));
}

#[test]
fn closing_the_terminal_leaves_the_agents_working() {
    // The pane closing hangs the console up, as a closed terminal does.
    answer_survives(|lab| {
        lab.t.cmd(&["kill-pane", "-t", "a"]);
    });
}

#[test]
fn kill_9_of_the_console_leaves_the_agents_working() {
    answer_survives(|lab| {
        let console = lab.console_pid("a");
        // SAFETY: kill(2) on the console this test started.
        assert_eq!(unsafe { libc::kill(console, libc::SIGKILL) }, 0);
        lab.wait("a", "the shell after the console", |s| {
            s.contains("HIVE-EXIT=137")
        });
    });
}

#[test]
fn two_consoles_show_one_conversation() {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.wait("a", "the first console", |s| {
        s.contains("Message Architect")
    });
    lab.attach("b");
    lab.wait("b", "the second console", |s| {
        s.contains("Message Architect")
    });
    let ls = lab.hive(&["ls"]);
    let row = ls
        .lines()
        .find(|l| l.starts_with("default"))
        .unwrap_or_default();
    assert_eq!(
        row.split_whitespace().nth(4),
        Some("2"),
        "two clients:\n{ls}"
    );
    // Typed in one, shown in both.
    lab.type_text("b", "hello from b");
    lab.keys("b", &["Enter"]);
    lab.wait("a", "b's message in a", |s| s.contains("hello from b"));
    lab.type_text("a", "approve it");
    lab.keys("a", &["Enter"]);
    lab.wait("b", "the approval card in b", |s| {
        s.contains("approval needed")
    });
    lab.wait("a", "the approval card in a", |s| {
        s.contains("approval needed")
    });
    // Answered in one, gone from both.
    lab.keys("a", &["y"]);
    lab.wait("b", "the card gone from b", |s| {
        !s.contains("approval needed")
    });
    // Stopping from one console ends the other's too.
    lab.keys("b", &["C-q"]);
    lab.wait("b", "the leave dialog", |s| s.contains("stop every agent"));
    lab.keys("b", &["s"]);
    lab.wait("b", "b's exit", |s| s.contains("HIVE-EXIT=0"));
    let s = lab.wait("a", "a told", |s| s.contains("HIVE-EXIT=0"));
    assert!(s.contains("server stopped"), "{s}");
    assert!(lab.hive(&["ls"]).contains("no hive server"));
}

/// `/resume` in a local pane goes through the server as a remote one does
/// (issue 44): the server lists the sessions and switches the pane, and
/// every console, not only the one that asked, shows the old conversation
/// with the line that says whether the agent continues it.
#[test]
fn resume_goes_through_the_server_and_every_console_sees_it() {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.wait("a", "the console", |s| s.contains("Message Architect"));
    lab.type_text("a", "first topic alpha");
    lab.keys("a", &["Enter"]);
    lab.wait("a", "the first turn over", |s| {
        s.contains("── demo-architect-1 ·")
    });
    lab.type_text("a", "/clear");
    lab.keys("a", &["Enter"]);
    lab.wait("a", "an empty pane in a new session", |s| {
        s.contains("ⓘ new session") && !s.contains("first topic alpha")
    });
    lab.attach("b");
    lab.wait("b", "the second console", |s| {
        s.contains("Message Architect")
    });
    lab.keys("a", &["M-r"]);
    lab.wait("a", "the session in the picker", |s| {
        s.contains("resume a session") && s.contains("first topic alpha")
    });
    lab.keys("a", &["Enter"]);
    for console in ["a", "b"] {
        lab.wait(console, "the server's note on the switch", |s| {
            s.contains("resumed session") && !s.contains("resume a session")
        });
    }
    lab.keys("b", &["Home"]);
    lab.wait("b", "the old conversation", |s| {
        s.contains("You asked: first topic alpha")
    });
    lab.keys("a", &["C-q"]);
    lab.wait("a", "the leave dialog", |s| s.contains("stop every agent"));
    lab.keys("a", &["s"]);
    lab.wait("a", "a's exit", |s| s.contains("HIVE-EXIT=0"));
}

/// A server of another protocol version (a fake that answers the hello
/// only): the console names both versions and the way out, and draws
/// nothing.
#[test]
fn a_server_of_another_version_is_refused_with_the_way_out() {
    use std::io::{Read, Write};
    use std::os::unix::fs::PermissionsExt;
    let Some(bin) = super::hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let run = dir.path().join("hive_state_dir/run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(run.join("old.sock")).unwrap();
    let fake = std::thread::spawn(move || {
        // `hive attach` first checks that something answers (and hangs up).
        let mut magic = [0u8; 5];
        let mut s = loop {
            let (mut s, _) = listener.accept().unwrap();
            if s.read_exact(&mut magic).is_ok() {
                break s;
            }
        };
        assert_eq!(&magic, b"\0HIVE");
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut hello = vec![0u8; u32::from_be_bytes(len) as usize];
        s.read_exact(&mut hello).unwrap();
        let theirs: serde_json::Value = serde_json::from_slice(&hello).unwrap();
        let ours = br#"{"protocol":999,"hive":"0.0.9"}"#;
        s.write_all(&(ours.len() as u32).to_be_bytes()).unwrap();
        s.write_all(ours).unwrap();
        // Held open: the console must not wait for more.
        std::thread::sleep(Duration::from_secs(5));
        theirs
    });
    let lab = Lab::running_in(&bin, "attach old", dir);
    let s = lab.wait("a", "the refusal", |s| s.contains("HIVE-EXIT="));
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("hive 0.0.9 (protocol 999)"), "{s}");
    assert!(flat.contains("`hive kill old`"), "{s}");
    assert!(flat.contains("HIVE-EXIT=1"), "{s}");
    let theirs = fake.join().unwrap();
    assert_eq!(
        theirs["protocol"],
        hive::wire::PROTOCOL_VERSION,
        "the console's hello: {theirs}"
    );
}

/// Two projects whose `hive.toml`s sit in directories of the same name
/// (issue 46 item 2): the second gets a server of its own (its name tagged
/// with its config's hash), and its console shows its own agents, never
/// the first one's, while the first server runs on.
#[test]
fn a_project_whose_directory_shares_a_name_gets_its_own_server() {
    let Some(bin) = super::hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let config = |p: &str| {
        let d = dir.path().join(p);
        std::fs::create_dir_all(&d).unwrap();
        let id = p.replace('/', "-");
        std::fs::write(
            d.join("hive.toml"),
            format!("[[agent]]\nid = \"{id}\"\nprovider = \"script\"\nscript = \"demo:tour\"\n"),
        )
        .unwrap();
        d.join("hive.toml")
    };
    let (a, b) = (config("a/proj"), config("b/proj"));
    let mut serve = Command::new(&bin);
    serve.args(["--config", &a.display().to_string(), "serve"]);
    serve
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null());
    for v in super::private_env(dir.path()) {
        let (k, val) = v.split_once('=').expect("NAME=value");
        serve.env(k, val);
    }
    let mut serve = serve.spawn().expect("hive serve");
    let socket = dir.path().join("hive_state_dir/run/proj.sock");
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(start.elapsed() < Duration::from_secs(20), "no server");
        std::thread::sleep(Duration::from_millis(50));
    }
    let lab = Lab::running_in(&bin, &format!("--config {}", quote(&b)), dir);
    let s = lab.wait("a", "its own project's pane", |s| s.contains("b-proj"));
    assert!(
        !s.contains("a-proj"),
        "the other project's pane was shown:\n{s}"
    );
    assert!(
        std::os::unix::net::UnixStream::connect(&socket).is_ok(),
        "the first project's server runs on"
    );
    // Both run, each named for its own config; the test leaves neither.
    let ls = lab.hive(&["ls"]);
    let (ca, cb) = (a.canonicalize().unwrap(), b.canonicalize().unwrap());
    assert!(
        ls.contains(&ca.display().to_string()) && ls.contains(&cb.display().to_string()),
        "{ls}"
    );
    lab.hive(&["kill", "--all"]);
    // SAFETY: kill(2) on the server this test started.
    unsafe { libc::kill(serve.id() as i32, libc::SIGTERM) };
    let _ = serve.wait();
}

/// The slow demo answer ends in pane 1 while the console looks at pane 2:
/// it waits in the inbox. `end` takes the console away; the console that
/// attaches again shows it waiting still, `●` on its pane (#46 item 8: the
/// inbox lived in the console and was lost with it).
fn inbox_survives(end: impl FnOnce(&Lab)) {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.wait("a", "the demo panes", |s| s.contains("Message Architect"));
    lab.type_text("a", "slow");
    lab.keys("a", &["Enter"]);
    lab.wait("a", "the answer streaming", |s| {
        s.contains("Streaming slowly")
    });
    lab.keys("a", &["M-Right"]);
    lab.wait("a", "the finished turn in the inbox", |s| {
        s.contains("1 waiting")
    });
    end(&lab);
    lab.attach("b");
    lab.wait("b", "the second console", |s| {
        s.contains("Message Architect")
    });
    let s = lab.wait("b", "the inbox, kept", |s| s.contains("1 waiting"));
    assert!(s.contains('●'), "no mark on the pane:\n{s}");
    // Looking at the pane sees it.
    lab.keys("b", &["M-Left"]);
    lab.wait("b", "the entry seen", |s| !s.contains("waiting"));
    lab.hive(&["kill"]);
}

#[test]
fn the_inbox_outlives_a_detach() {
    inbox_survives(|lab| {
        lab.keys("a", &["C-b", "d"]);
        lab.wait("a", "the console detached", |s| s.contains("HIVE-EXIT=0"));
    });
}

#[test]
fn the_inbox_outlives_a_kill_9_of_the_console() {
    inbox_survives(|lab| {
        let console = lab.console_pid("a");
        // SAFETY: kill(2) on the console this test started.
        assert_eq!(unsafe { libc::kill(console, libc::SIGKILL) }, 0);
        lab.wait("a", "the shell after the console", |s| {
            s.contains("HIVE-EXIT=137")
        });
    });
}

/// Context switches (voluntary and not) of each thread of `pid`, by tid.
fn switches(pid: i32) -> std::collections::HashMap<String, u64> {
    let mut out = std::collections::HashMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let Ok(status) = std::fs::read_to_string(t.path().join("status")) else {
            continue;
        };
        let n: u64 = status
            .lines()
            .filter(|l| l.contains("ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum();
        out.insert(t.file_name().to_string_lossy().into_owned(), n);
    }
    out
}

/// How many times the threads of `pid` alive at both readings woke while
/// `idle` ran (a thread that ended meanwhile, like tokio's blocking pool
/// going, is left out).
fn wakeups_during(pid: i32, idle: impl FnOnce()) -> u64 {
    let before = switches(pid);
    idle();
    let after = switches(pid);
    after
        .iter()
        .filter_map(|(tid, n)| Some(n.saturating_sub(*before.get(tid)?)))
        .sum()
}

/// Issue 45 item 3: with nothing streaming, neither the server nor the
/// console is woken (the orphan reaper polled once a second, each pane's
/// process sampler too, and the border's figures redrew with them).
#[test]
fn an_idle_server_and_console_are_not_woken() {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.wait("a", "the demo panes", |s| s.contains("Message Architect"));
    let server = lab.server_pid();
    let console = lab.console_pid("a");
    // Starting up settles (the first process samples, the banner).
    std::thread::sleep(Duration::from_secs(4));
    let mut console_woke = 0;
    let server_woke = wakeups_during(server, || {
        console_woke = wakeups_during(console, || std::thread::sleep(Duration::from_secs(5)));
    });
    lab.hive(&["kill"]);
    assert_eq!(
        (server_woke, console_woke),
        (0, 0),
        "(server, console) woke in 5 idle seconds"
    );
}

/// #46 item 17: eighteen idle terminal panes (two windows of nine) wake
/// neither the server nor the console (373 context switches in 10 s: each
/// pane's process sampler went on while its program ran, and the border
/// redrew its unchanged figures).
#[test]
fn eighteen_idle_terminal_panes_do_not_wake_the_server_or_the_console() {
    let Some(bin) = super::hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let panes: String = (1..=18)
        .map(|i| format!("[[agent]]\nid = \"t{i}\"\nprovider = \"pty\"\ncommand = [\"sh\"]\n\n"))
        .collect();
    std::fs::write(dir.path().join("hive.toml"), panes).unwrap();
    let lab = Lab::running_in(&bin, "", dir);
    lab.wait("a", "the panes", |s| s.contains("t9"));
    let ls = lab.hive(&["ls"]);
    let server: i32 = ls
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no server in:\n{ls}"));
    let console = lab.console_pid("a");
    // Starting up settles (the shells start, the first process samples).
    std::thread::sleep(Duration::from_secs(4));
    let mut console_woke = 0;
    let server_woke = wakeups_during(server, || {
        console_woke = wakeups_during(console, || std::thread::sleep(Duration::from_secs(5)));
    });
    lab.hive(&["kill", "--all"]);
    assert_eq!(
        (server_woke, console_woke),
        (0, 0),
        "(server, console) woke in 5 idle seconds"
    );
}

/// The `key=value` fields of the server's log line for a console that
/// left by detaching: how many batches of runner events it was sent, and
/// from how many panes each (`Sent`, src/server/clients.rs).
fn sent_to_detached(state: &Path) -> (u64, u64, u64) {
    // The log's writer thread may be a moment behind.
    let start = Instant::now();
    let line = loop {
        let log = std::fs::read_to_string(state.join("hive.log")).unwrap_or_default();
        let line = log
            .lines()
            .rev()
            .find(|l| l.contains("client left: detached"))
            .map(str::to_owned);
        match line {
            Some(line) => break line,
            None if start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(100));
            }
            None => panic!("no detach in the log:\n{log}"),
        }
    };
    let field = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    (field("batches"), field("events"), field("pane_batches"))
}

/// Issue 45 item 2: four Claude panes streaming at once are read on one
/// tick (`timer::next_tick`) and the server's loop sends a console what
/// they all said in one batch. The focused pane shows every live tick, the
/// three others every fourth: on one grid a streaming batch carries 1.75
/// panes on average (a little less with the turns' other events); read
/// each on its own clock (before), about one.
#[test]
fn panes_streaming_at_once_reach_a_console_in_shared_batches() {
    let Some(bin) = super::hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let answer: String = (0..800)
        .map(|i| format!("line {i:03} of four answers streaming at once\n"))
        .chain(["END-OF-ANSWER".to_owned()])
        .collect();
    let text = dir.path().join("answer.txt");
    std::fs::write(&text, &answer).unwrap();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_claude.py");
    let panes: String = (1..=4)
        .map(|i| {
            format!(
                "[[agent]]\nid = \"c{i}\"\nname = \"Stream{i}\"\nprovider = \"claude\"\n\
                 command = [\"python3\", \"{}\"]\n[agent.env]\n\
                 FAKE_CLAUDE_TEXT_FILE = \"{}\"\nFAKE_CLAUDE_CHUNK = \"27\"\n\n",
                fake.display(),
                text.display(),
            )
        })
        .collect();
    std::fs::write(dir.path().join("hive.toml"), panes).unwrap();
    let state = dir.path().join("hive_state_dir");
    let lab = Lab::running_in(&bin, "", dir);
    lab.wait("a", "the panes", |s| s.contains("Stream4"));
    for i in 1..=4 {
        lab.hive(&["ctl", "send", &format!("c{i}"), "go"]);
    }
    lab.wait("a", "every answer's end", |s| {
        s.matches("END-OF-ANSWER").count() == 4
    });
    lab.keys("a", &["C-b", "d"]);
    lab.wait("a", "the console detached", |s| s.contains("HIVE-EXIT=0"));
    lab.hive(&["kill"]);
    let (batches, events, pane_batches) = sent_to_detached(&state);
    let per_batch = pane_batches as f64 / batches as f64;
    eprintln!("{batches} batches, {events} events, {per_batch:.2} panes a batch");
    assert!(
        per_batch >= 1.3,
        "{batches} batches of {events} events carried {per_batch:.2} panes each"
    );
}

/// The parent of `pid` (for the server: its supervisor).
fn parent_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest = &stat[stat.rfind(')').expect("comm") + 1..];
    rest.split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("ppid")
}

/// Issue 45 item 1: once a Claude pane's turn has ended (its agent still
/// running, its process sampled during the turn, its history recorded),
/// nothing wakes the server, its supervisor or the console for ten idle
/// seconds: no poll, no sampler, no checkpoint, no status timer.
#[test]
fn after_a_claude_turn_ten_idle_seconds_wake_nothing() {
    let Some(bin) = super::hive_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_claude.py");
    std::fs::write(dir.path().join("answer.txt"), "an answer\n\nEND-OF-ANSWER").unwrap();
    std::fs::write(
        dir.path().join("hive.toml"),
        format!(
            "[[agent]]\nid = \"cc\"\nname = \"Quiet\"\nprovider = \"claude\"\n\
             command = [\"python3\", \"{}\"]\n[agent.env]\nFAKE_CLAUDE_TEXT_FILE = \"{}\"\n",
            fake.display(),
            dir.path().join("answer.txt").display(),
        ),
    )
    .unwrap();
    let lab = Lab::running_in(&bin, "", dir);
    lab.wait("a", "the pane", |s| s.contains("Message Quiet"));
    lab.hive(&["ctl", "send", "cc", "go"]);
    lab.wait("a", "the answer and the turn's end", |s| {
        s.contains("END-OF-ANSWER") && super::status_line(s).contains("idle")
    });
    let ls = lab.hive(&["ls"]);
    let server: i32 = ls
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no server in:\n{ls}"));
    let supervisor = parent_of(server);
    let console = lab.console_pid("a");
    // The turn's last events settle (the sampler's last figures, the
    // recorder's last write, a notice leaving the status line).
    std::thread::sleep(Duration::from_secs(6));
    let (mut console_woke, mut supervisor_woke) = (0, 0);
    let server_woke = wakeups_during(server, || {
        supervisor_woke = wakeups_during(supervisor, || {
            console_woke = wakeups_during(console, || std::thread::sleep(Duration::from_secs(10)));
        });
    });
    lab.hive(&["kill"]);
    assert_eq!(
        (server_woke, supervisor_woke, console_woke),
        (0, 0, 0),
        "(server, supervisor, console) woke in 10 idle seconds"
    );
}

/// `hive attach --read-only` (issue 47), for sharing a live pane without
/// control: beside the user's console, it shows the demo's answer as it
/// streams and says it is read-only; what is typed in it reaches nothing;
/// its `y` on an approval card is refused, and so is an answer sent by a
/// client that skips the console's own check (the server's rule); leaving
/// it only detaches, and the user's console answers the card.
#[test]
fn a_read_only_console_looks_and_changes_nothing() {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.wait("a", "the user's console", |s| {
        s.contains("Message Architect")
    });
    // Wide enough for the status bar's refusals beside a card's count.
    lab.attach_with("v", "--read-only", 140);
    lab.wait("v", "the read-only console", |s| {
        s.contains("Message Architect") && super::status_line(s).contains("READ-ONLY")
    });
    // The stream, as it streams.
    lab.type_text("a", "slow");
    lab.keys("a", &["Enter"]);
    lab.wait("v", "the answer streaming in the viewer", |s| {
        s.contains("Streaming slowly") && !s.contains(END)
    });
    lab.wait("v", "the whole answer in the viewer", |s| s.contains(END));
    lab.wait("a", "the turn's end", |s| {
        super::status_line(s).contains("idle")
    });
    // Its keys send nothing.
    lab.type_text("v", "typed by the viewer");
    lab.keys("v", &["Enter"]);
    let s = lab.wait("v", "the refusal", |s| {
        s.contains("read-only: may not send")
    });
    assert!(
        !s.contains("typed by the viewer"),
        "typed into the composer:\n{s}"
    );
    std::thread::sleep(Duration::from_millis(500));
    let s = lab.screen("a");
    assert!(!s.contains("typed by the viewer"), "reached the pane:\n{s}");
    // An approval: the viewer's `y` is refused and the card stays.
    lab.type_text("a", "approve it");
    lab.keys("a", &["Enter"]);
    lab.wait("v", "the card in the viewer", |s| {
        s.contains("approval needed")
    });
    lab.keys("v", &["y"]);
    lab.wait("v", "the refused answer", |s| {
        s.contains("read-only: may not answer an approval") && s.contains("approval needed")
    });
    let queue: serde_json::Value =
        serde_json::from_str(&lab.hive(&["ctl", "approvals", "--json"])).expect("json");
    let cards = queue["approvals"].as_array().cloned().unwrap_or_default();
    assert_eq!(cards.len(), 1, "the card still waits: {queue}");
    // A client that says it only looks and answers anyway: the server
    // refuses it, and says so.
    let id = cards[0]["request_id"].as_str().expect("a request id");
    let socket = lab.t.dir().join("hive_state_dir/run/default.sock");
    let said = answer_as_viewer(&socket, id);
    assert_eq!(said, "read-only: may not answer an approval");
    let queue = lab.hive(&["ctl", "approvals", "--json"]);
    assert!(
        queue.contains(id),
        "the server took the viewer's answer: {queue}"
    );
    // Leaving the viewer detaches (no leave dialog, nothing stopped).
    lab.keys("v", &["C-q"]);
    let s = lab.wait("v", "the viewer's exit", |s| s.contains("HIVE-EXIT=0"));
    assert!(
        s.contains("hive attach --read-only") && s.contains("detached"),
        "{s}"
    );
    // The user's console, beside it all along, answers.
    lab.keys("a", &["y"]);
    lab.wait("a", "the demo going on", |s| {
        s.contains("Done: the command ran")
    });
    let said = lab.hive(&["kill"]);
    assert!(said.contains("stopped default"), "{said}");
}

/// Speaks the console protocol on `socket` as a read-only console that
/// answers approval `id` (allow once) without the console's own check;
/// the server's notice back.
fn answer_as_viewer(socket: &Path, id: &str) -> String {
    use std::io::{Read, Write};

    use hive::wire::agent::PermissionDecision;
    use hive::wire::frame::{decode, encode, encode_hello};
    use hive::wire::pane::{Decider, RunnerCommand};
    use hive::wire::{ClientMsg, Hello, MAGIC, ServerMsg};
    let mut sock = std::os::unix::net::UnixStream::connect(socket).expect("the server's socket");
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let answer = ClientMsg::Command {
        pane: 0,
        cmd: RunnerCommand::Permission {
            request_id: id.to_owned(),
            decision: PermissionDecision::AllowOnce,
            by: Decider::Console,
        },
    };
    let mut out = MAGIC.to_vec();
    out.extend(encode_hello(&Hello::ours()));
    for msg in [ClientMsg::ReadOnly, ClientMsg::Attach, answer] {
        out.extend(encode(&msg).unwrap());
    }
    sock.write_all(&out).unwrap();
    let mut first = true;
    loop {
        let mut len = [0u8; 4];
        sock.read_exact(&mut len).expect("a frame from the server");
        let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
        sock.read_exact(&mut payload).unwrap();
        // The hello, in JSON.
        if std::mem::take(&mut first) {
            continue;
        }
        if let Ok(ServerMsg::Notice { text, .. }) = decode::<ServerMsg>(&payload) {
            let _ = sock.write_all(&encode(&ClientMsg::Detach).unwrap());
            return text;
        }
    }
}
