#!/usr/bin/env bash
# -f pyroscope: the pprof profiles written and sent to a loopback Pyroscope
# (tests/e2e/lib/pyroscope_server.py: the query and labels parsed with
# Pyroscope's rules, the series' name as its /ingest handler decides it,
# Connect pushes read with Pyroscope's push.proto, every pprof decoded by
# `go tool pprof -raw`). Checked: the profile type ids Pyroscope's UI
# lists (process_cpu:cpu:nanoseconds:cpu:nanoseconds, ...samples:count...,
# wall:wall and wall:STATE per off-CPU state), each type's total, stacks
# and per-thread sums against the tree and the folded export; app, labels,
# from/until, sampleRate; /ingest and push; tenant and secret headers (the
# secret never logged or spooled); 503 retried, 400 not; bad names refused.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v go >/dev/null || skip "go is not installed (apt-get install golang-go): go tool pprof decodes"
command -v protoc >/dev/null || skip "protoc is not installed (apt-get install protobuf-compiler)"
$PY -c 'import google.protobuf' 2>/dev/null || skip "python3-protobuf is not installed"
export XDG_STATE_HOME="$WORK/state"
GEN="$WORK/gen"

record_shape "$WORK/shape.data"
"$PERFPORT" -q report --json -i "$WORK/shape.data" >"$WORK/tree.json" || fail "report: exit $?"
mkdir -p "$WORK/folded"
for c in on-cpu preempted lock io sleep timed-sleep; do
	"$PERFPORT" -q export -i "$WORK/shape.data" -f folded -O annotate=false -O value=ns \
		-O counter=$c -o "$WORK/folded/$c.folded" || fail "export folded: exit $?"
done
"$PERFPORT" -q export -i "$WORK/shape.data" -f folded -O annotate=false -O value=samples \
	-O counter=on-cpu -o "$WORK/folded/samples.folded" || fail "export folded: exit $?"

# check SERIES_JSON [EXPECT_APP [LABEL=VALUE...]]: the series of a request
# (or of the exported files) against the tree and the folded stacks
check() {
	$PY - "$WORK" "$@" <<'PY' || fail "${CHECKING:-the series}"
import collections, json, os, sys
sys.path.insert(0, os.environ["TOP"] + "/tests/e2e/lib")
w, series = sys.argv[1], json.load(open(sys.argv[2]))
app, want_labels = (sys.argv[3] if len(sys.argv) > 3 else None), sys.argv[4:]
tree = json.load(open(w + "/tree.json"))
tot = tree["totals"]
def folded(name):
    c = collections.Counter()
    for line in open("%s/folded/%s.folded" % (w, name)):
        s, _, v = line.rstrip("\n").rpartition(" ")
        c[s] += int(v)
    return c
def threads(counter, what="ns"):
    return {str(t["tid"]): t["counters"][counter][what] for t in tree["threads"]
            if t["counters"].get(counter, {}).get(what)}
off = [c for c in ("preempted", "lock", "io", "sleep", "timed-sleep") if c in tot]
want = {"process_cpu:cpu:nanoseconds:cpu:nanoseconds": (tot["on-cpu"]["ns"], [folded("on-cpu")], [threads("on-cpu")]),
        "process_cpu:samples:count:cpu:nanoseconds": (tot["on-cpu"]["count"], [folded("samples")], [threads("on-cpu", "count")]),
        "wall:wall:nanoseconds:cpu:nanoseconds": (sum(tot[c]["ns"] for c in ["on-cpu"] + off),
                                                  [folded(c) for c in ["on-cpu"] + off],
                                                  [threads(c) for c in ["on-cpu"] + off])}
for c in off:
    want["wall:%s:nanoseconds:cpu:nanoseconds" % c.replace("-", "_")] = (tot[c]["ns"], [folded(c)], [threads(c)])
got = {}
names = set()
for s in series:
    names.add(s["labels"]["__name__"])
    if app and s["labels"].get("service_name") != app:
        sys.exit("service_name %r, expected %r" % (s["labels"].get("service_name"), app))
    for kv in want_labels:
        k, v = kv.split("=", 1)
        if s["labels"].get(k) != v:
            sys.exit("label %s=%r, expected %r" % (k, s["labels"].get(k), v))
    for t, v in s["types"].items():
        if t in got:
            sys.exit("profile type %s twice" % t)
        got[t] = v
if names != {"process_cpu", "wall"}:
    sys.exit("series named %s" % sorted(names))
if set(got) != set(want):
    sys.exit("profile types %s, expected %s" % (sorted(got), sorted(want)))
for t, (total, stacks, thr) in want.items():
    g = got[t]
    if g["total"] != total:
        sys.exit("%s: total %d, the tree's %d" % (t, g["total"], total))
    exp = sum(stacks, collections.Counter())
    if +collections.Counter(g["stacks"]) != +exp:
        d = set(collections.Counter(g["stacks"]).items()) ^ set(exp.items())
        sys.exit("%s: stacks differ from the folded export: %s" % (t, sorted(d)[:3]))
    et = collections.Counter()
    for x in thr:
        et.update(x)
    if +collections.Counter(g["threads"]) != +et:
        sys.exit("%s: per thread %s, the tree's %s" % (t, g["threads"], dict(et)))
print("series ok: %s" % ", ".join("%s=%d" % (t, got[t]["total"]) for t in sorted(got)))
PY
}

