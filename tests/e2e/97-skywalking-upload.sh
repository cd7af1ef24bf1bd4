#!/usr/bin/env bash
# perfport upload -f skywalking against a loopback OAP
# (tests/e2e/lib/skywalking_server.py: python3-grpcio generic handlers,
# messages decoded by protoc): the processes are reported first, then kept
# alive (where the OAP registers service and instance); every stack arrives
# once per kind, on-CPU to the ON_CPU task and off-CPU to the OFF_CPU one
# (-O offcpu_task=), never mixed in one task; a task's type the OAP gives in
# queryTasks decides what is sent to it; under the processId the server
# gave; symbols leaf first, kernel apart from user (against the folded
# export); dumpCount sums to the on-CPU samples, switchCount and duration to
# the off-CPU intervals and time; UNAVAILABLE is retried, INVALID_ARGUMENT
# is not and its message is shown; the token from $SW_AGENT_AUTHENTICATION
# goes as Authentication metadata and never into the log or the spool; no
# task id: a clear refusal.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v protoc >/dev/null || skip "protoc is not installed (apt-get install protobuf-compiler)"
$PY -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed"
export XDG_STATE_HOME="$WORK/state"
record_shape "$WORK/sw.data"
"$PERFPORT" -q report --json -i "$WORK/sw.data" >"$WORK/tree.json" || fail "report: exit $?"
folded_exports() { # FILE PREFIX: PREFIXon-cpu.folded, PREFIXpreempted.folded (intervals), PREFIXoffns.folded
	for c in on-cpu preempted,lock,io,sleep,timed-sleep; do
		"$PERFPORT" -q export -i "$1" -f folded -O counter=$c -O annotate=false \
			-O value=samples -o "$WORK/$2${c%%,*}.folded" || fail "export folded: exit $?"
	done
	"$PERFPORT" -q export -i "$1" -f folded -O counter=preempted,lock,io,sleep,timed-sleep \
		-O annotate=false -O value=ns -o "$WORK/$2offns.folded" || fail "export folded: exit $?"
}
folded_exports "$WORK/sw.data" ""

