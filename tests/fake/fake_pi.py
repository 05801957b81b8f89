#!/usr/bin/env python3
"""A fake pi coding agent in RPC mode (`pi --mode rpc`) for hive's lifecycle
tests: JSONL commands on stdin, responses and events on stdout, shaped like
pi 0.73.1's. Every message_update repeats the whole partial message, as pi does.
Behaviour is chosen by keywords in the prompt:

  CRASH         stream a little, write to stderr, exit 5 (with GO: only once the file
                $FAKE_PI_LOG.go exists, so a test can queue a message first)
  SLOW          stream many chunks slowly; honours abort, steer and follow_up
  IGNORE_ABORT  like SLOW but abort is acknowledged and ignored
  MALFORMED     print a non-JSON line mid-stream
  RETRY         first model call fails with a 500, pi retries, second succeeds
  FAIL          the model call fails with a non-retryable 400
  TOOL          one bash tool call with its result
  THINK         a thinking block before the text

A `--session` id starting with "stale" makes it exit 1 at once (a session
that no longer exists). Env: FAKE_PI_LOG appends one JSON line per start (argv, pid);
FAKE_PI_NO_MODELS makes `get_available_models` unknown (as an older pi).
"""
import json
import os
import queue
import sys
import threading
import time
import uuid

commands = queue.Queue()


def reader():
    for line in sys.stdin:
        commands.put(line)
    commands.put(None)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def arg(name, default=None):
    argv = sys.argv[1:]
    if name in argv:
        i = argv.index(name)
        if i + 1 < len(argv):
            return argv[i + 1]
    return default


SESSION = arg("--session") or str(uuid.uuid4())
MODEL = arg("--model", "fake-model")
USAGE = {"input": 100, "output": 20, "cacheRead": 3, "cacheWrite": 0, "totalTokens": 123,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.001}}


def assistant(content, stop="stop", error=None, usage=None):
    msg = {"role": "assistant", "content": content, "api": "openai-completions",
           "provider": "fake", "model": MODEL, "usage": usage or USAGE, "stopReason": stop,
           "timestamp": int(time.time() * 1000)}
    if error:
        msg["errorMessage"] = error
    return msg


def update(kind, index, blocks, **extra):
    ev = {"type": kind, "contentIndex": index, **extra, "partial": assistant(blocks)}
    emit({"type": "message_update", "assistantMessageEvent": ev, "message": assistant(blocks)})


class Run:
    def __init__(self):
        self.steering = []
        self.follow_up = []
        self.aborted = False
        self.ignore_abort = False

    def poll(self):
        """Handle commands that arrive mid-turn."""
        while True:
            try:
                line = commands.get_nowait()
            except queue.Empty:
                return
            if line is None:
                sys.exit(0)
            cmd = parse(line)
            if cmd is None:
                continue
            t = cmd.get("type")
            if t == "abort":
                if not self.ignore_abort:
                    self.aborted = True
                respond(cmd, "abort")
            elif t in ("steer", "follow_up"):
                (self.steering if t == "steer" else self.follow_up).append(cmd.get("message", ""))
                emit({"type": "queue_update", "steering": self.steering, "followUp": self.follow_up})
                respond(cmd, t)
            elif t == "prompt":
                respond(cmd, "prompt", ok=False, error="Agent is already processing. Specify "
                        "streamingBehavior ('steer' or 'followUp') to queue the message.")
            else:
                other(cmd)

    def text(self, chunks, index=0, prefix=(), slow=False):
        content = list(prefix)
        text = ""
        content.append({"type": "text", "text": ""})
        update("text_start", index, content)
        for chunk in chunks:
            if slow:
                time.sleep(0.05)
                self.poll()
                if self.aborted:
                    return content, True
            text += chunk
            content[index] = {"type": "text", "text": text}
            update("text_delta", index, content, delta=chunk)
        update("text_end", index, content, content=text)
        return content, False


def parse(line):
    try:
        return json.loads(line)
    except ValueError as e:
        emit({"type": "response", "command": "parse", "success": False,
              "error": f"Failed to parse command: {e}"})
        return None


def respond(cmd, command, ok=True, error=None, data=None):
    r = {"type": "response", "command": command, "success": ok}
    if "id" in cmd:
        r["id"] = cmd["id"]
    if error:
        r["error"] = error
    if data is not None:
        r["data"] = data
    emit(r)


def other(cmd):
    global MODEL
    t = cmd.get("type")
    if t == "set_model":
        # As pi: the model object it now runs (rpc-mode.js `success(id, "set_model", model)`).
        MODEL = cmd.get("modelId", MODEL)
        respond(cmd, t, data={"id": MODEL, "name": MODEL, "provider": cmd.get("provider")})
    elif t == "get_state":
        respond(cmd, "get_state", data={"sessionId": SESSION, "model": {"id": MODEL},
                                        "isStreaming": False})
    elif t == "abort":
        respond(cmd, "abort")
    elif t == "get_available_models" and not os.environ.get("FAKE_PI_NO_MODELS"):
        respond(cmd, t, data={"models": [
            {"id": "mock-model", "name": "Mock Model", "provider": "mock", "reasoning": True},
            {"id": "other-model", "name": "Other", "provider": "elsewhere", "reasoning": False}]})
    else:
        emit({"type": "response", "command": t, "success": False, "error": f"Unknown command: {t}"})


