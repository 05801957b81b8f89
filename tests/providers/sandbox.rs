//! Agents in a real bubblewrap box (issue 49), attacked the way a hostile
//! agent would: tests/fake/fake_hostile.py tries to write beside its
//! worktree and into the home, read `~/.ssh`, reach a port on 127.0.0.1,
//! signal a process outside the box and leave a child behind. Each must
//! fail, its worktree must work, and its child must die with its pane: as
//! a terminal pane, as a structured agent's child (the fake `claude`), and
//! as the built-in agent's `bash`.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hive::config::AgentConfig;
use hive::event::Origin;
use hive::exec::{Bwrap, ExecHost, Kind, Network};
use hive::provider::claude::ClaudeFactory;
use hive::provider::openai::OpenAiFactory;
use hive::provider::pty::PtyFactory;
use hive::runner::{RunnerCommand, SubmitMode};
use serde_json::{Value, json};

use super::openai::server::{Reply, Server, answer_text, finish, tool_call};
use super::openai::{Driven, coding_agent};
use crate::support::{Pane, fake_command};

const BWRAP: &str = "/usr/bin/bwrap";

/// The scene of an attack: a worktree, a home with a key in it, a port
/// that listens, a process to signal. Not under /tmp (the box hides /tmp
/// whole): under the target dir, which the box sees read-only.
struct Scene {
    dir: tempfile::TempDir,
    listener: TcpListener,
    victim: Child,
    mark: String,
}

impl Scene {
    fn new() -> Option<Self> {
        if !Path::new(BWRAP).exists() {
            eprintln!("SKIP: {BWRAP} is not installed (apt-get install bubblewrap)");
            return None;
        }
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        std::fs::create_dir_all(dir.path().join("wt")).unwrap();
        std::fs::create_dir_all(dir.path().join("home/.ssh")).unwrap();
        std::fs::write(dir.path().join("home/.ssh/id_ed25519"), "SECRET-KEY\n").unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let victim = Command::new("sleep").arg("600").spawn().unwrap();
        let mark = format!(
            "hive-hostile-{}-{}",
            std::process::id(),
            Instant::now().elapsed().as_nanos() + rand_suffix()
        );
        Some(Self {
            dir,
            listener,
            victim,
            mark,
        })
    }

