//! `/account` through the server's one verb (issue 51), against a real
//! server in tmux and the fake claude keeping its transcripts where Claude
//! Code does (the account's `CLAUDE_CONFIG_DIR`; a `--resume` whose
//! transcript is not in its home fails; each answer says how many earlier
//! turns it read): `hive ctl account ID NAME` and a console's `/account
//! NAME` both move the pane with its conversation, and a server killed
//! halfway through a carry leaves the conversation whole in the home the
//! pane comes back under.

use std::path::{Path, PathBuf};

use super::Lab;

/// A config of one Claude pane `cl` on account `work` of (`work`,
/// `personal`); the two homes.
fn setup(lab: &Lab) -> (PathBuf, PathBuf, PathBuf) {
    let project = lab.path("project");
    std::fs::create_dir_all(&project).unwrap();
    let (work, personal) = (lab.path("work"), lab.path("personal"));
    let fake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake/fake_claude.py");
    let text = format!(
        "[[account]]\nname = \"work\"\nprovider = \"claude\"\nhome = \"{}\"\n\n\
         [[account]]\nname = \"personal\"\nprovider = \"claude\"\nhome = \"{}\"\n\n\
         [[agent]]\nid = \"cl\"\nprovider = \"claude\"\ncommand = [\"python3\", \"{fake}\"]\n\
         cwd = \"{}\"\naccount = \"work\"\n\
         env = {{ FAKE_CLAUDE_TRANSCRIPTS = \"1\", FAKE_CLAUDE_DELAY_MS = \"0\" }}\n",
        work.display(),
        personal.display(),
        project.display()
    );
    let config = lab.path("accounttest.toml");
    std::fs::write(&config, text).unwrap();
    (config, work, personal)
}

/// The prompts Claude's transcripts hold under `home`.
fn prompts(home: &Path) -> usize {
    let Ok(dirs) = std::fs::read_dir(home.join("projects")) else {
        return 0;
    };
    dirs.flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .filter(|f| f.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|f| std::fs::read_to_string(f.path()).unwrap().lines().count())
        .sum()
}

fn idle(lab: &Lab) {
    lab.wait_until("cl idle", || lab.status("cl")["state"] == "idle");
}

/// The answer to `text`, sent by `hive ctl`.
fn ask(lab: &Lab, text: &str) -> String {
    let turn = lab.ok(&["send", "cl", text]);
    lab.ok(&["wait", &turn])
}

#[test]
fn ctl_account_and_the_console_switch_with_the_conversation() {
    let Some(lab) = Lab::new() else { return };
    let (config, work, personal) = setup(&lab);
    lab.launch_with("acc", &config, "accounttest.sock");
    idle(&lab);
    let first = ask(&lab, "first");
    assert!(first.starts_with("(earlier turns: 0)"), "{first}");

    // Refused with the reason and the exit status of its code.
    let out = lab.fails(&["account", "cl", "nobody"], 2, "BAD_REQUEST");
    assert!(out.stderr.contains("work, personal"), "{}", out.stderr);
    lab.fails(&["account", "nosuch", "personal"], 3, "SESSION_NOT_FOUND");

    let said = lab.ok(&["account", "cl", "personal"]);
    assert_eq!(said, "cl goes on under account personal (now)");
    // Queued behind the switch, answered under the other home on the
    // same session: the carried transcript held the first turn.
    let second = ask(&lab, "second");
    assert!(second.starts_with("(earlier turns: 1)"), "{second}");
    assert_eq!(prompts(&personal), 2);
    assert_eq!(prompts(&work), 1, "the first home keeps its copy");

    // The console's `/account` is the same verb.
    idle(&lab);
    lab.type_line("acc", "/account work");
    lab.wait_until("the console's switch", || {
        lab.screen("acc").contains("now on account work")
    });
    let third = ask(&lab, "third");
    assert!(third.starts_with("(earlier turns: 2)"), "{third}");
    assert_eq!(prompts(&work), 3, "the newer conversation came back");
    lab.stop("acc");
}

/// The server is killed (SIGKILL, `HIVE_CRASH_POINT`) halfway through a
/// carry: once with the agent ended and the session read, once with the
/// copy in the other home and the switch not yet recorded. Each time the
/// pane comes back under the account whose home holds the whole
/// conversation, goes on with it, and a later switch still carries it.
#[test]
fn a_crash_halfway_through_a_carry_loses_nothing() {
    let Some(lab) = Lab::new() else { return };
    let (config, work, personal) = setup(&lab);
    let (mut on, mut other) = (("work", work), ("personal", personal));
    for point in ["carry-read", "carry-written"] {
        let socket = lab.launch_env(
            "crash",
            &config,
            "accounttest.sock",
            &[("HIVE_CRASH_POINT", point)],
        );
        idle(&lab);
        ask(&lab, &format!("before the {point} stop"));
        let total = prompts(&on.1);
        let there = prompts(&other.1);
        lab.ok(&["account", "cl", other.0]);
        lab.wait_until("the server's end", || {
            std::os::unix::net::UnixStream::connect(&socket).is_err()
        });
        lab.detach("crash");
        assert_eq!(prompts(&on.1), total, "{point}: the source is whole");
        let copied = prompts(&other.1);
        let expected = if point == "carry-written" {
            total
        } else {
            there
        };
        assert_eq!(copied, expected, "{point}: the other home's copy");

        // Back without the crash: on the same account, the conversation whole.
        lab.launch_with("again", &config, "accounttest.sock");
        idle(&lab);
        let next = ask(&lab, "after the restart");
        let want = format!("(earlier turns: {total})");
        assert!(next.starts_with(&want), "{point}: {next}");
        // And a switch now carries it all (an older copy set aside).
        lab.ok(&["account", "cl", other.0]);
        let last = ask(&lab, "on the other account");
        let want = format!("(earlier turns: {})", total + 1);
        assert!(last.starts_with(&want), "{point}: {last}");
        assert_eq!(prompts(&other.1), total + 2, "{point}");
        lab.stop("again");
        std::mem::swap(&mut on, &mut other);
    }
}
