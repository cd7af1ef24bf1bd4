#!/usr/bin/python3
"""A loopback stand-in for SLS PutLogs that checks each request on its own:
path, headers, Content-MD5, the v1 or v4 signature recomputed here with
hmac/hashlib (not with perfport's code), LZ4 (python3-lz4), the LogGroup
decoded by protoc against tests/e2e/schemas/sls_log.proto.

usage: sls_server.py DIR SCRIPT PROTO_DIR [PORT]
  DIR     "port" when ready; per request N: req-N.json (verdict, decoded logs)
  SCRIPT  answers, comma-separated, the last repeating: 200, 500, 400, reset
Credentials from ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET / _SECURITY_TOKEN.
"""
import ast
import base64
import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import time

import loopback

import lz4.block

DIR, SCRIPT, PROTO = sys.argv[1], loopback.Script(sys.argv[2]), sys.argv[3]
AK = os.environ["ALIBABA_CLOUD_ACCESS_KEY_ID"]
SK = os.environ["ALIBABA_CLOUD_ACCESS_KEY_SECRET"]
TOKEN = os.environ.get("ALIBABA_CLOUD_SECURITY_TOKEN")


def uri(v):
    return "".join(c if c.isalnum() and c.isascii() or c in "_-~." else
                   "".join("%%%02X" % b for b in c.encode()) for c in v)


def sign_v4(method, path, query, headers, body, region):
    t = headers["x-log-date"]
    canon = {k: v.strip() for k, v in headers.items()
             if k in ("content-type", "host") or k.startswith("x-log-") or k.startswith("x-acs-")}
    params = sorted((k, uri(v)) for k, v in query)
    req = "\n".join([method, path, "&".join(k + ("=" + v if v else "") for k, v in params),
                     "".join("%s:%s\n" % kv for kv in sorted(canon.items())),
                     ";".join(sorted(canon)), hashlib.sha256(body).hexdigest()])
    scope = "%s/%s/sls/aliyun_v4_request" % (t[:8], region)
    sts = "SLS4-HMAC-SHA256\n%s\n%s\n%s" % (t, scope, hashlib.sha256(req.encode()).hexdigest())
    k = ("aliyun_v4" + SK).encode()
    for part in (t[:8], region, "sls", "aliyun_v4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return "SLS4-HMAC-SHA256 Credential=%s/%s,Signature=%s" % (
        AK, scope, hmac.new(k, sts.encode(), hashlib.sha256).hexdigest())


def sign_v1(method, path, query, headers):
    xs = sorted((k, v) for k, v in headers.items() if k.startswith("x-log-") or k.startswith("x-acs-"))
    s = "%s\n%s\n%s\n%s\n" % (method, headers.get("content-md5", ""), headers.get("content-type", ""),
                              headers.get("date", ""))
    s += "".join("%s:%s\n" % kv for kv in xs) + path
    if query:
        s += "?" + "&".join("%s=%s" % kv for kv in sorted(query))
    return "LOG %s:%s" % (AK, base64.b64encode(hmac.new(SK.encode(), s.encode(), hashlib.sha1).digest()).decode())


def decode(raw):
    """protoc's text of a LogGroup: its logs (dict of contents, "_time") and its
    topic/source."""
    out = subprocess.run(["protoc", "--decode=sls.LogGroup", "--proto_path=" + PROTO, "sls_log.proto"],
                         input=raw, capture_output=True, check=True).stdout.decode()
    logs, group, cur, key = [], {}, None, None
    for line in out.splitlines():
        s = line.strip()
        if line == "Logs {":
            cur = {}
        elif line == "}":
            logs.append(cur)
            cur = None
        elif cur is not None and line.startswith("  Time:"):
            cur["_time"] = int(s.split(":")[1])
        elif cur is not None and s.startswith("Key:"):
            key = ast.literal_eval("b" + s[4:].strip()).decode()
        elif cur is not None and s.startswith("Value:"):
            cur[key] = ast.literal_eval("b" + s[6:].strip()).decode("utf-8")
        elif cur is None and ":" in s:
            k, v = s.split(":", 1)
            group[k] = ast.literal_eval("b" + v.strip()).decode()
    return logs, group


def verify(h, body):
    errs = []
    path, _, qs = h.path.partition("?")
    query = [tuple(p.split("=", 1)) + ("",) * (1 - p.count("=")) for p in qs.split("&") if p]
    if not re.fullmatch(r"/logstores/[\w-]+/shards/lb", path):
        errs.append("path " + path)
    headers = {k.lower(): v for k, v in h.headers.items()}
    for k, want in (("content-type", "application/x-protobuf"), ("x-log-apiversion", "0.6.0"),
                    ("x-log-compresstype", "lz4")):
        if headers.get(k) != want:
            errs.append("%s %r" % (k, headers.get(k)))
    if headers.get("content-md5") != hashlib.md5(body).hexdigest().upper():
        errs.append("Content-MD5")
    if not headers.get("date", "").endswith(" GMT"):
        errs.append("Date %r" % headers.get("date"))
    if TOKEN and headers.get("x-acs-security-token") != TOKEN:
        errs.append("security token header")
    auth = headers.get("authorization", "")
    if auth.startswith("SLS4-HMAC-SHA256"):
        m = re.search(r"Credential=[^/]+/\d{8}/([^/]+)/sls/", auth)
        want = sign_v4(h.command, path, query, headers, body, m.group(1) if m else "?")
        kind = "v4"
    else:
        want = sign_v1(h.command, path, query, headers)
        kind = "v1"
    if auth != want:
        errs.append("%s signature %r, recomputed %r" % (kind, auth, want))
    logs, group = [], {}
    try:
        raw = lz4.block.decompress(body, uncompressed_size=int(headers.get("x-log-bodyrawsize", "0")))
        logs, group = decode(raw)
    except Exception as e:  # noqa: BLE001 - reported to the test
        errs.append("body: %s" % e)
    return errs, kind, logs, group


class Handler(loopback.Handler):
    answer_headers = {"x-log-requestid": "test"}

    def do_POST(self):
        n, step = SCRIPT.next()
        body = self.body()
        errs, kind, logs, group = verify(self, body)
        with open(os.path.join(DIR, "req-%d.json" % n), "w") as f:
            json.dump({"step": step, "errors": errs, "signature": kind, "logs": logs,
                       "group": group, "md5": hashlib.md5(body).hexdigest(), "time": time.time()}, f)
        if errs:
            return self.answer(403, {"errorCode": "SignatureNotMatch", "errorMessage": "; ".join(errs)})
        if step == "reset":
            return self.reset()
        code = int(step)
        if code == 200:
            return self.answer(200, None)
        return self.answer(code, {"errorCode": "Test", "errorMessage": "answer %d from the test" % code})


loopback.serve(Handler, DIR, sys.argv[4] if len(sys.argv) > 4 else None)
