#!/usr/bin/env bash
# CPython's threading.Lock and RLock where the interpreter names its Python
# frames (python -X perf, 3.12 and later): a contended lock is a lock wait,
# though its C frames are those of a Condition's wait; the waits threading
# builds from locks are what they wait for: queue.get() sleep,
# Event.wait(timeout) run out timed-sleep, Thread.join sleep. Each is held
# to the time the program measured itself (progs/locks.py). Recorded with
# --call-graph dwarf: the unwinding reaches the innermost Python frame.
# Without the Python frames (Debian's 3.11, e2e 78) these locks are sleep.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
PYX=
for p in python3.14 python3.13 python3.12 /usr/bin/python3 \
	/root/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9]; do
	p=$(command -v "$p" 2>/dev/null) || continue
	if "$p" -X perf -c 'import sys; sys.exit(not sys.is_stack_trampoline_active())' \
		>/dev/null 2>&1; then
		PYX=$p
		break
	fi
done
[ -n "$PYX" ] || skip "no python 3.12 or later with -X perf (the Python frames that tell a lock from a Condition's wait)"
echo "interpreter: $PYX ($("$PYX" -V 2>&1))"
record "$WORK/py.data" -m 2048 -e sched:sched_switch -e sched:sched_waking --switch-events \
	--call-graph dwarf,8192 -- "$PYX" -X perf "$TOP/tests/e2e/progs/locks.py" 2 "$WORK/spent.json"
"$PERFPORT" -q report -i "$WORK/py.data" --json --no-tree >"$WORK/py.json" || fail "report: exit $?"
$PY - "$WORK/py.json" "$WORK/spent.json" <<'PY' || fail "CPython's lock waits out of their states"
import json, sys
r = json.load(open(sys.argv[1]))
spent = json.load(open(sys.argv[2]))
by = {}
for t in r["threads"]:
    key = "main" if t["pid"] == t["tid"] else t["comm"]
    by[key] = {c: v["ns"] / 1e9 for c, v in t["counters"].items()}
bad = []
def show(name):
    c = by.get(name, {})
    print("%-9s %s" % (name, ", ".join("%s %.3f s" % (k, v) for k, v in sorted(c.items()))))
    return c
def waits(c, but=("on-cpu", "preempted")):
    return sum(v for k, v in c.items() if k not in but)
# the contenders: their lock waits (and the GIL's) lock, as long as the
# program measured them; their 0.5 ms sleeps timed
for n in ("lock-0", "lock-1", "rlock"):
    c = show(n)
    s = spent[n]["s"]
    print("  %s: %d acquires, %.3f s waiting in them" % (n, spent[n]["calls"], s))
    untimed = waits(c, ("on-cpu", "preempted", "timed-sleep"))
    if s < 0.3 or c.get("lock", 0) < 0.95 * untimed or \
       not 0.9 * s <= c.get("lock", 0) <= 1.05 * s + 0.05:
        bad.append("%s: lock %.3f s of %.3f s untimed waits, %.3f s measured" %
                   (n, c.get("lock", 0), untimed, s))
for n in ("holder", "rholder"):
    c = show(n)
    if c.get("timed-sleep", 0) < 0.95 * waits(c):
        bad.append("%s: timed-sleep %.3f s of %.3f s" % (n, c.get("timed-sleep", 0), waits(c)))
# queue.get() waits in a Condition's wait until the producer's put
c = show("consumer")
if c.get("sleep", 0) < 0.95 * waits(c) or c.get("sleep", 0) < 0.9 * spent["consumer"]["s"] - 0.05:
    bad.append("consumer: sleep %.3f s of %.3f s, %.3f s in get" %
               (c.get("sleep", 0), waits(c), spent["consumer"]["s"]))
# Event.wait(0.01) on an event never set: each wait ends by its timeout
c = show("event")
if c.get("timed-sleep", 0) < 0.95 * waits(c) or \
   c.get("timed-sleep", 0) < 0.9 * spent["event"]["s"] - 0.05:
    bad.append("event: timed-sleep %.3f s of %.3f s, %.3f s in wait" %
               (c.get("timed-sleep", 0), waits(c), spent["event"]["s"]))
# the main thread joins: it waits for the threads' ends, no lock
c = show("main")
if c.get("lock", 0) > 0.05 * waits(c) + 0.01 or c.get("sleep", 0) < 1.5:
    bad.append("main: lock %.3f s, sleep %.3f s of %.3f s" %
               (c.get("lock", 0), c.get("sleep", 0), waits(c)))
if bad:
    sys.exit("; ".join(bad))
PY
echo "ok: contended Lock and RLock lock; queue.get sleep; Event.wait timed-sleep; join sleep"
