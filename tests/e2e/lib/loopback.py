"""What the loopback stand-ins of the upload tests share (Python's standard
library only): answers taken from a script, one per request; JSON answers;
a connection reset; announcing the port in DIR/port once listening.
"""
import http.server
import json
import os
import socket
import threading


class Script:
    """The answers of a test, comma-separated; the last one repeats."""

    def __init__(self, text):
        self.steps = text.split(",")
        self.count = 0
        self.lock = threading.Lock()

    def next(self):
        """(request number, its answer)"""
        with self.lock:
            n = self.count
            self.count += 1
        return n, self.steps[min(n, len(self.steps) - 1)]


def announce(directory, port):
    """Write DIR/port whole, so the test never reads half a number."""
    tmp = os.path.join(directory, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(port))
    os.rename(tmp, os.path.join(directory, "port"))


class Handler(http.server.BaseHTTPRequestHandler):
    """HTTP/1.1, quiet; subclasses set answer_headers and write do_POST."""
    protocol_version = "HTTP/1.1"
    answer_headers = {}

    def log_message(self, *args):
        pass

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def answer(self, code, doc, extra=None):
        """@doc as JSON (None: no body), with answer_headers and @extra."""
        data = json.dumps(doc).encode() if doc is not None else b""
        self.send_response(code)
        for k, v in {**self.answer_headers, **(extra or {})}.items():
            self.send_header(k, v)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    def reset(self):
        """Drop the connection with a TCP reset instead of answering."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
        self.connection.close()
        self.close_connection = True


def serve(handler, directory, port=None):
    """Serve @handler on 127.0.0.1 (@port, or any), announce, run forever."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(port) if port else 0), handler)
    announce(directory, server.server_address[1])
    server.serve_forever()
