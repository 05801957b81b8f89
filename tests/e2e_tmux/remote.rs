//! One console over other machines (issue 30), for real: a real sshd on
//! 127.0.0.1 (tests/support/sshd.rs) whose sessions get a "remote" HOME and
//! hive dirs of their own, the real binary in tmux attaching with
//! `hive attach ssh://…`, and the link broken by killing ssh's master
//! connection mid-answer.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::git::{git, init_repo};
use super::support::sshd::Sshd;
use super::support::tmux::Tmux;

/// The slow demo answer's last words, then its turn's footer: the turn ran
/// to its end.
const END: [&str; 2] = ["deliberately paced", "── demo-architect-1 ·"];

/// An sshd, a project dir on the "remote", and a console in tmux.
struct Remote {
    sshd: Sshd,
    t: Tmux,
    /// The local side's runtime dir (its master connections).
    control: PathBuf,
    project: PathBuf,
}

impl Remote {
    /// Starts sshd (None: skipped), writes `config` (if any) as the
    /// project's hive.toml, and runs `hive attach ARGS ssh://…` in tmux.
    fn start(
        bin: &Path,
        args: &str,
        seed: bool,
        config: Option<&str>,
        max: Option<u32>,
    ) -> Option<Self> {
        let dir = tempfile::tempdir().expect("tempdir");
        let sshd = Sshd::start(dir.path(), max)?;
        if seed {
            sshd.seed_binary(bin);
        }
        let project = sshd.remote_home.join("proj");
        std::fs::create_dir_all(&project).unwrap();
        if let Some(c) = config {
            std::fs::write(project.join("hive.toml"), c).unwrap();
        }
        let local = dir.path().join("local");
        std::fs::create_dir_all(&local).unwrap();
        let mut vars = super::private_env(&local);
        vars.push(format!("HIVE_SSH={}", sshd.ssh_command()));
        let control = local.join("hive_state_dir/run/ssh");
        sshd.masters_in(control.clone());
        let script = format!(
            "{} attach {args} {} ; echo HIVE-EXIT=$? ; sleep 600",
            quote(bin),
            sshd.url(&project)
        );
        let t = Tmux::start("r", dir, (200, 50), &vars, &["sh", "-c", &script]);
        Some(Self {
            sshd,
            t,
            control,
            project,
        })
    }

    /// The pid of ssh's master connection to the sshd.
    fn master_pid(&self) -> Option<i32> {
        super::support::sshd::master_pid(&self.control)
    }

    /// Established TCP connections to the sshd.
    fn connections(&self) -> usize {
        let port = format!(":{:04X}", self.sshd.port);
        std::fs::read_to_string("/proc/net/tcp")
            .unwrap_or_default()
            .lines()
            .skip(1)
            .filter(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && f[1].ends_with(&port) && f[3] == "01"
            })
            .count()
    }

    /// The remote server's pid, from its pid file.
    fn remote_server(&self) -> Option<i32> {
        let run = self.sshd.remote_home.join("state/run");
        std::fs::read_dir(run)
            .ok()?
            .flatten()
            .find(|e| e.path().extension().is_some_and(|x| x == "pid"))
            .and_then(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
    }
}

fn quote(p: &Path) -> String {
    shlex::try_quote(&p.display().to_string())
        .expect("quotable path")
        .into_owned()
}

fn bin() -> Option<PathBuf> {
    super::hive_bin()
}

