#!/usr/bin/env bash
# perfport upload -f datakit against a loopback Datakit profiling input
# (tests/e2e/lib/datakit_server.py: the multipart body parsed by Python's
# email package, every attachment the event lists present and gzip): the
# event's tags and RFC 3339 times; the pprof decoded by protoc with the
# tree's totals; export --upload sends the event.json it wrote; a body over
# the size limit is refused before sending; 500 retried, 400 not, a
# persistent failure spooled and resent.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v protoc >/dev/null || skip "protoc is not installed (apt-get install protobuf-compiler)"
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
[ -f "$PROTO" ] || skip "profile.proto is not installed (apt-get install golang-github-google-pprof-dev)"
export XDG_STATE_HOME="$WORK/state"
record_shape "$WORK/sw.data"
"$PERFPORT" -q report --json -i "$WORK/sw.data" >"$WORK/tree.json" || fail "report: exit $?"

start_server() { # SCRIPT [PORT]
	test_server datakit_server.py "$@"
}
upload() { # OUT ARGS...
	local out=$1; shift
	rc=0
	"$PERFPORT" -v upload -i "$WORK/sw.data" -f datakit -O "url=$URL" --label service=shape \
		--label env=test --label version=1.0 "$@" >"$WORK/$out.stdout" 2>"$WORK/$out.stderr" || rc=$?
}
# the last request the server took: no errors, the event's tags and times,
# the pprof's totals
check_last() {
	local n
	n=$(ls "$WORK"/srv/req-*.json | sed 's/.*req-\([0-9]*\).json/\1/' | sort -n | tail -1)
	$PY - "$WORK/srv/req-$n.json" "$WORK/tree.json" <<'PY' || fail "request $n: $(tail -3 "$WORK/srv.log")"
import datetime, json, os, re, sys
r = json.load(open(sys.argv[1]))
tree = json.load(open(sys.argv[2]))
if r["errors"]:
    sys.exit("the server refused the request: %s" % r["errors"])
ev = r["event"]
tags = dict(kv.split(":", 1) for kv in ev["tags_profiler"].split(","))
pids = {str(t["pid"]) for t in tree["threads"] if t["pid"]}
want = {"service": "shape", "env": "test", "version": "1.0", "runtime_os": "linux",
        "process_id": pids.pop()}
for k, v in want.items():
    if tags.get(k) != v:
        sys.exit("tags_profiler %s: %r, want %r" % (k, tags.get(k), v))
if not tags.get("host") or not tags.get("runtime_arch"):
    sys.exit("tags_profiler without host or runtime_arch: %r" % tags)
for k in ("start", "end"):
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", ev[k]):
        sys.exit("%s %r is not RFC 3339 with nanoseconds" % (k, ev[k]))
t0 = datetime.datetime.fromisoformat(ev["start"][:26] + "+00:00")
t1 = datetime.datetime.fromisoformat(ev["end"][:26] + "+00:00")
if not 0 < (t1 - t0).total_seconds() < 60:
    sys.exit("start %s end %s" % (ev["start"], ev["end"]))
FILES = ["cpu.pprof", "delta-mutex.pprof", "delta-block.pprof"]
if ev["attachments"] != FILES or r["parts"] != sorted(FILES + ["event"]):
    sys.exit("attachments %r, parts %r" % (ev["attachments"], r["parts"]))
print("event: %d tags, %s .. %s, parts %s" % (len(tags), ev["start"], ev["end"], r["parts"]))
PY
	zcat "$WORK/srv/req-$n/cpu.pprof" | protoc --decode=perftools.profiles.Profile \
		--proto_path="$(dirname "$PROTO")" profile.proto >"$WORK/decoded.txt" ||
		fail "protoc cannot decode the uploaded pprof"
	$PY - "$WORK/decoded.txt" "$WORK/tree.json" <<'PY' || fail "the uploaded pprof's totals"
import json, os, sys
sys.path.insert(0, os.environ["TOP"] + "/tests/e2e/lib")
from pprof_check import parse, one
pb, on = parse(open(sys.argv[1]).read()), json.load(open(sys.argv[2]))["totals"]["on-cpu"]
st = pb["string_table"]
types = [st[one(t, "type")] for t in pb["sample_type"]]
sums = [sum(s["value"][i] for s in pb["sample"]) for i in range(len(types))]
if types != ["samples", "cpu"] or sums != [on["count"], on["ns"]]:
    sys.exit("cpu.pprof %s %s, the tree's on-cpu %r" % (types, sums, on))
PY
}

start_server 200
upload ok
[ $rc -eq 0 ] || { cat "$WORK/ok.stderr"; fail "upload: exit $rc"; }
check_last
# the receipt on stdout: one request, the body's size as the server took it
kib=$($PY -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["bytes"] / 1024))' "$WORK/srv/req-0.json")
[ "$(cat "$WORK/ok.stdout")" = "datakit: uploaded: 1 request, $kib KiB" ] ||
	fail "upload's receipt: '$(cat "$WORK/ok.stdout")', want 1 request, $kib KiB"
