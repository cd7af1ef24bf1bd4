#!/usr/bin/env bash
# The HotSpot JVM's threads: blocked entering a synchronized block is a lock
# wait (ObjectMonitor::EnterI parks in pthread_cond_wait, which alone reads
# as an untimed sleep); Thread.sleep is timed-sleep; Object.wait() without a
# timeout is sleep, though the notifier's monitor exit is what wakes it.
# progs/Waits.java runs four threads contending for one monitor (off CPU
# only to wait for it), a sleeper, a waiter and its notifier, each an OS
# thread of its Java name. Recorded with --call-graph dwarf (glibc between
# the JVM's frames and the futex breaks -g's frame-pointer chain);
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
	java -XX:-UsePerfData -Xmx64m -cp "$WORK" Waits 2
"$PERFPORT" -q report -i "$WORK/jvm.data" --json --no-tree >"$WORK/jvm.json" || fail "report: exit $?"
"$PERFPORT" -q report -i "$WORK/jvm.data" --no-tree --top 3 >"$WORK/jvm.txt" || fail "report: exit $?"
$PY - "$WORK/jvm.json" <<'PY' || fail "the JVM's waits out of their states"
import json, sys
r = json.load(open(sys.argv[1]))
# of the waits whose stack was recorded: a wait whose sched_switch sample
# perf lost has none for a rule to match (threads[].without_stack)
by = {t["comm"]: {c: (v["ns"] - t["without_stack"].get(c, {}).get("ns", 0)) / 1e9
                  for c, v in t["counters"].items()} for t in r["threads"]}
WANT = {"contend-0": "lock", "contend-1": "lock", "contend-2": "lock", "contend-3": "lock",
        "sleeper": "timed-sleep", "waiter": "sleep", "notifier": "timed-sleep"}
bad = []
for name, want in WANT.items():
    c = by.get(name, {})
    waits = sum(v for k, v in c.items() if k not in ("on-cpu", "preempted"))
    print("%-10s %-12s %5.1f%% of %.3f s waiting (%s)" % (name, want,
          100 * c.get(want, 0) / waits if waits else 0, waits,
          ", ".join("%s %.3f s" % (k, v) for k, v in sorted(c.items()))))
    if waits < 0.5 or c.get(want, 0) < 0.95 * waits:
        bad.append(name)
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
rm -f "$WORK/juc.jfr"
record "$WORK/juc.data" -m 2048 -e sched:sched_switch -e sched:sched_waking --switch-events \
	--call-graph dwarf,8192 -- java -XX:-UsePerfData -Xmx64m -XX:+PreserveFramePointer \
	-XX:TieredStopAtLevel=1 -Xcomp -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
	"-XX:StartFlightRecording=filename=$WORK/juc.jfr,jdk.ThreadPark#threshold=0ms" \
	-cp "$WORK" JucWaits 2
jfr print --json --events jdk.ThreadPark "$WORK/juc.jfr" >"$WORK/park.json" || fail "jfr print: exit $?"
# each thread's waits by stack: its parks are the waits in Unsafe_Park
"$PERFPORT" -q report -i "$WORK/juc.data" --json --group-by thread --min-percent 0 \
	>"$WORK/juc.json" || fail "report JucWaits: exit $?"
$PY "$TOP/tests/e2e/lib/jfr_park.py" "$WORK/juc.json" "$WORK/park.json" latch=sleep condition=sleep \
	queue=sleep rlock-0=lock rlock-1=lock reader=lock || fail "java.util.concurrent's waits against JFR"
echo "ok: java.util.concurrent's latch, condition and queue sleep, its locks lock, as JFR's parks say"
# a runtime's rules decide only its own modules' frames (and code no
# runtime claims): Rust std's Mutex::lock_contended is not HotSpot's
"$PERFPORT" -q report -i "$WORK/juc.data" --no-tree --top 1 >"$WORK/juc.txt" || fail "report: exit $?"
if has "^# runtime Rust-std" "$WORK/juc.txt"; then
	fail "Rust std's rules decided a JVM's waits: $(grep '^# runtime' "$WORK/juc.txt")"
fi
echo "ok: no other runtime's rules decide the JVM's frames"
