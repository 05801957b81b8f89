"""Anthropic Messages API (Claude Code, claude-code-acp): POST /v1/messages, SSE or whole."""

import json

from wire import new_id, output_tokens

NAME = "anthropic"


def _user_text(content):
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _only_tool_results(content):
    return isinstance(content, list) and content and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def analyse(body):
    msgs = body.get("messages") or []
    last = max((i for i, m in enumerate(msgs)
                if m.get("role") == "user" and not _only_tool_results(m.get("content"))), default=-1)
    fmt = body.get("output_format") or (body.get("output_config") or {}).get("format") or {}
    return {
        "prompt": _user_text(msgs[last].get("content")) if last >= 0 else "",
        "step": sum(1 for m in msgs[last + 1:] if m.get("role") == "assistant"),
        "tools": {t["name"]: {"schema": t.get("input_schema")} for t in body.get("tools") or [] if "name" in t},
        "model": body.get("model") or "claude-mock",
        "schema": fmt.get("schema", {}) if isinstance(fmt, dict) and fmt.get("type") == "json_schema" else None,
    }


def _stop_reason(blocks):
    return "tool_use" if any(b["kind"] == "tool" for b in blocks) else "end_turn"


def _usage(reply, blocks):
    return {"input_tokens": reply.input_tokens, "output_tokens": output_tokens(blocks),
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def stream(reply, blocks, model):
    def ev(obj):
        reply.sse(obj, obj["type"])

    reply.start_sse()
    ev({"type": "message_start", "message": {
        "id": new_id("msg_mock_"), "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": dict(_usage(reply, []), output_tokens=1)}})
    for index, b in enumerate(blocks):
        if b["kind"] == "thinking":
            ev({"type": "content_block_start", "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            for c in b["chunks"]:
                ev({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": c}})
                reply.paced()
            ev({"type": "content_block_delta", "index": index,
                "delta": {"type": "signature_delta", "signature": new_id("mocksig_")}})
        elif b["kind"] == "text":
            ev({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            for c in b["chunks"]:
                ev({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": c}})
                reply.paced()
        else:
            ev({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": new_id("toolu_mock_"), "name": b["name"], "input": {}}})
            js = json.dumps(b["args"])
            for i in range(0, len(js), 24):
                ev({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": js[i:i + 24]}})
            reply.paced()
        ev({"type": "content_block_stop", "index": index})
    ev({"type": "message_delta", "delta": {"stop_reason": _stop_reason(blocks), "stop_sequence": None},
        "usage": {"output_tokens": output_tokens(blocks)}})
    ev({"type": "message_stop"})
    reply.end_sse()


def whole(reply, blocks, model):
    content = []
    for b in blocks:
        if b["kind"] == "thinking":
            content.append({"type": "thinking", "thinking": "".join(b["chunks"]), "signature": new_id("mocksig_")})
        elif b["kind"] == "text":
            content.append({"type": "text", "text": "".join(b["chunks"])})
        else:
            content.append({"type": "tool_use", "id": new_id("toolu_mock_"), "name": b["name"], "input": b["args"]})
    reply.json(200, {"id": new_id("msg_mock_"), "type": "message", "role": "assistant", "model": model,
                     "content": content, "stop_reason": _stop_reason(blocks), "stop_sequence": None,
                     "usage": _usage(reply, blocks)})


ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}


def error(reply, status, message, streaming, in_stream):
    obj = {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}
    if in_stream and streaming:
        reply.start_sse()
        reply.sse(obj, "error")
        reply.end_sse()
    else:
        reply.json(status, obj)

