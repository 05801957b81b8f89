#!/usr/bin/env python3
"""A fake ACP agent for hive's lifecycle tests (python3 stdlib only).

The behaviour of a turn is picked by a keyword in the prompt:
  crash       one chunk, then exit 3 with a message on stderr
  hang        never answer, not even a cancel
  malformed   non-JSON and non-JSON-RPC lines, then a normal answer
  permission  tool_call + session/request_permission; the answer decides the tool's fate
  fsattack    plants what a hostile repository can ship (a dangling symlink, a link
              and a linked directory pointing out of the cwd, two FIFOs, a sparse 1 GiB
              file) and asks for them; reports what it got back
  fs          fs requests inside and outside the cwd; reports what it got back
  surrogate   a tool call whose output holds a lone UTF-16 surrogate escape (\ud83d),
              as JavaScript writes when it cuts an emoji in half
  longline    one line of $FAKE_ACP_LONG bytes (default 3 MB) without a newline until
              its end, then a normal answer
  spawnkids   starts three `sleep`s hive must not leave behind: a plain child, one in
              its own session, and a double-forked orphan in its own session; writes
              their pids to $FAKE_ACP_PIDS, then keeps the turn open ("spawnkids-end":
              ends it)
  doublefork  20 short-lived double-forked orphans (re-parented to hive, the
              subreaper), then "forked" to $FAKE_ACP_PIDS and the turn kept open
  longcmd     a tool call whose "command" (a real `sleep` child) keeps running after a
              cancel; the prompt is answered only when the command ends (30 s)
  slow        streams slowly; a cancel is honoured at once
  error       JSON-RPC error response to session/prompt
  refusal     stopReason refusal
  plan        two plan updates
  unknown     an update kind no client knows
  (otherwise) a short markdown answer

Environment:
  FAKE_ACP_LOG=path     append every line received to this file
  FAKE_ACP_IGNORE_EOF=1 keep running after stdin closes
  FAKE_ACP_IGNORE_TERM=1 ignore SIGTERM (only SIGKILL ends it)
  FAKE_ACP_LOAD=1       advertise loadSession and replay history on session/load
  FAKE_ACP_NO_THOUGHT=1 offer no thought_level config option (as claude-code-acp)
  FAKE_ACP_SLOW_NEW=s   answer session/new after s seconds (claude-code-acp starts
                        Claude Code first)
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_probe  # noqa: E402


def start_mcp(servers):
    """session/new's stdio servers started as codex-acp 0.16 does; the summary
    goes to stderr as its WARN of the McpStartupComplete it does not route
    (tests/fixtures/mcp/codex-acp-*.stderr.txt)."""
    ready, failed = [], []
    for s in servers:
        if not s.get("command"):
            continue
        env = {e["name"]: e["value"] for e in s.get("env", [])}
        why = mcp_probe.probe(s["command"], s.get("args", []), env)
        if why is None:
            ready.append('"%s"' % s["name"])
        else:
            failed.append('McpStartupFailure { server: "%s", error: "MCP client for `%s` failed to start: '
                          'handshaking with MCP server failed: %s" }' % (s["name"], s["name"], why))
    sys.stderr.write("2026-11-22T01:46:26.710972Z  WARN codex_acp::thread: Received event for unknown "
                     "submission ID:  McpStartupComplete(McpStartupCompleteEvent { ready: [%s], failed: [%s], "
                     "cancelled: [] })\n" % (", ".join(ready), ", ".join(failed)))
    sys.stderr.flush()

LOG = os.environ.get("FAKE_ACP_LOG")
SESSION = "fake-session-1"
inbox = queue.Queue()
next_id = [100]


def log(line):
    if LOG:
        with open(LOG, "a") as f:
            f.write(line + "\n")


def reader():
    for line in sys.stdin:
        line = line.strip()
        if line:
            log(line)
            inbox.put(json.loads(line))
    inbox.put(None)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def raw(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def result(id_, res):
    send({"jsonrpc": "2.0", "id": id_, "result": res})


def update(u):
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": SESSION, "update": u}})


def chunk(text, kind="agent_message_chunk"):
    update({"sessionUpdate": kind, "content": {"type": "text", "text": text}})


def report_requests(calls):
    """Sends each (method, params) request and answers the turn with one line
    per request: "<method> ok <result>" or "<method> error <code>"."""
    report = []
    for method, params in calls:
        params["sessionId"] = SESSION
        resp = wait_response(request(method, params)) or {}
        if "error" in resp:
            report.append("%s error %s" % (method, resp["error"]["code"]))
        else:
            report.append("%s ok %s" % (method, json.dumps(resp.get("result"))))
    chunk("\n".join(report))


def request(method, params):
    next_id[0] += 1
    rid = "req-%d" % next_id[0]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    return rid


state = {"cancelled": False, "eof": False}


def pump(timeout):
    """Next message, or None on timeout. Cancels are recorded, EOF too."""
    try:
        msg = inbox.get(timeout=timeout)
    except queue.Empty:
        return None
    if msg is None:
        state["eof"] = True
        return None
    if msg.get("method") == "session/cancel":
        state["cancelled"] = True
    return msg


def wait_response(rid, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        msg = pump(0.05)
        if msg is None:
            if state["eof"]:
                return None
            continue
        if msg.get("id") == rid and "method" not in msg:
            return msg
        if msg.get("method") == "session/prompt":
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "error": {"code": -32000, "message": "busy"}})
    return None


def turn(msg):
    state["cancelled"] = False
    pid = msg["id"]
    text = " ".join(b.get("text", "") for b in msg["params"].get("prompt", []))
    if "crash" in text:
        chunk("about to crash")
        sys.stderr.write("fake agent crashed on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if "hang" in text:
        while not state["eof"]:
            pump(0.1)
        return
    if "malformed" in text:
        raw("this is not json {")
        raw('{"jsonrpc": "2.0"}')
        raw('[1, 2, 3]')
        chunk("still here")
        result(pid, {"stopReason": "end_turn"})
        return
    if "permission" in text:
        update({"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "`touch x`",
                "kind": "execute", "status": "pending", "rawInput": {"command": "touch x"}})
        rid = request("session/request_permission", {
            "sessionId": SESSION,
            "toolCall": {"toolCallId": "call-1", "title": "`touch x`", "rawInput": {"command": "touch x"}},
            "options": [
                {"optionId": "yes-always", "name": "Always", "kind": "allow_always"},
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ]})
        resp = wait_response(rid)
        outcome = (resp or {}).get("result", {}).get("outcome", {})
        if outcome.get("outcome") == "cancelled":
            result(pid, {"stopReason": "cancelled"})
            return
        chosen = outcome.get("optionId")
        if chosen in ("yes", "yes-always"):
            update({"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed",
                    "content": [{"type": "content", "content": {"type": "text", "text": "touched"}}]})
        else:
            update({"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "failed",
                    "content": [{"type": "content", "content": {"type": "text", "text": "refused"}}]})
        chunk("decision: %s" % chosen)
        result(pid, {"stopReason": "end_turn"})
        return
    if "surrogate" in text:
        update({"sessionUpdate": "tool_call", "toolCallId": "call-s", "title": "cat emoji.txt",
                "kind": "read", "status": "in_progress", "rawInput": {"path": "emoji.txt"}})
        # json.dumps would write a valid pair; this is what a cut string looks like.
        sys.stdout.write(
            '{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "%s", '
            '"update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-s", '
            '"status": "completed", "content": [{"type": "content", "content": '
            '{"type": "text", "text": "bee \\ud83d cut"}}]}}}\n' % SESSION)
        sys.stdout.flush()
        chunk("read it")
        result(pid, {"stopReason": "end_turn"})
        return
    if "longline" in text:
        size = int(os.environ.get("FAKE_ACP_LONG", str(3 << 20)))
        block = "x" * 65536
        for _ in range(size // len(block)):
            sys.stdout.write(block)
        sys.stdout.write("\n")
        sys.stdout.flush()
        chunk("still here after the long line")
        result(pid, {"stopReason": "end_turn"})
        return
    if "doublefork" in text:
        for _ in range(20):
            middle = os.fork()
            if middle == 0:
                if os.fork() == 0:
                    os._exit(0)
                os._exit(0)
            os.waitpid(middle, 0)
        with open(os.environ["FAKE_ACP_PIDS"], "w") as f:
            f.write("forked\n")
        chunk("forked")
        while not state["eof"]:
            pump(0.1)
        return
    if "spawnkids" in text:
        plain = subprocess.Popen(["sleep", "300"])
        detached = subprocess.Popen(["sleep", "301"], start_new_session=True)
        r, w = os.pipe()
        middle = os.fork()
        if middle == 0:
            if os.fork() == 0:
                os.setsid()
                os.write(w, b"%d\n" % os.getpid())
                os.execvp("sleep", ["sleep", "302"])
            os._exit(0)
        os.waitpid(middle, 0)
        orphan = int(os.read(r, 32).decode().strip())
        path = os.environ["FAKE_ACP_PIDS"]
        with open(path + ".tmp", "w") as f:
            f.write("%d %d %d %d\n" % (os.getpid(), plain.pid, detached.pid, orphan))
        os.rename(path + ".tmp", path)
        chunk("spawned")
        if "spawnkids-end" in text:
            result(pid, {"stopReason": "end_turn"})
            return
        while not state["eof"]:
            pump(0.1)
        return
    if "fsattack" in text:
        cwd = os.getcwd()
        outside = os.path.join(os.path.dirname(cwd), "outside")
        os.makedirs(outside, exist_ok=True)
        with open(os.path.join(outside, "secret.txt"), "w") as f:
            f.write("secret")
        os.symlink(os.path.join(outside, "planted.txt"), os.path.join(cwd, "dangling"))
        os.symlink(os.path.join(outside, "secret.txt"), os.path.join(cwd, "secret-link"))
        os.symlink(outside, os.path.join(cwd, "outdir"))
        os.mkfifo(os.path.join(cwd, "pipe1"))
        os.mkfifo(os.path.join(cwd, "pipe2"))
        with open(os.path.join(cwd, "huge.bin"), "wb") as f:
            f.write(b"first line\n")
            f.truncate(1 << 30)
        report_requests([
            ("fs/write_text_file", {"path": cwd + "/dangling", "content": "pwned"}),
            ("fs/read_text_file", {"path": cwd + "/secret-link"}),
            ("fs/write_text_file", {"path": cwd + "/outdir/new.txt", "content": "pwned"}),
            ("fs/read_text_file", {"path": cwd + "/pipe1"}),
            ("fs/read_text_file", {"path": cwd + "/pipe2"}),
            ("fs/write_text_file", {"path": cwd + "/pipe1", "content": "x"}),
            ("fs/read_text_file", {"path": cwd + "/huge.bin", "line": 1, "limit": 1}),
            ("fs/read_text_file", {"path": cwd + "/huge.bin"}),
        ])
        result(pid, {"stopReason": "end_turn"})
        return
    if "fs" in text:
        cwd = os.getcwd()
        report_requests([
            ("fs/read_text_file", {"path": "/etc/hostname"}),
            ("fs/read_text_file", {"path": cwd + "/../outside.txt"}),
            ("fs/write_text_file", {"path": cwd + "/../escape.txt", "content": "x"}),
            ("fs/read_text_file", {"path": cwd + "/missing.txt"}),
            ("fs/write_text_file", {"path": cwd + "/made/by-agent.txt", "content": "agent wrote this"}),
            ("fs/read_text_file", {"path": cwd + "/made/by-agent.txt"}),
            ("terminal/create", {"command": "ls"}),
        ])
        result(pid, {"stopReason": "end_turn"})
        return
    if "longcmd" in text:
        child = subprocess.Popen(["sleep", "30"])
        log("CHILD %d" % child.pid)
        update({"sessionUpdate": "tool_call", "toolCallId": "call-long", "title": "sleep 30",
                "kind": "execute", "status": "in_progress", "rawInput": {"command": "sleep 30"}})
        while child.poll() is None and not state["eof"]:
            pump(0.1)
        update({"sessionUpdate": "tool_call_update", "toolCallId": "call-long", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "late output"}}]})
        chunk("late text after the command")
        result(pid, {"stopReason": "cancelled" if state["cancelled"] else "end_turn"})
        return
    if "slow" in text:
        for i in range(200):
            pump(0.05)
            if state["cancelled"]:
                result(pid, {"stopReason": "cancelled"})
                return
            chunk("word%d " % i)
        result(pid, {"stopReason": "end_turn"})
        return
    if "error" in text:
        send({"jsonrpc": "2.0", "id": pid,
              "error": {"code": -32603, "message": "Internal error: API Error: 400 boom"}})
        return
    if "refusal" in text:
        chunk("I can't help with that.")
        result(pid, {"stopReason": "refusal"})
        return
    if "plan" in text:
        update({"sessionUpdate": "plan", "entries": [
            {"content": "one", "priority": "high", "status": "in_progress"},
            {"content": "two", "priority": "low", "status": "pending"}]})
        chunk("working")
        update({"sessionUpdate": "plan", "entries": [
            {"content": "one", "priority": "high", "status": "completed"},
            {"content": "two", "priority": "low", "status": "in_progress"}]})
        result(pid, {"stopReason": "end_turn"})
        return
    if "unknown" in text:
        update({"sessionUpdate": "telepathy_update", "mood": "curious"})
        result(pid, {"stopReason": "end_turn"})
        return
    chunk("thinking about it", "agent_thought_chunk")
    chunk("Hello **from** the fake agent.")
    result(pid, {"stopReason": "end_turn"})


def session_settings():
    return {"models": {"currentModelId": "fake-model", "availableModels": []},
            "modes": {"currentModeId": "default",
                      "availableModes": [{"id": "default", "name": "Default"},
                                         {"id": "yolo", "name": "YOLO"}]},
            "configOptions": [] if os.environ.get("FAKE_ACP_NO_THOUGHT") else
                             [{"id": "effort", "name": "Effort",
                               "category": "thought_level", "type": "select",
                               "currentValue": "medium", "options": []}]}


def main():
    if os.environ.get("FAKE_ACP_IGNORE_TERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=reader, daemon=True).start()
    while True:
        msg = pump(0.1)
        if msg is None:
            if state["eof"]:
                break
            continue
        method = msg.get("method")
        if method == "initialize":
            result(msg["id"], {"protocolVersion": 1,
                               "agentCapabilities": {"loadSession": bool(os.environ.get("FAKE_ACP_LOAD"))},
                               "agentInfo": {"name": "fake-acp", "title": "Fake ACP", "version": "0.0.1"}})
        elif method == "session/new":
            time.sleep(float(os.environ.get("FAKE_ACP_SLOW_NEW", "0")))
            result(msg["id"], dict(session_settings(), sessionId=SESSION))
            start_mcp(msg["params"].get("mcpServers") or [])
            update({"sessionUpdate": "available_commands_update",
                    "availableCommands": [{"name": "review", "description": "Review"}]})
        elif method == "session/load":
            chunk("old question", "user_message_chunk")
            chunk("old answer")
            # As the real agents: a loaded session's settings, at their defaults.
            result(msg["id"], session_settings())
        elif method == "session/prompt":
            turn(msg)
        elif method == "session/cancel":
            pass
        elif method == "session/set_mode":
            # As codex-acp: the new mode comes back as a config option update.
            update({"sessionUpdate": "config_option_update",
                    "configOptions": [{"id": "mode", "name": "Approval Preset", "category": "mode",
                                       "type": "select", "currentValue": msg["params"]["modeId"],
                                       "options": []}]})
            result(msg["id"], {})
        elif method in ("session/set_model", "session/set_config_option"):
            result(msg["id"], {})
        elif "id" in msg and "method" in msg:
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "error": {"code": -32601, "message": "no " + method}})
    if os.environ.get("FAKE_ACP_IGNORE_EOF"):
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
