#!/usr/bin/env bash
# The accounting on a workload of known shape (tests/e2e/progs/shape.c),
# recorded per task with --switch-events and system-wide with sched_switch
# and sched_wakeup: the 3:1 on-CPU split, each thread's off-CPU time in its
# state, on + off CPU = the lifetime perf's own fork/exit records give, and
# system-wide off-CPU time per thread against perf sched timehist; samples
# of exiting threads the kernel wrote with tid -1 given to their thread.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
build_shape
ACHECK="$TOP/tests/e2e/lib/account_check.py"

# Every recording here has a 16 MiB buffer per CPU: with the default
# 512 KiB, perf lost 30,846 records of a system-wide one on a loaded
# machine (two busy loops per CPU; it is written at some 4 MB/s a CPU), and
# its forks, exits and switches are what the checks compare. One in which
# perf lost records all the same is recorded again (the checker's exit 3),
# up to three times.
BUF=16M

# per task, switch-ins from PERF_RECORD_SWITCH
for try in 1 2 3; do
	record "$WORK/pt.data" -m $BUF -e cpu-clock -e sched:sched_switch --switch-events -g -- \
		"$SHAPE" 2 "$WORK"
	perf script -i "$WORK/pt.data" --show-task-events --show-lost-events --show-switch-events \
		-F tid,time,event,trace >"$WORK/pt.tasks" 2>/dev/null
	perf script -i "$WORK/pt.data" -F tid,event,ip,sym >"$WORK/pt.stacks" 2>/dev/null
	"$PERFPORT" report --json -i "$WORK/pt.data" >"$WORK/pt.json" || fail "report exit $?"
	rc=0; SHAPE=$SHAPE $PY "$ACHECK" per-task "$WORK/pt.json" "$WORK/pt.tasks" --stacks "$WORK/pt.stacks" || rc=$?
	[ $rc -eq 3 ] || break
done
[ $rc -eq 0 ] || fail "per-task accounting (checker exit $rc, try $try)"

# the whole system, switch-ins from sched_switch's next_pid (some missing
# here: a run in which every thread lost one has nothing to compare with
# timehist, and is recorded again, up to three times)
for try in 1 2 3; do
	record "$WORK/sw.data" -m $BUF -a -e cpu-clock -e sched:sched_switch -e sched:sched_wakeup -g -- \
		"$SHAPE" 2 "$WORK"
	perf script -i "$WORK/sw.data" --show-task-events --show-lost-events -F tid,time \
		>"$WORK/sw.tasks" 2>/dev/null
	perf sched timehist -i "$WORK/sw.data" >"$WORK/sw.timehist" 2>"$WORK/stderr.txt" ||
		fail "perf sched timehist failed: $(said "$WORK/stderr.txt")"
	perf script -i "$WORK/sw.data" -F tid,cpu,time,event,trace 2>/dev/null |
		grep -E 'sched:sched_(switch|wakeup):' >"$WORK/sw.sched"
	perf script -i "$WORK/sw.data" -F tid,event,ip,sym >"$WORK/sw.stacks" 2>/dev/null
	"$PERFPORT" report --json -i "$WORK/sw.data" >"$WORK/sw.json" || fail "report exit $?"
	rc=0; SHAPE=$SHAPE SHAPE_PID=$(cat "$WORK/shape.pid") $PY "$ACHECK" system-wide "$WORK/sw.json" "$WORK/sw.tasks" "$WORK/sw.timehist" \
		"$WORK/sw.sched" --stacks "$WORK/sw.stacks" || rc=$?
	[ $rc -eq 3 ] || break
done
[ $rc -eq 0 ] || fail "system-wide accounting (checker exit $rc, try $try)"

# threads exiting one after another (progs/churn.c): their last samples,
# after the kernel released them, carry tid -1 and count for the thread
# running on that CPU (a run with no such cpu-clock sample is recorded again)
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/churn" "$TOP/tests/e2e/progs/churn.c" ||
	fail "cannot build progs/churn.c"
for try in 1 2 3; do
	record "$WORK/churn.data" -m $BUF -a -F 4000 -e cpu-clock -e sched:sched_switch -g -- "$WORK/churn" 3000
	perf script -i "$WORK/churn.data" --show-task-events --show-lost-events \
		-F pid,tid,cpu,time,event,trace >"$WORK/churn.script" 2>/dev/null
	"$PERFPORT" -q report --json -i "$WORK/churn.data" >"$WORK/churn.json" || fail "report exit $?"
	pid=$($PY -c 'import json,sys; print([t["pid"] for t in json.load(open(sys.argv[1]))["threads"] if t["comm"] == "churn" and t["pid"] == t["tid"]][0])' "$WORK/churn.json") ||
		fail "no churn process in the report"
	rc=0; $PY "$ACHECK" released "$WORK/churn.json" "$WORK/churn.script" "$pid" || rc=$?
	[ $rc -eq 3 ] || break
done
[ $rc -eq 0 ] || fail "samples of released threads (checker exit $rc, try $try)"

# two runs on one file give byte-identical output, with and without threads
"$PERFPORT" report -i "$WORK/sw.data" -j 1 --group-by thread >"$WORK/a.txt" 2>/dev/null
"$PERFPORT" report -i "$WORK/sw.data" -j 3 --group-by thread >"$WORK/b.txt" 2>/dev/null
cmp -s "$WORK/a.txt" "$WORK/b.txt" || fail "two runs differ"
grep -q 'lockA \[' "$WORK/a.txt" || fail "--group-by thread: no thread root frames"

