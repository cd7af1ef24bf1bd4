#!/usr/bin/python3
"""A loopback backend that answers 200 to every POST, holding each answer
while DIR/hold exists: the watcher's upload stays in flight for as long
as the test wants (a signal sent meanwhile comes during the upload, every
time, however loaded the machine).

usage: held_server.py DIR
  DIR  "port" when ready; "got-N" once the Nth request's body was read
       (before it is held), "done-N" once it was answered
"""
import http.server
import os
import sys
import threading
import time

DIR = sys.argv[1]
lock = threading.Lock()
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global count
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with lock:
            count += 1
            n = count
        open(os.path.join(DIR, "got-%d" % n), "w").close()
        while os.path.exists(os.path.join(DIR, "hold")):
            time.sleep(0.01)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
        open(os.path.join(DIR, "done-%d" % n), "w").close()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
server.serve_forever()
