//! The inbox per console, kept by the server (#46 item 8), driven as a user
//! would in tmux with the built-in demo: each terminal runs its console from
//! a shell, and Enter after the console ends starts it again there (the
//! same terminal, the same console). What one console saw is not seen for
//! another; an entry dismissed with `d` and a terminal pane's idle entry
//! outlive a detach and a `kill -9` of the console.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::support::tmux::Tmux;

/// The slow demo answer's last words: the turn ran to its end.
const END: &str = "deliberately paced answer.";

struct Lab {
    t: Tmux,
    bin: PathBuf,
    vars: Vec<String>,
}

/// A shell that runs `cmd`, then again after each Enter (the terminal made
/// sane first, as an interactive shell would after a killed program).
fn again_and_again(cmd: &str) -> String {
    format!("while :; do {cmd} ; r=$? ; stty sane ; echo HIVE-EXIT=$r ; read x ; done")
}

impl Lab {
    /// Terminal `a` running `hive` from a shell.
    fn start(bin: &Path) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let vars = super::private_env(dir.path());
        let script = again_and_again(&quote(bin));
        let t = Tmux::start("a", dir, (140, 40), &vars, &["sh", "-c", &script]);
        Self {
            t,
            bin: bin.to_owned(),
            vars,
        }
    }

    /// Another terminal (session `name`) running `hive attach` from a shell.
    fn terminal(&self, name: &str) {
        let script = again_and_again(&format!("{} attach", quote(&self.bin)));
        let mut args = vec!["new-session", "-d", "-s", name, "-x", "140", "-y", "40"];
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

    /// `what` never shows in `target` for `long`.
    fn never(&self, target: &str, what: &str, long: Duration) {
        let start = Instant::now();
        while start.elapsed() < long {
            let s = self.screen(target);
            assert!(!s.contains(what), "{what:?} in {target}:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The console in terminal `target` ends (a detach, or `kill -9`) and
    /// starts again in the same shell.
    fn come_back(&self, target: &str, kill: bool) {
        // The shell's console output is cleared, so the exit line is new.
        self.t.cmd(&["clear-history", "-t", target]);
        if kill {
            let console = self.console_pid(target);
            // SAFETY: kill(2) on the console this test started.
            assert_eq!(unsafe { libc::kill(console, libc::SIGKILL) }, 0);
            self.wait(target, "the shell after the console", |s| {
                s.contains("HIVE-EXIT=137")
            });
        } else {
            self.keys(target, &["C-b", "d"]);
            self.wait(target, "the console detached", |s| {
                s.contains("HIVE-EXIT=0")
            });
        }
        // A killed console leaves its screen behind; as a user's `reset`.
        self.keys(target, &["-R"]);
        self.t.cmd(&["clear-history", "-t", target]);
        self.keys(target, &["Enter"]);
        self.wait(target, "the console again", |s| {
            s.contains("Architect (demo)") && !s.contains("HIVE-EXIT")
        });
    }

    /// `hive SUBCOMMAND…` in the test's environment.
    fn hive(&self, args: &[&str]) {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args).current_dir(self.t.dir());
        for v in &self.vars {
            let (k, val) = v.split_once('=').expect("NAME=value");
            cmd.env(k, val);
        }
        let _ = cmd.output().expect("run hive");
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

    /// The slow demo answer starts in pane 1 of console `target`.
    fn slow_answer(&self, target: &str) {
        self.wait(target, "the demo panes", |s| {
            s.contains("Message Architect")
        });
        self.type_text(target, "slow");
        self.keys(target, &["Enter"]);
        self.wait(target, "the answer streaming", |s| {
            s.contains("Streaming slowly")
        });
    }
}

fn quote(p: &Path) -> String {
    shlex::try_quote(&p.display().to_string())
        .expect("quotable path")
        .into_owned()
}

/// Console `a` watches the slow answer end in pane 1; console `b`, in
/// another terminal, looks at pane 2 meanwhile and has it waiting. `b`
/// goes (`kill`: by `kill -9`) and comes back in its terminal: it still has
/// the entry, which console `a` saw (before, a pane looked at in any
/// console was seen for all: nothing waited).
fn unread_stays_with_its_console(kill: bool) {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.slow_answer("a");
    lab.terminal("b");
    lab.wait("b", "the second console", |s| {
        s.contains("Architect (demo)")
    });
    lab.keys("b", &["M-2"]);
    lab.wait("b", "b on the reviewer", |s| {
        super::status_line(s).contains("Reviewer")
    });
    lab.wait("a", "the answer's end in a", |s| s.contains(END));
    lab.wait("b", "the entry in b", |s| s.contains("1 waiting"));
    assert!(!lab.screen("a").contains("waiting"), "a looked at it");
    lab.come_back("b", kill);
    let s = lab.wait("b", "b's entry, kept", |s| s.contains("1 waiting"));
    assert!(s.contains('●'), "no mark on the pane:\n{s}");
    lab.hive(&["kill"]);
}

#[test]
fn a_console_back_from_a_detach_has_its_own_unread() {
    unread_stays_with_its_console(false);
}

#[test]
fn a_console_back_from_a_kill_9_has_its_own_unread() {
    unread_stays_with_its_console(true);
}

/// Console `a` sees the slow answer end, then looks elsewhere; a console
/// in a new terminal has not seen it: it waits there (before, it was seen
/// for every console), and not in `a`, even after `a` comes back.
#[test]
fn a_new_console_has_not_seen_what_another_saw() {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.slow_answer("a");
    lab.wait("a", "the answer's end", |s| s.contains(END));
    lab.keys("a", &["M-2"]);
    lab.wait("a", "a on the reviewer", |s| {
        super::status_line(s).contains("Reviewer")
    });
    lab.terminal("b");
    let s = lab.wait("b", "the entry in the new console", |s| {
        s.contains("1 waiting")
    });
    assert!(s.contains('●'), "no mark on the pane:\n{s}");
    lab.come_back("a", false);
    lab.never("a", "waiting", Duration::from_secs(2));
    lab.hive(&["kill"]);
}

/// An entry dismissed with `d` stays dismissed when its console comes
/// back (`kill`: after a `kill -9`) — before, the attach brought it back —
/// and is this console's: another one still has it.
fn a_dismissal_outlives(kill: bool) {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.slow_answer("a");
    lab.keys("a", &["M-2"]);
    lab.wait("a", "the finished turn waiting", |s| {
        s.contains("1 waiting")
    });
    lab.keys("a", &["M-i"]);
    lab.wait("a", "the inbox", |s| s.contains("turn finished"));
    lab.keys("a", &["d"]);
    lab.wait("a", "the entry dismissed", |s| !s.contains("waiting"));
    lab.come_back("a", kill);
    lab.never("a", "waiting", Duration::from_secs(2));
    lab.terminal("b");
    lab.wait("b", "the entry in another console", |s| {
        s.contains("1 waiting")
    });
    lab.hive(&["kill"]);
}

#[test]
fn a_dismissal_outlives_a_detach() {
    a_dismissal_outlives(false);
}

#[test]
fn a_dismissal_outlives_a_kill_9_of_the_console() {
    a_dismissal_outlives(true);
}

/// A command typed in the shell pane prints after the user looked away,
/// then goes quiet: the idle entry waits, and is still there when the
/// console comes back (before, the console found it alone and lost it).
#[test]
fn an_idle_terminal_entry_outlives_a_detach() {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.wait("a", "the demo panes", |s| s.contains("Message Architect"));
    lab.keys("a", &["M-3"]);
    lab.wait("a", "the shell", |s| {
        super::status_line(s).contains("Shell")
    });
    lab.type_text("a", "sleep 1; echo done-$((40+2))");
    lab.keys("a", &["Enter"]);
    lab.keys("a", &["M-1"]);
    lab.wait("a", "the idle entry", |s| s.contains("1 waiting"));
    lab.keys("a", &["M-i"]);
    lab.wait("a", "the idle entry's line", |s| {
        s.contains("idle after output")
    });
    lab.keys("a", &["Escape"]);
    lab.come_back("a", false);
    lab.wait("a", "the idle entry, kept", |s| s.contains("1 waiting"));
    lab.hive(&["kill"]);
}

/// A dismissal counts up to the last event its console had (#46): a
/// console (played here on the wire, so the timing is the test's) has the
/// first finished turn, dismisses its entry while the second turn's end,
/// of the same words, is still on its way to it; when it comes back the
/// second turn's entry waits. Before, the server counted the dismissal up
/// to its own latest event, and the entry the console never saw was
/// dismissed with the old one.
#[test]
fn a_dismissal_does_not_take_an_entry_still_on_its_way() {
    let Some(bin) = super::hive_bin() else { return };
    let lab = Lab::start(&bin);
    lab.wait("a", "the demo panes", |s| s.contains("Message Architect"));
    // Console `a` looks at the reviewer: the console coming back does too.
    lab.keys("a", &["M-2"]);
    lab.wait("a", "the reviewer focused", |s| {
        super::status_line(s).contains("Reviewer (demo)")
    });
    let socket = lab.t.dir().join("hive_state_dir/run/default.sock");
    let mut wire = Wire::attach(&socket, "race-console");
    lab.turn("first turn");
    let heard = wire.drain();
    assert!(heard > 0, "no events heard");
    // The second turn ends; this console reads none of it yet.
    lab.turn("second turn");
    wire.dismiss_finished(0, heard);
    drop(wire);
    std::thread::sleep(Duration::from_millis(500));
    // The same console comes back in a terminal.
    let script = format!("{} attach ; sleep 600", quote(&lab.bin));
    let mut args = vec!["new-session", "-d", "-s", "r", "-x", "140", "-y", "40"];
    for v in &lab.vars {
        args.extend(["-e", v.as_str()]);
    }
    args.extend(["-e", "HIVE_CONSOLE=race-console", "sh", "-c", &script]);
    lab.t.cmd(&args);
    lab.wait("r", "the second turn's entry", |s| s.contains("1 waiting"));
    lab.keys("r", &["M-i"]);
    lab.wait("r", "the entry in the inbox", |s| {
        s.contains("turn finished")
    });
    lab.hive(&["kill"]);
}

impl Lab {
    /// A turn of the demo pane from `hive ctl`, to its end.
    fn turn(&self, text: &str) {
        let run = |args: &[&str]| {
            let mut cmd = Command::new(&self.bin);
            cmd.args(args).current_dir(self.t.dir());
            for v in &self.vars {
                let (k, val) = v.split_once('=').expect("NAME=value");
                cmd.env(k, val);
            }
            let out = cmd.output().expect("run hive");
            assert!(out.status.success(), "hive {args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        let turn = run(&["ctl", "send", "demo", text]);
        run(&["ctl", "wait", &turn]);
    }
}

/// A console spoken on the wire: it says who it is, attaches, and reads
/// only when told.
struct Wire {
    sock: std::os::unix::net::UnixStream,
}

impl Wire {
    fn attach(socket: &Path, who: &str) -> Self {
        use std::io::Write;

        use hive::wire::frame::{encode, encode_hello};
        use hive::wire::{ClientMsg, Hello, MAGIC};
        let mut sock = std::os::unix::net::UnixStream::connect(socket).expect("the socket");
        let mut out = MAGIC.to_vec();
        out.extend(encode_hello(&Hello::ours()));
        for msg in [ClientMsg::Identify(who.into()), ClientMsg::Attach] {
            out.extend(encode(&msg).unwrap());
        }
        sock.write_all(&out).unwrap();
        let mut wire = Self { sock };
        // The hello, then the snapshot.
        wire.frame().expect("the server's hello");
        wire
    }

    /// The next frame's payload, if one comes within the read timeout.
    fn frame(&mut self) -> Option<Vec<u8>> {
        use std::io::Read;
        self.sock
            .set_read_timeout(Some(Duration::from_millis(700)))
            .unwrap();
        let mut len = [0u8; 4];
        self.sock.read_exact(&mut len).ok()?;
        let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
        self.sock.read_exact(&mut payload).ok()?;
        Some(payload)
    }

    /// Reads until the server is quiet: the last event it says was sent.
    fn drain(&mut self) -> u64 {
        use hive::wire::ServerMsg;
        let mut heard = 0;
        while let Some(payload) = self.frame() {
            match hive::wire::frame::decode::<ServerMsg>(&payload) {
                Ok(ServerMsg::Events(_, Some(seq))) => heard = heard.max(seq),
                Ok(ServerMsg::SnapshotEvents(events)) => {
                    heard = events.iter().map(|l| l.seq).fold(heard, u64::max);
                }
                Ok(ServerMsg::SnapshotPane(pane)) => {
                    heard = pane.events.iter().map(|l| l.seq).fold(heard, u64::max);
                }
                _ => {}
            }
        }
        heard
    }

    /// Dismisses pane `pane`'s finished-turn entry, up to event `up_to`.
    fn dismiss_finished(&mut self, pane: usize, up_to: u64) {
        use std::io::Write;

        use hive::wire::ClientMsg;
        use hive::wire::frame::encode;
        use hive::wire::mutes::ReasonKind;
        let msg = ClientMsg::Dismiss {
            pane,
            kind: ReasonKind::Finished,
            what: "turn finished".into(),
            up_to,
        };
        self.sock.write_all(&encode(&msg).unwrap()).unwrap();
        self.sock
            .write_all(&encode(&ClientMsg::Detach).unwrap())
            .unwrap();
    }
}
