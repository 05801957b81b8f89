#!/usr/bin/env python3
"""A tiny MCP server over stdio for hive's tests (stdlib only).

Tools: `add` (sums a and b), `fail` (always an error result). With
`--crash` it exits at once, as a server that cannot start.
"""
import json
import sys

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


def reply(id_, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, id_ = msg.get("method"), msg.get("id")
    if id_ is None:
        continue  # notifications
    if method == "initialize":
        reply(id_, {"protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake_mcp", "version": "1"}})
    elif method == "tools/list":
        reply(id_, {"tools": TOOLS})
    elif method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments") or {}
        if name == "add":
            reply(id_, {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]})
        else:
            reply(id_, {"content": [{"type": "text", "text": "fail always fails"}], "isError": True})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_,
                                     "error": {"code": -32601, "message": method}}) + "\n")
        sys.stdout.flush()
