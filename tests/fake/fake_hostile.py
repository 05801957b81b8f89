#!/usr/bin/env python3
"""A hostile agent for the sandbox tests (issue 49): it tries what a
sandboxed agent must not manage, and reports what each attempt did.

Env (every path absolute, as the test made them):
  HOSTILE_OUTSIDE  a file beside its working directory to create
  HOSTILE_PLANT    a file in the user's home to create
  HOSTILE_SECRET   a file to read (the user's ~/.ssh key)
  HOSTILE_PORT     a TCP port on 127.0.0.1 to connect to
  HOSTILE_VICTIM   a pid outside the box to SIGTERM
  HOSTILE_MARK     a word put on the command line of a child it leaves
                   behind in a session of its own (it must not outlive its pane)
Writes `hostile-report.json` in its working directory (which must work),
prints the report as one line, then stays up (`--exit`: ends) so a test
can end its pane.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time


def attempt(f):
    try:
        return "ok: " + str(f())
    except Exception as e:  # the report says what stopped it
        return "error: " + type(e).__name__ + ": " + str(e)


def write(path):
    with open(path, "w") as f:
        f.write("planted by a hostile agent\n")
    return path


def read(path):
    with open(path) as f:
        return f.read()


def connect(port):
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=3)
    s.sendall(b"hostile\n")
    s.close()
    return "connected"


def signal_victim(pid):
    os.kill(int(pid), signal.SIGTERM)
    return "signalled"


def linger(mark):
    p = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", mark],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return p.pid


env = os.environ.get
report = {
    "inside": attempt(lambda: write(os.path.join(os.getcwd(), "inside.txt"))),
    "outside": attempt(lambda: write(env("HOSTILE_OUTSIDE"))),
    "plant": attempt(lambda: write(env("HOSTILE_PLANT"))),
    "secret": attempt(lambda: read(env("HOSTILE_SECRET"))),
    "network": attempt(lambda: connect(env("HOSTILE_PORT"))),
    "signal": attempt(lambda: signal_victim(env("HOSTILE_VICTIM"))),
    "linger": attempt(lambda: linger(env("HOSTILE_MARK"))),
    "sandbox": env("HIVE_SANDBOX"),
}
line = json.dumps(report)
with open("hostile-report.json", "w") as f:
    f.write(line + "\n")
print(line, flush=True)
if "--exit" not in sys.argv:
    time.sleep(600)
