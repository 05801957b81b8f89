//! Carrying a vendor's session between config homes.

use std::path::Path;

use super::*;

fn put(path: &Path, text: &str) {
    crate::private::create_dir(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_claude_transcript_and_its_side_files_go_to_the_same_place_in_the_other_home() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    put(
        &a.join("projects/-w-app/s1.jsonl"),
        "{\"turn\":1}\n{\"turn\":2}\n",
    );
    put(&a.join("projects/-w-app/s1/subagents/x.jsonl"), "side\n");
    put(&a.join("projects/-w-app/other.jsonl"), "not this one\n");
    let carried = carry("claude", "s1", &a, &b).unwrap();
    let to = b.join("projects/-w-app/s1.jsonl");
    assert_eq!(
        carried,
        Carried::Copied {
            to: to.clone(),
            set_aside: None
        }
    );
    assert_eq!(
        std::fs::read_to_string(&to).unwrap(),
        "{\"turn\":1}\n{\"turn\":2}\n"
    );
    assert_eq!(
        std::fs::read_to_string(b.join("projects/-w-app/s1/subagents/x.jsonl")).unwrap(),
        "side\n"
    );
    assert!(!b.join("projects/-w-app/other.jsonl").exists());
    // The source is kept whole: a copy, not a move.
    assert!(a.join("projects/-w-app/s1.jsonl").exists());
    // Private in the other home, as in hive's own.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&to).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    // Again: the same bytes are there, nothing is copied.
    assert_eq!(carry("claude", "s1", &a, &b).unwrap(), Carried::Same(to));
}

#[test]
fn a_codex_rollout_is_found_by_its_thread_and_keeps_its_dated_path() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let rel = "sessions/2026/12/03/rollout-2026-12-03T09-00-00-t-42.jsonl";
    put(&a.join(rel), "{\"type\":\"session_meta\"}\n");
    put(
        &a.join("sessions/2026/12/03/rollout-2026-12-03T09-00-00-t-420.jsonl"),
        "x\n",
    );
    assert!(matches!(
        carry("codex", "t-42", &a, &b).unwrap(),
        Carried::Copied { .. }
    ));
    assert_eq!(
        std::fs::read_to_string(b.join(rel)).unwrap(),
        "{\"type\":\"session_meta\"}\n"
    );
}

/// Gemini CLI names a chat by the id's first 8 characters; its first line
/// says whose it is, so a chat of another session with the same start is
/// not the one carried. The project's marker goes along.
#[test]
fn a_gemini_chat_is_found_by_its_first_line_and_its_project_marker_goes_along() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let chats = ".gemini/tmp/app/chats";
    put(
        &a.join(chats)
            .join("session-2026-12-03T09-00-5e551011.jsonl"),
        "{\"sessionId\":\"5e551011-other\"}\n",
    );
    let rel = format!("{chats}/session-2026-12-03T09-05-5e551011.jsonl");
    put(
        &a.join(&rel),
        "{\"sessionId\":\"5e551011-mine\"}\n{\"type\":\"user\"}\n",
    );
    put(&a.join(".gemini/tmp/app/.project_root"), "/w/app");
    let carried = carry("gemini", "5e551011-mine", &a, &b).unwrap();
    assert_eq!(
        carried,
        Carried::Copied {
            to: b.join(&rel),
            set_aside: None
        }
    );
    assert_eq!(
        std::fs::read_to_string(b.join(".gemini/tmp/app/.project_root")).unwrap(),
        "/w/app"
    );
    assert!(
        !b.join(chats)
            .join("session-2026-12-03T09-00-5e551011.jsonl")
            .exists()
    );
    assert_eq!(
        session_file("gemini", &a, "5e551011-nobody"),
        None,
        "a name's 8 characters alone are no match"
    );
}

