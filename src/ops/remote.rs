//! hive's operations across the control socket: the `op` call of the
//! control protocol (src/control/protocol.rs), so `hive mcp` — a separate
//! process an agent starts — reaches the server's `OpsHost` over the same
//! socket and protocol as `hive ctl`, with no second protocol.
//!
//! The server's side (`request`) makes the call the `HiveRequest` its ops
//! host runs, so the wait timeout and the caller's `can_message` and chain
//! limits are exactly those of an in-process agent.
//! The client side (`SocketOps`) sends one `op` request per operation on
//! its own connection (an `agent.wait` may hold its connection for minutes).

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{Caller, HiveRequest, OpError, Ops};
use crate::control::client::{Client, ClientError, Prefer, discover};
use crate::control::hub::Responder;
use crate::control::protocol::Call;

/// One `op` request from the socket as the request the server's ops host
/// runs, on the same pass of its loop; a task answers the socket with the
/// envelope `{"ok": true, "result": …}` or `{"ok": false, "error": {code,
/// message}}` once it is answered, with the wait timeout an in-process
/// agent has (`HiveClient::call`). `None`: answered already (an unknown op
/// or bad arguments). Must run inside a tokio runtime.
pub fn request(
    agent: Option<String>,
    op: &str,
    args: Value,
    reply: Responder,
) -> Option<HiveRequest> {
    let verb = match super::parse(op, args) {
        Ok(verb) => verb,
        Err(e) => {
            let _ = reply.send(Ok(envelope(Err(e))));
            return None;
        }
    };
    let timeout = verb.timeout();
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let outcome = super::answer(timeout, rx).await;
        let _ = reply.send(Ok(envelope(outcome)));
    });
    Some(HiveRequest {
        caller: agent.map_or(Caller::Cli, Caller::Agent),
        verb,
        reply: tx,
    })
}

pub fn envelope(outcome: Result<Value, OpError>) -> Value {
    match outcome {
        Ok(v) => json!({"ok": true, "result": v}),
        Err(e) => json!({"ok": false, "error": e.to_json()}),
    }
}

/// Reads an envelope back; anything else is the hive misbehaving.
pub(crate) fn unwrap_envelope(v: Value) -> Result<Value, OpError> {
    let ok = v.get("ok").and_then(Value::as_bool);
    match ok {
        Some(true) => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
        Some(false) => {
            let e = v.get("error").cloned().unwrap_or(Value::Null);
            let code = match e.get("code").and_then(Value::as_str) {
                // OpError codes are static: map the known ones back.
                Some(c) => known_code(c),
                None => "error",
            };
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the operation failed")
                .to_owned();
            Err(OpError::new(code, message))
        }
        None => Err(OpError::new("unavailable", format!("unexpected reply {v}"))),
    }
}

fn known_code(code: &str) -> &'static str {
    OpError::known(code).unwrap_or("error")
}

/// Operations over the control socket, as one agent (or as an outside
/// caller). The socket is found per call, so `hive mcp` can start before
/// the hive it serves.
#[derive(Debug, Clone)]
pub(crate) struct SocketOps {
    /// `--socket` / `HIVE_SOCKET`: a path or a name in the socket dir.
    pub socket: Option<String>,
    pub agent: Option<String>,
}

impl SocketOps {
    fn call_blocking(&self, name: &str, args: Value) -> Result<Value, OpError> {
        let unreachable = |e: ClientError| OpError::new("unavailable", e.to_string());
        let dir = crate::control::socket_dir();
        let path = discover(self.socket.as_deref(), &dir, Prefer::None).map_err(unreachable)?;
        let mut client = Client::connect(&path).map_err(unreachable)?;
        let reply = client
            .call(Call::Op {
                agent: self.agent.clone(),
                op: name.to_owned(),
                args,
            })
            .map_err(unreachable)?;
        unwrap_envelope(reply)
    }
}

impl Ops for SocketOps {
    fn call_op(&self, name: &str, arguments: Value) -> BoxFuture<'static, Result<Value, OpError>> {
        let me = self.clone();
        let name = name.to_owned();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || me.call_blocking(&name, arguments))
                .await
                .unwrap_or_else(|e| Err(OpError::new("unavailable", e.to_string())))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_round_trip() {
        let ok = envelope(Ok(json!({"message_id": "m1"})));
        assert_eq!(unwrap_envelope(ok).unwrap(), json!({"message_id": "m1"}));
        let refused = envelope(Err(OpError::new("not_allowed", "no")));
        assert_eq!(
            unwrap_envelope(refused).unwrap_err(),
            OpError::new("not_allowed", "no")
        );
        assert_eq!(
            unwrap_envelope(json!({"x": 1})).unwrap_err().code,
            "unavailable"
        );
    }

    /// #46 item 16: `hive mcp`'s refused spawn said `error` where the
    /// in-process agent is told `spawn_limit`.
    #[test]
    fn every_code_hive_makes_crosses_the_socket() {
        let refused = envelope(Err(OpError::new("spawn_limit", "one running")));
        assert_eq!(unwrap_envelope(refused).unwrap_err().code, "spawn_limit");
        let mut made = Vec::new();
        codes_in(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut made,
        );
        assert!(made.len() > 10, "{made:?}");
        for code in made {
            assert_eq!(known_code(&code), code, "{code} is not in ops::CODES");
        }
    }

    /// The string codes `OpError::new(` is called with under `dir`.
    fn codes_in(dir: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                codes_in(&path, out);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            // Split so this file's own needle is not read as a call.
            for part in text.split(concat!("OpError", "::new(")).skip(1) {
                let part = part.trim_start();
                if let Some(rest) = part.strip_prefix('"')
                    && let Some(end) = rest.find('"')
                {
                    out.push(rest[..end].to_owned());
                }
            }
        }
    }
}