echo "ok: multipart upload, event and pprof = the tree"

# export --upload: the event.json written is the event sent
start_server 200
rc=0
"$PERFPORT" -q export --upload -i "$WORK/sw.data" -f datakit -o "$WORK/dk" -O "url=$URL/" \
	--label service=shape --label env=test --label version=1.0 >"$WORK/dk.stdout" || rc=$?
[ $rc -eq 0 ] || fail "export --upload: exit $rc"
[ ! -s "$WORK/dk.stdout" ] || fail "-q printed a receipt: $(cat "$WORK/dk.stdout")"
cmp -s "$WORK/dk/event.json" "$WORK/srv/req-0/event" || fail "the event sent is not the event.json written"
for f in cpu.pprof delta-mutex.pprof delta-block.pprof; do
	cmp -s "$WORK/dk/$f" "$WORK/srv/req-0/$f" || fail "the $f sent is not the one written"
done
check_last
echo "ok: export --upload sends the files it wrote (a trailing / in the url is fine)"

start_server 200
upload big -O max_bytes=1000
[ $rc -eq 2 ] || fail "over max_bytes: exit $rc, want 2"
grep -q "over the limit of 1000" "$WORK/big.stderr" || fail "over max_bytes: $(cat "$WORK/big.stderr")"
[ ! -e "$WORK/srv/req-0.json" ] || fail "a body over the limit was sent"
echo "ok: a body over the limit is refused before sending"

start_server 500,200
upload retry
[ $rc -eq 0 ] || fail "500 then 200: exit $rc"
[ -e "$WORK/srv/req-1.json" ] || fail "500 then 200: not retried"
check_last
echo "ok: 500 then 200 retried"

start_server 400
upload bad
[ $rc -eq 2 ] || fail "400: exit $rc, want 2"
grep -q "answer 400 from the test" "$WORK/bad.stderr" || fail "the 400's message is not shown"
[ ! -e "$WORK/srv/req-1.json" ] || fail "a 400 was retried"
echo "ok: 400 not retried, its message shown"

start_server 500
upload down --retries 1
[ $rc -eq 4 ] || fail "persistent 500: exit $rc, want 4"
[ "$(ls "$WORK/state/perfport/spool" | wc -l)" -eq 1 ] || fail "persistent 500: not spooled"
start_server 200 "$(cat "$WORK/srv/port")"
rc=0; "$PERFPORT" resend >"$WORK/resend.stdout" 2>"$WORK/resend.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/resend.stderr"; fail "resend: exit $rc"; }
[ -z "$(ls "$WORK/state/perfport/spool")" ] || fail "the spool is not empty after resend"
check_last
echo "ok: spooled, resent whole"

# misbehaving servers: a 200 whose body never ends is taken as delivered
# after 4 MiB of it (not buffered without end, not sent again); a reply that
# drops after its 200 status is not sent again (Datakit has no idempotency
# token: a second post is a second profile); a Retry-After of ten minutes
# waits at most --timeout, the request then spooled
start_server endless
t0=$(date +%s)
upload endless --timeout 20
[ $rc -eq 0 ] || fail "an endless 200: exit $rc, $(cat "$WORK/endless.stderr")"
[ ! -e "$WORK/srv/req-1.json" ] || fail "an endless 200 was sent again"
grep -q "went on past 4 MiB: taken as delivered" "$WORK/endless.stderr" || fail "$(cat "$WORK/endless.stderr")"
echo "ok: an endless 200 body: delivered once, in $(( $(date +%s) - t0 )) s"
start_server drop
upload drop
[ $rc -eq 0 ] || fail "a reply dropped after 200: exit $rc, $(cat "$WORK/drop.stderr")"
sleep 0.3
[ ! -e "$WORK/srv/req-1.json" ] || fail "a reply dropped after its 200 was sent again"
echo "ok: a reply that drops after its 200: sent once"
start_server later
rm -rf "$WORK/state/perfport/spool"
t0=$(date +%s)
upload later --timeout 3 --retries 2
t=$(( $(date +%s) - t0 ))
[ $rc -eq 4 ] || fail "Retry-After 600: exit $rc, want 4: $(said "$WORK/later.stderr")"
# the wait perfport said it would make, not a wall-clock bound (a loaded
# machine stretches every step): Retry-After is honoured up to --timeout
grep -q "attempt 2 of 2 in 3\.[0-9] s" "$WORK/later.stderr" &&
	! grep -q "attempt [0-9]* of [0-9]* in [0-9]\{3,\}" "$WORK/later.stderr" ||
	fail "Retry-After 600 with --timeout 3 --retries 2: not a 3 s wait: $(said "$WORK/later.stderr")"
