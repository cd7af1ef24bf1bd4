#!/usr/bin/python3
"""A loopback stand-in for Datakit's profiling input
(POST /profiling/v1/input, multipart/form-data) that checks each request on
its own with Python's standard library: the path, the content type and its
boundary, the multipart body parsed by the email package, an "event" part
(filename event.json) holding JSON, and one part per attachment the event
lists (no more, no fewer), each gzip. The 32 MiB limit is Datakit's.

usage: datakit_server.py DIR SCRIPT [PORT]
  DIR     "port" when ready; per request N: req-N.json (verdict, the event,
          the part names) and req-N/<part> (each part's bytes)
  SCRIPT  answers, comma-separated, the last repeating: 200, 500, 400
"""
import email.parser
import email.policy
import gzip
import json
import os
import sys
import time

import loopback

DIR, SCRIPT = sys.argv[1], loopback.Script(sys.argv[2])
LIMIT = 32 << 20


def verify(h, body):
    errs, event, parts = [], None, {}
    if h.path != "/profiling/v1/input":
        errs.append("path " + h.path)
    ctype = h.headers.get("Content-Type", "")
    if not ctype.startswith("multipart/form-data;") or "boundary=" not in ctype:
        errs.append("content type %r" % ctype)
        return errs, event, parts
    if len(body) > LIMIT:
        errs.append("body of %d bytes, over 32 MiB" % len(body))
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\nMIME-Version: 1.0\r\n\r\n" + body)
    if not msg.is_multipart() or msg.defects:
        errs.append("not a well-formed multipart body: %s" % msg.defects)
        return errs, event, parts
    for p in msg.iter_parts():
        if p.get_content_disposition() != "form-data":
            errs.append("a part that is not form-data")
            continue
        name = p.get_param("name", header="content-disposition")
        if name in parts:
            errs.append("part %r twice" % name)
        parts[name] = (p.get_filename(), p.get_payload(decode=True))
    if "event" not in parts:
        errs.append("no event part")
        return errs, event, parts
    if parts["event"][0] != "event.json":
        errs.append("event part filename %r" % parts["event"][0])
    try:
        event = json.loads(parts["event"][1])
    except ValueError as e:
        errs.append("event: %s" % e)
        return errs, event, parts
    want = set(event.get("attachments", [])) | {"event"}
    if set(parts) != want:
        errs.append("parts %s, the event lists %s" % (sorted(parts), sorted(want)))
    for a in event.get("attachments", []):
        if a in parts:
            if parts[a][0] != a:
                errs.append("attachment %s: filename %r" % (a, parts[a][0]))
            try:
                gzip.decompress(parts[a][1])
            except OSError as e:
                errs.append("attachment %s is not gzip: %s" % (a, e))
    return errs, event, parts


class Handler(loopback.Handler):
    def do_POST(self):
        n, step = SCRIPT.next()
        body = self.body()
        errs, event, parts = verify(self, body)
        d = os.path.join(DIR, "req-%d" % n)
        os.makedirs(d, exist_ok=True)
        for name, (_, data) in parts.items():
            if "/" not in name and not name.startswith("."):
                with open(os.path.join(d, name), "wb") as f:
                    f.write(data)
        with open(os.path.join(DIR, "req-%d.json" % n), "w") as f:
            json.dump({"step": step, "errors": errs, "event": event, "parts": sorted(parts),
                       "bytes": len(body), "time": time.time()}, f)
        if errs:
            return self.answer(400, {"error_code": "datakit.badRequest", "message": "; ".join(errs)})
        if step == "endless":      # 200, then a body that never ends
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"x" * 65536)
            except OSError:
                return
        if step == "drop":         # 200, then the connection drops mid-reply
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"partial")
            self.wfile.flush()
            return self.reset()
        if step == "stall":        # takes the request and never answers
            time.sleep(600)
            return None
        if step == "later":        # 503 with a Retry-After of ten minutes
            return self.answer(503, {"error_code": "busy", "message": "come back later"},
                               {"Retry-After": "600"})
        code = int(step)
        if code == 200:
            return self.answer(200, None)
        return self.answer(code, {"error_code": "test", "message": "answer %d from the test" % code})


loopback.serve(Handler, DIR, sys.argv[3] if len(sys.argv) > 3 else None)
