//! One verb through the three front doors (issue 44): a console's
//! `ClientMsg::Edit`, `hive ctl close` and an agent's `agent.close` (the
//! `op` line `hive mcp --agent` sends) are the same `Verb::Close` to the
//! server's one door, and close a pane alike: gone from `hive ctl list`,
//! with the same `closed` answer. The agent's door keeps its caller's rules:
//! it closes its own helper, not a pane of the user's.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use serde_json::{Value, json};

use super::{Lab, TIMEOUT};

fn config(lab: &Lab) -> std::path::PathBuf {
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ctl/echo.toml");
    let agent = |id: &str, extra: &str| {
        format!(
            "[[agent]]\nid = \"{id}\"\nprovider = \"script\"\nscript = \"{}\"\n{extra}\n",
            echo.display()
        )
    };
    let text = [
        agent("lead", "hive_tools = true\ncan_spawn = 1"),
        agent("viaconsole", ""),
        agent("viactl", ""),
    ]
    .concat();
    let path = lab.path("doors.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// One operation as agent `agent`, over the control socket as `hive mcp`
/// sends it; its envelope.
fn op(socket: &Path, agent: &str, name: &str, args: Value) -> Value {
    let mut s = UnixStream::connect(socket).unwrap();
    let line = json!({"id": 1, "method": "op", "agent": agent, "op": name, "args": args});
    writeln!(s, "{line}").unwrap();
    let mut reply = String::new();
    BufReader::new(s).read_line(&mut reply).unwrap();
    let reply: Value = serde_json::from_str(&reply).unwrap();
    reply["result"].clone()
}

fn ids(lab: &Lab) -> Vec<String> {
    let list: Value = serde_json::from_str(&lab.ok(&["list", "--json"])).unwrap();
    list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect()
}

/// What a console is told after it sends `msg`: the first notice, or the
/// server's goodbye.
fn console_says(socket: &Path, msg: hive::protocol::ClientMsg) -> String {
    use hive::client::{Endpoint, FromServer, attach};
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (mut conn, _snapshot) = attach(&Endpoint::Local(socket.to_owned())).await.unwrap();
        conn.sender.send(&msg);
        let told = async {
            while let Some(msg) = conn.incoming.recv().await {
                match msg {
                    FromServer::Notice { text, .. } | FromServer::Bye(text) => return text,
                    _ => {}
                }
            }
            panic!("the server hung up without a word");
        };
        tokio::time::timeout(TIMEOUT, told).await.unwrap()
    })
}

/// A console's close, as its keys send it; the notice it is told.
fn close_from_a_console(socket: &Path, pane: &str) -> String {
    use hive::protocol::{ClientMsg, edit::PaneEdit};
    let close = PaneEdit::Close {
        pane: pane.into(),
        team: false,
        discard: false,
    };
    console_says(socket, ClientMsg::Edit(close))
}

#[test]
fn a_pane_closes_alike_through_each_door() {
    let Some(lab) = Lab::new() else { return };
    let socket = lab.launch_with("doors", &config(&lab), "doors.sock");
    let spawned = op(
        &socket,
        "lead",
        "agent.spawn",
        json!({"template": "viactl"}),
    );
    assert_eq!(spawned["ok"], true, "{spawned}");
    let helper = spawned["result"]["agent"].as_str().unwrap().to_owned();
    assert_eq!(ids(&lab), ["lead", "viaconsole", "viactl", helper.as_str()]);

    // hive ctl.
    let by_ctl: Value = serde_json::from_str(&lab.ok(&["close", "viactl", "--json"])).unwrap();
    assert_eq!(by_ctl["closed"], json!(["viactl"]), "{by_ctl}");
    // A console.
    let told = close_from_a_console(&socket, "viaconsole");
    assert!(told.starts_with("closed pane viaconsole"), "{told}");
    // An agent: not the user's pane, its own helper.
    let refused = op(&socket, "lead", "agent.close", json!({"agent": "lead"}));
    assert_eq!(refused["error"]["code"], "not_allowed", "{refused}");
    let by_agent = op(&socket, "lead", "agent.close", json!({"agent": helper}));
    assert_eq!(by_agent["ok"], true, "{by_agent}");
    assert_eq!(by_agent["result"]["closed"], json!([helper]), "{by_agent}");

    assert_eq!(ids(&lab), ["lead"]);
    for gone in ["viactl", "viaconsole", helper.as_str()] {
        lab.fails(&["status", gone], 3, "SESSION_NOT_FOUND");
    }

    // Stop, through the same door: a console may, and the server goes.
    let bye = console_says(&socket, hive::protocol::ClientMsg::Stop);
    assert!(bye.contains("stopped from a console"), "{bye}");
    lab.wait_until("the socket goes", || UnixStream::connect(&socket).is_err());
    lab.detach("doors");
}
