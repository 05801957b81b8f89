"""OpenAI Chat Completions (pi and other OpenAI-compatible clients): POST /v1/chat/completions."""

import json
import time

from wire import new_id, output_tokens

NAME = "chat"


def _text(content):
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def analyse(body):
    msgs = body.get("messages") or []
    last = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=-1)
    fmt = body.get("response_format") or {}
    schema = None
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
    elif fmt.get("type") == "json_object":
        schema = {}
    return {
        "prompt": _text(msgs[last].get("content")) if last >= 0 else "",
        "step": sum(1 for m in msgs[last + 1:] if m.get("role") == "assistant"),
        "tools": {t["function"]["name"]: {"schema": t["function"].get("parameters")}
                  for t in body.get("tools") or [] if "name" in (t.get("function") or {})},
        "model": body.get("model") or "mock-model",
        "schema": schema,
    }


def _finish(blocks):
    return "tool_calls" if any(b["kind"] == "tool" for b in blocks) else "stop"


def _usage(reply, blocks):
    out = output_tokens(blocks)
    return {"prompt_tokens": reply.input_tokens, "completion_tokens": out, "total_tokens": reply.input_tokens + out}


def stream(reply, blocks, model, include_usage=True):
    cid = new_id("chatcmpl-mock")

    def chunk(delta, finish=None, **extra):
        reply.sse(dict({"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}, **extra))

    reply.start_sse()
    chunk({"role": "assistant", "content": ""})
    calls = 0
    for b in blocks:
        if b["kind"] in ("thinking", "text"):
            key = "reasoning_content" if b["kind"] == "thinking" else "content"
            for c in b["chunks"]:
                chunk({key: c})
                reply.paced()
        else:
            chunk({"tool_calls": [{"index": calls, "id": new_id("call_mock_"), "type": "function",
                                   "function": {"name": b["name"], "arguments": ""}}]})
            args = json.dumps(b["args"])
            for i in range(0, len(args), 24):
                chunk({"tool_calls": [{"index": calls, "function": {"arguments": args[i:i + 24]}}]})
            calls += 1
            reply.paced()
    chunk({}, _finish(blocks))
    if include_usage:
        reply.sse({"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                   "choices": [], "usage": _usage(reply, blocks)})
    reply.sse("[DONE]")
    reply.end_sse()


def whole(reply, blocks, model):
    msg = {"role": "assistant", "content": None}
    for b in blocks:
        if b["kind"] == "text":
            msg["content"] = (msg["content"] or "") + "".join(b["chunks"])
        elif b["kind"] == "thinking":
            msg["reasoning_content"] = "".join(b["chunks"])
        else:
            msg.setdefault("tool_calls", []).append({"id": new_id("call_mock_"), "type": "function", "function": {
                "name": b["name"], "arguments": json.dumps(b["args"])}})
    reply.json(200, {"id": new_id("chatcmpl-mock"), "object": "chat.completion", "created": int(time.time()),
                     "model": model, "choices": [{"index": 0, "message": msg, "finish_reason": _finish(blocks)}],
                     "usage": _usage(reply, blocks)})


def error(reply, status, message, streaming, in_stream):
    obj = {"error": {"message": message, "type": "invalid_request_error" if status == 400 else "server_error",
                     "param": None, "code": None}}
    if in_stream and streaming:
        reply.start_sse()
        reply.sse(obj)
        reply.end_sse()
    else:
        reply.json(status, obj)
