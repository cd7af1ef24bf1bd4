#!/usr/bin/env bash
# The HotSpot JVM's threads: blocked entering a synchronized block is a lock
# wait (ObjectMonitor::EnterI parks in pthread_cond_wait, which alone reads
# as an untimed sleep); Thread.sleep is timed-sleep; Object.wait() without a
# timeout is sleep, though the notifier's monitor exit is what wakes it.
# progs/Waits.java runs four threads contending for one monitor (off CPU
# only to wait for it), a sleeper, a waiter and its notifier, each an OS
# thread of its Java name; it runs 2 s and on until it has done enough to
# be judged, by its own count (each contender 0.6 s blocked in its loop by
# the kernel's schedstat, 20 sleeps and notified waits): on a loaded
# machine 2 s may hold almost none of it. Each thread is judged by the
# waits of its Java code (below JavaThread::thread_main_inner), less the
# JVM's stopping it for a safepoint (SafepointSynchronize::block, a wait
# for the VM thread: sleep; 0.40 s of the sleeper's and the notifier's
# 2.5 s once on a loaded machine): a new thread also waits to be started
# by its creator (sleep, 0.40 s of a contender's 1.97 s on a starved
# machine) and at its exit. Recorded with --call-graph dwarf (glibc
# between the JVM's frames and the futex breaks -g's frame-pointer chain);
# openjdk-17-dbg names libjvm's functions.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v javac >/dev/null && command -v java >/dev/null ||
	skip "no JDK (apt-get install default-jdk-headless)"
