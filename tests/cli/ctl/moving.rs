//! `/move @HOST` (issue 50) for real: a real sshd on 127.0.0.1
//! (tests/support/sshd.rs, whose sessions get a "remote" HOME and hive
//! dirs of their own) with a second hive server behind it (started there
//! by the move itself, through `hive relay --start`), and a local server
//! in tmux whose config has that `[[host]]`. A pane of the built-in agent
//! (`openai`, against the project's scripted model server) in a worktree
//! of a real repository moves there mid-conversation with
//! `hive ctl move ID --host box`: the next request the model sees is made
//! by the pane on the far side (its tool runs in the far HOME, in a
//! worktree with the commits and uncommitted changes made here) and
//! carries the earlier turns; then it comes back the same way. A move to
//! an unreachable host, and one whose unpacking fails there, leave the
//! pane here, working, its worktree untouched, and say which step failed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::Lab;
use crate::openai_server::{Reply, Server, answer_text, finish, tool_call};
use crate::support::sshd::{Sshd, user};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@e"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo_at(repo: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q", "-b", "main"]);
    for (name, text) in files {
        std::fs::write(repo.join(name), text).unwrap();
    }
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "init"]);
}

/// Two machines: the lab (local, its server in tmux) and the sshd's
/// "remote" user with a project of its own; the local config has the
/// host `box` (and `dead`, which nothing answers) and the pane `fix`.
struct Rig {
    // Dropped first: the far servers' pid files are under the lab's
    // directory, which the lab removes when it drops.
    sshd: Sshd,
    lab: Lab,
    model: Server,
    repo: PathBuf,
    config: PathBuf,
}

impl Rig {
    fn start(script: Vec<Reply>) -> Option<Self> {
        let lab = Lab::new()?;
        let sshd = Sshd::start(lab.dir.path(), None)?;
        sshd.seed_binary(&lab.bin);
        let far = sshd.remote_home.join("proj");
        repo_at(
            &far,
            &[(
                "hive.toml",
                "[[agent]]\nid = \"far\"\nprovider = \"script\"\nscript = \"demo:reviewer\"\n",
            )],
        );
        let model = Server::start(script);
        let repo = lab.path("repo");
        repo_at(&repo, &[("parse.rs", "fn parse() {}\n")]);
        let config = lab.path("movetest.toml");
        let text = format!(
            "[[host]]\nname = \"box\"\nssh = \"{}@127.0.0.1:{}\"\npath = \"{}\"\n\n\
             [[host]]\nname = \"dead\"\nssh = \"127.0.0.1:1\"\n\n\
             [[agent]]\nid = \"fix\"\nprovider = \"openai\"\nmodel = \"test-model\"\n\
             base_url = \"{}\"\npermission_mode = \"yolo\"\ncwd = \"{}\"\nworktree = true\n",
            user(),
            sshd.port,
            far.display(),
            model.base_url,
            repo.display()
        );
        std::fs::write(&config, text).unwrap();
        lab.env
            .borrow_mut()
            .push(format!("HIVE_SSH={}", sshd.ssh_command()));
        sshd.masters_in(lab.socket_dir().join("ssh"));
        lab.launch_with("move", &config, "movetest.sock");
        Some(Self {
            sshd,
            lab,
            model,
            repo,
            config,
        })
    }

    fn ctl(&self, args: &[&str]) -> super::Out {
        let mut all = vec!["--config", self.config.to_str().unwrap()];
        all.extend_from_slice(args);
        self.lab.ctl(&all)
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.ctl(args);
        assert_eq!(out.code, 0, "hive ctl {args:?}: {}", out.stderr);
        out.stdout
    }

    fn status(&self, pane: &str) -> Value {
        serde_json::from_str(&self.ok(&["status", pane, "--json"])).expect("status json")
    }

    fn idle(&self, pane: &str) {
        self.lab.wait_until(&format!("{pane} idle"), || {
            self.ctl(&["status", pane, "--json"]).code == 0 && self.status(pane)["state"] == "idle"
        });
    }

    /// The local worktree of `fix`.
    fn worktree(&self) -> PathBuf {
        self.repo.join(".hive/worktrees/fix")
    }

    /// `fix`'s work here: a commit, an edit, a new file.
    fn work(&self) {
        let wt = self.worktree();
        std::fs::write(wt.join("lexer.rs"), "fn lex() {}\n").unwrap();
        git(&wt, &["add", "lexer.rs"]);
        git(&wt, &["commit", "-qm", "lexer"]);
        std::fs::write(wt.join("parse.rs"), "fn parse() { todo!() }\n").unwrap();
        std::fs::write(wt.join("grammar.txt"), "expr := term\n").unwrap();
    }

    /// The texts of the user and assistant messages of model request `n`.
    fn said(&self, n: usize) -> Vec<String> {
        self.model
            .messages(n)
            .iter()
            .filter(|m| m["role"] == "user" || m["role"] == "assistant")
            .filter_map(|m| m["content"].as_str().map(str::to_owned))
            .collect()
    }
}