start_server() { # SCRIPT [PORT]
	test_server skywalking_server.py "$1" "$TOP/tests/e2e/schemas" ${2:-}
}
upload() { # OUT ARGS...
	local out=$1; shift
	rc=0
	"$PERFPORT" ${VV:--v} upload -i "$WORK/sw.data" -f skywalking -O "address=${URL#http://}" \
		-O task=task-7 -O offcpu_task=task-8 -O service=shape -O instance=box -O labels=a,b "$@" \
		>"$WORK/$out.stdout" 2>"$WORK/$out.stderr" || rc=$?
}
check() { # the calls the server took, against the tree and the folded exports
	$PY - "$WORK" <<'PY' || fail "uploaded profile: $(tail -3 "$WORK/srv.log")"
import collections, glob, json, os, sys
sys.path.insert(0, os.environ["TOP"] + "/tests/e2e/lib")
from swstacks import folded_key, read_folded
w = sys.argv[1]
calls = [json.load(open(f)) for f in sorted(glob.glob(w + "/srv/call-*.json"),
                                            key=lambda f: int(f.split("-")[-1].split(".")[0]))]
ok = [c for c in calls if c["step"] == "ok"]
if not ok or ok[0]["method"] != "reportProcesses":
    sys.exit("the first call answered is %s, not reportProcesses" % (ok[0]["method"] if ok else None))
tree = json.load(open(w + "/tree.json"))
rep = ok[0]["messages"][0]
pids = {t["pid"] for t in tree["threads"] if t["pid"]}
got = {}
for p in rep["processes"]:
    h = p["hostProcess"][0]
    e = h["entity"][0]
    if (e["layer"][0], e["serviceName"][0], e["instanceName"][0], e["labels"]) != ("OS_LINUX", "shape", "box", ["a", "b"]):
        sys.exit("entity %r" % e)
    got[h["pid"][0]] = e["processName"][0]
if set(got) != pids:
    sys.exit("processes reported %s, the recording's %s" % (sorted(got), sorted(pids)))
mains = {t["pid"]: t["comm"] for t in tree["threads"] if t["pid"] and t["tid"] == t["pid"]}
if any(got[p] != mains.get(p, got[p]) for p in got):
    sys.exit("process names %r, the main threads' commands %r" % (got, mains))
if not rep.get("ebpfAgentID", [""])[0].startswith("perfport-"):
    sys.exit("ebpfAgentID %r" % rep.get("ebpfAgentID"))
# keepAlive: every reported process, with its entity, by the same agent
aux = [json.load(open(f)) for f in glob.glob(w + "/srv/aux-*.json")]
kas = [a["messages"][0] for a in aux if a["method"] == "keepAlive"]
if not kas:
    sys.exit("no keepAlive: the OAP registers the service and instance only there")
alive = {p["entityMetadata"][0]["processName"][0] for k in kas for p in k["processes"]}
if alive != set(got.values()) or kas[0]["ebpfAgentID"] != rep["ebpfAgentID"]:
    sys.exit("keepAlive for %s, reported %s" % (sorted(alive), sorted(got.values())))
for c in ok:
    if c["method"] == "collectProfilingData":
        kinds = {"onCPU" if "onCPU" in m else "offCPU" for m in c["messages"]}
        if len(kinds) != 1:
            sys.exit("one stream carries %s" % sorted(kinds))
msgs = [m for c in ok if c["method"] == "collectProfilingData" for m in c["messages"]]
if not msgs:
    sys.exit("no profiling data")
seen = set()
on, off, off_ns = collections.Counter(), collections.Counter(), collections.Counter()
for m in msgs:
    t = m["task"][0]
    kind = "onCPU" if "onCPU" in m else "offCPU"
    if t["taskId"][0] != {"onCPU": "task-7", "offCPU": "task-8"}[kind] or \
            t["processId"][0] not in {"proc-%d" % p for p in pids}:
        sys.exit("%s data under task %r" % (kind, t))
    if not 0 < t["currentTime"][0] - t["profilingStartTime"][0] < 60000:
        sys.exit("times %r" % t)
    d = m[kind][0]
    folded = folded_key(d)
    key = (t["processId"][0], kind, folded, t["currentTime"][0])
    if key in seen:
        sys.exit("a stack sent twice: %r" % (key,))
    seen.add(key)
    if kind == "onCPU":
        on[folded] += d["dumpCount"][0]
    else:
        off[folded] += d["switchCount"][0]
        # proto3 leaves a field at 0 out of the message: a stack whose
        # intervals were all cut to nothing (0 ns, a count of 1 or more)
        # comes without duration, as the folded ns export leaves it out
        off_ns[folded] += d.get("duration", [0])[0]
folded = read_folded
for name, got_c, want in (("on-CPU samples", on, folded(w + "/on-cpu.folded")),
                          ("off-CPU intervals", off, folded(w + "/preempted.folded")),
                          ("off-CPU ns", off_ns, folded(w + "/offns.folded"))):
    if got_c != want:
        diff = set(got_c.items()) ^ set(want.items())
        sys.exit("%s per stack differ from the folded export: %s" % (name, sorted(diff)[:3]))
tot = tree["totals"]
offc = ("preempted", "lock", "io", "sleep", "timed-sleep")
if sum(on.values()) != tot["on-cpu"]["count"] or \
   sum(off_ns.values()) != sum(tot.get(c, {}).get("ns", 0) for c in offc):
    sys.exit("totals differ from the tree")
print("%d processes reported, %d messages (%d on-CPU, %d off-CPU stacks) = the tree" %
      (len(got), len(msgs), len(on), len(off)))
PY
}

