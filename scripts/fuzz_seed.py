#!/usr/bin/env python3
"""Seeds each fuzz target's corpus from tests/fixtures (used by scripts/fuzz.sh).

Timeline captures ({"dir": "in"/"out", "line": ...}) are reduced to the agent's own
stdout lines, which is what the line parsers see; other fixtures are copied as they
are. Usage: fuzz_seed.py FIXTURES_DIR OUT_DIR
"""

import json
import os
import sys

fixtures, out = sys.argv[1], sys.argv[2]

# target -> fixture directories (or files) whose content it reads
SOURCES = {
    "acp_engine": ["acp-claude", "acp-codex", "acp-gemini"],
    "claude_line": ["claude"],
    "codex_exec_line": ["codex"],
    "codex_app_server": ["codex"],
    "gemini_line": ["gemini"],
    "pi_line": ["pi"],
    "history_load": ["history"],
    "config_parse": ["history/hive.toml", "history/slow.toml", "../../config"],
    "pty_scan": ["pty"],
    "control_request": ["ctl-wire"],
    "mcp_request": ["mcp-wire"],
    "openai_tool_args": ["openai-tools"],
    "vt100_tiny": ["pty", "fuzz/vt100_tiny"],
    "wire_frames": ["fuzz/wire_frames"],
    "wire_delta": ["fuzz/wire_delta"],
    "state_files": ["fuzz/state_files"],
    "init_render": ["fuzz/init_render"],
    "stream_event": [],  # one seed per line of events/*.jsonl, below
}


def agent_lines(text):
    """The agent's stdout lines of a timeline capture, or None if it is not one."""
    lines = []
    for raw in text.splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(entry, dict) or "line" not in entry:
            return None
        if entry.get("dir") == "out":
            lines.append(entry["line"])
    return "\n".join(lines) + "\n"


def files(path):
    if os.path.isfile(path):
        yield path
    elif os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            p = os.path.join(path, name)
            if os.path.isfile(p):
                yield p


for target, sources in SOURCES.items():
    dest = os.path.join(out, target)
    os.makedirs(dest, exist_ok=True)
    for src in sources:
        for f in files(os.path.join(fixtures, src)):
            data = open(f, "rb").read()
            if f.endswith(".timeline.jsonl"):
                reduced = agent_lines(data.decode("utf-8", "replace"))
                if reduced is not None:
                    data = reduced.encode()
            name = os.path.relpath(f, fixtures).replace(os.sep, "_").replace("..", "")
            with open(os.path.join(dest, name), "wb") as w:
                w.write(data)

# The canonical events: one seed per line.
dest = os.path.join(out, "stream_event")
for f in files(os.path.join(fixtures, "events")):
    if f.endswith(".jsonl"):
        for i, line in enumerate(open(f, encoding="utf-8")):
            with open(os.path.join(dest, "%s_%d" % (os.path.basename(f), i)), "w") as w:
                w.write(line.rstrip("\n"))
