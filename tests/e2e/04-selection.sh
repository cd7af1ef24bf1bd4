#!/usr/bin/env bash
# Selecting what goes into the profile, on the bundled off-CPU sample:
# --event takes a name with or without perf's modifiers and refuses one the
# recording lacks, naming its events (report, dump, stacks; file and pipe);
# a --pid/--tid/--comm/--time that matches nothing says so.
. "$(dirname "$0")/lib/common.sh"
need_python
file="$TOP/samples/offcpu.perf.data"

on_cpu() { $PY -c 'import json,sys; print(json.load(sys.stdin)["totals"]["on-cpu"]["count"])'; }
all=$("$PERFPORT" -q report --json -i "$file" | on_cpu)
short=$("$PERFPORT" -q report --json -i "$file" --event cpu-clock | on_cpu)
full=$("$PERFPORT" -q report --json -i "$file" --event cpu-clock/freq=499/ | on_cpu)
[ "$all" -gt 100 ] && [ "$short" = "$all" ] && [ "$full" = "$all" ] ||
	fail "--event cpu-clock: $short samples, cpu-clock/freq=499/: $full, all: $all"
echo "ok: --event cpu-clock names cpu-clock/freq=499/ ($all samples)"

want="perfport: error: --event: 'cpu-clok' is not an event of '$file' (its events: 'cpu-clock/freq=499/', 'sched:sched_switch')"
for cmd in report dump stacks; do
	rc=0; "$PERFPORT" -q $cmd -i "$file" --event cpu-clok >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ $rc -eq 1 ] || fail "$cmd --event cpu-clok: exit $rc, want 1"
	[ "$(cat "$WORK/err")" = "$want" ] || fail "$cmd --event cpu-clok said: $(cat "$WORK/err")"
	[ ! -s "$WORK/out" ] || fail "$cmd --event cpu-clok printed output"
done
rc=0; "$PERFPORT" -q export -i "$file" -f folded --event cpu-clock,nope -o "$WORK/x.folded" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "'nope' is not an event" "$WORK/err" || fail "export --event cpu-clock,nope: exit $rc: $(cat "$WORK/err")"
[ ! -e "$WORK/x.folded" ] || fail "export --event nope left a file"
echo "ok: a misspelt --event is refused by report, dump, stacks and export"

if command -v perf >/dev/null && perf record -q -e cpu-clock -o - true 2>/dev/null >"$WORK/pipe.data" &&
	[ -s "$WORK/pipe.data" ]; then
	rc=0; "$PERFPORT" -q report -i - --event cpu-clok <"$WORK/pipe.data" >/dev/null 2>"$WORK/err" || rc=$?
	[ $rc -eq 1 ] && grep -q "'cpu-clok' is not an event of '-' (its events: 'cpu-clock')" "$WORK/err" ||
		fail "pipe --event cpu-clok: exit $rc: $(cat "$WORK/err")"
	echo "ok: refused on a pipe too, once its events are known"
else
	echo "note: perf cannot record here; the pipe case is not checked"
fi

for sel in "--tid 999999" "--pid 1,2" "--comm nosuch" "--time 1,2"; do
	rc=0; "$PERFPORT" report -i "$file" $sel --no-threads >/dev/null 2>"$WORK/err" || rc=$?
	[ $rc -eq 0 ] || fail "report $sel: exit $rc"
	grep -q "^perfport: warning: nothing in '$file' matched $sel: the profile is empty$" "$WORK/err" ||
		fail "report $sel: no warning: $(cat "$WORK/err")"
done
"$PERFPORT" report -i "$file" --comm perfport-worklo --no-threads >/dev/null 2>"$WORK/err"
! grep -q "matched" "$WORK/err" || fail "a matching --comm warned: $(cat "$WORK/err")"
echo "ok: a selection that matches nothing is named in a warning"