[ "$t" -lt 600 ] || fail "Retry-After 600 with --timeout 3 --retries 2 took $t s"
echo "ok: Retry-After 600 with --timeout 3 --retries 2: $t s, spooled"

# the spool under stress: 20 entries and two resends at once deliver each
# once (an entry is claimed by renaming it); an entry cut short (a kill
# mid-write of an older perfport, a full disk) is moved aside, never sent;
# a spool on a full filesystem leaves no partial entry
one=$(ls "$WORK/state/perfport/spool" | head -1)
[ -n "$one" ] || fail "no spooled entry to copy"
for i in $(seq -w 1 19); do
	cp -r "$WORK/state/perfport/spool/$one" "$WORK/state/perfport/spool/${one%-*}-c0$i"
done
start_server 200 "$(cat "$WORK/srv/port")"     # where the entries were meant to go
rc1=0; rc2=0
"$PERFPORT" -q resend >/dev/null 2>"$WORK/r1.err" & P1=$!
"$PERFPORT" -q resend >/dev/null 2>"$WORK/r2.err" & P2=$!
wait $P1 || rc1=$?
wait $P2 || rc2=$?
sleep 0.3
got=$(ls "$WORK/srv" | grep -c '^req-[0-9]*\.json$' || true)
[ "$got" -eq 20 ] || fail "two resends of 20 entries: $got deliveries ($rc1, $rc2)"
[ -z "$(ls -A "$WORK/state/perfport/spool")" ] || fail "the spool is not empty: $(ls -A "$WORK/state/perfport/spool")"
echo "ok: two resends at once: 20 entries, 20 deliveries"
# a resend killed while sending: its claim goes back to the spool at the
# next resend, which delivers the entry once
start_server 500
upload killed --retries 1
[ $rc -eq 4 ] || fail "an entry to kill a resend over: exit $rc"
start_server stall "$(cat "$WORK/srv/port")"
"$PERFPORT" -q resend --timeout 60 >/dev/null 2>&1 & KP=$!
for _ in $(seq 100); do [ -e "$WORK/srv/req-0.json" ] && break; sleep 0.1; done
kill -9 $KP; wait $KP 2>/dev/null || true
ls -A "$WORK/state/perfport/spool" | has '^\.claim-' || fail "no claim left by the killed resend: $(ls -A "$WORK/state/perfport/spool")"
start_server 200 "$(cat "$WORK/srv/port")"
rc=0; "$PERFPORT" resend >/dev/null 2>"$WORK/killed.err" || rc=$?
[ $rc -eq 0 ] && [ -e "$WORK/srv/req-0.json" ] && [ ! -e "$WORK/srv/req-1.json" ] ||
	fail "after a killed resend: exit $rc, $(ls "$WORK/srv"), $(cat "$WORK/killed.err")"
[ -z "$(ls -A "$WORK/state/perfport/spool")" ] || fail "the spool is not empty: $(ls -A "$WORK/state/perfport/spool")"
echo "ok: a resend killed mid-send: the next one delivers the entry once"
mkdir -p "$WORK/state/perfport/spool/1-datakit-cut"
printf 'method POST\nurl %s/v1/write/profiling\nsig' "$URL" >"$WORK/state/perfport/spool/1-datakit-cut/request"
printf 'x' >"$WORK/state/perfport/spool/1-datakit-cut/body"
start_server 200
rc=0; "$PERFPORT" resend >/dev/null 2>"$WORK/cut.err" || rc=$?
[ $rc -ne 0 ] && grep -q "moved aside" "$WORK/cut.err" || fail "a cut entry: exit $rc, $(cat "$WORK/cut.err")"
[ ! -e "$WORK/srv/req-0.json" ] || fail "a cut entry was sent"
[ -d "$WORK/state/perfport/spool/damaged-1-datakit-cut" ] || fail "the cut entry was not moved aside"
rm -rf "$WORK/state/perfport/spool/damaged-1-datakit-cut"
echo "ok: an entry cut short is moved aside, not sent"
if mkdir -p "$WORK/full" && mount -t tmpfs -o size=4k tmpfs "$WORK/full" 2>/dev/null; then
	start_server 500
	rc=0; "$PERFPORT" -q upload -i "$WORK/sw.data" -f datakit -O "url=$URL" --retries 1 --spool "$WORK/full/spool" \
		2>"$WORK/full.err" || rc=$?
	left=$(ls -A "$WORK/full/spool" 2>/dev/null || true)
	umount "$WORK/full"
	[ $rc -eq 2 ] || fail "a full spool: exit $rc, want 2: $(cat "$WORK/full.err")"
	[ -z "$left" ] || fail "a full spool kept a partial entry: $left"
	grep -q "cannot keep the request" "$WORK/full.err" || fail "a full spool: $(cat "$WORK/full.err")"
	echo "ok: a full spool filesystem: nothing half kept, exit 2"
else
	echo "(cannot mount a small tmpfs here: the full-spool case is not tried)"
fi
echo "ok: datakit upload"
