//! JSON-RPC 2.0 framing for ACP over stdio: one JSON object per line.
//!
//! Requests we send get increasing numeric ids and are remembered until their
//! response arrives; requests the agent sends carry ids of any JSON type
//! (codex-acp uses UUID strings) and are answered with the id echoed verbatim.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Value, json};

/// JSON-RPC "method not found".
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC "invalid params".
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// One line from the agent, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to one of our requests.
    Response {
        id: Value,
        result: Result<Value, RpcError>,
    },
    /// The agent asks us something and waits for an answer.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    /// The message plus whatever detail the agent put in `data`.
    pub fn describe(&self) -> String {
        let detail = match &self.data {
            Some(Value::Object(m)) => m
                .get("details")
                .or_else(|| m.get("message"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        match detail {
            Some(d) if !d.is_empty() && !self.message.contains(&d) => {
                format!("{}: {d}", self.message)
            }
            _ => self.message.clone(),
        }
    }
}

/// Why a line is not JSON-RPC.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FrameError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("not a JSON-RPC message: {0}")]
    NotRpc(&'static str),
}

/// Classifies one line.
pub fn parse_line(line: &str) -> Result<Incoming, FrameError> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| FrameError::NotJson(e.to_string()))?;
    let Value::Object(mut obj) = value else {
        return Err(FrameError::NotRpc("not an object"));
    };
    let id = obj.remove("id");
    let method = match obj.remove("method") {
        Some(Value::String(m)) => Some(m),
        Some(_) => return Err(FrameError::NotRpc("`method` is not a string")),
        None => None,
    };
    let params = obj.remove("params").unwrap_or(Value::Null);
    match (method, id) {
        (Some(method), Some(id)) if !id.is_null() => Ok(Incoming::Request { id, method, params }),
        (Some(method), _) => Ok(Incoming::Notification { method, params }),
        (None, Some(id)) => {
            if let Some(err) = obj.remove("error") {
                let code = err.get("code").and_then(Value::as_i64).unwrap_or(-32603);
                let message = err
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_owned();
                let data = err.get("data").filter(|d| !d.is_null()).cloned();
                Ok(Incoming::Response {
                    id,
                    result: Err(RpcError {
                        code,
                        message,
                        data,
                    }),
                })
            } else if let Some(result) = obj.remove("result") {
                Ok(Incoming::Response {
                    id,
                    result: Ok(result),
                })
            } else {
                Err(FrameError::NotRpc("response without `result` or `error`"))
            }
        }
        (None, None) => Err(FrameError::NotRpc("neither `method` nor `id`")),
    }
}

/// Our outgoing side: id allocation and the table of unanswered requests.
#[derive(Debug)]
pub(crate) struct RpcClient<K> {
    next_id: u64,
    pending: HashMap<u64, K>,
}

impl<K> Default for RpcClient<K> {
    fn default() -> Self {
        Self {
            next_id: 0,
            pending: HashMap::new(),
        }
    }
}

impl<K> RpcClient<K> {
    /// A request line; `kind` comes back with its response.
    pub(crate) fn request(
        &mut self,
        method: &str,
        params: impl Serialize,
        kind: K,
    ) -> (u64, String) {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, kind);
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        (id, line.to_string())
    }

    /// Matches a response id to the request it answers.
    pub(crate) fn take(&mut self, id: &Value) -> Option<K> {
        let id = match id {
            Value::Number(n) => n.as_u64()?,
            Value::String(s) => s.parse().ok()?,
            _ => return None,
        };
        self.pending.remove(&id)
    }

    /// Forgets a request whose answer no longer matters.
    pub(crate) fn forget(&mut self, id: u64) {
        self.pending.remove(&id);
    }
}

pub fn notification(method: &str, params: impl Serialize) -> String {
    let params = serde_json::to_value(params).unwrap_or(Value::Null);
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

pub fn response(id: &Value, result: impl Serialize) -> String {
    let result = serde_json::to_value(result).unwrap_or(Value::Null);
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

pub(crate) fn error_response(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_kind_of_line() {
        let r = parse_line(r#"{"jsonrpc":"2.0","result":{"stopReason":"end_turn"},"id":2}"#);
        assert_eq!(
            r,
            Ok(Incoming::Response {
                id: json!(2),
                result: Ok(json!({"stopReason": "end_turn"}))
            })
        );
        let r = parse_line(
            r#"{"jsonrpc":"2.0","id":"9e9c","method":"session/request_permission","params":{}}"#,
        );
        assert!(matches!(r, Ok(Incoming::Request { id, .. }) if id == json!("9e9c")));
        let r = parse_line(r#"{"jsonrpc":"2.0","method":"session/update","params":{"a":1}}"#);
        assert!(
            matches!(r, Ok(Incoming::Notification { method, .. }) if method == "session/update")
        );
        let r = parse_line(
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error","data":{"details":"Query closed"}}}"#,
        );
        let Ok(Incoming::Response { result: Err(e), .. }) = r else {
            panic!("expected an error response, got {r:?}");
        };
        assert_eq!(e.code, -32603);
        assert_eq!(e.describe(), "Internal error: Query closed");
        assert!(matches!(parse_line("{oops"), Err(FrameError::NotJson(_))));
        assert!(matches!(parse_line("[1]"), Err(FrameError::NotRpc(_))));
        assert!(matches!(
            parse_line(r#"{"id":1}"#),
            Err(FrameError::NotRpc(_))
        ));
    }

    #[test]
    fn responses_find_their_requests() {
        let mut c: RpcClient<&str> = RpcClient::default();
        let (a, line) = c.request("initialize", json!({}), "init");
        let (b, _) = c.request("session/new", json!({}), "new");
        assert_ne!(a, b);
        assert!(line.contains(r#""method":"initialize""#));
        assert_eq!(c.take(&json!(b)), Some("new"));
        assert_eq!(c.take(&json!(b)), None);
        assert_eq!(c.take(&json!(a.to_string())), Some("init"));
    }
}
