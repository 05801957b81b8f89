#!/usr/bin/env python3
"""A fake `codex` CLI for hive's lifecycle tests (python3 stdlib only).

Speaks the two machine interfaces hive drives, shaped like the captures in
tests/fixtures/codex/:

  fake_codex.py [-c k=v ...] exec --json [flags] [resume THREAD] -
  fake_codex.py [-c k=v ...] app-server

Behaviour is chosen by words in the prompt:
  slow        stream slowly for a long time (interrupt tests)
  deaf        like slow, but ignore SIGINT / turn/interrupt
  sleeper     start a child `sleep 60` in the process group (orphan tests)
  crash       exit 3 mid-turn with a message on stderr
  malformed   print a line that is not JSON, then go on
  tool        run a command item
  approve     (app-server) ask approval for a command first
  fail        end the turn as failed
app-server appends every request of hive's (method, params) to $FAKE_CODEX_RPC_LOG, if set,
and answers `model/list` with two pages (one model hidden), unless
$FAKE_CODEX_NO_MODEL_LIST is set (then it does not know the method, as older servers).
Threads whose id starts with `stale` do not exist.
Every invocation appends its argv, cwd and $HIVE_TEST_MARK (JSON) to $FAKE_CODEX_LOG
and its pid (and its `sleep` children's) to $FAKE_CODEX_PIDS, if set. exec appends the
thread's running total to its rollout under $CODEX_HOME, if set, as the real CLI does.
FAKE_CODEX_ROLLOUTS=1: keep each thread's prompts in its rollout where Codex keeps it
($CODEX_HOME or ~/.codex, sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl), resume only a
thread whose rollout is under this home (else fail as a stale one does), and start each
reply with "(earlier turns: N)", the prompts the rollout held before it; so a pane whose
rollout was not carried into another account's home fails, and one that was answers on it.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_probe  # noqa: E402

OUT_LOCK = threading.Lock()


def emit(obj):
    with OUT_LOCK:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def raw(line):
    with OUT_LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def log_argv():
    path = os.environ.get("FAKE_CODEX_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(),
                                "mark": os.environ.get("HIVE_TEST_MARK")}) + "\n")
    pid_file = os.environ.get("FAKE_CODEX_PIDS")
    if pid_file:
        with open(pid_file, "a") as f:
            f.write(f"{os.getpid()}\n")


def new_id():
    return str(uuid.uuid4())


def start_sleeper():
    # Same process group as us: hive must end it with the group.
    pid_file = os.environ.get("FAKE_CODEX_PIDS")
    child = subprocess.Popen(["sleep", "60"])
    if pid_file:
        with open(pid_file, "a") as f:
            f.write(f"{child.pid}\n")
    return child


# ---------------------------------------------------------------- exec ----

def exec_main(args):
    resume = None
    if "resume" in args:
        i = args.index("resume")
        resume = args[i + 1]
    prompt = sys.stdin.read().strip() if args and args[-1] == "-" else args[-1]
    if resume and not resumable(resume):
        sys.stderr.write(f"Error: thread/resume: no rollout found for thread id {resume}\n")
        sys.exit(1)
    thread = resume or new_id()
    deaf = "deaf" in prompt
    if deaf:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        # Like the real CLI: SIGINT ends the run silently with status 1.
        signal.signal(signal.SIGINT, lambda *_: os._exit(1))
    emit({"type": "thread.started", "thread_id": thread})
    emit({"type": "turn.started"})
    if "sleeper" in prompt:
        start_sleeper()
    if "malformed" in prompt:
        raw("this is not json {")
    if "crash" in prompt:
        emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "about to crash"}})
        sys.stderr.write("fatal: fake codex crashed\n")
        sys.stderr.flush()
        os._exit(3)
    if "slow" in prompt or "deaf" in prompt:
        emit({"type": "item.started", "item": {"id": "item_0", "type": "command_execution",
                                               "command": "sleep 60", "aggregated_output": "",
                                               "exit_code": None, "status": "in_progress"}})
        for _ in range(600):
            time.sleep(0.1)
        sys.exit(0)
    n = 0
    if "tool" in prompt:
        item = {"id": f"item_{n}", "type": "command_execution", "command": "/bin/bash -lc 'echo hi'",
                "aggregated_output": "", "exit_code": None, "status": "in_progress"}
        emit({"type": "item.started", "item": item})
        item = dict(item, aggregated_output="hi\n", exit_code=0, status="completed")
        emit({"type": "item.completed", "item": item})
        n += 1
    if "fail" in prompt:
        emit({"type": "error", "message": "Reconnecting... 1/1 (boom)"})
        emit({"type": "error", "message": "boom"})
        emit({"type": "turn.failed", "error": {"message": "boom"}})
        sys.exit(1)
    text = f"echo: {prompt} (thread {thread})"
    if ROLLOUTS:
        text = f"(earlier turns: {earlier_turns(thread)}) " + text
        keep_prompt(thread, prompt)
    emit({"type": "item.completed", "item": {"id": f"item_{n}", "type": "agent_message", "text": text}})
    # Like the real CLI, a resumed thread reports the whole thread's usage:
    # turn k of a thread (as far as $FAKE_CODEX_LOG saw it) reports k turns.
    k = 1 + thread_runs(thread) if resume else 1
    total = {"input_tokens": 100 * k, "cached_input_tokens": 40 * k,
             "cache_write_input_tokens": 0, "output_tokens": 7 * k, "reasoning_output_tokens": 0}
    # The real CLI records the total (`token_count`) before the turn ends.
    write_rollout(thread, total)
    emit({"type": "turn.completed", "usage": total})


ROLLOUTS = os.environ.get("FAKE_CODEX_ROLLOUTS") == "1"


def codex_home():
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def rollout_of(thread):
    """The thread's rollout under this home, found as Codex finds it: by the id its name ends with."""
    for dirpath, _, files in os.walk(os.path.join(codex_home(), "sessions")):
        for name in files:
            if name.startswith("rollout-") and name.endswith(f"-{thread}.jsonl"):
                return os.path.join(dirpath, name)
    return None