def user(text):
    msg = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}
    emit({"type": "message_start", "message": msg})
    emit({"type": "message_end", "message": msg})


def turn(run, prompt):
    emit({"type": "agent_start"})
    emit({"type": "turn_start"})
    user(prompt)
    if "CRASH" in prompt:
        emit({"type": "message_start", "message": assistant([])})
        update("text_start", 0, [{"type": "text", "text": "partial"}])
        go = os.environ.get("FAKE_PI_LOG", "") + ".go"
        while "GO" in prompt and not os.path.exists(go):
            time.sleep(0.02)
        sys.stderr.write(f"pi: simulated crash at {time.time():.6f}\n")
        sys.stderr.flush()
        os._exit(5)
    if "RETRY" in prompt or "FAIL" in prompt:
        err = "500 simulated server error" if "RETRY" in prompt else "400 simulated bad request"
        failed = assistant([], stop="error", error=err)
        emit({"type": "message_start", "message": failed})
        emit({"type": "message_end", "message": failed})
        emit({"type": "turn_end", "message": failed, "toolResults": []})
        emit({"type": "agent_end", "messages": [failed]})
        if "FAIL" in prompt:
            return
        emit({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 2, "delayMs": 50,
              "errorMessage": err})
        time.sleep(0.05)
        emit({"type": "agent_start"})
        emit({"type": "turn_start"})
    emit({"type": "message_start", "message": assistant([])})
    prefix = []
    index = 0
    if "THINK" in prompt:
        thinking = {"type": "thinking", "thinking": "", "thinkingSignature": "reasoning_content"}
        update("thinking_start", 0, [thinking])
        for piece in ["Let me ", "think."]:
            thinking = dict(thinking, thinking=thinking["thinking"] + piece)
            update("thinking_delta", 0, [thinking], delta=piece)
        update("thinking_end", 0, [thinking], content=thinking["thinking"])
        prefix, index = [thinking], 1
    if "MALFORMED" in prompt:
        sys.stdout.write("garbage {{{\n")
        sys.stdout.flush()
    slow = "SLOW" in prompt or "IGNORE_ABORT" in prompt
    run.ignore_abort = "IGNORE_ABORT" in prompt
    chunks = [f"chunk {n} " for n in range(200)] if slow else ["Hello ", "from ", "fake pi."]
    content, aborted = run.text(chunks, index, prefix, slow=slow)
    if aborted:
        msg = assistant(content, stop="aborted", error="Request was aborted")
        emit({"type": "message_end", "message": msg})
        emit({"type": "turn_end", "message": msg, "toolResults": []})
        emit({"type": "agent_end", "messages": [msg]})
        return
    if "TOOL" in prompt:
        call = {"type": "toolCall", "id": "call_1", "name": "bash",
                "arguments": {"command": "echo hi"}}
        content.append(dict(call, arguments={}, partialArgs=""))
        update("toolcall_start", len(content) - 1, content)
        update("toolcall_delta", len(content) - 1, content, delta='{"command": "echo hi"}')
        content[-1] = call
        update("toolcall_end", len(content) - 1, content, toolCall=call)
        msg = assistant(content, stop="toolUse")
        emit({"type": "message_end", "message": msg})
        emit({"type": "tool_execution_start", "toolCallId": "call_1", "toolName": "bash",
              "args": call["arguments"]})
        emit({"type": "tool_execution_end", "toolCallId": "call_1", "toolName": "bash",
              "result": {"content": [{"type": "text", "text": "hi\n"}]}, "isError": False})
        emit({"type": "turn_end", "message": msg, "toolResults": []})
        emit({"type": "turn_start"})
        emit({"type": "message_start", "message": assistant([])})
        content, _ = run.text(["The command ", "printed hi."])
    msg = assistant(content)
    emit({"type": "message_end", "message": msg})
    emit({"type": "turn_end", "message": msg, "toolResults": []})
    for text in run.steering + run.follow_up:
        run.steering, run.follow_up = [], []
        emit({"type": "turn_start"})
        emit({"type": "queue_update", "steering": [], "followUp": []})
        user(text)
        emit({"type": "message_start", "message": assistant([])})
        content, _ = run.text(["Noted: ", text])
        msg = assistant(content)
        emit({"type": "message_end", "message": msg})
        emit({"type": "turn_end", "message": msg, "toolResults": []})
    emit({"type": "agent_end", "messages": [msg]})
    if "RETRY" in prompt:
        emit({"type": "auto_retry_end", "success": True, "attempt": 1})


def main():
    path = os.environ.get("FAKE_PI_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "pid": os.getpid(), "cwd": os.getcwd()}) + "\n")
    if SESSION.startswith("stale"):
        sys.stderr.write(f"No session found matching '{SESSION}'\n")
        sys.stderr.flush()
        sys.exit(1)
    threading.Thread(target=reader, daemon=True).start()
    while True:
        line = commands.get()
        if line is None:
            return
        cmd = parse(line)
        if cmd is None:
            continue
        if cmd.get("type") == "prompt":
            respond(cmd, "prompt")
            turn(Run(), cmd.get("message", ""))
        else:
            other(cmd)


if __name__ == "__main__":
    main()
