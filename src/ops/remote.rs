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

use super::{Caller, HiveRequest, Op, OpError, Ops};
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
    let op = match Op::parse(op, args) {
        Ok(op) => op,
        Err(e) => {
            let _ = reply.send(Ok(envelope(Err(e))));
            return None;
        }
    };
    let timeout = op.timeout();
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let outcome = super::answer(timeout, rx).await;
        let _ = reply.send(Ok(envelope(outcome)));
    });
    Some(HiveRequest {
        caller: agent.map_or(Caller::External, Caller::Agent),
        op,
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
    const CODES: &[&str] = &[
        "invalid_args",
        "unknown_op",
        "unknown_agent",
        "unknown_message",
        "unknown_tool",
        "not_allowed",
        "message_loop",
        "too_deep",
        "rate_limited",
        "no_message",
        "timeout",
        "unavailable",
    ];
    CODES
        .iter()
        .find(|c| **c == code)
        .copied()
        .unwrap_or("error")
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
}
