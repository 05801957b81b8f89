"""Starts an MCP server as a vendor's CLI would (stdio: spawn it, send
`initialize`, wait for the answer), for the fake CLIs' tests (issue 51):
each fake then says a server that did not answer in its vendor's words.
python3 stdlib only."""
import json
import os
import select
import subprocess


def probe(command, args, env=None, timeout=5.0):
    """None when the server answers `initialize`, else why it did not."""
    try:
        p = subprocess.Popen([command] + list(args), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env={**os.environ, **(env or {})})
    except OSError as e:
        return f"No such file or directory (os error {e.errno})"
    try:
        hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "fake", "version": "0"}}}
        try:
            p.stdin.write((json.dumps(hello) + "\n").encode())
            p.stdin.flush()
        except OSError:
            return "connection closed: initialize response"
        ready, _, _ = select.select([p.stdout], [], [], timeout)
        line = p.stdout.readline() if ready else b""
        if not line:
            return "connection closed: initialize response"
        return None
    finally:
        p.kill()
        p.wait()


def codex_servers(argv):
    """The stdio servers of `-c mcp_servers.NAME.command=".."` / `.args=[..]`
    overrides on a codex command line: {name: (command, args)}."""
    servers = {}
    for i, a in enumerate(argv[:-1]):
        if a != "-c" or not argv[i + 1].startswith("mcp_servers."):
            continue
        key, _, value = argv[i + 1].partition("=")
        parts = key.split(".")
        if len(parts) != 3:
            continue
        name, field = parts[1], parts[2]
        entry = servers.setdefault(name, ["", []])
        if field == "command":
            entry[0] = json.loads(value)
        elif field == "args":
            entry[1] = json.loads(value)
    return {n: (c, a) for n, (c, a) in servers.items() if c}
