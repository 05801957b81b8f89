"""Gemini API (Gemini CLI, gemini --experimental-acp): POST /v1beta/models/M:streamGenerateContent
(SSE, data-only lines) and :generateContent. The CLI's model router sends a generateContent
request without tools that wants JSON matching responseJsonSchema: the server answers those
with a schema instance (see server.py)."""

from wire import new_id, output_tokens, tokens

NAME = "gemini"


def analyse(body):
    contents = body.get("contents") or []

    def is_prompt(c):
        parts = [p for p in c.get("parts") or [] if isinstance(p, dict)]
        return (c.get("role", "user") == "user" and not any("functionResponse" in p for p in parts)
                and any(p.get("text") for p in parts))

    last = max((i for i, c in enumerate(contents) if is_prompt(c)), default=-1)
    tools = {}
    for t in body.get("tools") or []:
        for fd in t.get("functionDeclarations") or []:
            tools[fd["name"]] = {"schema": fd.get("parametersJsonSchema") or fd.get("parameters")}
    gc = body.get("generationConfig") or {}
    schema = None
    if gc.get("responseMimeType") == "application/json":
        schema = gc.get("responseJsonSchema") or gc.get("responseSchema") or {}
    return {
        "prompt": "\n".join(p.get("text", "") for p in contents[last].get("parts") or []
                            if isinstance(p, dict)) if last >= 0 else "",
        "step": sum(1 for c in contents[last + 1:] if c.get("role") == "model"),
        "tools": tools,
        "model": body.get("model") or "gemini-mock",
        "schema": schema,
    }


def _part(b, text=None):
    if b["kind"] == "thinking":
        return {"text": text, "thought": True}
    if b["kind"] == "text":
        return {"text": text}
    # Gemini 3 models require a thought signature on function calls they are sent back.
    return {"functionCall": {"name": b["name"], "args": b["args"]}, "thoughtSignature": "skip_thought_signature_validator"}


def _usage(reply, blocks):
    out = output_tokens(blocks)
    think = sum(tokens("".join(b["chunks"])) for b in blocks if b["kind"] == "thinking")
    return {"promptTokenCount": reply.input_tokens, "candidatesTokenCount": out, "thoughtsTokenCount": think,
            "totalTokenCount": reply.input_tokens + out}


def stream(reply, blocks, model):
    parts = []
    for b in blocks:
        parts += [_part(b, c) for c in b["chunks"]] if "chunks" in b else [_part(b)]
    parts = parts or [{"text": ""}]
    rid = new_id("")
    reply.start_sse()
    for i, part in enumerate(parts):
        candidate = {"content": {"role": "model", "parts": [part]}, "index": 0}
        msg = {"candidates": [candidate], "modelVersion": model, "responseId": rid}
        if i == len(parts) - 1:
            candidate["finishReason"] = "STOP"
            msg["usageMetadata"] = _usage(reply, blocks)
        reply.sse(msg)
        reply.paced()
    reply.end_sse()


def whole(reply, blocks, model):
    parts = [_part(b, "".join(b["chunks"])) if "chunks" in b else _part(b) for b in blocks] or [{"text": ""}]
    reply.json(200, {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                     "usageMetadata": _usage(reply, blocks), "modelVersion": model, "responseId": new_id("")})


STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def error(reply, status, message, streaming, in_stream):
    obj = {"error": {"code": status, "message": message, "status": STATUS.get(status, "UNKNOWN")}}
    if in_stream and streaming:
        reply.start_sse()
        reply.sse(obj)
        reply.end_sse()
    else:
        reply.json(status, obj)