    fn wt(&self) -> PathBuf {
        self.dir.path().join("wt")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn env(&self) -> BTreeMap<String, String> {
        let p = |p: PathBuf| p.display().to_string();
        BTreeMap::from([
            (
                "HOSTILE_OUTSIDE".into(),
                p(self.dir.path().join("outside.txt")),
            ),
            ("HOSTILE_PLANT".into(), p(self.home().join("planted.txt"))),
            (
                "HOSTILE_SECRET".into(),
                p(self.home().join(".ssh/id_ed25519")),
            ),
            (
                "HOSTILE_PORT".into(),
                self.listener.local_addr().unwrap().port().to_string(),
            ),
            ("HOSTILE_VICTIM".into(), self.victim.id().to_string()),
            ("HOSTILE_MARK".into(), self.mark.clone()),
        ])
    }

    fn host(&self) -> ExecHost {
        ExecHost::new(
            "sandbox",
            Kind::Bwrap(Bwrap {
                program: BWRAP.into(),
                network: Network::None,
                home: self.home(),
                homes: self.dir.path().join("homes"),
                hide: vec![],
                read_only: vec![],
                read_write: vec![],
            }),
        )
    }

    fn agent(&self, id: &str, provider: &str) -> AgentConfig {
        let mut a = AgentConfig::new(id, provider);
        a.cwd = Some(self.wt());
        a.env = self.env();
        a.exec = Some(self.host());
        a
    }

    /// Every attempt failed and left nothing; the worktree worked.
    fn check(&mut self, report: &Value) {
        let says = |k: &str| report[k].as_str().unwrap_or_default().to_owned();
        assert!(says("inside").starts_with("ok"), "{report}");
        assert_eq!(
            std::fs::read_to_string(self.wt().join("inside.txt")).unwrap(),
            "planted by a hostile agent\n"
        );
        // The home is an empty tmpfs of the box's own: a write there works
        // and lands nowhere (`planted.txt` is checked on the disk below).
        for k in ["outside", "secret", "network", "signal"] {
            assert!(says(k).starts_with("error"), "{k} worked: {report}");
        }
        assert!(!self.dir.path().join("outside.txt").exists());
        assert!(!self.home().join("planted.txt").exists());
        assert!(!report.to_string().contains("SECRET-KEY"));
        assert!(self.listener.accept().is_err(), "the box reached 127.0.0.1");
        assert!(self.victim.try_wait().unwrap().is_none(), "the victim died");
        assert_eq!(says("sandbox"), "bwrap");
    }

    /// The child the agent left behind is gone once its pane is.
    async fn lingering_gone(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !with_mark(&self.mark).is_empty() {
            assert!(
                Instant::now() < deadline,
                "the box's child outlived its pane: {:?}",
                with_mark(&self.mark)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        let _ = self.victim.kill();
        let _ = self.victim.wait();
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Pids whose command line holds `mark`.
fn with_mark(mark: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(mark))
        })
        .collect()
}

async fn report_file(path: &Path) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(v) = serde_json::from_str(text.trim())
        {
            return v;
        }
        assert!(Instant::now() < deadline, "no report at {}", path.display());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_terminal_pane_is_boxed_and_its_child_dies_with_it() {
    let Some(mut scene) = Scene::new() else {
        return;
    };
    let mut agent = scene.agent("hostile-pty", "pty");
    agent.command = fake_command("fake_hostile.py");
    let pane = Pane::start(Arc::new(PtyFactory), agent, None);
    let report = report_file(&scene.wt().join("hostile-report.json")).await;
    scene.check(&report);
    assert!(
        !with_mark(&scene.mark).is_empty(),
        "the child lives while its pane does"
    );
    pane.runner.send(RunnerCommand::Shutdown);
    scene.lingering_gone().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_structured_agents_children_are_boxed_and_die_with_its_pane() {
    let Some(mut scene) = Scene::new() else {
        return;
    };
    let mut agent = scene.agent("hostile-claude", "claude");
    agent.command = fake_command("fake_claude.py");
    let mut pane = Pane::start(Arc::new(ClaudeFactory), agent, None);
    pane.submit("attack", SubmitMode::Queue);
    pane.turn_end().await;
    let reply = pane.final_messages(Origin::Agent).join("");
    let report: Value = serde_json::from_str(reply.trim()).unwrap_or_else(|_| panic!("{reply}"));
    scene.check(&report);
    // The stream-json protocol rode the box's pipe unchanged.
    assert!(reply.contains("\"inside\""));
    pane.runner.send(RunnerCommand::Shutdown);
    scene.lingering_gone().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_built_in_agents_bash_runs_in_the_box() {
    let Some(mut scene) = Scene::new() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_hostile.py");
    let command = format!("python3 {} --exit", script.display());
    // bash's environment is hive's, not the agent's `env`: the attack's
    // settings go on its command line.
    let exports: String = scene
        .env()
        .iter()
        .map(|(k, v)| format!("{k}='{v}' "))
        .collect();
    let server = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(
                0,
                "b1",
                "bash",
                &json!({ "command": format!("{exports}{command}") }).to_string(),
            ),
            finish("tool_calls"),
        ]),
        answer_text("done", 1, 1),
    ]);
    let mut agent = coding_agent(&server);
    agent.cwd = Some(scene.wt());
    agent.exec = Some(scene.host());
    agent.set("permission_mode", "yolo").unwrap();
    let factory = OpenAiFactory::default().with_store(hive::history::Store::at(
        tempfile::tempdir().unwrap().keep(),
    ));
    let mut p = Driven::start(&factory, agent, None);
    p.send("attack");
    p.until_done().await;
    let report = report_file(&scene.wt().join("hostile-report.json")).await;
    scene.check(&report);
    p.kill().await;
    scene.lingering_gone().await;
}