start_server ok
upload ok
[ $rc -eq 0 ] || { cat "$WORK/ok.stderr"; fail "upload: exit $rc"; }
check
calls=$(ls "$WORK"/srv/call-*.json "$WORK"/srv/aux-*.json | wc -l)
grep -Eqx "skywalking: uploaded: $calls requests, [0-9]+\.[0-9] KiB" "$WORK/ok.stdout" ||
	fail "upload's receipt: '$(cat "$WORK/ok.stdout")', want $calls requests"
echo "ok: processes, then every stack once with the tree's counts"

# one task: the kind the OAP says it is (queryTasks), else on-CPU; never both
kinds_sent() { # the kinds of data the server took, with their task ids
	$PY - "$WORK" <<'PY'
import glob, json, sys
out = set()
for f in glob.glob(sys.argv[1] + "/srv/call-*.json"):
    c = json.load(open(f))
    for m in c["messages"] if c["method"] == "collectProfilingData" else []:
        out.add("%s:%s" % ("onCPU" if "onCPU" in m else "offCPU", m["task"][0]["taskId"][0]))
print(" ".join(sorted(out)))
PY
}
one_task() { # OUT ARGS...
	local out=$1; shift
	rc=0
	"$PERFPORT" upload -i "$WORK/sw.data" -f skywalking -O "address=${URL#http://}" \
		-O task=task-7 "$@" >"$WORK/$out.stdout" 2>"$WORK/$out.stderr" || rc=$?
}
TASKS=task-7:OFF_CPU start_server ok
one_task oap-off
[ $rc -eq 0 ] || { cat "$WORK/oap-off.stderr"; fail "task the OAP says is OFF_CPU: exit $rc"; }
[ "$(kinds_sent)" = "offCPU:task-7" ] || fail "task OFF_CPU in the OAP: sent $(kinds_sent)"
grep -q "on-CPU stacks not sent" "$WORK/oap-off.stderr" || fail "no warning for the on-CPU data left out"
start_server ok
one_task default
[ $rc -eq 0 ] && [ "$(kinds_sent)" = "onCPU:task-7" ] || fail "a task of unknown type: exit $rc, sent $(kinds_sent)"
grep -q "offcpu_task=ID" "$WORK/default.stderr" || fail "the warning does not say how to send the off-CPU data"
start_server ok
one_task optoff -O target=off-cpu
[ $rc -eq 0 ] && [ "$(kinds_sent)" = "offCPU:task-7" ] || fail "-O target=off-cpu: exit $rc, sent $(kinds_sent)"
TASKS=task-7:ON_CPU start_server ok
one_task conflict -O target=off-cpu
[ $rc -eq 2 ] && grep -q "is ON_CPU in the OAP" "$WORK/conflict.stderr" || fail "a target the OAP contradicts: exit $rc"
[ -z "$(kinds_sent)" ] || fail "a contradicted target sent $(kinds_sent)"
echo "ok: one kind of data per task: the OAP's type, -O target=, else on-CPU"

# by time: a recording longer than a slice (5 s, Rover's flush) is sent as
# slices, each message at its slice's end, so the OAP's time ranges narrow;
# per stack the slices add up to the whole (folded export)
build_shape
record "$WORK/long.data" -e cpu-clock/freq=199/ -e sched:sched_switch --switch-events -g -- \
	"$SHAPE" 7 "$WORK"
folded_exports "$WORK/long.data" long-
start_server ok
rc=0; "$PERFPORT" -q upload -i "$WORK/long.data" -f skywalking -O "address=${URL#http://}" \
	-O task=task-7 -O offcpu_task=task-8 2>"$WORK/long.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/long.stderr"; fail "upload of a 7 s recording: exit $rc"; }
