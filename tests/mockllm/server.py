#!/usr/bin/env python3
"""hive's scripted mock model server (python3 stdlib only), for end-to-end tests that run the
real agent CLIs offline. Listens on 127.0.0.1 only.

    python3 tests/mockllm/server.py --port 0 --port-file /tmp/port --log /tmp/requests.jsonl

APIs (any path prefix before /v1 or /v1beta is ignored, query strings too):
  Anthropic Messages   POST /v1/messages, /v1/messages/count_tokens       api_anthropic.py
  OpenAI Responses     POST /v1/responses                                 api_responses.py
  Chat Completions     POST /v1/chat/completions                          api_chat.py
  Gemini               POST /v1beta/models/M:streamGenerateContent|:generateContent|:countTokens
                                                                          api_gemini.py
  control              GET /health, POST /_mock/scenario {"name": N} (server default scenario)

What to answer: scenarios.py (SCENARIO:<name> in the prompt, or --scenario NAME).
Requests that offer no tools are side requests (titles, the Gemini model router): they get a
short text, or an instance of the JSON schema they ask for, never the scenario's errors.
Log: one JSON line per request (headers subset, body, scenario, step) and one when its
response ended ("done": completed | client_disconnected | server_error).
"""

import argparse
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import api_anthropic  # noqa: E402
import api_chat  # noqa: E402
import api_gemini  # noqa: E402
import api_responses  # noqa: E402
import scenarios  # noqa: E402
from wire import ClientGone, Reply, tokens  # noqa: E402

LOGGED_HEADERS = ("user-agent", "anthropic-beta", "anthropic-version", "originator", "x-stainless-retry-count",
                  "accept", "content-type")


class State:
    def __init__(self, library, log_path):
        self.library = library
        self.lock = threading.Lock()
        self.seq = 0
        self.failures = {}
        self.log_file = open(log_path, "a", buffering=1, encoding="utf-8") if log_path else None

    def next_seq(self):
        with self.lock:
            self.seq += 1
            return self.seq

    def log(self, record):
        if self.log_file:
            line = json.dumps(dict(record, ts=round(time.time(), 3)), ensure_ascii=False)
            with self.lock:
                self.log_file.write(line + "\n")

    def count_failure(self, key):
        """How many times this (scenario, prompt, step) has failed so far, including now."""
        with self.lock:
            self.failures[key] = self.failures.get(key, 0) + 1
            return self.failures[key]


STATE = None


