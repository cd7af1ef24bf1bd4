#!/usr/bin/env bash
# perf record -c N samples every N events and leaves PERF_SAMPLE_PERIOD out
# of the samples: each stands for N, as perf reads it (the attr's period).
# Fresh recordings of a count event (page-faults -c 1), a clock event
# (task-clock -c 100000, weight in ns) and, when ../shared is beside the
# tree, quipper's perf 3.4 recordings of hardware and software events: per
# event, perfport's sample counts and weights equal perf script's, and
# report shows a count event's totals in events.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
build_workload
record "$WORK/pf.data" -e page-faults -c 1 -g -- "$WORKLOAD" 0.3 all
record "$WORK/tc.data" -e task-clock -c 100000 -g -- "$WORKLOAD" 0.3 all
files="$WORK/pf.data $WORK/tc.data"
for f in perf.data.hw_and_sw-3.4 perf.data.piped.hw_and_sw-3.4; do
	[ -f "$CORPUS/quipper/$f" ] && files="$files $CORPUS/quipper/$f"
done

i=0
for data in $files; do
	i=$((i + 1))
	perf script -i "$data" -F event,period >"$WORK/$i.script" 2>"$WORK/stderr.txt" ||
		fail "perf script cannot read $data: $(said "$WORK/stderr.txt")"
	"$PERFPORT" -q info --json -i "$data" >"$WORK/$i.info.json" || fail "info $data: exit $?"
	for ev in $($PY -c 'import json,sys; print(" ".join(e["name"] for e in json.load(open(sys.argv[1]))["events"] if e["samples"]))' "$WORK/$i.info.json"); do
		for v in ns samples; do
			"$PERFPORT" -q export -i "$data" --event "$ev" -f folded -O counter=all -O value=$v \
				-o "$WORK/$i.$ev.$v.folded" || fail "export $data --event $ev: exit $?"
		done
	done
	$PY - "$WORK" "$i" "$data" <<'PY' || fail "$data: perfport's weights differ from perf script's"
import collections, glob, os, sys
work, i, data = sys.argv[1:]
count, period = collections.Counter(), collections.Counter()
for line in open(f"{work}/{i}.script"):
    f = line.split()  # period, then "event:"
    if len(f) == 2 and f[1].endswith(":"):
        count[f[1][:-1]] += 1
        period[f[1][:-1]] += int(f[0])
def total(path):
    return sum(int(l.rsplit(" ", 1)[1]) for l in open(path))
seen = 0
for path in glob.glob(f"{work}/{i}.*.ns.folded"):
    ev = os.path.basename(path)[len(i) + 1:-len(".ns.folded")]
    got = (total(f"{work}/{i}.{ev}.samples.folded"), total(path))
    want = (count[ev], period[ev])
    print(f"{os.path.basename(data)} {ev}: perfport {got[0]} samples weighing {got[1]}; "
          f"perf script {want[0]}, {want[1]}")
    if got != want or not want[1]:
        sys.exit(f"{ev}: {got} != {want}")
    seen += 1
if not seen:
    sys.exit("no event with samples")
PY
done
"$PERFPORT" -q report -i "$WORK/pf.data" >"$WORK/pf.report" || fail "report: exit $?"
grep -Eq '^# totals:  on-cpu [0-9]+\.000 events \([0-9]+\)' "$WORK/pf.report" ||
	{ grep totals "$WORK/pf.report"; fail "report does not show page faults in events"; }
echo "ok: samples without a period weigh their event's fixed period"
