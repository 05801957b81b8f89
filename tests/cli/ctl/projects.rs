//! Two projects kept apart (issue 46 items 1–2): `~/work/app` and
//! `~/oss/app`, each a `hive.toml` with the same agent id, started as a user
//! starts them (`hive` in the project's directory). Each gets a server of
//! its own, `hive ls` tells their configs apart, `hive ctl` and `hive kill`
//! in one never reach the other, and neither sees the other's
//! conversations; the history an older hive kept for all projects goes to
//! the one that used it.

use std::os::unix::net::UnixStream;
use std::path::Path;

use super::Lab;

/// A project `dir/hive.toml` with the lab's `echo` agent.
fn project(lab: &Lab, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let config = std::fs::read_to_string(lab.path("ctltest.toml")).unwrap();
    let echo_only = config.split("[[agent]]").nth(1).unwrap();
    std::fs::write(dir.join("hive.toml"), format!("[[agent]]{echo_only}")).unwrap();
}

/// Data as an older hive left it: one conversation of `echo` at the data
/// dir's root, and the layout of the server `app`.
fn older_data(lab: &Lab) {
    let data = lab.path("hive_data_dir");
    let session = "20260101T000000-legacy01";
    std::fs::create_dir_all(data.join("history/echo")).unwrap();
    let record = serde_json::json!({
        "type": "history", "agentId": "echo", "sessionId": session,
        "timestamp": 1, "role": "user",
        "content": [{"type": "text", "text": "the older conversation"}],
    });
    std::fs::write(
        data.join(format!("history/echo/{session}.jsonl")),
        format!("{record}\n"),
    )
    .unwrap();
    std::fs::create_dir_all(data.join("state")).unwrap();
    let state = serde_json::json!({"agentId": "echo", "session": session});
    std::fs::write(data.join("state/echo.json"), state.to_string()).unwrap();
    std::fs::create_dir_all(data.join("layouts")).unwrap();
    std::fs::write(data.join("layouts/app.json"), r#"{"panes": []}"#).unwrap();
}

fn live_sockets(lab: &Lab) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(lab.socket_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sock"))
        .filter(|e| UnixStream::connect(e.path()).is_ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `hive ARGS` in `dir`, as a user in that project runs it.
fn hive_in(lab: &Lab, dir: &Path, args: &[&str]) -> std::process::Output {
    lab.hive_cmd(args).current_dir(dir).output().unwrap()
}

#[test]
fn two_projects_of_one_name_and_the_same_agents_stay_apart() {
    let Some(lab) = Lab::new() else { return };
    let work = lab.path("work/app");
    let oss = lab.path("oss/app");
    project(&lab, &work);
    project(&lab, &oss);
    older_data(&lab);

    lab.launch_in("work", &work, "app.sock");
    lab.launch_in("oss", &oss, "app.sock");
    lab.wait_until("a server for each project", || {
        live_sockets(&lab).len() == 2
    });
    let names = live_sockets(&lab);
    assert!(names.contains(&"app.sock".to_owned()), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("app-")), "{names:?}");

    // `hive ls` names each config by its whole path.
    let ls = String::from_utf8_lossy(&hive_in(&lab, &work, &["ls"]).stdout).into_owned();
    for dir in [&work, &oss] {
        let path = std::fs::canonicalize(dir.join("hive.toml")).unwrap();
        assert!(ls.contains(path.to_str().unwrap()), "{ls}");
    }

    // A turn in one project is that project's.
    let send = |dir: &Path, text: &str| {
        let out = hive_in(&lab, dir, &["ctl", "send", "echo", text]);
        assert!(out.status.success(), "{out:?}");
        let turn = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let waited = hive_in(&lab, dir, &["ctl", "wait", &turn]);
        assert!(waited.status.success(), "{waited:?}");
    };
    send(&work, "hello from work");
    send(&oss, "hello from oss");
    let shown = |dir: &Path| {
        let out = hive_in(&lab, dir, &["history", "show", "echo"]);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (at_work, at_oss) = (shown(&work), shown(&oss));
    assert!(at_work.contains("hello from work"), "{at_work}");
    assert!(!at_work.contains("hello from oss"), "{at_work}");
    assert!(at_oss.contains("hello from oss"), "{at_oss}");
    assert!(!at_oss.contains("hello from work"), "{at_oss}");
    // The older conversation went to the project that started first with
    // the layout's name, and is shown there only.
    let listed = |dir: &Path| {
        String::from_utf8_lossy(&hive_in(&lab, dir, &["history", "list"]).stdout).into_owned()
    };
    assert!(listed(&work).contains("legacy01"), "{}", listed(&work));
    assert!(!listed(&oss).contains("legacy01"), "{}", listed(&oss));

    // `hive kill` in one project stops its own server, not the other's.
    let killed = hive_in(&lab, &oss, &["kill"]);
    assert!(killed.status.success(), "{killed:?}");
    lab.wait_until("the oss server to go", || live_sockets(&lab).len() == 1);
    assert_eq!(live_sockets(&lab), ["app.sock"]);
    let list = hive_in(&lab, &work, &["ctl", "list"]);
    assert!(list.status.success(), "{list:?}");
    // And `hive ctl` in a project whose server is gone does not reach the
    // other project's.
    let stray = hive_in(&lab, &oss, &["ctl", "list"]);
    assert!(!stray.status.success(), "{stray:?}");
}