$PY - "$WORK" <<'PY' || fail "slices"
import collections, glob, json, os, sys
sys.path.insert(0, os.environ["TOP"] + "/tests/e2e/lib")
from swstacks import folded_key, read_folded as folded
w = sys.argv[1]
got = {"onCPU": collections.Counter(), "offCPU": collections.Counter(), "ns": collections.Counter()}
times = collections.defaultdict(set)
for f in glob.glob(w + "/srv/call-*.json"):
    c = json.load(open(f))
    if c["method"] != "collectProfilingData":
        continue
    for m in c["messages"]:
        t = m["task"][0]
        kind = "onCPU" if "onCPU" in m else "offCPU"
        d = m[kind][0]
        key = folded_key(d)
        got[kind][key] += d.get("dumpCount", d.get("switchCount", [0]))[0]
        if kind == "offCPU":
            got["ns"][key] += d.get("duration", [0])[0]
        times[t["taskId"][0]].add(t["currentTime"][0] - t["profilingStartTime"][0])
for k, path in (("onCPU", "long-on-cpu.folded"), ("offCPU", "long-preempted.folded"), ("ns", "long-offns.folded")):
    if got[k] != folded(w + "/" + path):
        sys.exit("%s: the slices do not add up to the whole" % k)
for task, ts in times.items():
    print("%s: message times %s ms after the start" % (task, sorted(ts)))
    if len(ts) < 2 or max(ts) > 8000:
        sys.exit("%s: times %s, want one per 5 s slice" % (task, sorted(ts)))
PY
echo "ok: a long recording goes in 5 s slices, each at its time, adding up to the whole"

# off-CPU intervals recorded without a stack (switch events alone): the
# placeholder frame goes where the kernel switched the thread out, never
# among the user symbols (the OAP would show it as the process's code)
record "$WORK/nostack.data" -e cpu-clock/freq=199/ --switch-events -g -- "$SHAPE" 1 "$WORK"
start_server ok
rc=0; "$PERFPORT" -q upload -i "$WORK/nostack.data" -f skywalking -O "address=${URL#http://}" \
	-O task=task-7 -O target=off-cpu 2>"$WORK/nostack.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/nostack.stderr"; fail "upload of switch events without stacks: exit $rc"; }
$PY - "$WORK" <<'PY' || fail "placeholder"
import glob, json, sys
placed = 0
for f in glob.glob(sys.argv[1] + "/srv/call-*.json"):
    c = json.load(open(f))
    for m in c["messages"] if c["method"] == "collectProfilingData" else []:
        for s in m["offCPU"][0].get("stacks", []):
            for sym in s.get("stackSymbols", []):
                if sym.startswith("[off-cpu"):
                    if s.get("stackType", ["PROCESS_KERNEL_SPACE"])[0] == "PROCESS_USER_SPACE":
                        sys.exit("the placeholder %r is a user symbol" % sym)
                    placed += 1
if not placed:
    sys.exit("no off-CPU interval without a stack was sent")
print("%d placeholders, all in kernel stacks" % placed)
PY
echo "ok: an interval without a stack is no user symbol"

# the process's full command from the recording's header, not its 15-byte comm
start_server ok
rc=0; "$PERFPORT" -q upload -i "$TOP/samples/offcpu.perf.data" -f skywalking -O "address=${URL#http://}" \
	-O task=task-7 2>"$WORK/name.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/name.stderr"; fail "upload of the bundled sample: exit $rc"; }
$PY - "$WORK" <<'PY' || fail "process name"
import json, sys
h = json.load(open(sys.argv[1] + "/srv/call-0.json"))["messages"][0]["processes"][0]["hostProcess"][0]
props = {kv["key"][0]: kv["value"][0] for kv in h["properties"]}
name = h["entity"][0]["processName"][0]
if name != "perfport-workload" or props["command_line"] != "samples/bin/perfport-workload 0.4":
    sys.exit("processName %r, command_line %r (comm is 'perfport-worklo')" % (name, props["command_line"]))
PY
echo "ok: the full command and command line from the recording's header"

start_server unavailable,ok
upload retry
[ $rc -eq 0 ] || { cat "$WORK/retry.stderr"; fail "UNAVAILABLE then ok: exit $rc"; }
grep -q "UNAVAILABLE" "$WORK/retry.stderr" || fail "the retry does not say UNAVAILABLE"
check
echo "ok: UNAVAILABLE retried"

