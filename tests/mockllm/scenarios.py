"""Scenarios: what the mock model answers, and how a portable tool call becomes a real one.

A scenario is a JSON file in scenarios/ (or any path):

    {"description": "...",
     "steps": [                               # one entry per model call in one user turn
        {"thinking": "...", "text": "..." | ["chunk", ...],
         "tools": [{"shell": "echo hi"} | {"name": "Exact", "arguments": {...}}
                   | {"match": "REGEX", "arguments": {...}}],   # the first tool offered whose
                                                                # name the regex finds
         "delay_ms": 15,                      # pause after every streamed chunk
         "error": {"status": 400, "message": "...", "in_stream": false, "times": null}}
     ],
     "repeat_last": false}                    # when steps run out: repeat the last one, or
                                              # (default) answer a short closing text

The step index is stateless: the API module counts the model replies that follow the last
real user prompt of the request, so one scenario drives the whole agent loop and every new
prompt starts again at step 0.

The scenario is picked per request by the marker SCENARIO:<name> in the last user prompt,
else the server default (--scenario or POST /_mock/scenario), else the built-in text reply.
"""

import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
MARKER = re.compile(r"SCENARIO:([A-Za-z0-9_.-]+)")

BUILTIN = {
    "name": "builtin",
    "steps": [{"text": "Hello from the hive mock model."}],
}

# Portable {"shell": cmd}: the first of these tools the client offers runs the command.
# (Claude Code: Bash, Codex: exec_command, Gemini: run_shell_command, pi: bash.)
SHELL_TOOLS = ("Bash", "exec_command", "shell_command", "shell", "run_shell_command", "bash")


class Library:
    """Loads scenarios by name from a directory (re-read on every use: edit while running)."""

    def __init__(self, directory, default=None):
        self.directory = directory
        self.default = default

    def load(self, name):
        for path in (name, os.path.join(self.directory, name + ".json")):
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as fh:
                    sc = json.load(fh)
                sc.setdefault("name", os.path.splitext(os.path.basename(path))[0])
                return sc
        raise KeyError("unknown scenario %r (looked in %s)" % (name, self.directory))

    def pick(self, prompt):
        """(scenario, how it was chosen) for a request whose last user prompt is `prompt`."""
        found = MARKER.findall(prompt or "")
        if found:
            return self.load(found[-1]), "marker"
        if self.default:
            return self.load(self.default), "default"
        return BUILTIN, "builtin"


def step_of(scenario, index):
    steps = scenario.get("steps") or []
    if index < len(steps):
        return steps[index]
    if scenario.get("repeat_last") and steps:
        return steps[-1]
    return {"text": "Done."}


def chunks(text):
    """A list stays as given; a string is cut into pieces of about two words."""
    if isinstance(text, list):
        return [str(t) for t in text]
    out, cur = [], ""
    for word in re.findall(r"\S+\s*|\s+", text or ""):
        cur += word
        if len(cur) >= 8:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def blocks(step, tools):
    """The step as an ordered list of output blocks for the API modules:
    {"kind": "thinking"|"text", "chunks": [...]} and {"kind": "tool", "name", "args", "custom"}.
    Tool calls are dropped when the request offers no tools (side requests)."""
    out = []
    if step.get("thinking"):
        out.append({"kind": "thinking", "chunks": chunks(step["thinking"])})
    if step.get("text"):
        out.append({"kind": "text", "chunks": chunks(step["text"])})
    for call in step.get("tools") or []:
        resolved = resolve(call, tools) if tools else None
        if resolved:
            out.append(resolved)
    return out


def resolve(call, tools):
    """Map a portable call onto the tools offered: tools = {name: {"schema": ..., "custom": bool}}."""
    if "name" in call:
        info = tools.get(call["name"], {})
        return {"kind": "tool", "name": call["name"], "args": call.get("arguments", {}),
                "custom": info.get("custom", False)}
    if "match" in call:
        # Each vendor names an MCP server's tool its own way (mcp__files__add, files__add, add).
        name = next((n for n in sorted(tools) if re.search(call["match"], n)), None)
        if name is None:
            return None
        return {"kind": "tool", "name": name, "args": call.get("arguments", {}),
                "custom": tools[name].get("custom", False)}
    if "shell" in call:
        name = next((n for n in SHELL_TOOLS if n in tools), None)
        if name is None:
            return None
        props = (tools[name].get("schema") or {}).get("properties") or {}
        cmd = call["shell"]
        if "cmd" in props:
            args = {"cmd": cmd}
        elif (props.get("command") or {}).get("type") == "array":
            args = {"command": ["bash", "-lc", cmd]}
        else:
            args = {"command": cmd}
        if "description" in props:
            args["description"] = call.get("description", "Run a shell command")
        return {"kind": "tool", "name": name, "args": args, "custom": False}
    return None


def instance(schema, name="value"):
    """A small value satisfying a JSON schema (Gemini writes types in upper case)."""
    if not isinstance(schema, dict):
        return "mock"
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return instance(schema[key][0], name)
    kind = schema.get("type") or ("object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if str(k).lower() != "null"), "string")
    kind = str(kind).lower()
    if kind == "object":
        return {k: instance(v, k) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [instance(schema.get("items") or {}, name) for _ in range(schema.get("minItems", 0))]
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 100)
        return max(low, min(high, 10))
    if kind == "boolean":
        return False
    return "mock %s" % name
