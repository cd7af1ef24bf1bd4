#!/usr/bin/python3
"""A loopback stand-in for CodeGuru Profiler's PostAgentProfile that checks
each request independently of perfport: path and profileToken format,
content type, JSON body, and the AWS SigV4 signature recomputed with
botocore (Debian's python3-botocore) from the received headers.

usage: codeguru_server.py DIR SCRIPT [PORT]
  DIR     where it writes "port" when ready, and per request N: req-N.json
          (path, query, headers, verdict) and body-N
  SCRIPT  what to answer, request by request, comma-separated; the last
          one repeats: 204, 500, 400, 429:SECONDS (with Retry-After),
          reset (close without answering), sleep:SECONDS (then 204);
          ConfigureAgent requests get 200 with shouldProfile from
          $CG_SHOULD_PROFILE (default true), periodInSeconds $CG_PERIOD
          (default 300), and do not count
The credentials to check against come from AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; the region from the request.
"""
import json
import os
import re
import sys
import time
from urllib.parse import parse_qs, urlsplit

import loopback

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

DIR, SCRIPT = sys.argv[1], loopback.Script(sys.argv[2])
AUTH = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                  r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$")


def verify(handler, body):
    """The reasons the request is wrong; empty if it is right."""
    errs = []
    u = urlsplit(handler.path)
    configure = u.path.endswith("/configureAgent")
    if configure:
        if not re.fullmatch(r"/profilingGroups/[\w-]{1,255}/configureAgent", u.path) or u.query:
            errs.append("ConfigureAgent path " + handler.path)
    else:
        if not re.fullmatch(r"/profilingGroups/[\w-]{1,255}/agentProfile", u.path):
            errs.append("path " + u.path)
        q = parse_qs(u.query)
        if list(q) != ["profileToken"] or not re.fullmatch(r"[\w-]{1,64}", q["profileToken"][0]):
            errs.append("query " + u.query)
    if handler.headers.get("Content-Type") != "application/json":
        errs.append("content type %r" % handler.headers.get("Content-Type"))
    try:
        doc = json.loads(body)
        need = {"fleetInstanceId"} if configure else {"start", "end", "agentMetadata", "callgraph"}
        if not need <= set(doc):
            errs.append("body lacks %s" % sorted(need - set(doc)))
    except ValueError as e:
        errs.append("body is not JSON: %s" % e)
    m = AUTH.match(handler.headers.get("Authorization", ""))
    if not m:
        errs.append("Authorization %r" % handler.headers.get("Authorization"))
        return errs
    key, date, region, service, signed, signature = m.groups()
    if key != os.environ["AWS_ACCESS_KEY_ID"] or service != "codeguru-profiler":
        errs.append("credential scope %s/%s" % (key, service))
    token = os.environ.get("AWS_SESSION_TOKEN")
    if token and handler.headers.get("X-Amz-Security-Token") != token:
        errs.append("session token header missing or wrong")
    names = signed.split(";")
    for must in ("host", "x-amz-date", "content-type"):
        if must not in names:
            errs.append("%s not signed" % must)
    headers = {n: handler.headers.get(n, "") for n in names}
    req = AWSRequest(method=handler.command, url="http://%s%s" % (headers["host"], handler.path),
                     headers=headers, data=body)
    req.context["timestamp"] = headers["x-amz-date"]
    creds = Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"], token)
    auth = SigV4Auth(creds, service, region)
    want = auth.signature(auth.string_to_sign(req, auth.canonical_request(req)), req)
    if want != signature:
        errs.append("signature %s, botocore computes %s" % (signature, want))
    if not headers["x-amz-date"].startswith(date):
        errs.append("date scope")
    return errs


class Handler(loopback.Handler):
    def do_POST(self):
        n, step = SCRIPT.next()
        if self.path.endswith("/configureAgent"):
            step = "200"
        body = self.body()
        errs = verify(self, body)
        with open(os.path.join(DIR, "body-%d" % n), "wb") as f:
            f.write(body)
        with open(os.path.join(DIR, "req-%d.json" % n), "w") as f:
            json.dump({"path": self.path, "time": time.time(), "step": step, "errors": errs,
                       "token": parse_qs(urlsplit(self.path).query).get("profileToken", [""])[0]},
                      f)
        if errs:
            return self.answer(403, {"message": "; ".join(errs)})
        if self.path.endswith("/configureAgent"):
            should = os.environ.get("CG_SHOULD_PROFILE", "true") == "true"
            return self.answer(200, {"configuration": {"shouldProfile": should,
                                                       "periodInSeconds": int(os.environ.get("CG_PERIOD", "300")),
                                                       "agentParameters": {}}})
        if step == "reset":
            return self.reset()
        if step.startswith("sleep:"):
            time.sleep(float(step.split(":")[1]))
            return self.answer(204, None)
        if step.startswith("429:"):
            return self.answer(429, {"message": "slow down"}, {"Retry-After": step.split(":")[1]})
        code = int(step)
        return self.answer(code, None if code == 204 else {"message": "answer %d from the test" % code})


loopback.serve(Handler, DIR, sys.argv[3] if len(sys.argv) > 3 else None)
