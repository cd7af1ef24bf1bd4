#!/usr/bin/env bash
# -f otlp: OpenTelemetry profiles, read back with the real
# opentelemetry-proto v1.11.0 messages (tests/proto, compiled by protoc for
# python3-protobuf; OTLP/JSON through protobuf's own JSON parser): every
# table's zero entry, indices in range, one Profile per counter whose
# values, counts and per-thread sums equal the tree's, stacks equal to the
# folded export's, one timestamp per value inside the profile's window,
# thread attributes matching the recording. Then uploads to a loopback
# collector: OTLP/HTTP in protobuf and JSON, OTLP/gRPC, extra headers, a
# secret header from the environment that never reaches the log or the
# spool, UNAVAILABLE/503 retried, a 400 not retried, a bad option refused.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v protoc >/dev/null || skip "protoc is not installed (apt-get install protobuf-compiler)"
$PY -c 'import google.protobuf' 2>/dev/null || skip "python3-protobuf is not installed"
$PY -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed"
export XDG_STATE_HOME="$WORK/state"
GEN="$WORK/gen"
OTLP_CHECK="$TOP/tests/e2e/lib/otlp_check.py"

check_file() { # FILE ENCODING NAME EXPECT...
	local f=$1 enc=$2 name=$3; shift 3
	$PY "$OTLP_CHECK" "$GEN" "$f" "$enc" "$WORK/$name.tree.json" "$WORK/$name.folded" "$@" ||
		fail "$name: the $enc profile does not read back as the tree"
}

record_shape "$WORK/shape.data"
prepare_tree "$WORK/shape.data" shape
"$PERFPORT" -q export -i "$WORK/shape.data" -f otlp -o "$WORK/shape.pb" --label service=shop \
	--label team=a || fail "export otlp: exit $?"
check_file "$WORK/shape.pb" protobuf shape service.name=shop team=a os.type=linux \
	host.name="$(hostname)"
"$PERFPORT" -q export -i "$WORK/shape.data" -f otlp -O encoding=json -o "$WORK/shape.json" ||
	fail "export otlp json: exit $?"
check_file "$WORK/shape.json" json shape
"$PERFPORT" -q export -i "$WORK/shape.data" -f otlp -O timestamps=false -o "$WORK/agg.pb" ||
	fail "export otlp timestamps=false: exit $?"
check_file "$WORK/agg.pb" protobuf shape
echo "ok: protobuf, OTLP/JSON and aggregated values read back as the tree"

# a recording of another kind: the bundled off-CPU sample, and a DWARF one
prepare_tree "$TOP/samples/offcpu.perf.data" sample
"$PERFPORT" -q export -i "$TOP/samples/offcpu.perf.data" -f otlp -o "$WORK/sample.pb" 2>"$WORK/stderr.txt" ||
	fail "export otlp of the sample: exit $?: $(said "$WORK/stderr.txt")"
check_file "$WORK/sample.pb" protobuf sample
build_workload
record "$WORK/dwarf.data" -e cpu-clock --call-graph dwarf,16384 -- "$WORKLOAD" 0.3
prepare_tree "$WORK/dwarf.data" dwarf
"$PERFPORT" -q export -i "$WORK/dwarf.data" -f otlp -o "$WORK/dwarf.pb" ||
	fail "export otlp of a DWARF recording: exit $?"
check_file "$WORK/dwarf.pb" protobuf dwarf
"$PERFPORT" -q export -i "$WORK/shape.data" -f otlp -O counter=lock,io -o "$WORK/two.pb"
n=$($PY - "$GEN" "$WORK/two.pb" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from opentelemetry.proto.profiles.v1development import profiles_pb2
d = profiles_pb2.ProfilesData()
d.ParseFromString(open(sys.argv[2], "rb").read())
print(len(d.resource_profiles[0].scope_profiles[0].profiles))
PY
)
[ "$n" -eq 2 ] || fail "-O counter=lock,io: $n profiles"
echo "ok: the sample, a DWARF recording, a counter selection"

# --- uploads ---
upload() { # OUT ARGS...
	local out=$1; shift
	rc=0
	"$PERFPORT" -v upload -i "$WORK/shape.data" -f otlp --retries 2 "$@" \
		>"$WORK/$out.stdout" 2>"$WORK/$out.stderr" || rc=$?
}
req() { # N FIELD: a field of the server's record of request N
	$PY -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
		"$WORK/srv/req-$1.json" "$2"
}

