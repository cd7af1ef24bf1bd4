#!/usr/bin/env bash
# A Node.js process's threads off CPU (progs/nodewaits.js): libuv's thread
# pool after its reads, V8's platform workers and the inspector's thread
# wait for work that is not there - idle, as a pool's worker is
# (src/profile/waits/30-nodejs.rules) - while a worker_threads Worker's
# Atomics.wait, woken by the main thread every 10 ms, is another task's
# event: sleep, and no rule of Node's makes it idle. --call-graph dwarf
# (Node's pool waits in glibc's pthread_cond_wait, which keeps no frame
# pointers: -g loses the frames above it). report names the runtime.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v node >/dev/null || skip "node is not installed (apt-get install nodejs)"
head -c 4194304 /dev/urandom >"$WORK/file"
record "$WORK/dwarf.data" -m 2048 -e cpu-clock/freq=99/ -e sched:sched_switch -e sched:sched_waking \
	--switch-events --call-graph dwarf,8192 -- node "$TOP/tests/e2e/progs/nodewaits.js" 2 "$WORK/file"
"$PERFPORT" -q report -i "$WORK/dwarf.data" --no-tree --top 1 >"$WORK/report.txt" || fail "report: exit $?"
for c in idle sleep timed-sleep lock io; do
	"$PERFPORT" -q export -i "$WORK/dwarf.data" -f folded -O counter=$c -O value=ns \
		-O annotate=false -o "$WORK/$c.folded" || fail "export $c: exit $?"
	sed "s/^/$c /" "$WORK/$c.folded"
done >"$WORK/all.folded"
$PY - "$WORK/all.folded" <<'PY'
import collections, sys
by = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    state, rest = line.split(" ", 1)
    stack, val = rest.rsplit(" ", 1)
    f = stack.split(";")
    if "uv_cond_wait" in f and "worker" in f:
        kind = "libuv's pool waiting for work"
    elif "uv_cond_wait" in f and any("PlatformWorkerThread" in x for x in f):
        kind = "V8's platform workers waiting for tasks"
    elif any("FutexEmulation" in x for x in f):
        kind = "Atomics.wait"
    else:
        continue
    by[kind][state] += int(val)
for kind, c in sorted(by.items()):
    t = sum(c.values())
    print("%s: %.3f s off CPU, %s" % (kind, t / 1e9, ", ".join(
        "%s %.1f%%" % (s, 100 * v / t) for s, v in c.most_common())))
with open(sys.argv[1] + ".kinds", "w") as out:
    for kind, c in by.items():
        t = sum(c.values())
        out.write("%s|%d|%d|%d\n" % (kind, t, c["idle"], c["sleep"]))
PY
[ -s "$WORK/all.folded.kinds" ] || fail "no export read back"
grep -q "^libuv's pool" "$WORK/all.folded.kinds" ||
	skip "libuv's thread-pool worker() is not named in this node (a libuv of its own, stripped: install its debug symbols, e.g. libuv1-dbgsym)"
$PY - "$WORK/all.folded.kinds" <<'PY' || fail "the Node.js threads' states"
import sys
bad = []
kinds = {}
for line in open(sys.argv[1]):
    kind, t, idle, sleep = line.rstrip("\n").split("|")
    kinds[kind] = (int(t), int(idle), int(sleep))
for kind in ("libuv's pool waiting for work", "V8's platform workers waiting for tasks"):
    t, idle, _ = kinds.get(kind, (0, 0, 0))
    if t < 1e9 or idle < 0.95 * t:
        bad.append("%s: idle %.3f s of %.3f s" % (kind, idle / 1e9, t / 1e9))
t, idle, sleep = kinds.get("Atomics.wait", (0, 0, 0))
if t < 0.5e9 or sleep < 0.95 * t or idle:
    bad.append("Atomics.wait: sleep %.3f s, idle %.3f s of %.3f s" % (sleep / 1e9, idle / 1e9, t / 1e9))
if bad:
    sys.exit("; ".join(bad))
PY
has "^# runtime Node.js (.*): its rules decided" "$WORK/report.txt" ||
	fail "report does not name Node.js's rules: $(grep '^# runtime' "$WORK/report.txt")"
echo "ok: Node.js's idle pool threads idle, its Atomics.wait sleep"
