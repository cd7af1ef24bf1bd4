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
echo "ok: samples"
