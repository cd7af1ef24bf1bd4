#!/usr/bin/env bash
# A group sampled by its leader (perf record -e '{a,b,c}:S'): each sample
# reads every counter of the group, and perf counts it once per counter
# that moved, with that counter's event and increase as its period. So
# --event page-faults is a profile of page faults (the leader's samples,
# weighed by the faults since the last one), as perf script prints it;
# the default stays the leader's own profile (the members count other
# things). Per task, system-wide (one counter per CPU) and with DWARF
# stacks unwound by two jobs (the reads travel with the sample through the
# unwinding pool), checked against perf script's sample counts and period
# sums per event, and perfport stacks against perf script sample by sample.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
build_workload
GROUP='{cpu-clock,page-faults,context-switches}:S'
# record_group OUT SECONDS WHAT PERF-ARGS...: the workload (WHAT: its mode)
# under the group, until perf script shows a sample of every counter in it
# - a counter that never moved between two of the leader's samples has
# none - at most four tries, each twice as long. perf record follows only
# the task it starts with a group read by its leader's samples (no
# inherit): per task, the workload's main thread does the work itself
# (main: it computes, faults a page in and sleeps, each round); with "all"
# its main thread only started the others, and on a loaded machine its few
# samples at the start held no context switch in all four tries
record_group() {
	local out=$1 secs=$2 what=$3 try; shift 3
	for try in 1 2 3 4; do
		record "$out" -e "$GROUP" "$@" -- "$WORKLOAD" "$secs" "$what"
		[ "$(perf script -i "$out" -F event 2>/dev/null | sort -u |
			grep -c -E '^ *(cpu-clock|page-faults|context-switches): *$')" -eq 3 ] && return 0
		secs=$(awk -v s="$secs" 'BEGIN { print s * 2 }')
	done
	fail "$out: after four recordings, perf script still shows a counter of the group without samples"
}
record_group "$WORK/task.data" 0.5 main -g
record_group "$WORK/cpu.data" 0.5 all -a -g
record_group "$WORK/dwarf.data" 0.3 main --call-graph dwarf,4096

for mode in task cpu dwarf; do
	data="$WORK/$mode.data"
	jobs=1; [ $mode = dwarf ] && jobs=2
	perf script -i "$data" -F event,period >"$WORK/$mode.script" 2>"$WORK/stderr.txt" ||
		fail "perf script cannot read $mode.data: $(said "$WORK/stderr.txt")"
	"$PERFPORT" -q info --json -i "$data" >"$WORK/$mode.info.json" ||
		fail "info $mode: exit $?"
	# perfport stacks prints a sample per counter read, as perf script does
	"$PERFPORT" -q stacks -j $jobs -i "$data" >"$WORK/$mode.stacks" || fail "stacks $mode: exit $?"
	diff <(awk '{print $1, $2}' "$WORK/$mode.script") \
		<(grep -E '^[^[:space:]].*:$' "$WORK/$mode.stacks" | awk '{print $(NF-1), $NF}') \
		>"$WORK/$mode.stacks.diff" ||
		{ head "$WORK/$mode.stacks.diff"; fail "$mode: stacks' samples (period, event) differ from perf script's"; }
	for ev in default cpu-clock page-faults context-switches; do
		sel=; [ $ev = default ] || sel="--event $ev"
		for v in ns samples; do
			"$PERFPORT" -q export -j $jobs -i "$data" $sel -f folded -O counter=all -O value=$v \
				-o "$WORK/$mode.$ev.$v.folded" || fail "export $mode --event $ev: exit $?"
		done
	done
	$PY - "$WORK" "$mode" <<'PY' || fail "$mode: perfport's counts differ from perf script's"
import collections, json, sys
work, mode = sys.argv[1:]
count, period = collections.Counter(), collections.Counter()
for line in open(f"{work}/{mode}.script"):
    f = line.split()  # perf script prints the period first
    if len(f) == 2 and f[1].endswith(":"):
        count[f[1][:-1]] += 1
        period[f[1][:-1]] += int(f[0])
for ev in ("cpu-clock", "page-faults", "context-switches"):
    if not count[ev]:
        sys.exit(f"perf script shows no {ev} sample: the recording did not read the group")
def total(ev, v):
    return sum(int(l.rsplit(" ", 1)[1]) for l in open(f"{work}/{mode}.{ev}.{v}.folded"))
for ev in ("cpu-clock", "page-faults", "context-switches"):
    got = (total(ev, "samples"), total(ev, "ns"))
    want = (count[ev], period[ev])
    print(f"{mode} {ev}: perfport {got[0]} samples, {got[1]} counted; perf script {want[0]}, {want[1]}")
    if got != want:
        sys.exit(f"{ev}: {got} != {want}")
if (total("default", "samples"), total("default", "ns")) != (count["cpu-clock"], period["cpu-clock"]):
    sys.exit("the default profile is not the leader's alone")
info = {e["name"]: e for e in json.load(open(f"{work}/{mode}.info.json"))["events"]}
for ev in ("page-faults", "context-switches"):
    if info[ev]["samples"] != count[ev]:
        sys.exit(f"info: {ev} has {info[ev]['samples']} samples, perf script {count[ev]}")
PY
done
# report says what a member's samples are, and counts them in events
"$PERFPORT" -q report --event page-faults -i "$WORK/task.data" --no-threads >"$WORK/report.txt" ||
	fail "report --event page-faults: exit $?"
grep -q "^# event page-faults: on-cpu, [0-9]* samples, read by its group's samples, weight in events" \
	"$WORK/report.txt" || { head -5 "$WORK/report.txt"; fail "report's header of a group member"; }
grep -Eq "^# totals:  on-cpu [0-9]+\.000 events" "$WORK/report.txt" ||
	{ head -5 "$WORK/report.txt"; fail "report's totals of page faults are not in events"; }
echo "ok: a group read by its leader's samples counts each member as perf does"