start_server invalid
upload bad
[ $rc -eq 2 ] || fail "INVALID_ARGUMENT: exit $rc, want 2"
grep -q "answer INVALID_ARGUMENT from the test" "$WORK/bad.stderr" || fail "the server's message is not shown"
[ ! -e "$WORK/srv/call-1.json" ] || fail "INVALID_ARGUMENT was retried"
[ -z "$(ls "$WORK/state/perfport/spool" 2>/dev/null)" ] || fail "INVALID_ARGUMENT was spooled"
echo "ok: INVALID_ARGUMENT not retried, not spooled, its message shown"

start_server unavailable
upload down --retries 2
[ $rc -eq 2 ] || fail "OAP unavailable for reportProcesses: exit $rc, want 2"
[ -z "$(ls "$WORK/state/perfport/spool" 2>/dev/null)" ] || fail "reportProcesses was spooled"
echo "ok: reportProcesses unanswered: exit 2, nothing spooled"

start_server ok,unavailable
upload spool --retries 2
[ $rc -eq 4 ] || fail "collectProfilingData unavailable: exit $rc, want 4"
[ "$(ls "$WORK/state/perfport/spool" | wc -l)" -eq 2 ] || fail "collectProfilingData: the two streams not spooled"
cp "$WORK/srv/call-0.json" "$WORK/report-call.json"   # reportProcesses, answered
cp "$WORK"/srv/aux-*.json "$WORK/"
start_server ok "$(cat "$WORK/srv/port")"
rc=0; "$PERFPORT" resend >"$WORK/resend.stdout" 2>"$WORK/resend.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/resend.stderr"; fail "resend: exit $rc"; }
[ -z "$(ls "$WORK/state/perfport/spool")" ] || fail "the spool is not empty after resend"
[ -e "$WORK/srv/call-1.json" ] && [ ! -e "$WORK/srv/call-2.json" ] || fail "resend: not two calls"
mv "$WORK/srv/call-1.json" "$WORK/srv/call-2.json"     # the resent streams, after the report
mv "$WORK/srv/call-0.json" "$WORK/srv/call-1.json"
cp "$WORK/report-call.json" "$WORK/srv/call-0.json"
cp "$WORK"/aux-*.json "$WORK/srv/"
check
echo "ok: collectProfilingData spooled (exit 4), resent over gRPC whole"

# TLS: a certificate made here for 127.0.0.1, trusted with --ca-file
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
		>/dev/null 2>&1 || fail "openssl cannot make a test certificate"
	TLS_CERT="$WORK/cert.pem" TLS_KEY="$WORK/key.pem" start_server ok
	upload tls -O tls=true --ca-file "$WORK/cert.pem"
	[ $rc -eq 0 ] || { cat "$WORK/tls.stderr"; fail "upload over TLS: exit $rc"; }
	grep -q "POST https://127.0.0.1" "$WORK/tls.stderr" || fail "the TLS upload did not use https"
	check
	upload untrusted -O tls=true --retries 1
	[ $rc -ne 0 ] || fail "a certificate nobody trusts was accepted"
	echo "ok: gRPC over TLS, the certificate verified"
else
	echo "(openssl is not installed: TLS not tried)"
fi

# the OAP's token: from $SW_AGENT_AUTHENTICATION (or -O auth_env=) as the
# Authentication metadata of every call; never in the log (-vv shows every
# other header), never in the spool, read again by resend
TOKEN="tok-$$-s3cr3t"
AUTH_TOKEN=$TOKEN start_server ok
upload noauth
[ $rc -eq 2 ] && grep -q "PERMISSION_DENIED" "$WORK/noauth.stderr" || fail "no token: exit $rc, want 2 and PERMISSION_DENIED"
[ ! -e "$WORK/srv/call-1.json" ] || fail "PERMISSION_DENIED was retried"
AUTH_TOKEN=$TOKEN start_server ok
export SW_AGENT_AUTHENTICATION=$TOKEN
VV=-vv upload auth
[ $rc -eq 0 ] || { cat "$WORK/auth.stderr"; fail "upload with the token: exit $rc"; }
check
$PY - "$WORK" "$TOKEN" <<'PY' || fail "the token did not go with every call"
import glob, json, sys
calls = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/srv/call-*.json")]
if len(calls) < 2 or any(c["authentication"] != [sys.argv[2]] for c in calls):
    sys.exit([c["authentication"] for c in calls])
