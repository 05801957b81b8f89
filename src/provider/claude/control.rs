//! Lines hive writes to Claude Code's stdin (stream-json input, as the Claude
//! Agent SDK writes them; shapes recorded in realcli/README.md "stdin protocol").
//!
//! Every line is built as a `serde_json::Value` and serialized, never
//! formatted by hand: one non-JSON line on stdin ends the CLI (exit 1).

use serde_json::{Value, json};

use crate::image::Image;

/// A user message. `uuid` comes back in `result.user_message_uuids`, which is
/// how the provider maps Claude's turns onto hive's. Images go first as
/// base64 `image` blocks, then the text block (the Messages API shape).
pub fn user_message(text: &str, images: &[Image], uuid: &str) -> String {
    let content = if images.is_empty() {
        json!(text)
    } else {
        let mut blocks: Vec<Value> = images
            .iter()
            .map(|i| {
                json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": i.media_type, "data": i.base64()},
                })
            })
            .collect();
        blocks.push(json!({"type": "text", "text": text}));
        Value::Array(blocks)
    };
    json!({
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": null,
        "session_id": "",
        "uuid": uuid,
    })
    .to_string()
}

/// The SDK's handshake; the answer lists slash commands, models and agents.
pub fn initialize(request_id: &str) -> String {
    control_request(request_id, json!({"subtype": "initialize"}))
}

/// Stops the running turn. `cancel_queued` also drops messages Claude had
/// queued behind it (steered messages belong to the hive turn being cancelled).
pub fn interrupt(request_id: &str) -> String {
    control_request(
        request_id,
        json!({"subtype": "interrupt", "cancel_queued": true}),
    )
}

/// Switches the model for the next requests (the SDK's `setModel`).
pub fn set_model(request_id: &str, model: &str) -> String {
    control_request(request_id, json!({"subtype": "set_model", "model": model}))
}

/// Thinking budget for the next requests (the SDK's `setMaxThinkingTokens`;
/// 0 turns thinking off).
pub(crate) fn set_max_thinking_tokens(request_id: &str, tokens: u64) -> String {
    control_request(
        request_id,
        json!({"subtype": "set_max_thinking_tokens", "max_thinking_tokens": tokens}),
    )
}

/// Answer to `can_use_tool`: run the tool with its original input.
pub fn permission_allow(request_id: &str, input: &Value) -> String {
    control_success(
        request_id,
        json!({"behavior": "allow", "updatedInput": input}),
    )
}

/// Answer to `can_use_tool`: refuse; Claude sees `message` as the tool result.
pub fn permission_deny(request_id: &str, message: &str) -> String {
    control_success(request_id, json!({"behavior": "deny", "message": message}))
}

/// Answer to a control request hive does not handle, so the CLI never waits.
pub(crate) fn control_error(request_id: &str, message: &str) -> String {
    json!({
        "type": "control_response",
        "response": {"subtype": "error", "request_id": request_id, "error": message},
    })
    .to_string()
}

fn control_request(request_id: &str, request: Value) -> String {
    json!({"type": "control_request", "request_id": request_id, "request": request}).to_string()
}

fn control_success(request_id: &str, response: Value) -> String {
    json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Value {
        assert!(!line.contains('\n'), "one line: {line}");
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn user_message_matches_the_sdk_shape() {
        let v = parse(&user_message("say \"hi\"\nplease", &[], "u-1"));
        assert_eq!(v["type"], "user");
        assert_eq!(v["message"]["role"], "user");
        assert_eq!(v["message"]["content"], "say \"hi\"\nplease");
        assert_eq!(v["uuid"], "u-1");
        assert!(v["parent_tool_use_id"].is_null());
    }

    #[test]
    fn interrupt_and_permission_answers() {
        let v = parse(&interrupt("req_int_1"));
        assert_eq!(v["type"], "control_request");
        assert_eq!(v["request"]["subtype"], "interrupt");
        let input = json!({"command": "mkdir x"});
        let v = parse(&permission_allow("abc", &input));
        assert_eq!(v["response"]["request_id"], "abc");
        assert_eq!(v["response"]["response"]["behavior"], "allow");
        assert_eq!(v["response"]["response"]["updatedInput"], input);
        let v = parse(&permission_deny("abc", "no"));
        assert_eq!(v["response"]["response"]["behavior"], "deny");
        assert_eq!(v["response"]["response"]["message"], "no");
        let v = parse(&control_error("x", "unsupported"));
        assert_eq!(v["response"]["subtype"], "error");
    }

    #[test]
    fn model_and_thinking_requests_match_the_sdk_shape() {
        let v = parse(&set_model("req_model_1", "sonnet"));
        assert_eq!(v["type"], "control_request");
        assert_eq!(v["request"]["subtype"], "set_model");
        assert_eq!(v["request"]["model"], "sonnet");
        let v = parse(&set_max_thinking_tokens("req_t_1", 10_000));
        assert_eq!(v["request"]["subtype"], "set_max_thinking_tokens");
        assert_eq!(v["request"]["max_thinking_tokens"], 10_000);
    }
}
