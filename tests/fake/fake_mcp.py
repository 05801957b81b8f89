#!/usr/bin/env python3
"""A tiny MCP server for hive's tests (stdlib only), over stdio or HTTP.

Tools: `add` (sums a and b), `fail` (always an error result). With
`--crash` it exits at once, as a server that cannot start.

`--http PORT_FILE`: a streamable-HTTP server instead (MCP 2025-03-26) on
127.0.0.1 at a free port, written to PORT_FILE once it listens. POST /mcp
takes one JSON-RPC message: `initialize` opens a session (its id in the
`Mcp-Session-Id` header, required on every later request: 404 without a
known one, as a lost session), a notification is 202, `tools/call` is
answered as an SSE stream (one `message` event), anything else as JSON.
GET /mcp is 405 (no server-initiated stream), DELETE /mcp ends the
session. `--require-header 'Name: value'`: any request without it is 401.
Each request's method, path and JSON-RPC method are appended to
$FAKE_MCP_LOG (JSON lines) if set.
"""
import json
import os
import sys
import uuid

if "--crash" in sys.argv:
    print("fake_mcp: cannot start (asked to crash)", file=sys.stderr, flush=True)
    sys.exit(3)

TOOLS = [
    {"name": "add", "description": "Add two integers.",
     "inputSchema": {"type": "object", "required": ["a", "b"],
                     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}},
    {"name": "fail", "description": "Always fails.",
     "inputSchema": {"type": "object", "properties": {}}},
]


def answer(msg):
    """The JSON-RPC answer to a request (None for a notification)."""
    method, id_ = msg.get("method"), msg.get("id")
    if id_ is None:
        return None
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "fake_mcp", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments") or {}
        if name == "add":
            result = {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}
        else:
            result = {"content": [{"type": "text", "text": "fail always fails"}], "isError": True}
    else:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": method}}
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def serve_stdio():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        out = answer(json.loads(line))
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


def serve_http(port_file, required):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    sessions = set()
    log_path = os.environ.get("FAKE_MCP_LOG")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def log(self, rpc=None):
            if log_path:
                with open(log_path, "a") as f:
                    f.write(json.dumps({"http": self.command, "path": self.path, "rpc": rpc,
                                        "session": self.headers.get("Mcp-Session-Id")}) + "\n")

        def send(self, status, body=b"", kind=None, headers=()):
            self.send_response(status)
            if kind:
                self.send_header("Content-Type", kind)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def allowed(self):
            """The path, the required header and the session; False when answered."""
            if self.path != "/mcp":
                self.send(404)
                return False
            if required and self.headers.get(required[0]) != required[1]:
                self.send(401, b'{"error": "unauthorized"}', "application/json")
                return False
            return True

        def known_session(self):
            if self.headers.get("Mcp-Session-Id") in sessions:
                return True
            self.send(404, b"no such session", "text/plain")
            return False

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            msg = json.loads(self.rfile.read(length) or b"{}")
            self.log(msg.get("method"))
            if not self.allowed():
                return
            if msg.get("method") == "initialize":
                session = uuid.uuid4().hex
                sessions.add(session)
                body = json.dumps(answer(msg)).encode()
                return self.send(200, body, "application/json", [("Mcp-Session-Id", session)])
            if not self.known_session():
                return
            out = answer(msg)
            if out is None:
                return self.send(202)
            if msg.get("method") == "tools/call":
                event = ("event: message\ndata: " + json.dumps(out) + "\n\n").encode()
                return self.send(200, event, "text/event-stream")
            self.send(200, json.dumps(out).encode(), "application/json")

        def do_GET(self):
            self.log()
            if self.allowed():
                self.send(405)

        def do_DELETE(self):
            self.log()
            if self.allowed() and self.known_session():
                sessions.discard(self.headers.get("Mcp-Session-Id"))
                self.send(200)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, port_file)
    server.serve_forever()


def main():
    args = sys.argv[1:]
    if "--http" not in args:
        return serve_stdio()
    port_file = args[args.index("--http") + 1]
    required = None
    if "--require-header" in args:
        name, _, value = args[args.index("--require-header") + 1].partition(":")
        required = (name.strip(), value.strip())
    serve_http(port_file, required)


if __name__ == "__main__":
    main()