# --- export: the pprof files, as Pyroscope would name their series ---
"$PERFPORT" -q export -i "$WORK/shape.data" -f pyroscope -o "$WORK/out" --label env=ci ||
	fail "export pyroscope: exit $?"
[ -f "$WORK/out/process_cpu.pb.gz" ] && [ -f "$WORK/out/wall.pb.gz" ] && [ -f "$WORK/out/ingest.txt" ] ||
	fail "export: $(ls "$WORK/out")"
$PY - "$WORK" <<'PY' >"$WORK/files.json" || fail "the exported pprof files"
import json, os, sys
sys.path.insert(0, os.environ["TOP"] + "/tests/e2e/lib")
from pyroscope_server import series_types
out = []
for f in ("process_cpu", "wall"):
    name, types = series_types(None, open("%s/out/%s.pb.gz" % (sys.argv[1], f), "rb").read())
    if name != f:
        sys.exit("%s.pb.gz would be named %r by /ingest" % (f, name))
    out.append({"labels": {"__name__": name}, "types": types})
print(json.dumps(out))
PY
CHECKING="the exported files" check "$WORK/files.json"
grep -q "^POST /ingest?name=shape%7Benv%3Dci%7D&from=[0-9]*&until=[0-9]*&format=pprof&sampleRate=997" \
	"$WORK/out/ingest.txt" || fail "ingest.txt: $(cat "$WORK/out/ingest.txt")"
echo "ok: export: process_cpu and wall pprof, the requests in ingest.txt"

# --- upload ---
upload() { # OUT ARGS...
	local out=$1; shift
	rc=0
	"$PERFPORT" -v upload -i "$WORK/shape.data" -f pyroscope --retries 2 -O server="$URL" "$@" \
		>"$WORK/$out.stdout" 2>"$WORK/$out.stderr" || rc=$?
}
series_of() { # N: the series of request N, to a file
	$PY -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["series"], open(sys.argv[2], "w"))' \
		"$WORK/srv/req-$1.json" "$WORK/series-$1.json"
	echo "$WORK/series-$1.json"
}
field() { # N EXPR: a value of request N's record
	$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$WORK/srv/req-$1.json" "$2"
}

test_server pyroscope_server.py ok "$GEN"
TOKEN="Basic dXNlcjpzM2NyM3Q$$"
PYROSCOPE_AUTHORIZATION=$TOKEN upload ingest --label env=ci --label region=eu-1 -O app=shop.api \
	-O tenant=team-a
[ $rc -eq 0 ] || { cat "$WORK/ingest.stderr"; fail "upload to /ingest: exit $rc"; }
[ -f "$WORK/srv/req-1.json" ] && [ ! -f "$WORK/srv/req-2.json" ] || fail "/ingest: not two requests"
$PY - "$WORK" <<'PY' || fail "merging the two /ingest requests"
import json, sys
w = sys.argv[1]
json.dump([s for n in (0, 1) for s in json.load(open("%s/srv/req-%d.json" % (w, n)))["series"]],
          open(w + "/ingest.json", "w"))
PY
CHECKING="/ingest" check "$WORK/ingest.json" shop.api env=ci region=eu-1 pyroscope_spy=perfport
for n in 0 1; do
	[ "$(field $n 'r["headers"].get("x-scope-orgid")')" = team-a ] || fail "no X-Scope-OrgID"
	[ "$(field $n 'r["headers"].get("authorization")')" = "$TOKEN" ] || fail "no Authorization"
	[ "$(field $n 'r["query"]["sampleRate"]')" = 997 ] || fail "sampleRate $(field $n 'r["query"]["sampleRate"]')"
	[ "$(field $n 'int(r["query"]["from"]) <= int(r["query"]["until"])')" = True ] || fail "from > until"
done
! grep -q "s3cr3t\|dXNlcjpzM2NyM3Q" "$WORK/ingest.stderr" "$WORK/ingest.stdout" || fail "the secret is in the log"
echo "ok: /ingest: two series, labels, tenant and secret headers"

