#!/usr/bin/python3
"""A loopback OpenTelemetry collector for the profiles signal: OTLP/HTTP
(POST /v1development/profiles, protobuf or JSON by Content-Type) and
OTLP/gRPC (opentelemetry.proto.collector.profiles.v1development.
ProfilesService/Export, Debian's python3-grpcio), the requests read with
the real opentelemetry-proto messages (otlp_check.load) and answered with
an ExportProfilesServiceResponse in the request's encoding.

usage: otlp_server.py DIR SCRIPT GEN
  DIR     "port" (HTTP) and "grpc-port" when ready; per request N:
          req-N.json {transport, path, content_type, step, headers} and
          req-N.bin (the request re-encoded as binary protobuf)
  SCRIPT  answers, comma-separated, the last repeating: ok, unavailable
          (HTTP 503 / gRPC UNAVAILABLE), invalid (HTTP 400 / gRPC
          INVALID_ARGUMENT), partial (ok, with partial_success: 1 rejected)
  GEN     where protoc's Python output goes
"""
import concurrent.futures
import json
import os
import sys

import grpc

import loopback
from otlp_check import load

DIR, SCRIPT, GEN = sys.argv[1], loopback.Script(sys.argv[2]), sys.argv[3]
load(GEN, b"", "protobuf")  # compile the protos once, before serving
from google.protobuf import json_format  # noqa: E402
from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2 as svc  # noqa: E402


def record(n, transport, path, ctype, step, headers, req):
    base = os.path.join(DIR, "req-%d" % n)
    if req is not None:
        with open(base + ".bin", "wb") as f:
            f.write(req.SerializeToString())
    with open(base + ".json.tmp", "w") as f:
        json.dump({"transport": transport, "path": path, "content_type": ctype, "step": step,
                   "headers": headers}, f)
    os.rename(base + ".json.tmp", base + ".json")


def response(step):
    r = svc.ExportProfilesServiceResponse()
    if step == "partial":
        r.partial_success.rejected_profiles = 1
        r.partial_success.error_message = "one profile rejected by the test"
    return r


class Handler(loopback.Handler):
    def do_POST(self):
        n, step = SCRIPT.next()
        body = self.body()
        ctype = self.headers.get("Content-Type", "")
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = None
        if self.path == "/v1development/profiles":
            try:
                req = load(GEN, body, "json" if ctype == "application/json" else "protobuf")
            except Exception as e:  # what a collector answers a body it cannot read
                record(n, "http", self.path, ctype, "undecodable: %s" % e, headers, None)
                return self.answer(400, {"code": 3, "message": str(e)})
        record(n, "http", self.path, ctype, step, headers, req)
        if self.path != "/v1development/profiles":
            return self.answer(404, {"code": 5, "message": "no such path"})
        if ctype not in ("application/x-protobuf", "application/json"):
            return self.answer(415, {"code": 3, "message": "unsupported content type"})
        if step == "unavailable":
            return self.answer(503, {"code": 14, "message": "unavailable, from the test"})
        if step == "invalid":
            return self.answer(400, {"code": 3, "message": "invalid, from the test"})
        r = response(step)
        if ctype == "application/json":
            return self.answer(200, json_format.MessageToDict(r))
        data = r.SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def export(request, context):
    n, step = SCRIPT.next()
    headers = {k: v for k, v in context.invocation_metadata()}
    try:
        req = load(GEN, request, "protobuf")
    except Exception as e:
        record(n, "grpc", "Export", "application/grpc", "undecodable: %s" % e, headers, None)
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
    record(n, "grpc", "Export", "application/grpc", step, headers, req)
    if step == "unavailable":
        context.abort(grpc.StatusCode.UNAVAILABLE, "unavailable, from the test")
    if step == "invalid":
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "invalid, from the test")
    return response(step).SerializeToString()


server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
    "opentelemetry.proto.collector.profiles.v1development.ProfilesService",
    {"Export": grpc.unary_unary_rpc_method_handler(export)}),))
gport = server.add_insecure_port("127.0.0.1:0")
server.start()
tmp = os.path.join(DIR, "grpc-port.tmp")
with open(tmp, "w") as f:
    f.write(str(gport))
os.rename(tmp, os.path.join(DIR, "grpc-port"))
loopback.serve(Handler, DIR)