#[test]
fn a_slow_answer_survives_a_killed_link_and_the_console_catches_up() {
    let Some(bin) = bin() else { return };
    let Some(r) = Remote::start(&bin, "", true, None, None) else {
        return;
    };
    r.t.wait("the remote demo panes", |s| {
        s.contains("Architect (demo)@127.0.0.1") && s.contains("Message Architect (demo)@127.0.0.1")
    });
    r.t.type_text("slow");
    r.t.keys(&["Enter"]);
    r.t.wait_for("Streaming slowly");
    let master = r.master_pid().expect("a master connection");
    // SAFETY: kill(2) on ssh's master, which this test's console started.
    unsafe { libc::kill(master, libc::SIGKILL) };
    // The turn went on at the far side; the console reconnects and shows
    // all of it.
    let s = r.t.wait("the whole answer after the reconnect", |s| {
        END.iter().all(|e| s.contains(e)) && !s.contains("link lost")
    });
    assert!(s.contains("› slow"), "{s}");
    assert_ne!(r.master_pid(), Some(master), "a new master connection");
    // Detach: the remote server and its agents keep running.
    let server = r.remote_server().expect("the remote server's pid file");
    r.t.keys(&["C-b", "d"]);
    let s = r.t.wait_for("HIVE-EXIT=");
    assert!(s.contains("HIVE-EXIT=0"), "{s}");
    // The hint names the host as `hive attach` took it (issue 46 item
    // 13), not by its bare name, which names no server.
    let again = format!("`hive attach {}` comes back", r.sshd.url(&r.project));
    assert!(unwrapped(&s).contains(&again), "{s}");
    assert!(
        super::support::procs::alive(server),
        "the remote server lives on"
    );
}

#[test]
fn a_missing_hive_is_copied_to_the_host_after_asking() {
    let Some(bin) = bin() else { return };
    let Some(r) = Remote::start(&bin, "", false, None, None) else {
        return;
    };
    r.t.wait_for("no hive on its PATH. Copy this hive there");
    r.t.type_text("y");
    r.t.keys(&["Enter"]);
    r.t.wait_for("Architect (demo)@127.0.0.1");
    // The copy is this binary, byte for byte, under its hash's name.
    let cache = r.sshd.remote_home.join("cache/hive/bin");
    let copies: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    let sum = |p: &Path| {
        let out = Command::new("sha256sum").arg(p).output().unwrap();
        String::from_utf8_lossy(&out.stdout)[..64].to_owned()
    };
    let ours = sum(&bin);
    assert_eq!(sum(&copies[0]), ours);
    let name = copies[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(name, format!("hive-{}", &ours[..16]));
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&copies[0]).unwrap().permissions(),
    );
    assert_eq!(mode & 0o077, 0, "only its owner may touch it: {mode:o}");
    r.t.keys(&["C-b", "d"]);
    r.t.wait_for("HIVE-EXIT=0");
}

#[test]
fn without_a_copy_the_console_says_what_the_host_lacks() {
    let Some(bin) = bin() else { return };
    let Some(r) = Remote::start(&bin, "--no-install", false, None, None) else {
        return;
    };
    let s = r.t.wait_for("HIVE-EXIT=");
    assert!(s.contains("HIVE-EXIT=1"), "{s}");
    assert!(s.contains("has no hive on its PATH; not copied"), "{s}");
    assert!(!r.project.join("hive.toml").exists());
}