# --offcpu-states=simple puts every off-CPU interval in sleep
"$PERFPORT" -q report --json --offcpu-states simple -i "$WORK/pt.data" >"$WORK/simple.json"
$PY - "$WORK/simple.json" <<'PY' || fail "--offcpu-states simple"
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
bad = [k for k in t if k not in ("on-cpu", "sleep", "idle")]
assert not bad and t["sleep"]["ns"] > 0, t
PY

# filters: --tid keeps one thread, --time keeps a window, --no-kernel drops kernel frames
tid=$($PY -c 'import json,sys; print([t["tid"] for t in json.load(open(sys.argv[1]))["threads"] if t["comm"]=="io"][0])' "$WORK/pt.json")
"$PERFPORT" -q report --json --tid "$tid" --no-kernel -i "$WORK/pt.data" >"$WORK/tid.json"
$PY - "$WORK/tid.json" "$tid" <<'PY' || fail "--tid/--no-kernel"
import json, sys
r = json.load(open(sys.argv[1]))
assert [t["tid"] for t in r["threads"]] == [int(sys.argv[2])], r["threads"]
assert not [f for f in r["frames"] if f["flags"] & 1], "kernel frames left"
assert r["totals"]["io"]["ns"] > 0
PY
first=$($PY -c 'import json,sys; m=json.load(open(sys.argv[1]))["meta"]; print("%.6f,%.6f" % (m["first_time"]/1e9+0.5, m["first_time"]/1e9+1.0))' "$WORK/pt.json")
"$PERFPORT" -q report --json --time "$first" -i "$WORK/pt.data" >"$WORK/time.json"
$PY - "$WORK/time.json" <<'PY' || fail "--time"
import json, sys
r = json.load(open(sys.argv[1]))
waiter = [t for t in r["threads"] if t["comm"] == "waiter"][0]
off = waiter["counters"]["sleep"]["ns"]
assert 0.45e9 < off < 0.55e9, off          # half a second of the waiter's sleep
PY

# state rules from a file; a bad one is refused with the line
printf 'S  *futex_abstimed_wait*  lock\n*  *  io\n' >"$WORK/rules"
"$PERFPORT" -q report --json --state-rules "$WORK/rules" -i "$WORK/pt.data" >"$WORK/rules.json"
$PY - "$WORK/rules.json" <<'PY' || fail "--state-rules"
import json, sys
r = json.load(open(sys.argv[1]))
w = [t for t in r["threads"] if t["comm"] == "waiter"][0]["counters"]
assert w["lock"]["ns"] > 0.9 * (w["lock"]["ns"] + w.get("io", {}).get("ns", 0)), w
PY
printf 'S  *  on-cpu\n' >"$WORK/bad-rules"
if "$PERFPORT" report --state-rules "$WORK/bad-rules" -i "$WORK/pt.data" >/dev/null 2>"$WORK/err"; then
	fail "bad rules accepted"
fi
grep -q "line 1" "$WORK/err" || fail "bad rules: no line number: $(cat "$WORK/err")"
# a recording from elsewhere (perfparser's, switch events + sched_switch):
# intervals as its own switch records pair them
P="$CORPUS/perfparser/parallel_static_gcc"
if [ -f "$P/perf.data.zstd" ]; then
	perf script -i "$P/perf.data.zstd" --show-switch-events -F tid,time,event \
		>"$WORK/ps.txt" 2>/dev/null
	"$PERFPORT" -q report --json --symfs "$P" -i "$P/perf.data.zstd" >"$WORK/ps.json"
	$PY "$ACHECK" switches "$WORK/ps.json" "$WORK/ps.txt" || fail "perfparser switches"
else
	echo "note: $P not found: corpus check left out"
fi
# A system-wide recording: perf writes switch records some 60 ms before
# its first sample. The profile spans the samples, as info does: no thread
# lives, and nothing is charged, before the first; --time's span is the
# header's
record "$WORK/span.data" -a -e cpu-clock/freq=99/ -e sched:sched_switch --switch-events -g -- sleep 0.5
"$PERFPORT" -q report --json --no-tree -i "$WORK/span.data" >"$WORK/span.json" || fail "report -a: exit $?"
"$PERFPORT" -q info --json -i "$WORK/span.data" >"$WORK/span-info.json" || fail "info -a: exit $?"
$PY - "$WORK/span.json" "$WORK/span-info.json" <<'PY' || fail "the profile's span is not the samples'"
import json, sys
r, i = (json.load(open(f)) for f in sys.argv[1:3])
m = r["meta"]
first, last = i["first_sample_time"], i["last_sample_time"]
assert (m["first_time"], m["last_time"]) == (first, last), ((m["first_time"], m["last_time"]), (first, last))
for t in r["threads"]:
    assert first <= t["start"] <= t["end"] <= last, (t["comm"], t["start"], t["end"], first, last)
print("span %.3f s = info's; %d threads within it" % ((last - first) / 1e9, len(r["threads"])))
PY
span=$("$PERFPORT" -q report -i "$WORK/span.data" --no-tree --top 1 --time 25%-75% | sed -n 's/^# time .*(\([0-9.]*\) s, --time.s part of \([0-9.]*\) s.*/\1 \2/p')
[ -n "$span" ] || fail "report's header does not give --time's span: $("$PERFPORT" -q report -i "$WORK/span.data" --no-tree --top 1 --time 25%-75% | grep '^# time')"
echo "ok: the span is the samples' ($span)"
echo "ok: accounting"
