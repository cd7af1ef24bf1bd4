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