test_server otlp_server.py ok "$GEN"
GRPC="http://127.0.0.1:$(cat "$WORK/srv/grpc-port")"
TOKEN="Bearer tok-$$-s3cr3t"
OTLP_AUTHORIZATION=$TOKEN upload http -O endpoint="$URL/" -O headers=X-Team=perf,X-Env=ci
[ $rc -eq 0 ] || { cat "$WORK/http.stderr"; fail "upload over OTLP/HTTP: exit $rc"; }
[ "$(req 0 path)" = /v1development/profiles ] || fail "posted to $(req 0 path)"
[ "$(req 0 content_type)" = application/x-protobuf ] || fail "content type $(req 0 content_type)"
$PY - "$WORK/srv/req-0.json" "$TOKEN" <<'PY' || fail "headers of the request"
import json, sys
h = json.load(open(sys.argv[1]))["headers"]
for k, v in (("x-team", "perf"), ("x-env", "ci"), ("authorization", sys.argv[2])):
    if h.get(k) != v:
        sys.exit("header %s: %r, expected %r" % (k, h.get(k), v))
PY
! grep -q "s3cr3t" "$WORK/http.stderr" "$WORK/http.stdout" || fail "the secret is in the log"
check_file "$WORK/srv/req-0.bin" protobuf shape
echo "ok: OTLP/HTTP protobuf, with headers and the secret header"

test_server otlp_server.py ok "$GEN"
upload json -O endpoint="$URL" -O encoding=json
[ $rc -eq 0 ] || { cat "$WORK/json.stderr"; fail "upload over OTLP/HTTP JSON: exit $rc"; }
[ "$(req 0 content_type)" = application/json ] || fail "content type $(req 0 content_type)"
check_file "$WORK/srv/req-0.bin" protobuf shape
echo "ok: OTLP/HTTP JSON"

test_server otlp_server.py unavailable,ok "$GEN"
GRPC="http://127.0.0.1:$(cat "$WORK/srv/grpc-port")"
upload grpc -O endpoint="$GRPC" -O protocol=grpc
[ $rc -eq 0 ] || { cat "$WORK/grpc.stderr"; fail "upload over OTLP/gRPC: exit $rc"; }
[ -f "$WORK/srv/req-1.json" ] && [ ! -f "$WORK/srv/req-2.json" ] ||
	fail "UNAVAILABLE then OK: not exactly one retry"
[ "$(req 1 transport)" = grpc ] || fail "not a gRPC call"
check_file "$WORK/srv/req-1.bin" protobuf shape
echo "ok: OTLP/gRPC, UNAVAILABLE retried"

test_server otlp_server.py invalid "$GEN"
upload bad -O endpoint="$URL"
[ $rc -ne 0 ] || fail "a 400 from the collector: exit 0"
[ ! -f "$WORK/srv/req-1.json" ] || fail "a 400 was retried"
grep -q "invalid, from the test" "$WORK/bad.stderr" || { cat "$WORK/bad.stderr"; fail "the collector's message is not shown"; }
echo "ok: a 400 is not retried and its message shown"

test_server otlp_server.py unavailable "$GEN"
OTLP_AUTHORIZATION=$TOKEN upload down -O endpoint="$URL" --retries 1
[ $rc -ne 0 ] || fail "a collector that stays unavailable: exit 0"
[ -n "$(ls "$WORK/state/perfport/spool" 2>/dev/null)" ] || fail "the undelivered profile is not spooled"
! grep -rq "s3cr3t" "$WORK/state/perfport/spool" || fail "the secret is in the spool"
echo "ok: a collector that stays down: spooled without the secret"

rc=0
"$PERFPORT" -q export -i "$WORK/shape.data" -f otlp -O encoding=json -O protocol=grpc \
	-o "$WORK/x.pb" 2>"$WORK/usage.err" || rc=$?
[ $rc -eq 1 ] || fail "encoding=json with protocol=grpc: exit $rc, not a usage error"
grep -q "encoding=json" "$WORK/usage.err" || fail "no reason given: $(cat "$WORK/usage.err")"
"$PERFPORT" formats otlp 2>&1 | has "v1.11.0" || fail "'perfport formats otlp' does not state the version"
echo "ok: bad options refused, the version stated"
