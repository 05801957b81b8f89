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

use super::{Caller, HiveRequest, Op, OpError, WaitFor};
use crate::config::Config;
use crate::control::protocol::{Call, Reply, Request};
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
        let control = crate::remote::control_dir();
        let mut hosts = BTreeMap::new();
        for h in &config.hosts {
            let Ok(target) = h.target() else { continue };
            let Ok(ssh) = Ssh::for_target(&target, &control) else {
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
    /// its own; hands back any other. `may_reach(caller, "box:agent")`
    /// is the caller's `can_message` rule.
    pub fn take(
        &self,
        req: HiveRequest,
        may_reach: impl Fn(&Caller, &str) -> bool,
    ) -> Option<HiveRequest> {
        let Some((host, name, args, addressed)) = self.split(&req.op) else {
            return Some(req);
        };
        let HiveRequest { caller, reply, .. } = req;
        if !may_reach(&caller, &addressed) {
            let _ = reply.send(Err(OpError::new(
                "not_allowed",
                format!(
                    "this agent may not reach `{addressed}` (add it to `can_message` in hive's config)"
                ),
            )));
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
    fn split(&self, op: &Op) -> Option<(String, &'static str, Value, String)> {
        let on_host = |addr: &str| -> Option<(String, String)> {
            let (host, rest) = addr.split_once(':')?;
            self.hosts
                .contains_key(host)
                .then(|| (host.to_owned(), rest.to_owned()))
        };
        match op {
            Op::List => None,
            Op::Read {
                agent,
                last,
                since,
                full,
            } => {
                let (h, a) = on_host(agent)?;
                let args = json!({"agent": a, "last": last, "since": since, "full": full});
                Some((h, "agent.read", args, agent.clone()))
            }
            Op::Send { agent, text, steer } => {
                let (h, a) = on_host(agent)?;
                let args = json!({"agent": a, "text": text, "steer": steer});
                Some((h, "agent.send", args, agent.clone()))
            }
            Op::Wait { target, timeout } => {
                let secs = timeout.as_secs();
                match target {
                    WaitFor::Agent(agent) => {
                        let (h, a) = on_host(agent)?;
                        let args = json!({"agent": a, "timeout_secs": secs});
                        Some((h, "agent.wait", args, agent.clone()))
                    }
                    WaitFor::Message(id) => {
                        let (h, m) = on_host(id)?;
                        let args = json!({"message_id": m, "timeout_secs": secs});
                        // Waiting on a message reaches only its sender.
                        Some((h.clone(), "agent.wait", args, format!("{h}:*")))
                    }
                }
            }
            Op::Interrupt { agent } => {
                let (h, a) = on_host(agent)?;
                Some((h, "agent.interrupt", json!({"agent": a}), agent.clone()))
            }
        }
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
    [
        "unknown_agent",
        "not_allowed",
        "invalid_args",
        "unavailable",
        "rate_limited",
        "message_loop",
        "too_deep",
        "no_message",
        "unknown_message",
        "unknown_op",
        "timeout",
    ]
    .into_iter()
    .find(|c| *c == code)
    .unwrap_or("unavailable")
}

/// `message_id`s that came back name the host they live on.
fn prefix_ids(mut v: Value, host: &str) -> Value {
    if let Some(id) = v.get("message_id").and_then(Value::as_str) {
        v["message_id"] = json!(format!("{host}:{id}"));
    }
    v
}
