//! Operations addressed to an agent on another machine (issue 30):
//! `agent.send {"agent": "box:reviewer"}` from an agent of this server
//! reaches pane `reviewer` of the `[[host]] name = "box"` server, through
//! ssh and `hive relay` to that server's control socket, as the same `op`
//! call `hive mcp` makes locally. The caller's `can_message` must name
//! `box:reviewer`, exactly as for a local pane; on the far side the call is
//! one from outside any pane (as `hive ctl`'s), which that server's user
//! allowed by giving this machine ssh access. Message ids that come back
//! are prefixed with the host (`box:m3`) so `agent.wait` finds its way.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::{Caller, HiveRequest, OpError, Verb, WaitFor};
use crate::config::Config;
use crate::control::protocol::{Call, Reply, Request};
use crate::provider::PermissionDecision;
use crate::remote::{Ssh, Target};

/// One `[[host]]` the operations can reach.
struct HostLink {
    ssh: Ssh,
    target: Target,
    /// hive's path there, looked up on the first call.
    bin: Mutex<Option<String>>,
}

/// The hosts of the config, by name.
#[derive(Default)]
pub struct Across {
    hosts: BTreeMap<String, Arc<HostLink>>,
}

impl Across {
    pub fn new(config: &Config) -> Self {
        let mut hosts = BTreeMap::new();
        for h in config.hosts.iter().filter(|h| h.serves()) {
            let Ok(target) = h.target() else { continue };
            let Ok(ssh) = Ssh::prepared(&target) else {
                continue;
            };
            hosts.insert(
                h.name.clone(),
                Arc::new(HostLink {
                    ssh,
                    target,
                    bin: Mutex::new(None),
                }),
            );
        }
        Self { hosts }
    }

    /// Takes a request for an agent on a host and answers it in a task of
    /// its own; hands back any other. `gate(caller, "box:agent", sends)`
    /// applies this server's rules: the caller's `can_message`, and for a
    /// message its rate limit.
    pub fn take(
        &self,
        req: HiveRequest,
        gate: impl FnOnce(&Caller, &str, bool) -> Result<(), OpError>,
    ) -> Option<HiveRequest> {
        let Some((host, name, args, addressed)) = self.split(&req.verb) else {
            return Some(req);
        };
        let HiveRequest { caller, reply, .. } = req;
        if let Err(e) = gate(&caller, &addressed, name == "agent.send") {
            let _ = reply.send(Err(e));
            return None;
        }
        // `split` found the host.
        let link = self.hosts.get(&host).cloned()?;
        tokio::spawn(async move {
            let outcome = call(&link, name, args).await.map(|v| prefix_ids(v, &host));
            let _ = reply.send(outcome);
        });
        None
    }

    /// `(host, op name, arguments there, "host:agent")` when `op` names an
    /// agent (or a message) on one of the hosts.
    fn split(&self, verb: &Verb) -> Option<(String, &'static str, Value, String)> {
        let on_host = |addr: &str| -> Option<(String, String)> {
            let (host, rest) = addr.split_once(':')?;
            self.hosts
                .contains_key(host)
                .then(|| (host.to_owned(), rest.to_owned()))
        };
        match verb {
            // Helpers start beside the agent that asks, on its server.
            Verb::Read {
                pane: agent,
                last,
                since,
                full,
            } => {
                let (h, a) = on_host(agent)?;
                let args = json!({"agent": a, "last": last, "since": since, "full": full});
                Some((h, "agent.read", args, agent.clone()))
            }
            Verb::Send {
                pane: agent,
                text,
                steer,
            } => {
                let (h, a) = on_host(agent)?;
                let args = json!({"agent": a, "text": text, "steer": steer});
                Some((h, "agent.send", args, agent.clone()))
            }
            Verb::Wait { target, timeout } => {
                let secs = timeout.unwrap_or(super::DEFAULT_WAIT).as_secs();
                match target {
                    WaitFor::Agent(agent) => {
                        let (h, a) = on_host(agent)?;
                        let args = json!({"agent": a, "timeout_secs": secs});
                        Some((h, "agent.wait", args, agent.clone()))
                    }
                    WaitFor::Message(id) => {
                        let (h, m) = on_host(id)?;
                        let args = json!({"message_id": m, "timeout_secs": secs});
                        // A message's id names no agent: any agent of that
                        // host in `can_message` will do.
                        Some((h.clone(), "agent.wait", args, format!("{h}:")))
                    }
                    // A turn's id is ours (`hive ctl wait`).
                    WaitFor::Turn(_) => None,
                }
            }
            Verb::Interrupt { pane: agent } => {
                let (h, a) = on_host(agent)?;
                Some((h, "agent.interrupt", json!({"agent": a}), agent.clone()))
            }
            Verb::Answer {
                pane: agent,
                request_id,
                decision,
            } => {
                let (h, a) = on_host(agent)?;
                let (name, args) = match decision {
                    PermissionDecision::Deny { reason } => (
                        "agent.deny",
                        json!({"agent": a, "request_id": request_id, "reason": reason}),
                    ),
                    d => (
                        "agent.approve",
                        json!({"agent": a, "request_id": request_id,
                               "always": *d == PermissionDecision::AllowAlways}),
                    ),
                };
                Some((h, name, args, agent.clone()))
            }
            // Only what names an agent there (no operation asks the rest).
            _ => None,
        }
    }
}

