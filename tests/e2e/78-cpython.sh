#!/usr/bin/env bash
# CPython's threads: waiting for the GIL is a lock wait, though the thread
# sleeps in pthread_cond_timedwait with the 5 ms switch interval as its
# timeout; a real time.sleep() in a thread that also waits for the GIL is
# timed-sleep; queue.get() without a timeout is sleep. progs/waits.py runs
# four pure-Python loops (off CPU only to wait for the GIL), a sleeper, a
# producer and a consumer, in OS threads named after them, and times its
# own sleeps and gets; it runs 2 s and on until it has done enough to be
# judged, by its own count (20 sleeps and gets, each loop 0.6 s blocked by
# the kernel's schedstat): on a loaded machine 2 s may hold no sleep at
# all. Recorded with --call-graph dwarf: Debian's
# interpreter has no frame pointers, and its debug symbols (python3-dbg)
# name take_gil, a static function.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
PYBIN=$(readlink -f /usr/bin/python3)
BID=$(readelf -n "$PYBIN" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$BID" ] && [ -f "/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug" ] ||
	skip "the debug symbols of $PYBIN are not installed (apt-get install python3-dbg)"

record "$WORK/py.data" -m 2048 -e cpu-clock/freq=499/ -e sched:sched_switch \
	-e sched:sched_waking --switch-events --call-graph dwarf,8192 -- \
	"$PYBIN" "$TOP/tests/e2e/progs/waits.py" 2 "$WORK/spent.json"
$PY -c 'import json, sys; print("the program: " + json.load(open(sys.argv[1]))["ended"])' "$WORK/spent.json"
if ! has '"ended": "done' "$WORK/spent.json"; then
	skip "the machine is too loaded for CPython's threads to do enough to judge: $(cat "$WORK/spent.json")"
fi
"$PERFPORT" -q report -i "$WORK/py.data" --json --no-tree >"$WORK/py.json" || fail "report: exit $?"
"$PERFPORT" -q report -i "$WORK/py.data" --no-tree --top 3 >"$WORK/py.txt" || fail "report: exit $?"
$PY - "$WORK/py.json" "$WORK/spent.json" <<'PY' || fail "CPython's waits out of their states"
import json, sys
r = json.load(open(sys.argv[1]))
spent = json.load(open(sys.argv[2]))
by = {}
for t in r["threads"]:
    by[t["comm"]] = {c: v["ns"] / 1e9 for c, v in t["counters"].items()}
bad = []
def show(name):
    c = by.get(name, {})
    print("%-9s %s" % (name, ", ".join("%s %.3f s" % (k, v) for k, v in sorted(c.items()))))
    return c
# the loops wait for nothing but the GIL: of the waits whose stack was
# recorded (one whose sched_switch sample perf lost has none for a rule
# to match: threads[].without_stack)
nostack = {t["comm"]: {c: v["ns"] / 1e9 for c, v in t["without_stack"].items()} for t in r["threads"]}
for i in range(4):
    c = show("gil-%d" % i)
    print("  gil-%d: %.3f s blocked by its schedstat" % (i, spent["gil-%d" % i]["blocked"] or 0))
    c = {k: v - nostack.get("gil-%d" % i, {}).get(k, 0) for k, v in c.items()}
    waits = sum(v for k, v in c.items() if k not in ("on-cpu", "preempted"))
    if waits < 0.5 or c.get("lock", 0) < 0.95 * waits:
        bad.append("gil-%d: lock %.3f s of %.3f s waiting" % (i, c.get("lock", 0), waits))
# the sleeper's sleeps: timed, as long as it slept (10 ms each); its
# other waits are for the GIL
c = show("sleeper")
slept = spent["sleeper"]["calls"] * 0.01
print("  sleeper: %d sleeps of 10 ms, %.3f s in time.sleep with the GIL taken back after each" %
      (spent["sleeper"]["calls"], spent["sleeper"]["s"]))
if not 0.9 * slept <= c.get("timed-sleep", 0) <= spent["sleeper"]["s"]:
    bad.append("sleeper: timed-sleep %.3f s for %.3f s of sleeps" % (c.get("timed-sleep", 0), slept))
if c.get("sleep", 0) + c.get("io", 0) > 0.05 * c.get("timed-sleep", 1):
    bad.append("sleeper: sleep %.3f s io %.3f s" % (c.get("sleep", 0), c.get("io", 0)))
if c.get("lock", 0) <= 0:
    bad.append("sleeper: no GIL wait")
# the consumer's gets: untimed waits, then the GIL. Its untimed waits are
# all in queue.get; its GIL waits are there, before its first line (a new
# thread takes the GIL to start) or between gets: within its life
c = show("consumer")
life = spent["consumer"].get("life", spent["consumer"]["s"])
print("  consumer: %d gets, %.3f s in queue.get, %.3f s alive" %
      (spent["consumer"]["calls"], spent["consumer"]["s"], life))
other = c.get("timed-sleep", 0) + c.get("io", 0)
if c.get("sleep", 0) < 0.95 * (c.get("sleep", 0) + other) or \
   c.get("sleep", 0) > spent["consumer"]["s"] * 1.05 + 0.05 or \
   c.get("sleep", 0) + c.get("lock", 0) > life * 1.05 + 0.05:
    bad.append("consumer: sleep %.3f s, lock %.3f s, timed/io %.3f s, in get %.3f s, alive %.3f s" %
               (c.get("sleep", 0), c.get("lock", 0), other, spent["consumer"]["s"], life))
if bad:
    sys.exit("; ".join(bad))
PY
has "^# runtime CPython (.*python3[^ ]*): its rules decided" "$WORK/py.txt" ||
	fail "report does not name CPython's rules: $(grep '^#' "$WORK/py.txt")"
"$PERFPORT" -q info -i "$WORK/py.data" | has "^  CPython (.*): its wait functions decide" ||
	fail "info does not say it recognised CPython"
echo "ok: GIL waits are lock, a sleep timed-sleep, a queue.get sleep"
