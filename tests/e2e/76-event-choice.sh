#!/usr/bin/env bash
# A recording of several sampling events: without --event the on-CPU
# profile counts one event - the first that measures time (a clock, or a
# hardware event at a frequency), else the first - on whatever PMU (a hybrid
# CPU's cpu_core/cycles/ and cpu_atom/cycles/ are one event) or in modes
# that do not overlap (cycles:u and cycles:k), and leaves the others out
# with a warning, since summed they would mix units (ns and page faults) or
# count the same time twice (cpu-clock and task-clock, cycles and cycles:u).
# A software event that is not a clock weighs its period (events), also at
# a frequency. perf script's samples and periods are the oracle.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
build_workload

# totals FILE.script EVENT -> "samples period-sum" of EVENT in perf script -F event,period
totals() {
	awk -v ev="$2:" '$2 == ev { n++; p += $1 } END { printf "%d %d\n", n, p }' "$1"
}
# weigh NAME DATA VALUE [EXPORT-ARGS...] - export -f folded -O value=VALUE of
# DATA to NAME.folded, its warnings to NAME.err; TOTAL is the sum of its counts
weigh() {
	local name=$1 data=$2 value=$3
	shift 3
	"$PERFPORT" export -i "$data" -f folded -O value="$value" "$@" -o "$WORK/$name.folded" \
		2>"$WORK/$name.err" || fail "export $name: exit $?: $(said "$WORK/$name.err")"
	TOTAL=$(awk '{ s += $NF } END { printf "%d\n", s }' "$WORK/$name.folded")
}

# 1. cpu-clock and page-faults: page-faults is left out, and said so.
record "$WORK/pf.data" -g -e cpu-clock -e page-faults -- "$WORKLOAD" 0.3 all
perf script -i "$WORK/pf.data" -F event,period >"$WORK/pf.script" 2>/dev/null
read -r clk_n clk_p < <(totals "$WORK/pf.script" cpu-clock)
read -r pf_n pf_p < <(totals "$WORK/pf.script" page-faults)
[ "$clk_n" -gt 0 ] && [ "$pf_n" -gt 0 ] || fail "the recording holds $clk_n cpu-clock and $pf_n page-faults samples"
weigh pf "$WORK/pf.data" samples
[ "$TOTAL" = "$clk_n" ] || fail "default profile: $TOTAL samples, perf script has $clk_n of cpu-clock"
grep "leaves out 'page-faults' ($pf_n)" "$WORK/pf.err" >/dev/null ||
	fail "no warning naming page-faults as left out: $(cat "$WORK/pf.err")"
"$PERFPORT" report --json -i "$WORK/pf.data" >"$WORK/pf.json" 2>"$WORK/stderr.txt" || fail "report --json: exit $?: $(said "$WORK/stderr.txt")"
$PY - "$WORK/pf.json" "$pf_n" <<'PY' || fail "report --json's events"
import json, sys
ev = {e["name"]: e for e in json.load(open(sys.argv[1]))["meta"]["events"]}
pf, clk = ev["page-faults"], ev["cpu-clock"]
assert pf["left_out"] and pf["recorded"] == int(sys.argv[2]) and pf["samples"] == 0, pf
assert pf["unit"] == "events", pf
assert not clk["left_out"] and clk["samples"] == clk["recorded"] and clk["unit"] == "ns", clk
PY
"$PERFPORT" report -i "$WORK/pf.data" >"$WORK/pf.report" 2>"$WORK/stderr.txt" || fail "report: exit $?: $(said "$WORK/stderr.txt")"
grep -q "^# event page-faults: left out, $pf_n samples recorded" "$WORK/pf.report" ||
	fail "report's header does not say page-faults is left out: $(grep '^# event' "$WORK/pf.report")"
# --event picks it; its weight is its period (faults), not time
weigh pfe "$WORK/pf.data" ns --event page-faults
[ "$TOTAL" = "$pf_p" ] || fail "--event page-faults weighs $TOTAL, perf script's periods $pf_p"
echo "ok: cpu-clock counted ($clk_n samples), page-faults left out ($pf_n) and counted by --event (period $pf_p)"

