"""HTTP reply helpers shared by the API modules: JSON replies, chunked SSE, pacing, and
noticing a client that hung up (that is how an interrupt shows on the wire)."""

import json
import select
import socket
import time
import uuid


class ClientGone(Exception):
    """The client closed the connection; stop answering."""


def new_id(prefix):
    return prefix + uuid.uuid4().hex[:24]


def tokens(text):
    return max(1, len(text) // 4)


def output_tokens(blocks):
    text = "".join("".join(b["chunks"]) if "chunks" in b else json.dumps(b["args"]) for b in blocks)
    return tokens(text)


class Reply:
    """Writes one response on a BaseHTTPRequestHandler."""

    def __init__(self, handler, delay_ms=15, input_tokens=1):
        self.h = handler
        self.delay = delay_ms / 1000.0
        self.input_tokens = input_tokens

    def json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.h.send_response(status)
        self.h.send_header("Content-Type", "application/json")
        self.h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.h.send_header(k, v)
        self.h.end_headers()
        self._write(data)

    def start_sse(self):
        self.h.send_response(200)
        self.h.send_header("Content-Type", "text/event-stream")
        self.h.send_header("Cache-Control", "no-cache")
        self.h.send_header("Transfer-Encoding", "chunked")
        self.h.end_headers()
        self._write(b"")

    def sse(self, obj, event=None):
        data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
        text = ("event: %s\n" % event if event else "") + "data: %s\n\n" % data
        raw = text.encode()
        self._write(b"%x\r\n%s\r\n" % (len(raw), raw))

    def end_sse(self):
        self._write(b"0\r\n\r\n")

    def paced(self):
        """Called after each streamed content chunk."""
        if self.delay:
            self.pause(self.delay)

    def pause(self, seconds):
        """Sleep, but give up as soon as the client hangs up."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if self._client_gone():
                raise ClientGone()
            time.sleep(min(0.05, left))

    def _write(self, data):
        try:
            if data:
                self.h.wfile.write(data)
            self.h.wfile.flush()
        except OSError as e:  # BrokenPipe / ConnectionReset
            raise ClientGone() from e

    def _client_gone(self):
        try:
            readable, _, _ = select.select([self.h.connection], [], [], 0)
            return bool(readable) and self.h.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
