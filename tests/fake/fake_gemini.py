#!/usr/bin/env python3
"""A fake Gemini CLI (`gemini -p PROMPT --output-format stream-json`) for hive's
lifecycle tests. Behaviour is chosen by keywords in the prompt:

  CRASH      stream a little, write to stderr, exit 3 without a result
  SLOW       stream many chunks slowly; SIGINT exits 0 with no result (as the real CLI)
  IGNORE_INT like SLOW but SIGINT is ignored
  ORPHAN     also start a grandchild (ignoring SIGINT) that holds stdout open
  MALFORMED  print a non-JSON line between valid ones
  TOOL       one tool_use / tool_result pair
  ERROR      result status error, exit 244

Env: FAKE_GEMINI_LOG (append one JSON line per run: argv, pid, grandchild pid, the
system-defaults settings file's content),
FAKE_GEMINI_STATE (directory of known sessions; --resume of an unknown one fails),
FAKE_GEMINI_SESSIONS=1 (keep each session's prompts where Gemini CLI keeps its chats,
$GEMINI_CLI_HOME or ~ then .gemini/tmp/<cwd's name>/chats/session-<time>-<id8>.jsonl, the
first line naming the session; a --resume whose chat is not under this home fails as an
unknown one does, and each reply starts with "(earlier turns: N)", the prompts it held).
"""
import json
import os
import signal
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_probe  # noqa: E402


def ts():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def emit(obj):
    obj.setdefault("timestamp", ts())
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def delta(text):
    emit({"type": "message", "role": "assistant", "content": text, "delta": True})


SESSIONS = os.environ.get("FAKE_GEMINI_SESSIONS") == "1"


def chats_dir():
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(home, ".gemini", "tmp", os.path.basename(os.getcwd()), "chats")


def chat_of(sid):
    """The session's chat under this home, found as Gemini CLI finds it."""
    d = chats_dir()
    if not os.path.isdir(d):
        return None
    for name in sorted(os.listdir(d)):
        if name.startswith("session-") and name.endswith(f"-{sid[:8]}.jsonl"):
            path = os.path.join(d, name)
            with open(path) as f:
                if json.loads(f.readline()).get("sessionId") == sid:
                    return path
    return None


def keep_prompt(sid, prompt):
    """The prompt as a line of the session's chat (made with its header if new)."""
    path = chat_of(sid)
    if path is None:
        os.makedirs(chats_dir(), exist_ok=True)
        root = os.path.join(os.path.dirname(chats_dir()), ".project_root")
        with open(root, "w") as f:
            f.write(os.getcwd())
        path = os.path.join(chats_dir(), time.strftime("session-%Y-%m-%dT%H-%M-") + sid[:8] + ".jsonl")
        with open(path, "w") as f:
            f.write(json.dumps({"sessionId": sid, "startTime": ts(), "kind": "main"}) + "\n")
    with open(path, "a") as f:
        f.write(json.dumps({"type": "user", "content": [{"text": prompt}]}) + "\n")


def earlier_turns(sid):
    path = chat_of(sid)
    if path is None:
        return 0
    with open(path) as f:
        return sum(1 for line in f if json.loads(line).get("type") == "user")


def main():
    args = sys.argv[1:]
    prompt, session_id, resume, model = "", None, None, "auto"
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a == "-p":
            prompt, i = nxt, i + 2
        elif a.startswith("--prompt="):
            prompt, i = a[len("--prompt="):], i + 1
        elif a == "--session-id":
            session_id, i = nxt, i + 2
        elif a == "--resume":
            resume, i = nxt, i + 2
        elif a in ("--model", "-m"):
            model, i = nxt, i + 2
        else:
            i += 1
    record = {"argv": args, "pid": os.getpid(), "cwd": os.getcwd()}
    # The system-defaults settings layer, as Gemini CLI reads it at start.
    defaults = os.environ.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
    if defaults and os.path.exists(defaults):
        with open(defaults) as f:
            record["system_defaults"] = json.load(f)
    # Each stdio server of the settings started as Gemini CLI does; one that
    # does not answer is said on stderr as Gemini CLI 0.61 says it.
    for name, server in record.get("system_defaults", {}).get("mcpServers", {}).items():
        if server.get("command") and mcp_probe.probe(server["command"], server.get("args", []),
                                                      server.get("env")) is not None:
            sys.stderr.write(f"[MCP error] Error during discovery for MCP server '{name}': MCP error"
                             " -32000: Connection closed McpError: MCP error -32000: Connection closed\n"
                             "    at McpError.fromError (file:///gemini/sdk/types.js:2035:16)\n"
                             "MCP issues detected. Run /mcp list for status.\n")
            sys.stderr.flush()
    state = os.environ.get("FAKE_GEMINI_STATE")
    if resume:
        if (state and not os.path.exists(os.path.join(state, resume))) or (SESSIONS and chat_of(resume) is None):
            log(record)
            sys.stderr.write(f"Error resuming session: no session found with id {resume}\n")
            sys.stderr.flush()
            sys.exit(42)
        sid = resume
    else:
        sid = session_id or str(uuid.uuid4())
    if state:
        open(os.path.join(state, sid), "a").close()
    if "ORPHAN" in prompt:
        child = subprocess.Popen(["sh", "-c", "trap '' INT; sleep 300"])
        record["grandchild"] = child.pid
    log(record)

    emit({"type": "init", "session_id": sid, "model": model})
    emit({"type": "message", "role": "user", "content": prompt})
    if "CRASH" in prompt:
        delta("partial ")
        # What Gemini CLI 0.61 writes on every run (captures/gemini/*.stderr.txt), then a
        # node stack trace, and its error line twice.
        sys.stderr.write(
            "Warning: 256-color support not detected. Using a terminal with at least 256-color"
            " support is recommended for a better visual experience.\n"
            "YOLO mode is enabled. All tool calls will be automatically approved.\n"
            "YOLO mode is enabled. All tool calls will be automatically approved.\n"
            "Ripgrep is not available. Falling back to GrepTool.\n"
            "Error when talking to Gemini API: simulated\n"
            "    at throwErrorIfNotOK (file:///gemini/bundle.js:1:2)\n"
            "Error when talking to Gemini API: simulated\n"
        )
        sys.stderr.write(f"fatal: simulated crash at {time.time():.6f}\n")
        sys.stderr.flush()
        os._exit(3)
    if "MALFORMED" in prompt:
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    if "SLOW" in prompt or "IGNORE_INT" in prompt:
        if "IGNORE_INT" in prompt:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        else:
            signal.signal(signal.SIGINT, lambda *_: os._exit(0))
        for n in range(400):
            delta(f"chunk {n} ")
            time.sleep(0.05)
    if "ERROR" in prompt:
        emit({"type": "result", "status": "error",
              "error": {"type": "unknown", "message": "[API Error: simulated 500]"},
              "stats": {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0}})
        sys.exit(244)
    if "TOOL" in prompt:
        emit({"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1",
              "parameters": {"command": "echo hi"}})
        emit({"type": "tool_result", "tool_id": "t1", "status": "success", "output": "hi"})
    if SESSIONS:
        delta(f"(earlier turns: {earlier_turns(sid)}) ")
        keep_prompt(sid, prompt)
    delta("Hello ")
    delta("from fake gemini.")
    emit({"type": "result", "status": "success",
          "stats": {"total_tokens": 30, "input_tokens": 20, "output_tokens": 10, "cached": 5,
                    "input": 15, "models": {"fake-pro": {"input_tokens": 20}}}})


def log(record):
    path = os.environ.get("FAKE_GEMINI_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