JVM=$(readlink -f "$(dirname "$(readlink -f "$(command -v java)")")/../lib/server/libjvm.so")
BID=$(readelf -n "$JVM" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$BID" ] && [ -f "/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug" ] ||
	skip "the JVM's debug symbols are not installed (apt-get install openjdk-17-dbg, for $JVM)"
javac -d "$WORK" "$TOP/tests/e2e/progs/Waits.java" || fail "javac"
record "$WORK/jvm.data" -m 2048 -e cpu-clock/freq=499/ -e sched:sched_switch \
	-e sched:sched_waking --switch-events --call-graph dwarf,8192 -- \
	java -XX:-UsePerfData -Xmx64m -cp "$WORK" Waits 2 "$WORK/waits.json"
$PY -c 'import json, sys; print("the program: " + json.load(open(sys.argv[1]))["ended"])' "$WORK/waits.json"
if ! has '"ended": "done' "$WORK/waits.json"; then
	skip "the machine is too loaded for the JVM's threads to do enough to judge: $(cat "$WORK/waits.json")"
fi
# each thread's waits by stack
"$PERFPORT" -q report -i "$WORK/jvm.data" --json --group-by thread --min-percent 0 \
	>"$WORK/jvm.json" || fail "report: exit $?"
"$PERFPORT" -q report -i "$WORK/jvm.data" --no-tree --top 3 >"$WORK/jvm.txt" || fail "report: exit $?"
$PY - "$WORK/jvm.json" "$WORK/waits.json" <<'PY' || fail "the JVM's waits out of their states"
import collections, json, re, sys
r = json.load(open(sys.argv[1]))
program = json.load(open(sys.argv[2]))
# of each thread the waits of its Java code, below thread_main_inner (a
# wait whose sched_switch sample perf lost has no stack, so none of them),
# but a safepoint's
frames, nodes = r["frames"], r["nodes"]
by = collections.defaultdict(collections.Counter)
stopped = collections.Counter()
where = [None] * len(nodes)         # (thread, in its Java code, at a safepoint) of each node
for i, n in enumerate(nodes):       # pre-order: a parent before its children
    if n["parent"] is None:
        where[i] = (None, False, False)
        continue
    thread, inside, safepoint = where[n["parent"]]
    f = frames[n["frame"]]
    if thread is None and f["flags"] & 512:      # the thread's root frame: "COMM [TID]"
        thread = re.sub(r" \[\d+\]$", "", f["function"])
    inside = inside or f["function"].startswith("JavaThread::thread_main_inner")
    safepoint = safepoint or f["function"].startswith("SafepointSynchronize::block")
    where[i] = (thread, inside, safepoint)
    if thread is not None and inside:
        for c, x in n["self"].items():
            if not safepoint:
                by[thread][c] += x["ns"] / 1e9
            elif c not in ("on-cpu", "preempted"):
                stopped[thread] += x["ns"] / 1e9
WANT = {"contend-0": "lock", "contend-1": "lock", "contend-2": "lock", "contend-3": "lock",
        "sleeper": "timed-sleep", "waiter": "sleep", "notifier": "timed-sleep"}
bad = []
for name, want in WANT.items():
    c = by.get(name, {})
    waits = sum(v for k, v in c.items() if k not in ("on-cpu", "preempted"))
    print("%-10s %-12s %5.1f%% of %.3f s waiting (%s)%s" % (name, want,
          100 * c.get(want, 0) / waits if waits else 0, waits,
          ", ".join("%s %.3f s" % (k, v) for k, v in sorted(c.items())),
          "; %.3f s at a safepoint left out" % stopped[name] if stopped[name] else ""))
    if waits < 0.5 or c.get(want, 0) < 0.95 * waits:
        bad.append(name)
for i in range(4):
    print("  contend-%d: %.3f s blocked in its loop by its schedstat" % (i, program["blocked_ms"]["contend-%d" % i] / 1e3))
# the sleeper's sleeps, as long as it slept (10 ms each, and its own time
# in Thread.sleep)
slept = program["sleeper"]["calls"] * 0.01
print("  sleeper: %d sleeps of 10 ms, %.3f s in Thread.sleep" % (program["sleeper"]["calls"], program["sleeper"]["s"]))
if not 0.9 * slept <= by["sleeper"]["timed-sleep"] <= program["sleeper"]["s"] + 0.01:
    bad.append("sleeper: timed-sleep %.3f s for %.3f s of sleeps" % (by["sleeper"]["timed-sleep"], slept))
if bad:
    sys.exit("out of their state: " + ", ".join(bad))
PY
has "^# runtime HotSpot (.*libjvm.so): its rules decided" "$WORK/jvm.txt" ||
	fail "report does not name HotSpot's rules: $(grep '^#' "$WORK/jvm.txt")"
echo "ok: synchronized contention is lock, Thread.sleep timed-sleep, Object.wait sleep"
# that recording has no perf map: info names the JIT's unnamed code, its
# share, and what names it
"$PERFPORT" -q info -i "$WORK/jvm.data" >"$WORK/jvm.info" || fail "info: exit $?"
has "^  unknown, JIT code without a perf map: [1-9]" "$WORK/jvm.info" &&
	has "% of the frames are a JIT's code, unnamed: .*DumpPerfMapAtExit" "$WORK/jvm.info" ||
	fail "info does not name the JIT's code without a map: $(grep -A4 '^frames' "$WORK/jvm.info")"
echo "ok: info names the JIT code a perf map would name"

# java.util.concurrent, beside JDK Flight Recorder's own count of every
# park (jdk.ThreadPark, threshold 0): a CountDownLatch's await, a
# Condition's await and a queue's take are waits for another thread's
# event (sleep); a ReentrantLock and a ReentrantReadWriteLock's read lock
# under a writer are lock waits - all of them park in the same
# Unsafe_Park, so the JIT's frames above it decide (the JVM's own perf
# map, written at exit; -Xcomp with C1 so that the JUC methods are compiled
# in a 2 s run; -XX:+PreserveFramePointer so that the unwinding goes
# through the JIT's frames). Each thread's parks (its waits in Unsafe_Park)
# are in its state within 5% of its parked time by JFR's parkedClass: its
# other waits are no parks (-Xcomp's waits for a method's compile, long
# on a loaded machine), which JFR does not count.
command -v jfr >/dev/null || skip "the JDK's jfr tool is missing (JucWaits not checked)"
javac -d "$WORK" "$TOP/tests/e2e/progs/JucWaits.java" || fail "javac JucWaits"
# A recording that lost records (a loaded machine: 20 % once, the threads'
# names among them) is made again, twice at most; if the last one lost
# some too, a wait across a loss counts only up to it, and perfport's
# parks may fall short of JFR's (jfr_park.py --lost)
LOST=
for try in 1 2 3; do
	rm -f "$WORK/juc.jfr"
	record "$WORK/juc.data" -m 8192 -e sched:sched_switch -e sched:sched_waking --switch-events \
		--call-graph dwarf,8192 -- java -XX:-UsePerfData -Xmx64m -XX:+PreserveFramePointer \
		-XX:TieredStopAtLevel=1 -Xcomp -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
		"-XX:StartFlightRecording=filename=$WORK/juc.jfr,jdk.ThreadPark#threshold=0ms" \
		-cp "$WORK" JucWaits 2
	LOST=
	grep -qi "lost" "$WORK/record.log" || break
	LOST=--lost
	echo "(JucWaits' recording $try lost records: $(grep -i lost "$WORK/record.log" | tr '\n' ' '))"
done
jfr print --json --events jdk.ThreadPark "$WORK/juc.jfr" >"$WORK/park.json" || fail "jfr print: exit $?"
# each thread's waits by stack: its parks are the waits in Unsafe_Park
"$PERFPORT" -q report -i "$WORK/juc.data" --json --group-by thread --min-percent 0 \
	>"$WORK/juc.json" || fail "report JucWaits: exit $?"
$PY "$TOP/tests/e2e/lib/jfr_park.py" $LOST "$WORK/juc.json" "$WORK/park.json" latch=sleep condition=sleep \
	queue=sleep rlock-0=lock rlock-1=lock reader=lock || fail "java.util.concurrent's waits against JFR"
echo "ok: java.util.concurrent's latch, condition and queue sleep, its locks lock, as JFR's parks say"
# a runtime's rules decide only its own modules' frames (and code no
# runtime claims): Rust std's Mutex::lock_contended is not HotSpot's
"$PERFPORT" -q report -i "$WORK/juc.data" --no-tree --top 1 >"$WORK/juc.txt" || fail "report: exit $?"
if has "^# runtime Rust-std" "$WORK/juc.txt"; then
	fail "Rust std's rules decided a JVM's waits: $(grep '^# runtime' "$WORK/juc.txt")"
fi
echo "ok: no other runtime's rules decide the JVM's frames"

# The same waits with every method interpreted (-Xint): the perf map names
# the interpreter's code "Interpreter", not the method, so no rule for
# java.util.concurrent can tell its locks from its latches, and the futex's
# arguments decide (sleep). report says so: the waits in Unsafe_Park under
# interpreted callers, their time by state, and what names the callers
# (the -Xcomp line JucWaits was recorded with above: none of its waits is
# under interpreted code there)
record "$WORK/xint.data" -m 8192 -e sched:sched_switch -e sched:sched_waking --switch-events \
	--call-graph dwarf,8192 -- java -XX:-UsePerfData -Xmx64m -XX:+PreserveFramePointer -Xint \
	-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$WORK" JucWaits 2
"$PERFPORT" -q report -i "$WORK/xint.data" --no-tree --top 1 >"$WORK/xint.txt" || fail "report -Xint: exit $?"
has "^# off-CPU waits under interpreted code: [1-9][0-9]* waits in HotSpot's Unsafe_Park (.* sleep [0-9.]* s, [0-9.]*% of it.*whose callers run in the interpreter.*-Xcomp" "$WORK/xint.txt" ||
	fail "report does not say which waits interpreted callers left to the default: $(grep '^# off-CPU' "$WORK/xint.txt")"
"$PERFPORT" -q report -i "$WORK/xint.data" --json --no-tree >"$WORK/xint.json" || fail "report -Xint --json: exit $?"
$PY - "$WORK/xint.json" <<'PY' || fail "the interpreted parks are not the rlock threads' sleep"
import json, sys
r = json.load(open(sys.argv[1]))
k = r["meta"]["parks_unnamed_callers"]
ns = k["interpreted"]["sleep"]["ns"]
# the lock waits of rlock-0, rlock-1 and reader are among them: every
# second of their sleep is a park the interpreter's callers left undecided
locked = sum(t["counters"].get("sleep", {}).get("ns", 0) for t in r["threads"]
             if t["comm"] in ("rlock-0", "rlock-1", "reader"))
print("-Xint: %.3f s of parks under interpreted callers (%d), the lock threads' sleep %.3f s"
      % (ns / 1e9, k["interpreted"]["sleep"]["count"], locked / 1e9))
if not 0 < locked <= ns:
    sys.exit("the lock threads' sleep %.3f s is not among the %.3f s of interpreted parks" % (locked / 1e9, ns / 1e9))
PY
# info names the interpreter's frames and their share
"$PERFPORT" -q info -i "$WORK/xint.data" >"$WORK/xint.info" || fail "info -Xint: exit $?"
has "^  HotSpot's interpreter: [1-9][0-9]* frames ([0-9.]*%), named as one ('Interpreter').*-Xcomp" "$WORK/xint.info" ||
	fail "info does not name the interpreter's frames: $(grep -A4 '^frames' "$WORK/xint.info")"
if [ -f "$WORK/juc.txt" ] && has "^# off-CPU waits under interpreted code" "$WORK/juc.txt"; then
	fail "-Xcomp's recording has waits under interpreted code: $(grep '^# off-CPU waits under' "$WORK/juc.txt")"
fi
echo "ok: report says which parks interpreted callers left to the default, info the interpreter's frames, and what names them"

# A park site is rule-file data ("park" lines; HotSpot's in 50-hotspot.rules):
# one that only the user's --state-rules file names - Parker::park, below
# Unsafe_Park, that no shipped rule names - is the one report's line names
# (the user's parks are asked first), with the user's texts
! grep -rq "^park *Parker::park" "$TOP/src/profile/waits" ||
	fail "a shipped rule file names Parker::park: the check below proves nothing"
cat >"$WORK/user.rules" <<'RULES'
# a park site of the user's own
runtime UserVM libuservm.so
park Parker::park interpreted Interpreter waits "UserVM's" compile "compile-them" map "map-them"
RULES
"$PERFPORT" -q report -i "$WORK/xint.data" --state-rules "$WORK/user.rules" --no-tree --top 1 \
	>"$WORK/xint-user.txt" || fail "report -Xint --state-rules: exit $?"
has "^# off-CPU waits under interpreted code: [1-9][0-9]* waits in UserVM's Parker::park (.*('Interpreter'): no rule for UserVM's waits could tell them apart.*; to decide them, compile-them\$" "$WORK/xint-user.txt" ||
	fail "report does not name the user's park: $(grep '^# off-CPU waits under' "$WORK/xint-user.txt")"
echo "ok: a park site of the user's rule file is named by report's line"