/// This server's rules for an operation on `host:agent`: the caller's
/// `can_message` names it, and a message counts against its rate limit.
pub fn gate<X>(
    ops: &mut super::OpsHost,
    panes: &crate::panes::Panes<X>,
    caller: &Caller,
    addressed: &str,
    sends: bool,
) -> Result<(), OpError> {
    let allowed = match addressed.strip_suffix(':') {
        Some(host) => super::reaches_host(panes, caller, host),
        None => super::allowed(panes, caller, addressed),
    };
    if !allowed {
        return Err(OpError::new(
            "not_allowed",
            format!(
                "this agent may not reach `{addressed}` (add it to `can_message` in hive's config)"
            ),
        ));
    }
    match caller {
        Caller::Agent(id) if sends => ops.rate(id),
        _ => Ok(()),
    }
}

/// One `op` call on the host's control socket, through ssh.
async fn call(link: &HostLink, name: &str, args: Value) -> Result<Value, OpError> {
    let unavailable = |why: String| {
        OpError::new(
            "unavailable",
            format!(
                "{}: {}",
                link.target.name,
                crate::sanitize::neutralize(&why)
            ),
        )
    };
    let bin = {
        let mut bin = link.bin.lock().await;
        match bin.as_ref() {
            Some(b) => b.clone(),
            None => bin
                .insert(
                    crate::remote::install::find(&link.ssh, &link.target)
                        .await
                        .map_err(unavailable)?,
                )
                .clone(),
        }
    };
    let remote = crate::remote::relay_command(&link.target, &bin, false);
    let mut child = tokio::process::Command::from(link.ssh.command(&link.target, true, &remote))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| unavailable(format!("running ssh: {e}")))?;
    let request = Request {
        id: 1,
        call: Call::Op {
            agent: None,
            op: name.to_owned(),
            args,
        },
    };
    let line = serde_json::to_string(&request).map_err(|e| unavailable(e.to_string()))?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(unavailable("ssh's pipes are missing".into()));
    };
    stdin
        .write_all(format!("{line}\n").as_bytes())
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    let mut reply = String::new();
    BufReader::new(stdout)
        .read_line(&mut reply)
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    if reply.trim().is_empty() {
        let mut said = String::new();
        if let Some(mut err) = child.stderr.take() {
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut err, &mut said).await;
        }
        return Err(unavailable(if said.trim().is_empty() {
            "no answer".into()
        } else {
            said.trim().to_owned()
        }));
    }
    let reply: Reply =
        serde_json::from_str(&reply).map_err(|e| unavailable(format!("unreadable answer: {e}")))?;
    if let Some(e) = reply.error {
        return Err(unavailable(e.message));
    }
    envelope(reply.result.unwrap_or(Value::Null))
}

/// The remote's `{"ok": …}` envelope back into an outcome.
fn envelope(v: Value) -> Result<Value, OpError> {
    if v["ok"] == json!(true) {
        return Ok(v["result"].clone());
    }
    let code = v["error"]["code"].as_str().unwrap_or("unavailable");
    let message = v["error"]["message"].as_str().unwrap_or("the host refused");
    Err(OpError::new(
        known_code(code),
        crate::sanitize::neutralize(message).into_owned(),
    ))
}

/// Error codes are `&'static str`: the remote's, when one of ours.
fn known_code(code: &str) -> &'static str {
    OpError::known(code).unwrap_or("unavailable")
}

/// `message_id`s that came back name the host they live on.
fn prefix_ids(mut v: Value, host: &str) -> Value {
    if let Some(id) = v.get("message_id").and_then(Value::as_str) {
        v["message_id"] = json!(format!("{host}:{id}"));
    }
    v
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::HostConfig;

    /// One host, `box`; its ssh's control dir is never made (nothing
    /// here connects).
    fn across() -> Across {
        let host = HostConfig {
            name: "box".into(),
            ssh: "me@box".into(),
            path: "/src".into(),
            ssh_command: None,
            ..Default::default()
        };
        let target = host.target().unwrap();
        let ssh = Ssh::for_target(&target, std::path::Path::new("/nonexistent")).unwrap();
        let link = HostLink {
            ssh,
            target,
            bin: Mutex::new(None),
        };
        Across {
            hosts: [(host.name, Arc::new(link))].into_iter().collect(),
        }
    }

    #[test]
    fn only_agents_of_a_configured_host_go_across() {
        let a = across();
        let send = Verb::Send {
            pane: "box:far".into(),
            text: "hi".into(),
            steer: false,
        };
        let (host, name, args, addressed) = a.split(&send).unwrap();
        assert_eq!(
            (host.as_str(), name, addressed.as_str()),
            ("box", "agent.send", "box:far")
        );
        assert_eq!(args["agent"], "far");
        // Another prefix is a local agent's id (ids may not hold `:`, so
        // the local host refuses it as unknown).
        let other = Verb::Interrupt {
            pane: "nas:x".into(),
        };
        assert!(a.split(&other).is_none());
        assert!(a.split(&Verb::List).is_none());
        let wait = Verb::Wait {
            target: WaitFor::Message("box:m3".into()),
            timeout: Some(Duration::from_secs(30)),
        };
        let (_, _, args, addressed) = a.split(&wait).unwrap();
        assert_eq!(args["message_id"], "m3");
        assert_eq!(args["timeout_secs"], 30);
        assert_eq!(addressed, "box:");
    }

    #[test]
    fn what_comes_back_is_checked_and_named_after_its_host() {
        let ok = envelope(json!({"ok": true, "result": {"message_id": "m7"}})).unwrap();
        assert_eq!(prefix_ids(ok, "box")["message_id"], "box:m7");
        let e = envelope(json!({"ok": false, "error": {"code": "pwn\u{1b}[2J", "message": "bad\u{1b}]0;t\u{7}"}}))
            .unwrap_err();
        assert_eq!(e.code, "unavailable");
        assert!(!e.message.contains('\u{1b}'), "{}", e.message);
        let e = envelope(json!({"ok": false, "error": {"code": "not_allowed", "message": "no"}}))
            .unwrap_err();
        assert_eq!(e.code, "not_allowed");
    }
}
