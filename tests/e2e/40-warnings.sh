#!/usr/bin/env bash
# perfport info warns about recordings that will give poor profiles, each
# with the perf command that records it right, and is silent on good ones.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
need_tracepoint
build_workload

warnings() { "$PERFPORT" info --json -i "$1" | $PY -c 'import json,sys; [print(w) for w in json.load(sys.stdin)["warnings"]]'; }

record "$WORK/good.data" -g -e cpu-clock/freq=999/ -e sched:sched_switch "$WORKLOAD" 0.3 cpu
[ -z "$(warnings "$WORK/good.data")" ] || fail "warnings on a good recording: $(warnings "$WORK/good.data")"
echo "ok: no warning on a good recording"

record "$WORK/freq.data" -F 999 -e cpu-clock -e sched:sched_switch "$WORKLOAD" 0.3
warnings "$WORK/freq.data" | grep -q "sched:sched_switch' was recorded in frequency mode.*perf record -e cpu-clock/freq=999/ -e sched:sched_switch" ||
	fail "no frequency-mode tracepoint warning: $(warnings "$WORK/freq.data")"
echo "ok: tracepoint in frequency mode"

record "$WORK/dwarf.data" --call-graph dwarf,1024 -F 499 -e cpu-clock "$WORKLOAD" 0.3 cpu
warnings "$WORK/dwarf.data" | grep -q "DWARF stack copies filled their buffer.*--call-graph dwarf,65528" ||
	fail "no truncated-stack warning: $(warnings "$WORK/dwarf.data")"
echo "ok: DWARF stack copies too small"

# dd spends its time in libc, which has no frame pointers on Debian.
record "$WORK/fp.data" -g -F 999 -e cpu-clock -- dd if=/dev/zero of=/dev/null bs=1 count=3000000
warnings "$WORK/fp.data" | grep -q "frame-pointer user callchains have no caller.*--call-graph dwarf" ||
	fail "no frame-pointer warning: $(warnings "$WORK/fp.data")"
echo "ok: frame-pointer chains through libc"

# lost samples: one count in info, info --json and report --json, the one
# perf report prints as "Total Lost Samples" (LOST_SAMPLES records here)
for f in "$CORPUS/quipper/perf.data.lost_samples-4.4" "$CORPUS/quipper/perf.data.piped.lost_samples-4.4"; do
	[ -f "$f" ] || { echo "(no $f: lost counts not compared)"; continue; }
	want=$(perf report -i "$f" --stdio 2>/dev/null | sed -n 's/^# Total Lost Samples: //p')
	info=$("$PERFPORT" -q info --json -i "$f" | $PY -c 'import json,sys; print(json.load(sys.stdin)["lost"])')
	rep=$("$PERFPORT" -q report --json -i "$f" | $PY -c 'import json,sys; print(json.load(sys.stdin)["meta"]["lost"])')
	text=$("$PERFPORT" -q info -i "$f" | sed -n 's/^lost: *\([0-9]*\) samples.*/\1/p')
	[ -n "$want" ] && [ "$info" = "$want" ] && [ "$rep" = "$want" ] && [ "$text" = "$want" ] ||
		fail "$(basename "$f"): lost $text (info), $info (info --json), $rep (report --json); perf report: $want"
	echo "ok: $(basename "$f"): $want lost samples everywhere"
done