# 2. cpu-clock and task-clock: the same time twice; the first is counted.
record "$WORK/two.data" -g -e task-clock -e cpu-clock -- "$WORKLOAD" 0.3 all
perf script -i "$WORK/two.data" -F event,period >"$WORK/two.script" 2>/dev/null
read -r tc_n tc_p < <(totals "$WORK/two.script" task-clock)
weigh two "$WORK/two.data" ns
[ "$TOTAL" = "$tc_p" ] || fail "default profile weighs $TOTAL ns, perf script's task-clock periods $tc_p"
grep -q "leaves out 'cpu-clock'" "$WORK/two.err" || fail "no warning naming cpu-clock as left out"
echo "ok: task-clock counted ($tc_p ns), cpu-clock left out"

# 3. page-faults alone at a frequency: events, its periods.
record "$WORK/pfo.data" -g -e page-faults -F 2000 -- "$WORKLOAD" 0.3 all
perf script -i "$WORK/pfo.data" -F event,period >"$WORK/pfo.script" 2>/dev/null
read -r n p < <(totals "$WORK/pfo.script" page-faults)
weigh pfo "$WORK/pfo.data" ns
[ "$TOTAL" = "$p" ] || fail "page-faults -F 2000 weighs $TOTAL, perf script's periods $p"
! grep -q "several events" "$WORK/pfo.err" || fail "one event, yet: $(cat "$WORK/pfo.err")"
"$PERFPORT" report -i "$WORK/pfo.data" >"$WORK/pfo.report" 2>"$WORK/stderr.txt" || fail "report: exit $?: $(said "$WORK/stderr.txt")"
grep -q "^# event page-faults: on-cpu, $n samples, frequency 2000 Hz, weight in events" "$WORK/pfo.report" ||
	fail "report does not weigh page-faults in events: $(grep '^# event' "$WORK/pfo.report")"
echo "ok: page-faults at 2000 Hz weighs its period ($p faults in $n samples)"

# 4. A hybrid CPU's one event on two PMUs (cycles with the PMU type in
# config's upper half, as perf records cpu_core/cycles/ and
# cpu_atom/cycles/) counts whole; cycles and instructions on one PMU do
# not add up. Hardware events cannot be recorded here: a pipe recording of
# two clock events gets the attrs of the hardware ones.
perf record -o - -F 1000 -e cpu-clock -e task-clock -- "$WORKLOAD" 0.3 all \
	>"$WORK/pipe.data" 2>"$WORK/rec.err" || { cat "$WORK/rec.err"; fail "perf record -o -: $(said "$WORK/rec.err")"; }
all=$(perf script -i "$WORK/pipe.data" -F event 2>/dev/null | wc -l)
first=$(perf script -i "$WORK/pipe.data" -F event 2>/dev/null | grep -c '^ *cpu-clock:')
# The same event in other modes counts with it when the modes do not
# overlap (cycles:u with cycles:k); cycles with cycles:u, or cycles twice,
# would count the same moments twice. Flags: exclude_user 0x10,
# exclude_kernel 0x20, exclude_hv 0x40, exclude_guest 0x100000.
u=0x100060 k=0x100050 uk=0x100000
for c in "hybrid 0x400000000,flags=$uk 0x800000000,flags=$uk $all" \
	 "two-events 0x400000000,flags=$uk 0x400000001,flags=$uk $first" \
	 "user-kernel 0,flags=$u 0,flags=$k $all" \
	 "all-user 0,flags=$uk 0,flags=$u $first" \
	 "twice 0,flags=$uk 0,flags=$uk $first"; do
	set -- $c
	$PY "$TOP/tests/e2e/lib/patch_attrs.py" "$WORK/pipe.data" "$WORK/$1.data" \
		"type=0,config=$2" "type=0,config=$3" || fail "patching $1"
	weigh "$1" "$WORK/$1.data" samples
	[ "$TOTAL" = "$4" ] || fail "$1: the profile counts $TOTAL samples, want $4"
	if [ "$4" = "$all" ]; then
		! grep -q "several events" "$WORK/$1.err" || fail "$1: $(cat "$WORK/$1.err")"
	else
		grep -q "leaves out" "$WORK/$1.err" || fail "$1: no warning of the event left out"
	fi
done
echo "ok: one event on two PMUs, or in user and kernel mode, counts all $all samples;" \
	"two events, cycles with cycles:u, or cycles twice count the first's $first"
