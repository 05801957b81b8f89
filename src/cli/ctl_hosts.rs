//! `hive ctl` across machines (issue 30): a pane named `host:pane`, or a
//! turn id `host:turn`, of a `[[host]]` in the config is asked of that
//! host's hive, through ssh and `hive relay` (the same JSON lines as the
//! local socket); `hive ctl list` lists every host's panes after the local
//! ones, ids prefixed with the host. What a host answers is its own
//! agents' text: printed through the same sanitizing as local output.

use std::process::Stdio;

use serde_json::Value;

use crate::config::{Config, HostConfig};
use crate::control::client::{Client, ClientError};
use crate::remote::{Install, Ssh};

/// A client of `host`'s hive (which must run: ctl starts no server there).
pub(super) fn connect(host: &HostConfig) -> Result<Client, ClientError> {
    let unreachable = |e: String| ClientError::Unreachable(format!("{}: {e}", host.name));
    let target = host.target().map_err(|e| unreachable(e.to_string()))?;
    let ssh = Ssh::prepared(&target).map_err(|e| unreachable(e.to_string()))?;
    let bin = crate::remote::install::locate(&ssh, &target, Install::No)
        .map_err(|e| unreachable(format!("{e:#}")))?;
    let remote = crate::remote::relay_command(&target, &bin, false);
    let child = ssh
        .command(&target, true, &remote)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| unreachable(format!("running ssh: {e}")))?;
    Client::over_ssh(child, &host.name)
}

/// A host's answer with its turn ids named after it (`box:t3`), so the
/// next `hive ctl wait` finds its way back.
pub(super) fn prefix_turn(mut result: Value, host: &str) -> Value {
    if let Some(id) = result.get("turn_id").and_then(Value::as_str) {
        result["turn_id"] = Value::String(format!("{host}:{id}"));
    }
    result
}

/// `list` over the local hive and every host: panes after panes, a
/// host's ids prefixed with its name; a host that does not answer is said
/// on stderr and left out.
pub(super) fn list_all(local: Value, config: Option<&Config>) -> Value {
    let mut panes = local
        .get("panes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let hosts = config.map(|c| c.hosts.as_slice()).unwrap_or_default();
    for host in hosts.iter().filter(|h| h.serves()) {
        let answer = connect(host).and_then(|mut c| c.call(crate::control::protocol::Call::List));
        match answer {
            Ok(v) => {
                for mut p in v
                    .get("panes")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
                {
                    if let Some(id) = p.get("id").and_then(Value::as_str) {
                        p["id"] = Value::String(format!("{}:{id}", host.name));
                    }
                    panes.push(p);
                }
            }
            Err(e) => eprintln!("hive ctl: {}", crate::sanitize::neutralize(&e.to_string())),
        }
    }
    serde_json::json!({ "panes": panes })
}
