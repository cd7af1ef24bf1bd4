#!/usr/bin/env bash
# perfport upload -f arms against a loopback SLS PutLogs
# (tests/e2e/lib/sls_server.py: Content-MD5, v4 and v1 signatures
# recomputed with Python's hmac/hashlib, LZ4 with python3-lz4, the LogGroup
# decoded by protoc against tests/e2e/schemas/sls_log.proto): the logs
# equal the JSON-lines export; a profile split into several requests
# arrives whole, each log once; faults are retried and spooled as for
# CodeGuru; no secret in any output or the spool.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
$PY -c 'import lz4.block' 2>/dev/null || skip "python3-lz4 is not installed"
command -v protoc >/dev/null || skip "protoc is not installed (apt-get install protobuf-compiler)"
export ALIBABA_CLOUD_ACCESS_KEY_ID=LTAIperfporttest ALIBABA_CLOUD_ACCESS_KEY_SECRET=SeCrEtAliyunPerfport0123
export ALIBABA_CLOUD_SECURITY_TOKEN=STStokenPerfport456
export XDG_STATE_HOME="$WORK/state"
record_shape "$WORK/sw.data"
"$PERFPORT" -q export -i "$WORK/sw.data" -f arms -o "$WORK/logs.jsonl" || fail "export: exit $?"

start_server() { # SCRIPT [PORT]
	test_server sls_server.py "$1" "$TOP/tests/e2e/schemas" ${2:-}
}
upload() { # OUT ARGS...
	local out=$1; shift
	rc=0
	"$PERFPORT" -v upload -i "$WORK/sw.data" -f arms -O "endpoint=$URL" -O region=cn-hangzhou \
		"$@" >"$WORK/$out.stdout" 2>"$WORK/$out.stderr" || rc=$?
}
compare() { # the logs the server decoded = the JSON lines (but profileID: one per run)
	$PY - "$WORK/srv" "$WORK/logs.jsonl" "$@" <<'PY' || fail "uploaded logs: $(tail -3 "$WORK/srv.log")"
import glob, json, sys
srv, jsonl = sys.argv[1], sys.argv[2]
want_kind = sys.argv[3] if len(sys.argv) > 3 else None
reqs = [json.load(open(f)) for f in sorted(glob.glob(srv + "/req-*.json"),
                                            key=lambda f: int(f.split("-")[-1].split(".")[0]))]
got = []
for r in reqs:
    if r["errors"]:
        sys.exit("the server refused a request: %s" % r["errors"])
    if want_kind and r["signature"] != want_kind:
        sys.exit("signature %s, want %s" % (r["signature"], want_kind))
    if r["step"] == "200":
        got += r["logs"]
want = [json.loads(l) for l in open(jsonl)]
strip = lambda l: {k: v for k, v in l.items() if k not in ("profileID", "_time")}
a = sorted(json.dumps(strip(l), sort_keys=True) for l in got)
b = sorted(json.dumps(strip(l), sort_keys=True) for l in want)
if a != b:
    sys.exit("%d logs stored, %d exported; they differ" % (len(a), len(b)))
if len({l["profileID"] for l in got}) != 1:
    sys.exit("several profileIDs in one upload")
print("%d requests, %d logs stored = the export" % (len(reqs), len(got)))
PY
}

start_server 200
upload v4
[ $rc -eq 0 ] || { cat "$WORK/v4.stderr"; fail "upload (v4): exit $rc"; }
compare v4
echo "ok: v4-signed PutLogs, logs = the JSON-lines export"

start_server 200
upload v1 -O signature=v1
[ $rc -eq 0 ] || { cat "$WORK/v1.stderr"; fail "upload (v1): exit $rc"; }
compare v1
echo "ok: v1-signed PutLogs"

start_server 200
upload split -O max_logs=7 -O max_bytes=4096
[ $rc -eq 0 ] || fail "split upload: exit $rc"
[ "$(ls "$WORK"/srv/req-*.json | wc -l)" -gt 5 ] || fail "not split: $(ls "$WORK"/srv/req-*.json | wc -l) requests"
compare v4
echo "ok: split into $(ls "$WORK"/srv/req-*.json | wc -l) requests, every log once"

start_server 500,200
upload retry
[ $rc -eq 0 ] || fail "500 then 200: exit $rc"
compare
echo "ok: 500 then 200 retried"

start_server 400
upload bad
[ $rc -eq 2 ] || fail "400: exit $rc, want 2"
grep -q "answer 400 from the test" "$WORK/bad.stderr" || fail "the 400's message is not shown"

start_server 500
upload down --retries 1 -O max_logs=20
[ $rc -eq 4 ] || fail "persistent 500: exit $rc, want 4"
n=$(ls "$WORK/state/perfport/spool" | wc -l)
[ "$n" -ge 2 ] || fail "persistent 500: $n spool entries, want one per request"
start_server 200 "$(cat "$WORK/srv/port")"
rc=0; "$PERFPORT" resend >"$WORK/resend.stdout" 2>"$WORK/resend.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/resend.stderr"; fail "resend: exit $rc"; }
[ -z "$(ls "$WORK/state/perfport/spool")" ] || fail "the spool is not empty after resend"
compare
echo "ok: $n spooled requests resent, re-signed, every log once"

if grep -rqF -e "$ALIBABA_CLOUD_ACCESS_KEY_SECRET" -e "$ALIBABA_CLOUD_SECURITY_TOKEN" \
	"$WORK"/*.stdout "$WORK"/*.stderr "$WORK/state" 2>/dev/null; then
	fail "a secret appears in the output or the spool"
fi
echo "ok: arms upload"