#[test]
fn a_different_copy_in_the_target_is_set_aside_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    put(&a.join("projects/p/s.jsonl"), "newer, longer\n");
    put(&b.join("projects/p/s.jsonl"), "older\n");
    let Carried::Copied {
        set_aside: Some(aside),
        ..
    } = carry("claude", "s", &a, &b).unwrap()
    else {
        panic!("not set aside");
    };
    assert_eq!(std::fs::read_to_string(aside).unwrap(), "older\n");
    assert_eq!(
        std::fs::read_to_string(b.join("projects/p/s.jsonl")).unwrap(),
        "newer, longer\n"
    );
}

/// Two switches within a second each set a different copy aside: the
/// later never replaces the earlier one's (planted here for this second
/// and the next few, so the carry meets one whenever it runs).
#[test]
fn copies_set_aside_in_the_same_second_are_all_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    put(&a.join("projects/p/s.jsonl"), "newer\n");
    put(&b.join("projects/p/s.jsonl"), "older\n");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let planted: Vec<PathBuf> = (now..now + 5)
        .map(|secs| b.join(format!("projects/p/s.jsonl.before-hive-{secs}")))
        .collect();
    for p in &planted {
        put(p, "set aside earlier\n");
    }
    let Carried::Copied {
        set_aside: Some(aside),
        ..
    } = carry("claude", "s", &a, &b).unwrap()
    else {
        panic!("not set aside");
    };
    assert!(!planted.contains(&aside), "{}", aside.display());
    assert!(
        aside.display().to_string().ends_with("-2"),
        "{}",
        aside.display()
    );
    assert_eq!(std::fs::read_to_string(&aside).unwrap(), "older\n");
    for p in &planted {
        assert_eq!(std::fs::read_to_string(p).unwrap(), "set aside earlier\n");
    }
}

#[test]
fn a_copy_that_fails_halfway_leaves_the_source_whole_and_no_target() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    put(&a.join("projects/p/s.jsonl"), "the conversation\n");
    // The target's directory cannot be made: a file sits where it goes.
    put(&b.join("projects"), "in the way");
    let err = carry("claude", "s", &a, &b).unwrap_err();
    assert!(err.to_string().contains("writing"), "{err}");
    assert_eq!(
        std::fs::read_to_string(a.join("projects/p/s.jsonl")).unwrap(),
        "the conversation\n"
    );
    assert!(!b.join("projects/p/s.jsonl").exists());
}

#[test]
fn nothing_to_carry_and_what_cannot_be_carried_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    assert_eq!(
        carry("claude", "never-ran", &a, &b).unwrap(),
        Carried::Nothing
    );
    assert!(matches!(
        carry("pi", "s", &a, &b),
        Err(CarryError::Unsupported(_))
    ));
    // An id is a name, never a path out of the home.
    put(&dir.path().join("secret.jsonl"), "x");
    assert_eq!(session_file("claude", &a, "../../secret"), None);
}

#[test]
fn a_planted_link_in_the_source_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    put(&dir.path().join("outside/secret.txt"), "secret");
    crate::private::create_dir(&a.join("projects/p")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("outside/secret.txt"),
        a.join("projects/p/s.jsonl"),
    )
    .unwrap();
    // A link is not a regular file: the session is not there to carry.
    assert_eq!(carry("claude", "s", &a, &b).unwrap(), Carried::Nothing);
    assert!(!b.join("projects/p/s.jsonl").exists());
}

#[test]
fn the_home_is_the_accounts_variable_else_the_vendors_default() {
    let env = BTreeMap::from([("CLAUDE_CONFIG_DIR".to_owned(), "/h/work".to_owned())]);
    assert_eq!(home_of("claude", &env), Some(PathBuf::from("/h/work")));
    let home = std::env::var("HOME").unwrap();
    assert_eq!(
        home_of("codex", &BTreeMap::new()),
        Some(PathBuf::from(home).join(".codex"))
    );
    assert_eq!(home_of("pty", &BTreeMap::new()), None);
}