test_server pyroscope_server.py unavailable,ok "$GEN"
upload push -O api=push -O app=shop --label env=ci
[ $rc -eq 0 ] || { cat "$WORK/push.stderr"; fail "push: exit $rc"; }
[ "$(field 1 'r["api"]')" = push ] && [ ! -f "$WORK/srv/req-2.json" ] || fail "push: 503 then 200 is not one retry"
CHECKING="push" check "$(series_of 1)" shop env=ci __delta__=false
echo "ok: push.v1.PusherService/Push, 503 retried"

test_server pyroscope_server.py invalid "$GEN"
upload bad
[ $rc -ne 0 ] || fail "a 400: exit 0"
# each of the two profiles sent once: a 400 is the request's own fault, not retried
[ ! -f "$WORK/srv/req-2.json" ] || fail "a 400 was retried"
grep -q "invalid, from the test" "$WORK/bad.stderr" || { cat "$WORK/bad.stderr"; fail "the server's message is not shown"; }
echo "ok: a 400 is not retried, its message shown"

test_server pyroscope_server.py unavailable "$GEN"
PYROSCOPE_AUTHORIZATION=$TOKEN upload down --retries 1
[ $rc -ne 0 ] || fail "a server that stays down: exit 0"
[ -n "$(ls "$WORK/state/perfport/spool" 2>/dev/null)" ] || fail "not spooled"
! grep -rq "dXNlcjpzM2NyM3Q" "$WORK/state/perfport/spool" || fail "the secret is in the spool"
# both profiles (process_cpu and wall), each its own request, are kept
[ "$(ls "$WORK/state/perfport/spool" | wc -l)" -eq 2 ] ||
	fail "a server that stays down: $(ls "$WORK/state/perfport/spool" | wc -l) of 2 requests spooled"
echo "ok: spooled without the secret, every request"
rm -rf "$WORK/state/perfport/spool"

# the first request fails, the second is delivered: the first is kept in
# the spool (exit 4), the second sent all the same; resend delivers the first
test_server pyroscope_server.py unavailable,ok "$GEN"
upload half --retries 1
[ $rc -eq 4 ] || { cat "$WORK/half.stderr"; fail "first request failed, second delivered: exit $rc, want 4"; }
[ -f "$WORK/srv/req-1.json" ] || fail "the second request was not sent after the first failed"
[ "$(ls "$WORK/state/perfport/spool" | wc -l)" -eq 1 ] || fail "the failed request is not in the spool"
XDG_STATE_HOME="$WORK/state" "$PERFPORT" -q resend >"$WORK/resend.out" 2>&1 ||
	{ cat "$WORK/resend.out"; fail "resend: exit $?"; }
[ -f "$WORK/srv/req-2.json" ] && [ -z "$(ls "$WORK/state/perfport/spool")" ] ||
	fail "resend did not deliver the kept request"
[ "$(field 2 'r["series"][0]["labels"]["__name__"]')" != "$(field 1 'r["series"][0]["labels"]["__name__"]')" ] ||
	fail "the resent request is the delivered one again"
echo "ok: a failed first request spooled, the second sent all the same, resend delivers the first"

for bad in "-O app=my:app" "--label __name__=x" "--label env=a,b"; do
	rc=0
	# shellcheck disable=SC2086
	"$PERFPORT" -q upload -i "$WORK/shape.data" -f pyroscope -O server="$URL" $bad \
		2>"$WORK/usage.err" || rc=$?
	[ $rc -eq 1 ] || fail "$bad: exit $rc, not a usage error"
	grep -q "pyroscope:" "$WORK/usage.err" || fail "$bad: no reason: $(cat "$WORK/usage.err")"
done
echo "ok: names Pyroscope cannot take are refused"

# no server named, none at the default address: the failure names the option
if ! (exec 3<>/dev/tcp/127.0.0.1/4040) 2>/dev/null; then
	rc=0
	"$PERFPORT" upload -f pyroscope -i "$TOP/samples/oncpu.perf.data" --retries 1 --timeout 5 \
		--spool "$WORK/nospool" 2>"$WORK/noserver.err" || rc=$?
	[ $rc -ne 0 ] && has -F "name yours with -O pyroscope.server=URL" "$WORK/noserver.err" ||
		fail "no server: exit $rc, $(cat "$WORK/noserver.err")"
	has -F "'perfport resend $WORK/nospool' sends it again" "$WORK/noserver.err" ||
		fail "the spool named with --spool is not the one resend is told: $(cat "$WORK/noserver.err")"
	echo "ok: no server: -O pyroscope.server named, and the spool to resend"
else
	echo "note: something listens on 127.0.0.1:4040: the default server's failure is not tried"
fi
