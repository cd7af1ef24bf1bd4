#!/usr/bin/env bash
# The bundled sample recordings (what `make demo` shows) read fully, and
# agree with perf on sample counts per event and per thread.
. "$(dirname "$0")/lib/common.sh"
need_python
for f in oncpu offcpu; do
	file="$TOP/samples/$f.perf.data"
	"$PERFPORT" info --json -i "$file" >"$WORK/$f.json" || fail "$f: perfport info exit $?"
	$PY "$CHECK" json "$WORK/$f.json" samples=">100" skipped_records=0 truncated=false mode=file
	command -v perf >/dev/null || continue
	perf script -i "$file" -F pid,tid,event >"$WORK/$f.script" 2>/dev/null
	$PY "$CHECK" counts "$WORK/$f.json" "$WORK/$f.script" || fail "$f: counts differ from perf script"
done
# The off-CPU sample has the tracepoint and switch records the accounting needs.
$PY "$CHECK" json "$WORK/offcpu.json" events.1.name=sched:sched_switch \
	records.PERF_RECORD_SWITCH=">0" events.1.samples=">100"
# The human-readable form says what the demo shows.
"$PERFPORT" info -i "$TOP/samples/oncpu.perf.data" >"$WORK/oncpu.txt"
grep -q '^samples: ' "$WORK/oncpu.txt" && grep -q '^events:' "$WORK/oncpu.txt" || fail "text output"
# The samples hold no wall-clock reference (recorded without -k): report
# marks its times estimated without a warning; so does an export to a
# format that does not place the profile in time (pprof's time is shown,
# not compared); one that does (otlp: a backend's time axis) warns and says
# how to record them exactly.
"$PERFPORT" report -i "$TOP/samples/offcpu.perf.data" --top 1 >"$WORK/report.txt" 2>"$WORK/report.err" ||
	fail "report: exit $?: $(said "$WORK/report.err")"
grep -q '^# time .*, estimated)$' "$WORK/report.txt" || fail "report does not mark its times estimated"
[ ! -s "$WORK/report.err" ] || fail "report warned: $(cat "$WORK/report.err")"
"$PERFPORT" export -i "$TOP/samples/offcpu.perf.data" -f pprof,folded,flamegraph -o "$WORK/x" \
	2>"$WORK/export.err" || fail "export: exit $?: $(said "$WORK/export.err")"
[ ! -s "$WORK/export.err" ] || fail "export to pprof, folded, flamegraph warned: $(cat "$WORK/export.err")"
"$PERFPORT" export -i "$TOP/samples/offcpu.perf.data" -f otlp -o "$WORK/x.otlp" 2>"$WORK/export.err" ||
	fail "export: exit $?: $(said "$WORK/export.err")"
grep -q "holds no wall-clock reference.*perf record -k CLOCK_MONOTONIC" "$WORK/export.err" ||
	fail "export -f otlp does not warn about estimated times: $(cat "$WORK/export.err")"
# --top N lists N functions, the process and thread frames of --group-by
# thread not counted among them (they are not functions)
"$PERFPORT" report -i "$TOP/samples/offcpu.perf.data" --top 3 --group-by thread \
	>"$WORK/top.txt" 2>"$WORK/stderr.txt" || fail "report --top 3: exit $?: $(said "$WORK/stderr.txt")"
counts=$(awk '/^## /{h = ($0 ~ /top functions by total/); next}
	h && /^ *[0-9.]+%/{n[NR] = 1; c++} /^$/{if (c) print c; c = 0} END{if (c) print c}' "$WORK/top.txt" |
	sort -u | tr '\n' ' ')
[ "$counts" = "3 " ] || fail "report --top 3 --group-by thread: tables by total list $counts functions"
echo "ok: samples"