fn bash(id: &str, command: &str) -> Reply {
    let args = json!({ "command": command }).to_string();
    Reply::Chunks(vec![tool_call(0, id, "bash", &args), finish("tool_calls")])
}

const LOOK: &str = "echo HOME=$HOME; pwd; git log --format=%s; git status --short; cat parse.rs";

#[test]
fn a_live_pane_moves_to_another_host_with_its_work_and_comes_back() {
    let Some(rig) = Rig::start(vec![
        answer_text("Noted: the word is plum.", 5, 3),
        bash("c1", LOOK),
        answer_text("The word was plum; the lexer is in.", 7, 4),
        bash("c2", LOOK),
        answer_text("Home again, still plum.", 9, 4),
    ]) else {
        return;
    };
    rig.idle("fix");
    let turn = rig.ok(&["send", "fix", "Remember the word plum."]);
    rig.ok(&["wait", &turn]);
    rig.work();

    let out = rig.ok(&["move", "fix", "--host", "box"]);
    assert!(out.contains("moved fix to box"), "{out}");
    // Here the pane holds its place, stopped, saying where it went.
    let here = rig.status("fix");
    assert!(
        here["failed"]
            .as_str()
            .unwrap_or_default()
            .contains("moved to box"),
        "{here}"
    );
    assert!(!rig.worktree().exists(), "the worktree left with the pane");
    let far_tree = rig.sshd.remote_home.join("proj/.hive/worktrees/fix");
    assert!(
        far_tree.join("grammar.txt").exists(),
        "{}",
        far_tree.display()
    );

    rig.idle("box:fix");
    let turn = rig.ok(&["send", "box:fix", "What was the word? Look at the work."]);
    rig.ok(&["wait", &turn]);
    // The first request there carries the turn made here.
    let said = rig.said(1);
    assert_eq!(
        said,
        [
            "Remember the word plum.",
            "Noted: the word is plum.",
            "What was the word? Look at the work."
        ],
        "{said:?}"
    );
    // Its tool ran on the other host, in the moved worktree.
    let seen = rig.model.tool_result(2).to_string();
    let far_home = rig.sshd.remote_home.display().to_string();
    assert!(seen.contains(&format!("HOME={far_home}")), "{seen}");
    assert!(seen.contains(&far_tree.display().to_string()), "{seen}");
    assert!(seen.contains("lexer") && seen.contains("init"), "{seen}");
    assert!(
        seen.contains("M parse.rs") && seen.contains("?? grammar.txt"),
        "{seen}"
    );
    assert!(seen.contains("todo!()"), "{seen}");

    // Back the same way.
    let out = rig.ok(&["move", "box:fix", "--host", "local"]);
    assert!(out.contains("moved fix back from box"), "{out}");
    assert!(!far_tree.exists(), "the far worktree went once it was back");
    rig.idle("fix");
    let turn = rig.ok(&["send", "fix", "And now?"]);
    rig.ok(&["wait", &turn]);
    let said = rig.said(3);
    assert_eq!(said.len(), 5, "{said:?}");
    assert_eq!(said[4], "And now?");
    assert_eq!(said[3], "The word was plum; the lexer is in.");
    let seen = rig.model.tool_result(4).to_string();
    assert!(!seen.contains(&far_home), "{seen}");
    assert!(
        seen.contains(&rig.worktree().display().to_string()),
        "{seen}"
    );
    assert!(
        seen.contains("M parse.rs") && seen.contains("?? grammar.txt"),
        "{seen}"
    );
    assert_eq!(rig.model.requests().len(), 5);
}

#[test]
fn a_failed_move_leaves_the_pane_working_where_it_was() {
    let Some(rig) = Rig::start(vec![
        answer_text("Noted.", 5, 3),
        answer_text("Still here.", 6, 3),
    ]) else {
        return;
    };
    rig.idle("fix");
    let turn = rig.ok(&["send", "fix", "Remember the word plum."]);
    rig.ok(&["wait", &turn]);
    rig.work();
    let before = git(&rig.worktree(), &["status", "--short"]);

    // Nothing answers there.
    let out = rig.ctl(&["move", "fix", "--host", "dead"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stderr.contains("reaching dead"), "{}", out.stderr);
    // The far side cannot unpack it: the worktree's place is taken there.
    let taken = rig.sshd.remote_home.join("proj/.hive/worktrees/fix");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("mine.txt"), "not yours\n").unwrap();
    let out = rig.ctl(&["move", "fix", "--host", "box"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("unpacking the worktree"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(taken.join("mine.txt")).unwrap(),
        "not yours\n"
    );
    // No pane of it there.
    let far = rig.ok(&["list", "--json"]);
    assert!(!far.contains("box:fix"), "{far}");

    // Here it works on, its worktree as it was.
    assert_eq!(git(&rig.worktree(), &["status", "--short"]), before);
    rig.idle("fix");
    let turn = rig.ok(&["send", "fix", "Are you there?"]);
    assert_eq!(rig.ok(&["wait", &turn]), "Still here.");
    assert_eq!(rig.said(1).len(), 3);
}
