"""OpenAI Responses API (Codex exec / app-server, codex-acp): POST /v1/responses, SSE or whole."""

import json
import time

from wire import new_id, output_tokens, tokens

NAME = "responses"

MODEL_ITEMS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call")


def _text(content):
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def analyse(body):
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    items = items or []
    last = max((i for i, it in enumerate(items)
                if it.get("role") == "user" and it.get("type", "message") == "message"), default=-1)
    # One model reply = one run of consecutive model items (reasoning, message, calls).
    step, in_reply = 0, False
    for it in items[last + 1:]:
        is_model = it.get("type") in MODEL_ITEMS or it.get("role") == "assistant"
        step += is_model and not in_reply
        in_reply = is_model
    tools = {}
    for t in body.get("tools") or []:
        name = t.get("name") or t.get("type")
        tools[name] = {"schema": t.get("parameters"), "custom": t.get("type") == "custom"}
    fmt = (body.get("text") or {}).get("format") or {}
    return {
        "prompt": _text(items[last].get("content")) if last >= 0 else "",
        "step": step,
        "tools": tools,
        "model": body.get("model") or "gpt-mock",
        "schema": fmt.get("schema", {}) if fmt.get("type") == "json_schema" else None,
    }


def _items(blocks):
    """(block, finished item) pairs; the item ids are fixed up front so deltas can name them."""
    out = []
    for b in blocks:
        if b["kind"] == "thinking":
            text = "".join(b["chunks"])
            item = {"id": new_id("rs_"), "type": "reasoning", "encrypted_content": None,
                    "summary": [{"type": "summary_text", "text": text}]}
        elif b["kind"] == "text":
            item = {"id": new_id("msg_"), "type": "message", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "".join(b["chunks"]), "annotations": []}]}
        elif b["custom"]:
            item = {"id": new_id("ctc_"), "type": "custom_tool_call", "status": "completed",
                    "call_id": new_id("call_mock_"), "name": b["name"],
                    "input": b["args"] if isinstance(b["args"], str) else json.dumps(b["args"])}
        else:
            item = {"id": new_id("fc_"), "type": "function_call", "status": "completed",
                    "call_id": new_id("call_mock_"), "name": b["name"], "arguments": json.dumps(b["args"])}
        out.append((b, item))
    return out


def _response(rid, status, model, output, usage=None):
    return {"id": rid, "object": "response", "created_at": int(time.time()), "status": status, "model": model,
            "output": output, "error": None, "incomplete_details": None, "usage": usage}


def _usage(reply, blocks):
    out = output_tokens(blocks)
    think = sum(tokens("".join(b["chunks"])) for b in blocks if b["kind"] == "thinking")
    return {"input_tokens": reply.input_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out, "output_tokens_details": {"reasoning_tokens": think},
            "total_tokens": reply.input_tokens + out}


def stream(reply, blocks, model):
    seq = iter(range(1 << 30))

    def ev(kind, **fields):
        reply.sse(dict({"type": kind, "sequence_number": next(seq)}, **fields), kind)

    rid = new_id("resp_")
    reply.start_sse()
    ev("response.created", response=_response(rid, "in_progress", model, []))
    ev("response.in_progress", response=_response(rid, "in_progress", model, []))
    done = []
    for index, (b, item) in enumerate(_items(blocks)):
        iid = item["id"]
        if item["type"] == "reasoning":
            ev("response.output_item.added", output_index=index, item=dict(item, summary=[]))
            ev("response.reasoning_summary_part.added", item_id=iid, output_index=index, summary_index=0,
               part={"type": "summary_text", "text": ""})
            for c in b["chunks"]:
                ev("response.reasoning_summary_text.delta", item_id=iid, output_index=index, summary_index=0, delta=c)
                reply.paced()
            text = item["summary"][0]["text"]
            ev("response.reasoning_summary_text.done", item_id=iid, output_index=index, summary_index=0, text=text)
            ev("response.reasoning_summary_part.done", item_id=iid, output_index=index, summary_index=0,
               part={"type": "summary_text", "text": text})
        elif item["type"] == "message":
            ev("response.output_item.added", output_index=index,
               item=dict(item, status="in_progress", content=[]))
            ev("response.content_part.added", item_id=iid, output_index=index, content_index=0,
               part={"type": "output_text", "text": "", "annotations": []})
            for c in b["chunks"]:
                ev("response.output_text.delta", item_id=iid, output_index=index, content_index=0, delta=c, logprobs=[])
                reply.paced()
            part = item["content"][0]
            ev("response.output_text.done", item_id=iid, output_index=index, content_index=0, text=part["text"],
               logprobs=[])
            ev("response.content_part.done", item_id=iid, output_index=index, content_index=0, part=part)
        elif item["type"] == "function_call":
            ev("response.output_item.added", output_index=index, item=dict(item, status="in_progress", arguments=""))
            args = item["arguments"]
            for i in range(0, len(args), 24):
                ev("response.function_call_arguments.delta", item_id=iid, output_index=index, delta=args[i:i + 24])
            ev("response.function_call_arguments.done", item_id=iid, output_index=index, arguments=args)
            reply.paced()
        else:
            ev("response.output_item.added", output_index=index, item=dict(item, status="in_progress", input=""))
            ev("response.custom_tool_call_input.delta", item_id=iid, output_index=index, delta=item["input"])
            ev("response.custom_tool_call_input.done", item_id=iid, output_index=index, input=item["input"])
            reply.paced()
        ev("response.output_item.done", output_index=index, item=item)
        done.append(item)
    ev("response.completed", response=_response(rid, "completed", model, done, _usage(reply, blocks)))
    reply.end_sse()


def whole(reply, blocks, model):
    output = [item for _, item in _items(blocks)]
    reply.json(200, _response(new_id("resp_"), "completed", model, output, _usage(reply, blocks)))


CODES = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}


def error(reply, status, message, streaming, in_stream):
    code = CODES.get(status, "server_error")
    if in_stream and streaming:
        reply.start_sse()
        reply.sse({"type": "response.failed", "sequence_number": 0, "response": dict(
            _response(new_id("resp_"), "failed", "gpt-mock", []), error={"code": code, "message": message})},
            "response.failed")
        reply.end_sse()
    else:
        reply.json(status, {"error": {"message": message, "type": code, "param": None, "code": code}})