def route(path):
    """(api module, streaming from path?) for a POST path, or None."""
    if path.endswith("/messages"):
        return api_anthropic, None
    if path.endswith("/responses"):
        return api_responses, None
    if path.endswith("/chat/completions"):
        return api_chat, None
    if ":streamGenerateContent" in path:
        return api_gemini, True
    if ":generateContent" in path:
        return api_gemini, False
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hive-mockllm/1"

    def handle(self):
        try:
            super().handle()
        except (ConnectionError, ClientGone):
            pass  # the client went away between requests; nothing to answer

    def log_message(self, *args):
        pass  # the JSONL log is the record; keep stderr quiet

    def do_GET(self):
        path = urlparse(self.path).path
        STATE.log({"seq": STATE.next_seq(), "method": "GET", "path": self.path})
        if path in ("/", "/health"):
            return Reply(self).json(200, {"ok": True})
        if re.search(r"/models/?$", path):
            return Reply(self).json(200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}],
                                          "models": [{"name": "models/mock-model"}]})
        Reply(self).json(404, {"error": {"message": "mockllm: no route for GET " + path}})

    def do_POST(self):
        path = urlparse(self.path).path
        seq = STATE.next_seq()
        body = self._read_body()
        reply = Reply(self)
        if path == "/_mock/scenario":
            STATE.library.default = body.get("name")
            STATE.log({"seq": seq, "method": "POST", "path": path, "body": body})
            return reply.json(200, {"default": STATE.library.default})
        if path.endswith("/count_tokens") or ":countTokens" in path:
            STATE.log({"seq": seq, "method": "POST", "path": self.path, "body": body})
            n = tokens(json.dumps(body))
            return reply.json(200, {"input_tokens": n, "totalTokens": n})
        found = route(path)
        if not found:
            STATE.log({"seq": seq, "method": "POST", "path": self.path, "body": body})
            return reply.json(404, {"error": {"message": "mockllm: no route for POST " + path}})
        api, streaming = found
        if streaming is None:
            streaming = bool(body.get("stream"))
        model_in_path = re.search(r"/models/([^/:]+):", path)
        if model_in_path:
            body.setdefault("model", model_in_path.group(1))
        self._answer(seq, api, streaming, body)

    def _answer(self, seq, api, streaming, body):
        req = api.analyse(body)
        record = {"seq": seq, "method": "POST", "path": self.path, "api": api.NAME, "stream": streaming,
                  "headers": {k: v for k, v in self.headers.items() if k.lower() in LOGGED_HEADERS}}
        try:
            scenario, chosen_by = STATE.library.pick(req["prompt"])
        except (KeyError, ValueError) as e:  # unknown scenario or bad JSON: say so to the client
            STATE.log(dict(record, error=str(e), body=body))
            return Reply(self).json(400, {"error": {"type": "invalid_request_error", "message": "mockllm: %s" % e}})
        side = not req["tools"]
        step = scenarios.step_of(scenario, req["step"])
        if side:
            text = json.dumps(scenarios.instance(req["schema"])) if req["schema"] is not None else "Mock title"
            step = {"text": [text], "delay_ms": 0}
        STATE.log(dict(record, scenario=scenario.get("name"), chosen_by=chosen_by, step=req["step"], side=side,
                       body=body))
        reply = Reply(self, step.get("delay_ms", 15), tokens(json.dumps(body)))
        started, outcome = time.monotonic(), "completed"
        try:
            if step.get("ttfb_ms"):
                reply.pause(step["ttfb_ms"] / 1000.0)
            err = step.get("error")
            key = hashlib.sha1(json.dumps([api.NAME, scenario.get("name"), req["prompt"], req["step"]]).encode())
            if err and (err.get("times") is None or STATE.count_failure(key.hexdigest()) <= err["times"]):
                outcome = "error %s" % err.get("status", 500)
                api.error(reply, int(err.get("status", 500)), err.get("message", "mockllm scripted error"),
                          streaming, bool(err.get("in_stream")))
            else:
                blocks = scenarios.blocks(step, req["tools"])
                (api.stream if streaming else api.whole)(reply, blocks, req["model"])
        except ClientGone:
            outcome = "client_disconnected"
            self.close_connection = True
        except Exception as e:  # a mock bug must not look like a model answer
            outcome = "server_error: %r" % (e,)
            self.close_connection = True
            import traceback
            traceback.print_exc()
        STATE.log({"seq": seq, "done": outcome, "elapsed_ms": int((time.monotonic() - started) * 1000)})

    def _read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
                raw += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
            return body if isinstance(body, dict) else {"_body": body}
        except ValueError:
            return {"_unparsed": raw[:2000].decode("utf-8", "replace")}


def main():
    global STATE
    ap = argparse.ArgumentParser(description="hive scripted mock model server")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port (see --port-file)")
    ap.add_argument("--port-file", help="write the bound port here (atomically) once listening")
    ap.add_argument("--log", help="append one JSON line per request to this file")
    ap.add_argument("--scenario", help="default scenario name or path (else SCENARIO:<name> in prompts)")
    ap.add_argument("--scenarios-dir", default=os.path.join(scenarios.HERE, "scenarios"))
    args = ap.parse_args()
    STATE = State(scenarios.Library(args.scenarios_dir, args.scenario), args.log)
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as fh:
            fh.write("%d\n" % port)
        os.replace(args.port_file + ".tmp", args.port_file)
    sys.stderr.write("mockllm: listening on http://127.0.0.1:%d\n" % port)
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