PY
grep -q "> Authentication: (redacted, from \$SW_AGENT_AUTHENTICATION)" "$WORK/auth.stderr" ||
	fail "-vv does not say the Authentication header went"
! grep -q "$TOKEN" "$WORK/auth.stderr" "$WORK/auth.stdout" || fail "the token is in the log"
AUTH_TOKEN=$TOKEN start_server ok,unavailable
upload authspool --retries 2
[ $rc -eq 4 ] || fail "collectProfilingData unavailable with a token: exit $rc, want 4"
! grep -rq "$TOKEN" "$WORK/state/perfport/spool" || fail "the token is in the spool"
grep -rq "^secret Authentication=SW_AGENT_AUTHENTICATION$" "$WORK/state/perfport/spool" ||
	fail "the spool entry does not say where the token comes from"
unset SW_AGENT_AUTHENTICATION
AUTH_TOKEN=$TOKEN start_server ok "$(cat "$WORK/srv/port")"
rc=0; "$PERFPORT" resend >/dev/null 2>"$WORK/resend-noauth.stderr" || rc=$?
[ $rc -ne 0 ] && grep -q "'SW_AGENT_AUTHENTICATION' is not set" "$WORK/resend-noauth.stderr" ||
	fail "resend without the token: exit $rc: $(cat "$WORK/resend-noauth.stderr")"
[ -n "$(ls "$WORK/state/perfport/spool")" ] || fail "the entry left the spool undelivered"
[ ! -e "$WORK/srv/call-0.json" ] || fail "resend sent without the token"
rc=0; MY_OAP_TOKEN=$TOKEN "$PERFPORT" resend >/dev/null 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "resend took the token from another variable"
rc=0; SW_AGENT_AUTHENTICATION=$TOKEN "$PERFPORT" resend >/dev/null 2>"$WORK/resend-auth.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/resend-auth.stderr"; fail "resend with the token: exit $rc"; }
[ -z "$(ls "$WORK/state/perfport/spool")" ] || fail "the spool is not empty after resend"
grep -q "\"authentication\": \[\"$TOKEN\"\]" "$WORK/srv/call-0.json" || fail "the resent call had no token"
AUTH_TOKEN=$TOKEN start_server ok
export MY_OAP_TOKEN=$TOKEN
upload authenv -O auth_env=MY_OAP_TOKEN
[ $rc -eq 0 ] || { cat "$WORK/authenv.stderr"; fail "-O auth_env=MY_OAP_TOKEN: exit $rc"; }
export MY_OAP_TOKEN="$TOKEN
x-injected: 1"
upload authbad -O auth_env=MY_OAP_TOKEN
[ $rc -eq 2 ] && grep -q "'MY_OAP_TOKEN' holds a control character" "$WORK/authbad.stderr" ||
	fail "a token with a newline: exit $rc, $(cat "$WORK/authbad.stderr")"
unset MY_OAP_TOKEN
echo "ok: the token goes as Authentication metadata, never logged or spooled; resend reads it again"

# a missing task is a usage error (exit 1)
rc=0; "$PERFPORT" -q upload -i "$WORK/sw.data" -f skywalking -O "address=${URL#http://}" \
	2>"$WORK/notask.err" || rc=$?
[ $rc -eq 1 ] && grep -q "task=ID is required" "$WORK/notask.err" || fail "no task: exit $rc, $(cat "$WORK/notask.err")"
echo "ok: skywalking upload"
