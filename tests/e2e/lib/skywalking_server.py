#!/usr/bin/python3
"""A loopback stand-in for SkyWalking's OAP eBPF-profiling receiver, built on
Debian's python3-grpcio with generic handlers (raw bytes in and out), the
messages decoded and the answers encoded by protoc against
tests/e2e/schemas/skywalking_ebpf.proto.

  EBPFProcessService.reportProcesses: answers each host process with
      processId "proc-PID"
  EBPFProcessService.keepAlive: recorded (aux-N.json), empty Commands
  EBPFProfilingService.queryTasks: recorded (aux-N.json); answers, as the
      OAP, an EBPFProfilingTaskQuery command per task of $TASKS
      ("ID:TARGET_TYPE,..."), with args TaskId and TargetType
  EBPFProfilingService.collectProfilingData: takes the stream, answers an
      empty Commands
keepAlive and queryTasks answer ok (or PERMISSION_DENIED) without taking a
step of the script.

usage: skywalking_server.py DIR SCRIPT PROTO_DIR [PORT]
  DIR     "port" when ready; per call N: call-N.json {method, step, messages}
  SCRIPT  answers, comma-separated, the last repeating: ok, unavailable, invalid
With TLS_CERT and TLS_KEY (PEM files) in the environment it serves TLS;
with AUTH_TOKEN, a call whose Authentication metadata is not that token is
refused with PERMISSION_DENIED, as the OAP does. call-N.json records the
Authentication metadata each call carried ("authentication").
"""
import concurrent.futures
import json
import os
import subprocess
import sys

import grpc

import loopback
from pprof_check import parse  # protoc's text format into dicts

DIR, SCRIPT, PROTO = sys.argv[1], loopback.Script(sys.argv[2]), sys.argv[3]
SCHEMA = "skywalking_ebpf.proto"


def protoc(mode, msg, data):
    return subprocess.run(["protoc", "--%s=skywalking.v3.%s" % (mode, msg), "--proto_path=" + PROTO,
                           SCHEMA], input=data, capture_output=True, check=True).stdout


def record(n, method, step, messages, context):
    auth = [v for k, v in context.invocation_metadata() if k == "authentication"]
    with open(os.path.join(DIR, "call-%d.json.tmp" % n), "w") as f:
        json.dump({"method": method, "step": step, "messages": messages,
                   "authentication": auth}, f)
    os.rename(os.path.join(DIR, "call-%d.json.tmp" % n), os.path.join(DIR, "call-%d.json" % n))


def outcome(context, step):
    token = os.environ.get("AUTH_TOKEN")
    if token and [v for k, v in context.invocation_metadata() if k == "authentication"] != [token]:
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "wrong authentication token")
    if step == "unavailable":
        context.abort(grpc.StatusCode.UNAVAILABLE, "answer UNAVAILABLE from the test")
    if step == "invalid":
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "answer INVALID_ARGUMENT from the test")


def report_processes(request, context):
    n, step = SCRIPT.next()
    msg = parse(protoc("decode", "EBPFProcessReportList", request).decode())
    record(n, "reportProcesses", step, [msg], context)
    outcome(context, step)
    text = ""
    for p in msg.get("processes", []):
        host = p["hostProcess"][0]
        pid = host["pid"][0]
        text += 'processes { processId: "proc-%s" hostProcess { pid: %s } }\n' % (pid, pid)
    return protoc("encode", "EBPFReportProcessDownstream", text.encode())


AUX = [0]


def record_aux(method, messages, context):
    auth = [v for k, v in context.invocation_metadata() if k == "authentication"]
    n = AUX[0]
    AUX[0] += 1
    with open(os.path.join(DIR, "aux-%d.json.tmp" % n), "w") as f:
        json.dump({"method": method, "messages": messages, "authentication": auth}, f)
    os.rename(os.path.join(DIR, "aux-%d.json.tmp" % n), os.path.join(DIR, "aux-%d.json" % n))


def keep_alive(request, context):
    record_aux("keepAlive", [parse(protoc("decode", "EBPFProcessPingPkgList", request).decode())], context)
    outcome(context, "ok")
    return b""


def query_tasks(request, context):
    record_aux("queryTasks", [parse(protoc("decode", "EBPFProfilingTaskQuery", request).decode())], context)
    outcome(context, "ok")
    text = ""
    for t in filter(None, os.environ.get("TASKS", "").split(",")):
        tid, target = t.split(":")
        text += ('commands { command: "EBPFProfilingTaskQuery" args { key: "TaskId" value: "%s" } '
                 'args { key: "TargetType" value: "%s" } }\n' % (tid, target))
    return protoc("encode", "Commands", text.encode())


def collect(request_iterator, context):
    n, step = SCRIPT.next()
    msgs = [parse(protoc("decode", "EBPFProfilingData", raw).decode()) for raw in request_iterator]
    record(n, "collectProfilingData", step, msgs, context)
    outcome(context, step)
    return b""


handlers = (
    grpc.method_handlers_generic_handler("skywalking.v3.EBPFProcessService", {
        "reportProcesses": grpc.unary_unary_rpc_method_handler(report_processes),
        "keepAlive": grpc.unary_unary_rpc_method_handler(keep_alive)}),
    grpc.method_handlers_generic_handler("skywalking.v3.EBPFProfilingService", {
        "queryTasks": grpc.unary_unary_rpc_method_handler(query_tasks),
        "collectProfilingData": grpc.stream_unary_rpc_method_handler(collect)}),
)
server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
server.add_generic_rpc_handlers(handlers)
addr = "127.0.0.1:%s" % (sys.argv[4] if len(sys.argv) > 4 else "0")
if os.environ.get("TLS_CERT"):
    creds = grpc.ssl_server_credentials([(open(os.environ["TLS_KEY"], "rb").read(),
                                          open(os.environ["TLS_CERT"], "rb").read())])
    port = server.add_secure_port(addr, creds)
else:
    port = server.add_insecure_port(addr)
server.start()
loopback.announce(DIR, port)
server.wait_for_termination()