def rollout_path(thread):
    return rollout_of(thread) or os.path.join(
        codex_home(), "sessions", "2026", "11", "22", f"rollout-2026-11-22T01-34-40-{thread}.jsonl")


def earlier_turns(thread):
    path = rollout_of(thread)
    if not path:
        return 0
    with open(path) as f:
        return sum(1 for line in f if json.loads(line).get("type") == "response_item")


def keep_prompt(thread, text):
    """The user's message as the real rollout keeps it (a response_item)."""
    path = rollout_path(thread)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps({"type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}) + "\n")


def resumable(thread):
    """Whether `thread` can be resumed here: not stale, and (ROLLOUTS) its rollout in this home."""
    return not thread.startswith("stale") and (not ROLLOUTS or rollout_of(thread) is not None)


def write_rollout(thread, total):
    """Like the real CLI: the thread's running total in its rollout under $CODEX_HOME."""
    home = os.environ.get("CODEX_HOME")
    if not home:
        return
    path = rollout_path(thread)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps({"type": "event_msg", "payload": {
            "type": "token_count", "info": {"total_token_usage": total}}}) + "\n")


def thread_runs(thread):
    path = os.environ.get("FAKE_CODEX_LOG")
    if not path:
        return 1
    with open(path) as f:
        return sum(1 for line in f if thread in json.loads(line).get("argv", []))


# ----------------------------------------------------------- app-server ----

class AppServer:
    def __init__(self):
        self.thread = None
        self.turn = None
        self.interrupted = threading.Event()
        self.steers = []
        self.responses = {}
        self.response_ready = threading.Condition()
        self.next_request = 100
        self.deaf = False
        self.total = {"inputTokens": 0, "cachedInputTokens": 0, "outputTokens": 0}

    def notify(self, method, params):
        emit({"method": method, "params": params})

    def request(self, method, params):
        rid = self.next_request
        self.next_request += 1
        emit({"method": method, "id": rid, "params": params})
        with self.response_ready:
            while rid not in self.responses:
                self.response_ready.wait()
            return self.responses.pop(rid)

    def serve(self):
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            msg = json.loads(line)
            if "method" not in msg:
                with self.response_ready:
                    self.responses[msg["id"]] = msg
                    self.response_ready.notify_all()
                continue
            method, rid, params = msg["method"], msg.get("id"), msg.get("params", {})
            if os.environ.get("FAKE_CODEX_RPC_LOG"):
                with open(os.environ["FAKE_CODEX_RPC_LOG"], "a") as f:
                    f.write(json.dumps({"method": method, "params": params}) + "\n")
            if method == "initialize":
                emit({"id": rid, "result": {"userAgent": "fake/0.0.0", "platformOs": "linux"}})
            elif method == "initialized":
                pass
            elif method in ("thread/start", "thread/resume"):
                tid = params.get("threadId") if method == "thread/resume" else new_id()
                if method == "thread/resume" and not resumable(tid):
                    emit({"id": rid, "error": {"code": -32600, "message": f"no rollout found for thread id {tid}"}})
                    continue
                self.thread = tid
                model = params.get("model") or "fake-model"
                emit({"id": rid, "result": {"thread": {"id": tid}, "model": model, "modelProvider": "fake"}})
                self.notify("thread/started", {"thread": {"id": tid, "model": model}})
                self.start_mcp(tid)
                if method == "thread/resume":
                    # Like the real server: the resumed thread's usage so far,
                    # under the id of its last turn.
                    self.total = {"inputTokens": 1000, "cachedInputTokens": 0, "outputTokens": 50}
                    self.notify("thread/tokenUsage/updated", {"threadId": tid, "turnId": "old-turn",
                                                              "tokenUsage": {"total": self.total, "last": self.total}})
            elif method == "model/list" and os.environ.get("FAKE_CODEX_NO_MODEL_LIST"):
                emit({"id": rid, "error": {"code": -32601, "message": "unknown method model/list"}})
            elif method == "model/list":
                # Shaped like app-server-protocol v2: pages of `data`, hidden models flagged.
                pages = {None: ([("gpt-5.5", False), ("gpt-5.5-mini", False)], "p2"),
                         "p2": ([("codex-internal", True), ("gpt-fid-7", False)], None)}
                models, cursor = pages.get(params.get("cursor"), ([], None))
                emit({"id": rid, "result": {"data": [
                    {"id": m, "model": m, "displayName": m.upper(), "hidden": h, "isDefault": m == "gpt-5.5"}
                    for m, h in models], "nextCursor": cursor}})
            elif method == "turn/start":
                self.turn = new_id()
                self.interrupted.clear()
                emit({"id": rid, "result": {"turn": {"id": self.turn, "status": "inProgress"}}})
                text = params["input"][0]["text"]
                threading.Thread(target=self.run_turn, args=(self.turn, text), daemon=True).start()
            elif method == "turn/interrupt":
                emit({"id": rid, "result": {}})
                if not self.deaf:
                    self.interrupted.set()
            elif method == "turn/steer":
                if params.get("expectedTurnId") != self.turn:
                    emit({"id": rid, "error": {"code": -32600, "message": "no active turn"}})
                    continue
                # Logged before the turn thread can see it (and end the turn).
                with open(os.environ.get("FAKE_CODEX_LOG", os.devnull), "a") as f:
                    f.write(json.dumps({"steer": params["input"][0]["text"]}) + "\n")
                self.steers.append(params["input"][0]["text"])
                emit({"id": rid, "result": {"turnId": self.turn}})
            else:
                emit({"id": rid, "error": {"code": -32601, "message": f"unknown method {method}"}})
        # stdin closed: exit like the real server.

    def start_mcp(self, tid):
        """The -c mcp_servers.* servers started as codex does, each said in
        `mcpServer/startupStatus/updated` (app-server-protocol v2)."""
        for name, (command, args) in mcp_probe.codex_servers(sys.argv[1:]).items():
            self.notify("mcpServer/startupStatus/updated",
                        {"threadId": tid, "name": name, "status": "starting", "error": None})
            why = mcp_probe.probe(command, args)
            error = None if why is None else f"MCP client for `{name}` failed to start: handshaking with MCP server failed: {why}"
            self.notify("mcpServer/startupStatus/updated",
                        {"threadId": tid, "name": name, "status": "ready" if why is None else "failed",
                         "error": error, "failureReason": None})

    def base(self, turn):
        return {"threadId": self.thread, "turnId": turn}

    def message(self, turn, text, chunk=6, delay=0.0):
        mid = "msg_" + new_id()[:8]
        self.notify("item/started", dict(self.base(turn), item={"type": "agentMessage", "id": mid, "text": ""}))
        for i in range(0, len(text), chunk):
            if self.interrupted.is_set():
                return False
            self.notify("item/agentMessage/delta", dict(self.base(turn), itemId=mid, delta=text[i:i + chunk]))
            if delay:
                time.sleep(delay)
        self.notify("item/completed", dict(self.base(turn), item={"type": "agentMessage", "id": mid, "text": text}))
        return True

    def usage(self, turn, last):
        for k in self.total:
            self.total[k] += last[k]
        self.notify("thread/tokenUsage/updated", dict(self.base(turn), tokenUsage={
            "total": dict(self.total), "last": last}))

    def finish(self, turn, status, error=None):
        self.usage(turn, {"inputTokens": 250, "cachedInputTokens": 10, "outputTokens": 9})
        self.notify("turn/completed", {"threadId": self.thread,
                                       "turn": {"id": turn, "status": status, "error": error}})

    def run_turn(self, turn, text):
        self.deaf = "deaf" in text
        self.notify("turn/started", {"threadId": self.thread, "turn": {"id": turn, "status": "inProgress"}})
        self.notify("item/started", dict(self.base(turn), item={"type": "userMessage", "id": new_id(),
                                                                "content": [{"type": "text", "text": text}]}))
        if "sleeper" in text:
            start_sleeper()
        if "malformed" in text:
            raw("{not json")
        if "crash" in text:
            self.message(turn, "about to crash")
            sys.stderr.write("fatal: fake app-server crashed\n")
            sys.stderr.flush()
            os._exit(5)
        rid = "rs_" + new_id()[:8]
        self.notify("item/started", dict(self.base(turn), item={"type": "reasoning", "id": rid, "summary": [], "content": []}))
        self.notify("item/reasoning/summaryPartAdded", dict(self.base(turn), itemId=rid, summaryIndex=0))
        self.notify("item/reasoning/summaryTextDelta", dict(self.base(turn), itemId=rid, delta="Thinking it over.", summaryIndex=0))
        self.notify("item/completed", dict(self.base(turn), item={"type": "reasoning", "id": rid,
                                                                  "summary": ["Thinking it over."], "content": []}))
        if "approve" in text or "tool" in text:
            cid = "call_" + new_id()[:8]
            cmd = "/bin/bash -lc 'echo approved'"
            item = {"type": "commandExecution", "id": cid, "command": cmd, "cwd": "/tmp",
                    "status": "inProgress", "aggregatedOutput": None, "exitCode": None}
            self.notify("item/started", dict(self.base(turn), item=item))
            status, output, code = "completed", "approved\n", 0
            if "approve" in text:
                answer = self.request("item/commandExecution/requestApproval",
                                      dict(self.base(turn), itemId=cid, command=cmd, cwd="/tmp",
                                           reason="needs approval"))
                decision = answer.get("result", {}).get("decision")
                with open(os.environ.get("FAKE_CODEX_LOG", os.devnull), "a") as f:
                    f.write(json.dumps({"decision": decision}) + "\n")
                if decision not in ("accept", "acceptForSession"):
                    status, output, code = "declined", "", None
                    # The real model answers the refusal in the same turn, so a
                    # steer sent right after the answer still finds it running.
                    deadline = time.time() + 2
                    while not self.steers and time.time() < deadline:
                        time.sleep(0.01)
            self.notify("item/completed", dict(self.base(turn), item=dict(item, status=status,
                                                                          aggregatedOutput=output, exitCode=code)))
        if "fail" in text:
            self.notify("error", dict(self.base(turn), error={"message": "boom"}, willRetry=False))
            self.finish(turn, "failed", {"message": "boom"})
            return
        if "slow" in text or "deaf" in text:
            # Long stream; delivers steers as the real server does (a userMessage
            # item, then the answer takes them into account).
            for i in range(400):
                if self.interrupted.is_set():
                    # The real server re-sends the unchanged count here.
                    self.usage(turn, {"inputTokens": 0, "cachedInputTokens": 0, "outputTokens": 0})
                    self.notify("turn/completed", {"threadId": self.thread,
                                                   "turn": {"id": turn, "status": "interrupted", "error": None}})
                    return
                if self.steers:
                    steer = self.steers.pop(0)
                    self.notify("item/completed", dict(self.base(turn), item={
                        "type": "userMessage", "id": new_id(), "content": [{"type": "text", "text": steer}]}))
                    self.message(turn, f"steered: {steer}")
                    self.finish(turn, "completed")
                    return
                time.sleep(0.05)
        answer = f"echo: {text} (thread {self.thread})"
        if ROLLOUTS:
            answer = f"(earlier turns: {earlier_turns(self.thread)}) " + answer
            keep_prompt(self.thread, text)
        self.message(turn, answer)
        self.finish(turn, "completed")


def main():
    log_argv()
    args = sys.argv[1:]
    while args and args[0] == "-c":
        args = args[2:]
    if not args:
        sys.stderr.write("usage: fake_codex.py exec|app-server\n")
        sys.exit(2)
    if args[0] == "exec":
        exec_main(args[1:])
    elif args[0] == "app-server":
        AppServer().serve()
    else:
        sys.stderr.write(f"unknown subcommand {args[0]}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
