#!/usr/bin/env python3
"""A fake `claude` for hive's lifecycle tests: speaks Claude Code 2.1.330's
stream-json protocol (as recorded in realcli/README.md) on stdin/stdout.

Behaviour is chosen by keywords in the user's message:
  (default)   short streamed text reply echoing the prompt
  think       a thinking block before the text
  slow        40 text chunks 50 ms apart; honours interrupt; a message written
              meanwhile is queued as the next turn (as the real CLI does)
  tool        a Bash tool_use, 1.5 s "running"; a message written meanwhile is
              folded into the running turn; honours interrupt
  permission  tool_use, then a can_use_tool control_request; allow/deny
  garbage     prints a non-JSON line mid-stream
  flood       20,000 text chunks of 8 chars with no pause (backpressure)
  apierror    synthetic API error reply + result with is_error (subtype success)
  crash       starts streaming, writes to stderr, exits with status 3
  attack      runs tests/fake/fake_hostile.py --exit as its child and replies
              with its report (the sandbox tests)
  hog         allocates memory 8 MiB at a time, touching it, up to 1 GiB, then
              replies with how much it got (the memory-limit tests: a limited
              fake dies of it first)
  hang        ignores everything incl. interrupt and SIGTERM, with a child
              `sleep` in its process group
`--resume stale...` fails like a conversation Claude Code no longer has.
Env: FAKE_CLAUDE_ARGV_FILE (append argv/cwd/pid/env and the --mcp-config file as a JSON line), FAKE_CLAUDE_MARK_FILE
(append time.time_ns() when a turn's first content delta is written),
FAKE_CLAUDE_DELAY_MS (pause between default text chunks, default 5),
FAKE_CLAUDE_TEXT_FILE (the default reply is this file's text, in FAKE_CLAUDE_CHUNK-char
chunks, default 8), FAKE_CLAUDE_SENT_FILE (append time.time_ns() of every text chunk
written, one per line, when the block ends), FAKE_CLAUDE_TRANSCRIPTS=1 (keep each
session's prompts where Claude Code keeps its transcript,
$CLAUDE_CONFIG_DIR or ~/.claude, projects/<cwd's / as ->/<session>.jsonl; a --resume
whose transcript is not there fails as a stale one does, and each reply starts with
"(earlier turns: N)", the prompts the transcript held before it), FAKE_CLAUDE_LIMIT_HOME
(every turn under this config home fails on Claude's usage limit, after its prompt is kept).
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid

ARGS = sys.argv[1:]


def arg(name, default=None):
    if name in ARGS:
        i = ARGS.index(name)
        if i + 1 < len(ARGS):
            return ARGS[i + 1]
    return default


SESSION = arg("--resume") or arg("--session-id") or str(uuid.uuid4())
MODEL = arg("--model", "fake-model")
DELAY = float(os.environ.get("FAKE_CLAUDE_DELAY_MS", "5")) / 1000.0
MARK = os.environ.get("FAKE_CLAUDE_MARK_FILE")
TEXT_FILE = os.environ.get("FAKE_CLAUDE_TEXT_FILE")
CHUNK = int(os.environ.get("FAKE_CLAUDE_CHUNK", "8"))
SENT_FILE = os.environ.get("FAKE_CLAUDE_SENT_FILE")
marked = False
total_cost = 0.0

if os.environ.get("FAKE_CLAUDE_ARGV_FILE"):
    # One line per process start: tests count them to prove one process.
    with open(os.environ["FAKE_CLAUDE_ARGV_FILE"], "a") as f:
        # The --mcp-config file as Claude Code reads it at start.
        mcp = None
        if arg("--mcp-config"):
            with open(arg("--mcp-config")) as m:
                mcp = json.load(m)
        f.write(json.dumps({"argv": ARGS, "cwd": os.getcwd(), "pid": os.getpid(), "pgid": os.getpgid(0),
                            "env": {k: v for k, v in os.environ.items()
                                    if k.startswith(("ANTHROPIC", "FAKE", "MAX_THINKING"))},
                            "mcp_config": mcp}) + "\n")

TRANSCRIPTS = os.environ.get("FAKE_CLAUDE_TRANSCRIPTS") == "1"
CONFIG_DIR = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
TRANSCRIPT = os.path.join(CONFIG_DIR, "projects", os.getcwd().replace("/", "-"), SESSION + ".jsonl")


def earlier_turns():
    try:
        with open(TRANSCRIPT) as f:
            return sum(1 for line in f if line.strip())
    except FileNotFoundError:
        return 0


def keep_prompt(prompt):
    os.makedirs(os.path.dirname(TRANSCRIPT), exist_ok=True)
    with open(TRANSCRIPT, "a") as f:
        f.write(json.dumps({"type": "user", "sessionId": SESSION, "message": {"role": "user", "content": prompt}}) + "\n")


if (arg("--resume") or "").startswith("stale") or (
        TRANSCRIPTS and arg("--resume") and not os.path.exists(TRANSCRIPT)):
    # Like Claude Code 2.1 when the transcript is gone.
    msg = "No conversation found with session ID: %s" % arg("--resume")
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()
    # and an error result on stdout, before reading any input
    sys.stdout.write(json.dumps({"type": "result", "subtype": "error_during_execution", "is_error": True,
                                 "num_turns": 0, "session_id": arg("--resume"), "errors": [msg]}) + "\n")
    sys.stdout.flush()
    sys.exit(1)

inbox = queue.Queue()
backlog = []          # user messages queued as later turns
answers = {}          # control_response payloads by request_id


def reader():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            sys.stderr.write("Error parsing streaming input line (type=unknown, %d chars): SyntaxError\n" % len(line))
            sys.stderr.flush()
            os._exit(1)
        inbox.put(msg)
    inbox.put(None)


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def base(extra):
    d = {"session_id": SESSION, "uuid": str(uuid.uuid4())}
    d.update(extra)
    return d


def stream(event, msg_id):
    out(base({"type": "stream_event", "event": event, "parent_tool_use_id": None, "api_message_id": msg_id}))


def control_answer(request_id, response):
    out({"type": "control_response", "response": {"subtype": "success", "request_id": request_id, "response": response}})


class Interrupted(Exception):
    pass


class Turn:
    def __init__(self, msgs):
        self.uuids = [m.get("uuid") for m in msgs if m.get("uuid")]
        self.texts = [text_of(m) for m in msgs]
        self.images = [c.get("source", {}).get("media_type", "?") for m in msgs
                       for c in content_list(m) if c.get("type") == "image"]
        self.fold = False     # messages arriving now join this turn
        self.folded = []


def content_list(msg):
    content = msg.get("message", {}).get("content", "")
    return [c for c in content if isinstance(c, dict)] if isinstance(content, list) else []


def text_of(msg):
    content = msg.get("message", {}).get("content", "")
    if isinstance(content, list):
        return " ".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type", "text") == "text")
    return content


def handle_idle(msg):
    """A message read outside a turn."""
    if msg.get("type") == "control_request":
        sub = msg.get("request", {}).get("subtype")
        if sub == "initialize":
            control_answer(msg["request_id"], {"commands": [{"name": "compact", "description": "x"}],
                                               "models": [], "agents": []})
        elif sub == "interrupt":
            control_answer(msg["request_id"], {"still_queued": []})
    elif msg.get("type") == "control_response":
        r = msg.get("response", {})
        answers[r.get("request_id")] = r.get("response")
    elif msg.get("type") == "user":
        backlog.append(msg)


def wait(turn, seconds):
    """Sleeps while reading stdin; raises Interrupted on an interrupt."""
    end = time.time() + seconds
    while True:
        left = end - time.time()
        try:
            msg = inbox.get(timeout=max(left, 0.0001)) if left > 0 else inbox.get_nowait()
        except queue.Empty:
            return
        if msg is None:
            return
        kind = msg.get("type")
        if kind == "control_request" and msg.get("request", {}).get("subtype") == "interrupt":
            control_answer(msg["request_id"], {"still_queued": []})
            raise Interrupted()
        if kind == "user":
            out(base({"type": "command_lifecycle", "command_uuid": msg.get("uuid"), "state": "queued"}))
            if turn.fold:
                turn.uuids.append(msg.get("uuid"))
                turn.folded.append(text_of(msg))
            else:
                backlog.append(msg)
            continue
        handle_idle(msg)


def mark():
    global marked
    if MARK and not marked:
        marked = True
        with open(MARK, "a") as f:
            f.write("%d\n" % time.time_ns())


def message_start(msg_id):
    stream({"type": "message_start", "message": {"id": msg_id, "type": "message", "role": "assistant",
            "model": MODEL, "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}, msg_id)


def assistant(msg_id, block, **extra):
    d = base({"type": "assistant", "message": {"id": msg_id, "type": "message", "role": "assistant",
             "model": MODEL, "content": [block], "stop_reason": None}, "parent_tool_use_id": None})
    d.update(extra)
    out(d)


def text_block(turn, msg_id, index, text, chunks, delay, kind="text"):
    key, dkey = ("text", "text_delta") if kind == "text" else ("thinking", "thinking_delta")
    stream({"type": "content_block_start", "index": index, "content_block": {"type": kind, key: ""}}, msg_id)
    sent = ""
    times = []
    try:
        for piece in chunks:
            mark()
            stream({"type": "content_block_delta", "index": index, "delta": {"type": dkey, key: piece}}, msg_id)
            if SENT_FILE:
                times.append(time.time_ns())
            sent += piece
            wait(turn, delay)
    except Interrupted:
        assistant(msg_id, {"type": kind, key: sent}, aborted=True)
        out(base({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "[Request interrupted by user]"}]}, "parent_tool_use_id": None}))
        stream({"type": "content_block_stop", "index": index}, msg_id)
        stream({"type": "message_stop"}, msg_id)
        raise
    if times:
        with open(SENT_FILE, "a") as f:
            f.write("".join("%d\n" % t for t in times))
    assistant(msg_id, {"type": kind, key: text})
    stream({"type": "content_block_stop", "index": index}, msg_id)


def split(text, n=8):
    return [text[i:i + n] for i in range(0, len(text), n)] or [""]


def tool_use(msg_id, index, call_id, command):
    stream({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call_id, "name": "Bash", "input": {}}}, msg_id)
    raw = json.dumps({"command": command})
    for piece in split(raw, 10):
        stream({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece}}, msg_id)
    assistant(msg_id, {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}})
    stream({"type": "content_block_stop", "index": index}, msg_id)


def end_message(msg_id, stop_reason):
    stream({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 5}}, msg_id)
    stream({"type": "message_stop"}, msg_id)


def tool_result(call_id, content, is_error=False):
    out(base({"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": is_error}]},
        "parent_tool_use_id": None}))


def result(turn, text, is_error=False, terminal="completed", subtype="success", api_status=None):
    global total_cost
    cost = 0.0 if is_error else 0.01
    total_cost += cost
    # `type` deliberately not first, as in the real CLI.
    out({"duration_ms": 12, "is_error": is_error, "subtype": subtype, "terminal_reason": terminal,
         "result": text, "stop_reason": None if terminal != "completed" else "end_turn",
         "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
                   "cache_creation_input_tokens": 0},
         "total_cost_usd": total_cost, "api_error_status": api_status,
         "model_usage_since_last_result": {MODEL: {"costUSD": cost}},
         "type": "result", "session_id": SESSION, "uuid": str(uuid.uuid4()),
         "user_message_uuids": turn.uuids})


def interrupted(turn, reason):
    result(turn, "", is_error=True, terminal=reason, subtype="error_during_execution")


def run_turn(turn):
    global marked
    marked = False
    prompt = turn.texts[0] if turn.texts else ""
    earlier = earlier_turns()
    if TRANSCRIPTS:
        keep_prompt(prompt)
    out(base({"type": "system", "subtype": "init", "cwd": os.getcwd(), "tools": ["Bash", "Read"],
              "model": MODEL, "permissionMode": arg("--permission-mode", "default"),
              "slash_commands": ["compact"]}))
    out(base({"type": "system", "subtype": "status", "status": "requesting", "user_message_uuids": turn.uuids}))
    msg_id = "msg_fake_" + uuid.uuid4().hex[:12]
    if "hang" in prompt:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        subprocess.Popen(["sleep", "300"])
        while True:
            time.sleep(1)
    message_start(msg_id)
    if "crash" in prompt:
        stream({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}, msg_id)
        mark()
        stream({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Starting"}}, msg_id)
        sys.stderr.write("fake claude: fatal error: boom\n")
        sys.stderr.flush()
        os._exit(3)
    if os.environ.get("FAKE_CLAUDE_LIMIT_HOME") == CONFIG_DIR:
        text = "Claude AI usage limit reached|%d" % (int(time.time()) + 3600)
        out(base({"type": "assistant", "message": {"id": str(uuid.uuid4()), "model": "<synthetic>", "role": "assistant",
                  "content": [{"type": "text", "text": text}]}, "is_api_error_message": True,
                  "api_error_status": 429, "error": "rate_limit"}))
        result(turn, text, is_error=True, terminal="api_error", api_status=429)
        return
    if "apierror" in prompt:
        out(base({"type": "assistant", "message": {"id": str(uuid.uuid4()), "model": "<synthetic>", "role": "assistant",
                  "content": [{"type": "text", "text": "API Error: 500 fake internal error"}]},
                  "is_api_error_message": True, "api_error_status": 500, "error": "server_error"}))
        result(turn, "API Error: 500 fake internal error", is_error=True, terminal="api_error", api_status=500)
        return
    index = 0
    if "think" in prompt:
        text_block(turn, msg_id, index, "Let me think.", split("Let me think.", 5), DELAY, kind="thinking")
        index += 1
    if "garbage" in prompt:
        sys.stdout.write("this line is not json\n")
        sys.stdout.flush()
    if "flood" in prompt:
        text = "".join("%07d " % i for i in range(20000))
        text_block(turn, msg_id, index, text, split(text), 0)
        end_message(msg_id, "end_turn")
        result(turn, text)
        return
    if "hog" in prompt:
        held = []
        while len(held) < 128:
            chunk = bytearray(8 << 20)
            chunk[::4096] = b"x" * len(chunk[::4096])
            held.append(chunk)
        text = "allocated %d MiB" % (8 * len(held))
        text_block(turn, msg_id, index, text, [text], 0)
        end_message(msg_id, "end_turn")
        result(turn, text)
        return
    if "attack" in prompt:
        hostile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_hostile.py")
        text = subprocess.run([sys.executable, hostile, "--exit"], capture_output=True,
                              text=True).stdout.strip() or "no report"
        text_block(turn, msg_id, index, text, [text], 0)
        end_message(msg_id, "end_turn")
        result(turn, text)
        return
    if "slow" in prompt:
        text = "".join("Chunk %02d. " % i for i in range(1, 41))
        try:
            text_block(turn, msg_id, index, text, split(text, 10), 0.05)
        except Interrupted:
            interrupted(turn, "aborted_streaming")
            return
        end_message(msg_id, "end_turn")
        result(turn, text)
        return
    if "tool" in prompt or "permission" in prompt:
        intro = "I need permission." if "permission" in prompt else "Running a command."
        text_block(turn, msg_id, index, intro, [intro], 0)
        call_id = "toolu_fake_" + uuid.uuid4().hex[:12]
        command = "mkdir perm-dir" if "permission" in prompt else "sleep 1"
        tool_use(msg_id, index + 1, call_id, command)
        end_message(msg_id, "tool_use")
        output, is_error = "ran " + command, False
        if "permission" in prompt:
            rid = str(uuid.uuid4())
            out({"type": "control_request", "request_id": rid, "request": {
                "subtype": "can_use_tool", "tool_name": "Bash", "display_name": "Bash",
                "input": {"command": command}, "description": "Run: " + command, "tool_use_id": call_id}})
            try:
                while rid not in answers:
                    wait(turn, 0.02)
            except Interrupted:
                interrupted(turn, "aborted_tools")
                return
            ans = answers.pop(rid) or {}
            if ans.get("behavior") == "allow":
                output = "ran " + ans.get("updatedInput", {}).get("command", "?")
            else:
                output, is_error = ans.get("message", "denied"), True
        else:
            turn.fold = True
            try:
                wait(turn, 1.5)
            except Interrupted:
                tool_result(call_id, "The user doesn't want to proceed with this tool use.", True)
                interrupted(turn, "aborted_tools")
                return
        tool_result(call_id, output, is_error)
        msg_id = "msg_fake_" + uuid.uuid4().hex[:12]
        message_start(msg_id)
        final = "Done with the command."
        if turn.folded:
            final += " Noted: " + "; ".join(turn.folded)
        text_block(turn, msg_id, 0, final, split(final), DELAY)
        end_message(msg_id, "end_turn")
        result(turn, final)
        return
    text = "Hello from fake claude. You said: " + prompt
    if TRANSCRIPTS:
        text = "(earlier turns: %d) " % earlier + text
    if turn.images:
        text += " (with images: %s)" % ", ".join(turn.images)
    if TEXT_FILE:
        with open(TEXT_FILE) as f:
            text = f.read()
    try:
        text_block(turn, msg_id, index, text, split(text, CHUNK), DELAY)
    except Interrupted:
        interrupted(turn, "aborted_streaming")
        return
    end_message(msg_id, "end_turn")
    result(turn, text)


def main():
    threading.Thread(target=reader, daemon=True).start()
    while True:
        if backlog:
            msg = backlog.pop(0)
        else:
            msg = inbox.get()
            if msg is None:
                return
        if msg.get("type") == "user":
            run_turn(Turn([msg]))
        else:
            handle_idle(msg)


if __name__ == "__main__":
    main()