#[test]
fn twelve_panes_on_one_host_cost_one_connection_under_max_sessions_of_ten() {
    let Some(bin) = bin() else { return };
    let config: String = (1..=12)
        .map(|i| {
            format!(
                "[[agent]]\nid = \"p{i:02}\"\nname = \"P{i:02}\"\nprovider = \"script\"\nscript = \"demo:reviewer\"\n\n"
            )
        })
        .collect();
    let Some(r) = Remote::start(&bin, "", true, Some(&config), Some(10)) else {
        return;
    };
    // Nine to a window: the first nine, and a tab for the other three.
    let s = r.t.wait("the first window's nine panes", |s| {
        (1..=9).all(|i| s.contains(&format!("P{i:02}@127.0.0.1"))) && s.contains(" 2 P10@")
    });
    assert!(!s.contains("link lost"), "{s}");
    // Every pane streams over the one session: the twelfth answers (the
    // last window, then the pane left of its first).
    r.t.keys(&["C-b", "p"]);
    r.t.wait("the second window", |s| {
        (10..=12).all(|i| s.contains(&format!("P{i:02}@127.0.0.1")))
            && !s.contains("P05@127.0.0.1 ·")
    });
    r.t.keys(&["M-Left"]);
    r.t.wait("the twelfth pane's focus", |s| {
        s.lines()
            .last()
            .is_some_and(|l| l.contains("P12@127.0.0.1"))
    });
    r.t.type_text("please review");
    r.t.keys(&["Enter"]);
    r.t.wait_for("Review of your change");
    assert_eq!(r.connections(), 1, "one TCP connection to sshd");
    // A second console on the same host shares the master connection.
    let script = format!(
        "{} attach {} ; echo HIVE-EXIT=$? ; sleep 600",
        quote(&bin),
        r.sshd.url(&r.project)
    );
    let mut args = vec!["new-session", "-d", "-s", "two", "-x", "200", "-y", "50"];
    let vars = super::private_env(&r.t.dir().join("local"));
    let ssh = format!("HIVE_SSH={}", r.sshd.ssh_command());
    for v in vars.iter().chain([&ssh]) {
        args.extend(["-e", v.as_str()]);
    }
    args.extend(["sh", "-c", &script]);
    r.t.cmd(&args);
    let two = || r.t.cmd(&["capture-pane", "-p", "-t", "two"]);
    let start = std::time::Instant::now();
    // It opens where the last console looked: the twelfth pane's window.
    while !two().contains("P12@127.0.0.1") {
        assert!(start.elapsed().as_secs() < 40, "second console:\n{}", two());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(r.connections(), 1, "still one TCP connection to sshd");
    r.t.keys(&["C-b", "d"]);
    r.t.wait_for("HIVE-EXIT=0");
}

#[test]
fn a_local_and_a_remote_server_share_one_grid_and_an_agent_messages_across() {
    use std::io::{BufRead, BufReader, Write};
    let Some(bin) = bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(sshd) = Sshd::start(dir.path(), None) else {
        return;
    };
    sshd.seed_binary(&bin);
    let project = sshd.remote_home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("hive.toml"),
        "[[agent]]\nid = \"far\"\nname = \"Far\"\nprovider = \"script\"\nscript = \"demo:reviewer\"\n",
    )
    .unwrap();
    let local = dir.path().join("local");
    let (t, vars) = local_console(
        &bin,
        (&sshd, &project),
        &local,
        "can_message = [\"box:far\"]\n\n[[host]]\nname = \"dead\"\nssh = \"127.0.0.1:1\"\n",
        "g",
    );
    let s = t.wait("both servers' panes and the unreachable host", |s| {
        s.contains("Near") && s.contains("Far@box") && s.contains("not connected")
    });
    assert!(s.contains("dead"), "{s}");
    // An agent of the local server messages one on the remote, as `hive
    // mcp` would for it: through the local server's socket.
    let socket = std::fs::read_dir(local.join("hive_state_dir/run"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .expect("the local server's socket");
    let op = |agent: &str, args: &str| -> serde_json::Value {
        let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        writeln!(
            stream,
            "{{\"id\":1,\"method\":\"op\",\"agent\":\"{agent}\",\"op\":\"agent.send\",\"args\":{args}}}"
        )
        .unwrap();
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let sent = op(
        "near",
        r#"{"agent":"box:far","text":"please review the change"}"#,
    );
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    let id = sent["result"]["result"]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.starts_with("box:m"), "{id}");
    t.wait("the remote agent's answer to the message", |s| {
        s.contains("message via hive") && s.contains("Review of your change")
    });
    // can_message holds across machines: `box:other` is not listed.
    let refused = op("near", r#"{"agent":"box:other","text":"hi"}"#);
    assert_eq!(refused["result"]["ok"], false, "{refused}");
    assert_eq!(
        refused["result"]["error"]["code"], "not_allowed",
        "{refused}"
    );
    // `hive ctl` spans the hosts: `list` shows the remote's panes by
    // `host:pane`, and a turn sent to one is waited for by its `host:` id.
    let ctl = |args: &[&str]| {
        let mut cmd = Command::new(&bin);
        cmd.arg("ctl").args(args).current_dir(&local);
        for v in &vars {
            let (k, val) = v.split_once('=').unwrap();
            cmd.env(k, val);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, list, err) = ctl(&["list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(list.contains("near") && list.contains("box:far"), "{list}");
    assert!(err.contains("dead"), "the unreachable host is named: {err}");
    let (code, turn, err) = ctl(&["send", "box:far", "one more review"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(turn.trim().starts_with("box:"), "{turn}");
    let (code, answer, err) = ctl(&["wait", turn.trim()]);
    assert_eq!(code, Some(0), "{err}");
    // The reviewer's scripted second answer.
    assert!(answer.contains("Ship it"), "{answer}");
    // A pane made on the host joins the grid, titled as its server's others
    // are, and the panes already there stay as they were (issue 44: the
    // host's layout moves the console's panes by id, mux_layout.rs).
    let (code, _, err) = ctl(&["new", "box:extra", "--template", "far", "--name", "Extra"]);
    assert_eq!(code, Some(0), "{err}");
    t.wait("the host's new pane in the grid", |s| {
        s.contains("Extra@box") && s.contains("Far@box") && s.contains("Near")
    });
    // The link to one host breaks: its panes come back, the local one
    // never left, and the grid is laid out as before.
    let master = super::support::sshd::master_pid(&local.join("hive_state_dir/run/ssh"))
        .expect("a master connection");
    // SAFETY: kill(2) on the ssh master this test's console started.
    unsafe { libc::kill(master, libc::SIGKILL) };
    let s = t.wait("box reconnected in the same grid", |s| {
        s.contains("box: reconnected") && s.contains("Far@box") && s.contains("Near")
    });
    assert!(s.contains("dead"), "{s}");
    t.keys(&["C-b", "d"]);
    let s = t.wait_for("HIVE-EXIT=0");
    // `hive` in the project comes back to all three (issue 46 item 13):
    // `hive attach g + box + dead` names nothing that exists.
    let again = format!(
        "`hive` in `{}` comes back",
        local.canonicalize().unwrap().display()
    );
    assert!(unwrapped(&s).contains(&again), "{s}");
}

/// #46 item 8: in a console with a `[[host]]`, a local pane's finished
/// turn waits in the inbox across the remote link's reconnect (the merged
/// fresh snapshots dropped every entry, local panes' too).
#[test]
fn the_inbox_outlives_a_reconnect_in_a_console_of_two_servers() {
    let Some(bin) = bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(sshd) = Sshd::start(dir.path(), None) else {
        return;
    };
    sshd.seed_binary(&bin);
    let project = sshd.remote_home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("hive.toml"),
        "[[agent]]\nid = \"far\"\nname = \"Far\"\nprovider = \"script\"\nscript = \"demo:reviewer\"\n",
    )
    .unwrap();
    let local = dir.path().join("local");
    let (t, vars) = local_console(&bin, (&sshd, &project), &local, "", "i");
    t.wait("both servers' panes", |s| {
        s.contains("Near") && s.contains("Far@box")
    });
    // Looking at the remote pane, the local one finishes a turn.
    t.keys(&["M-Right"]);
    t.wait("the remote pane focused", |s| {
        super::status_line(s).contains("Far")
    });
    let mut send = Command::new(&bin);
    send.args(["ctl", "send", "near", "a review please"])
        .current_dir(&local);
    for v in &vars {
        let (k, val) = v.split_once('=').unwrap();
        send.env(k, val);
    }
    let out = send.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.wait("the finished turn in the inbox", |s| {
        s.contains("1 waiting")
    });
    let master = super::support::sshd::master_pid(&local.join("hive_state_dir/run/ssh"))
        .expect("a master connection");
    // SAFETY: kill(2) on the ssh master this test's console started.
    unsafe { libc::kill(master, libc::SIGKILL) };
    let s = t.wait("box reconnected", |s| s.contains("box: reconnected"));
    assert!(s.contains("1 waiting"), "the entry is gone:\n{s}");
    t.keys(&["C-b", "d"]);
    t.wait_for("HIVE-EXIT=0");
}

/// The screen's lines joined: a long message wraps at the pane's width.
fn unwrapped(screen: &str) -> String {
    screen.lines().map(str::trim_end).collect()
}

/// The console `bin` in `local`, in tmux session `session`, and the
/// environment it runs with. Its config: the host `box` (the sshd's user
/// at `project`) and one scripted pane `near`, whose table ends with
/// `more` (which may add hosts). `local`'s parent outlives both servers'
/// shutdowns (sshd's drop reads the remote pid files in it), so tmux gets
/// a directory of its own.
fn local_console(
    bin: &Path,
    (sshd, project): (&Sshd, &Path),
    local: &Path,
    more: &str,
    session: &'static str,
) -> (Tmux, Vec<String>) {
    std::fs::create_dir_all(local).unwrap();
    std::fs::write(
        local.join("hive.toml"),
        format!(
            "[[host]]\nname = \"box\"\nssh = \"{}@127.0.0.1:{}\"\npath = \"{}\"\n\n\
             [[agent]]\nid = \"near\"\nname = \"Near\"\nprovider = \"script\"\nscript = \"demo:reviewer\"\n{more}",
            super::support::sshd::user(),
            sshd.port,
            project.display()
        ),
    )
    .unwrap();
    let mut vars = super::private_env(local);
    vars.push(format!("HIVE_SSH={}", sshd.ssh_command()));
    sshd.masters_in(local.join("hive_state_dir/run/ssh"));
    let script = format!(
        "cd {} && {} ; echo HIVE-EXIT=$? ; sleep 600",
        quote(local),
        quote(bin)
    );
    let t = Tmux::start(
        session,
        tempfile::tempdir().expect("tempdir"),
        (200, 50),
        &vars,
        &["sh", "-c", &script],
    );
    (t, vars)
}

/// A git repository at `repo` with `config` as its committed hive.toml.
fn git_repo(repo: &Path, config: &str) {
    std::fs::create_dir_all(repo).unwrap();
    init_repo(repo);
    std::fs::write(repo.join("README.md"), "hello\n").unwrap();
    std::fs::write(repo.join("hive.toml"), config).unwrap();
    git(repo, &["add", "README.md", "hive.toml"]);
    git(repo, &["commit", "-q", "-m", "initial"]);
}

/// The last bullet of issue 30: a pane of a `[[host]]`, in a worktree of a
/// repository on that machine, shows its diff in the local console and
/// merges there. The host's panes come after a local one, so the console's
/// numbers are not the host's: the request and its answer are re-numbered
/// on the way (a wrong number would show the other pane's diff, or none).
#[test]
fn a_remote_panes_diff_shows_here_and_merges_on_its_host() {
    let Some(bin) = bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(sshd) = Sshd::start(dir.path(), None) else {
        return;
    };
    sshd.seed_binary(&bin);
    let project = sshd.remote_home.join("proj");
    git_repo(
        &project,
        "[[agent]]\nid = \"a\"\nprovider = \"pty\"\ncommand = [\"sh\"]\nworktree = true\n\n\
         [[agent]]\nid = \"b\"\nprovider = \"pty\"\ncommand = [\"sh\"]\nworktree = true\n",
    );
    let local = dir.path().join("local");
    let (t, _) = local_console(&bin, (&sshd, &project), &local, "", "w");
    t.wait("the local pane and the host's worktree panes", |s| {
        s.contains("Near") && s.contains("a@box ⎇ hive/a") && s.contains("b@box ⎇ hive/b")
    });
    t.wait("both remote shell prompts", |s| {
        ["┃# ", "│# ", "┃$ ", "│$ "]
            .iter()
            .map(|p| s.matches(p).count())
            .sum::<usize>()
            >= 2
    });
    // The third pane here is the host's second.
    t.keys(&["M-3"]);
    t.type_text("echo from-b > note.txt && echo WROTE-B");
    t.keys(&["Enter"]);
    t.wait_for("WROTE-B");
    let worktree_b = project.join(".hive/worktrees/b");
    assert!(worktree_b.join("note.txt").exists());
    assert!(!project.join("note.txt").exists());
    t.keys(&["C-b", "g"]);
    let s = t.wait("the remote pane's diff", |s| {
        s.contains("diff · b@box · hive/b · overall")
            && s.contains("A note.txt")
            && s.contains("+from-b")
    });
    assert!(!s.contains("not available"), "{s}");
    t.keys(&["m"]);
    t.wait_for("Merge hive/b into the main checkout");
    t.keys(&["y"]);
    t.wait_for("merged hive/b (1 commit) into the main checkout: note.txt");
    // Merged on the host, in its repository; nothing here.
    assert_eq!(
        std::fs::read_to_string(project.join("note.txt")).unwrap(),
        "from-b\n"
    );
    assert!(!local.join("note.txt").exists());
    // After the merge the view reloads: nothing left to bring home.
    t.wait("the reloaded, empty diff", |s| !s.contains("+from-b"));
    t.keys(&["Escape"]);
    t.wait("the panes again", |s| !s.contains("diff · b@box"));
    t.keys(&["C-b", "d"]);
    t.wait_for("HIVE-EXIT=0");
}

/// `/resume` in a remote pane lists the sessions of the host's history
/// (this machine's has none) and switches to one there: the old
/// conversation comes back from the host.
#[test]
fn resume_in_a_remote_pane_lists_and_reopens_the_hosts_sessions() {
    let Some(bin) = bin() else { return };
    let config = "[[agent]]\nid = \"far\"\nname = \"Far\"\nprovider = \"script\"\nscript = \"demo:reviewer\"\n";
    let Some(r) = Remote::start(&bin, "", true, Some(config), None) else {
        return;
    };
    r.t.wait_for("Message Far@127.0.0.1");
    r.t.type_text("please review the parser");
    r.t.keys(&["Enter"]);
    r.t.wait("the answer, and the turn over", |s| {
        s.contains("Review of your change")
            && s.contains("── demo-reviewer-1 ·")
            && s.contains("· idle")
    });
    r.t.type_text("/clear");
    r.t.keys(&["Enter"]);
    r.t.wait("an empty pane in a new session", |s| {
        s.contains("new session") && !s.contains("Review of your change")
    });
    r.t.type_text("/resume");
    r.t.keys(&["Enter"]);
    r.t.wait("the host's session in the picker", |s| {
        s.contains("resume a session") && s.contains("please review the parser")
    });
    r.t.keys(&["Enter"]);
    r.t.wait("the old conversation, from the host", |s| {
        s.contains("Review of your change") && !s.contains("resume a session")
    });
    r.t.keys(&["C-b", "d"]);
    r.t.wait_for("HIVE-EXIT=0");
}

/// One frame as the wire carries it: a 4-byte big-endian length, then it.
fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(payload);
    out
}

/// What a hostile remote hive sends, per run: `<run>.1`, then (after a
/// pause, so the console is up) `<run>.2`.
fn hostile_frames(dir: &Path) {
    use hive::wire::frame::{encode, encode_hello};
    use hive::wire::snapshot::{PaneSnapshot, ServerInfo, Snapshot};
    use hive::wire::{Hello, ServerMsg};
    let bye = |reason: &str| {
        encode(&ServerMsg::Bye {
            reason: reason.into(),
        })
        .unwrap()
    };
    let ours = encode_hello(&Hello::ours());
    // a: a hello of another protocol whose version is escapes.
    let skew = br#"{"protocol":999,"hive":"\u001b]0;pwned-a\u0007\u001b[2J9.9"}"#;
    std::fs::write(dir.join("a.1"), frame(skew)).unwrap();
    // b: a goodbye at attach that writes the clipboard (OSC 52).
    let b = [ours.clone(), bye("\x1b]52;c;cm0gLXJmIH4=\x07stopping")].concat();
    std::fs::write(dir.join("b.1"), b).unwrap();
    // c: an undecodable message: a variant name of escapes.
    let variant = rmp_serde::to_vec("\x1b]0;pwned-c\x07").unwrap();
    std::fs::write(dir.join("c.1"), [ours.clone(), frame(&variant)].concat()).unwrap();
    // d: a real snapshot, then a goodbye during the session.
    let agent = hive::config::Config::builtin().agents.remove(0);
    let snapshot = Snapshot {
        server: ServerInfo {
            pid: 1,
            config: "built-in".into(),
            config_path: None,
            socket: "/nonexistent/evil.sock".into(),
            started: 0,
        },
        focus: 0,
        away_since: None,
        panes: vec![PaneSnapshot::empty(agent.card())],
    };
    let parts: Vec<u8> = snapshot
        .into_messages()
        .iter()
        .flat_map(|m| encode(m).unwrap())
        .collect();
    std::fs::write(dir.join("d.1"), [ours, parts].concat()).unwrap();
    std::fs::write(dir.join("d.2"), bye("\x1b]0;pwned-d\x07\x1b[2Jgone")).unwrap();
}

/// A hostile hive at the far end of the real sshd (and a hostile ssh
/// stand-in for the install probe): its version, its goodbyes at attach
/// and during a session, an undecodable message's variant name and the
/// path it reports for `hive` reach the terminal only as visible text —
/// the title is not set, the clipboard not written, the screen not
/// cleared (#53 item 1).
#[test]
fn a_hostile_remote_hive_reaches_the_terminal_only_as_visible_text() {
    use std::os::unix::fs::PermissionsExt;
    let Some(bin) = bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(sshd) = super::support::sshd::Sshd::start(dir.path(), None) else {
        return;
    };
    let fx = dir.path().join("frames");
    std::fs::create_dir_all(&fx).unwrap();
    hostile_frames(&fx);
    let fxq = quote(&fx);
    sshd.seed_script(
        &bin,
        &format!(
            "#!/bin/sh\nm=$(cat {fxq}/mode)\ncat {fxq}/$m.1\n\
             if [ -f {fxq}/$m.2 ]; then sleep 2; cat {fxq}/$m.2; fi\nsleep 1\n"
        ),
    );
    // e: an "ssh" whose probe answer names a `hive` on a path of escapes.
    let fake_ssh = fx.join("fake-ssh");
    std::fs::write(
        &fake_ssh,
        "#!/bin/sh\nprintf 'path /opt/\\033]0;pwned-e\\007\\033[2J/hive\\nprotocol 999\\nuname Linux x86_64\\n'\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake_ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let project = sshd.remote_home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let local = dir.path().join("local");
    std::fs::create_dir_all(&local).unwrap();
    let mut vars = super::private_env(&local);
    vars.push(format!("HIVE_SSH={}", sshd.ssh_command()));
    sshd.masters_in(local.join("hive_state_dir/run/ssh"));
    let (hive, url) = (quote(&bin), sshd.url(&project));
    let script = format!(
        "for m in a b c d; do echo $m > {fxq}/mode; {hive} attach {url}; echo EXIT-$m=$?; done; \
         HIVE_SSH={ssh} {hive} attach --no-install ssh://evil/p; echo EXIT-e=$?; sleep 600",
        ssh = quote(&fake_ssh),
    );
    let t = super::support::tmux::Tmux::start("h", dir, (200, 50), &vars, &["sh", "-c", &script]);
    let s = t.wait("every run's end", |s| s.contains("EXIT-e="));
    let title = t.cmd(&["display", "-p", "-t", "h", "#{pane_title}"]);
    assert!(
        !title.contains("pwned"),
        "the remote set the title: {title}\n{s}"
    );
    let buffers = t.cmd(&["list-buffers"]);
    assert!(
        buffers.trim().is_empty(),
        "the remote wrote the clipboard: {buffers}"
    );
    for (run, shown) in [
        ("a", "␛]0;pwned-a␇␛[2J9.9"),
        ("b", "␛]52;c;cm0gLXJmIH4=␇stopping"),
        ("c", "␛]0;pwned-c␇"),
        ("d", "␛]0;pwned-d␇␛[2Jgone"),
        ("e", "/opt/␛]0;pwned-e␇␛[2J/hive"),
    ] {
        assert!(s.contains(shown), "run {run}: {shown} not shown\n{s}");
    }
    // Nothing cleared the screen: the first run's words are still there.
    assert!(s.contains("EXIT-a=1"), "{s}");
}
