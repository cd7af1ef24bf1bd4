#!/usr/bin/python3
"""Compare perfport's off-CPU states of a JVM's parks with JDK Flight
Recorder's own count of them (jdk.ThreadPark, every park: recorded with
jdk.ThreadPark#threshold=0ms).

    jfr_park.py [--lost] REPORT.json PARKS.json THREAD=STATE...

REPORT.json is `perfport report --json --group-by thread --min-percent 0`:
its nodes give each thread's waits by stack, and perfport's side is the
time of the waits whose stack goes through Unsafe_Park (LockSupport.park,
what jdk.ThreadPark counts). A thread's other waits are no parks and JFR
does not count them: with -Xcomp a thread waits for the compiler to
compile each method it calls first (CompileBroker::wait_for_completion),
for another thread's class initialisation (InstanceKlass::initialize_impl),
and a loaded machine makes those waits long (110-126 ms of a 2 s thread).
A wait whose stack perf lost (threads[].without_stack: its sched_switch
sample among a lost buffer's) may have been a park, or not; a park whose
callers below the program's own code (JucWaits.lambda$...) hold a method
run by the interpreter ("Interpreter": no perf map names it) shows no
rule which of java.util.concurrent's waits it is - under load a method is
still queued for -Xcomp's compile when a second thread first calls it
(the compile blocks only the thread that asked for it), and runs
interpreted (55 ms of rlock-1's 1.119 s parked, sleep by default).
perfport's parks in STATE may fall short of JFR's by the first, and by
those of the second in another state.

With --lost (perf lost records: a wait across a loss is charged only up
to it) perfport's parks may fall short of JFR's by any amount; they must
still not exceed them, and STATE hold >= 95% of them.

PARKS.json is `jfr print --json --events jdk.ThreadPark`. A park is a lock
wait when the object it parked on (parkedClass) is a lock's synchronizer
(ReentrantLock's, ReentrantReadWriteLock's, StampedLock), else a wait for
another thread's event (a latch's, a condition's, a queue's): sleep, or
timed-sleep for a park with a timeout. For each THREAD (its name), its
parked time in STATE by JFR and perfport's time in STATE must agree within
5% of the parked time, and STATE must hold >= 95% of its parks. Exit 1 and
say which differ.
"""
import collections
import json
import re
import sys

LOCKS = re.compile(r"ReentrantLock|ReentrantReadWriteLock|StampedLock")


def seconds(iso):
    m = re.fullmatch(r"PT(?:(\d+)M)?([\d.]+)S", iso)
    return (int(m.group(1) or 0) * 60 + float(m.group(2))) if m else 0.0


def parks(report):
    """({tid: {state: seconds}} of the waits in Unsafe_Park, the same of
    those with an interpreted caller below the program's code), by
    thread (the root frame --group-by thread gives each: "COMM [TID]",
    below its process's; by its TID, JFR's osThreadId: a thread's name
    is unknown where perf lost its COMM record, 20 % of a loaded run's
    records once)."""
    frames, nodes = report["frames"], report["nodes"]
    if not nodes:
        sys.exit("jfr_park.py: the report has no nodes (report --json without --no-tree)")
    out = collections.defaultdict(collections.Counter)
    interpreted = collections.defaultdict(collections.Counter)
    # (thread, below the program's code, an interpreted frame there, in a park)
    where = [None] * len(nodes)
    for i, n in enumerate(nodes):   # pre-order: a parent before its children
        if n["parent"] is None:
            where[i] = (None, False, False, False)
            continue
        thread, mine, interp, parked = where[n["parent"]]
        fn = frames[n["frame"]]["function"]
        if thread is None and frames[n["frame"]]["flags"] & 512:  # the thread's root frame
            m = re.search(r"\[(\d+)\]$", fn)
            thread = int(m.group(1)) if m else -1
        interp = interp or (mine and not parked and fn.startswith("Interpreter"))
        mine = mine or "JucWaits.lambda$" in fn
        parked = parked or fn.startswith("Unsafe_Park")
        where[i] = (thread, mine, interp, parked)
        if thread is not None and parked:
            for c, x in n["self"].items():
                out[thread][c] += x["ns"] / 1e9
                if interp:
                    interpreted[thread][c] += x["ns"] / 1e9
    return out, interpreted


def main():
    args = sys.argv[1:]
    lossy = args[0] == "--lost"
    if lossy:
        args = args[1:]
    report = json.load(open(args[0]))
    events = json.load(open(args[1]))["recording"]["events"]
    want = dict(a.split("=", 1) for a in args[2:])
    jfr = collections.defaultdict(collections.Counter)
    tids = {}
    for e in events:
        v = e["values"]
        name = (v.get("eventThread") or {}).get("osName")
        tids[name] = (v.get("eventThread") or {}).get("osThreadId")
        cls = ((v.get("parkedClass") or {}).get("name")) or ""
        # no timeout is Long.MIN_VALUE, printed as a negative duration
        timed = bool(re.match(r"PT\d", str(v.get("timeout")))) or \
            bool(re.match(r"\d{4}-", str(v.get("until"))))
        state = "lock" if LOCKS.search(cls) else "timed-sleep" if timed else "sleep"
        jfr[name][state] += seconds(v["duration"])
    pp, interpreted = parks(report)
    lost = {t["tid"]: sum(x["ns"] for x in t["without_stack"].values()) / 1e9
            for t in report["threads"]}
    bad = []
    for name, state in want.items():
        parked = sum(jfr[name].values())
        tid = tids.get(name)
        mine = pp.get(tid, {})
        elsewhere = sum(v for c, v in interpreted[tid].items() if c != state)
        unseen = lost.get(tid, 0) + elsewhere
        print("%-10s %-12s JFR parked %.3f s (%s); perfport's parks %s%s%s" % (
            name, state, parked, ", ".join("%s %.3f" % kv for kv in sorted(jfr[name].items())),
            ", ".join("%s %.3f" % kv for kv in sorted(mine.items())),
            "; %.3f s of them interpreted, %.3f s of those not %s" % (
                sum(interpreted[tid].values()), elsewhere, state) if interpreted[tid] else "",
            "; %.3f s of waits without their stack" % lost[tid] if lost.get(tid) else ""))
        if parked < 0.3:
            bad.append("%s: parked only %.3f s" % (name, parked))
        elif jfr[name][state] < 0.95 * parked:
            bad.append("%s: JFR says %.0f%% %s" % (name, 100 * jfr[name][state] / parked, state))
        elif sum(v for c, v in mine.items() if c != "preempted") and \
                mine.get(state, 0) + elsewhere < 0.95 * sum(v for c, v in mine.items() if c != "preempted"):
            bad.append("%s: perfport's parks %.0f%% %s" % (name, 100 * mine.get(state, 0) / sum(
                v for c, v in mine.items() if c != "preempted"), state))
        elif not (0 if lossy else jfr[name][state] - 0.05 * parked - unseen) <= mine.get(state, 0) <= \
                jfr[name][state] + 0.05 * parked:
            bad.append("%s: %s %.3f s, JFR %.3f s%s" % (name, state, mine.get(state, 0), jfr[name][state],
                       " (%.3f s interpreted or without their stack)" % unseen if unseen else ""))
    if bad:
        sys.exit("; ".join(bad))


if __name__ == "__main__":
    main()
