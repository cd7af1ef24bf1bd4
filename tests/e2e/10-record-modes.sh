#!/usr/bin/env bash
# Fresh recordings in every mode perf has: perfport's per-event and
# per-thread sample counts, and its time order, equal perf script's.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
need_tracepoint
build_workload

check() { # NAME FILE; a failing recording is kept in $TEST_OUT for diagnosis
	local name=$1 file=$2
	trap 'cp -r "$file" "${TEST_OUT:-/tmp}/" 2>/dev/null; rm -rf "$WORK"' EXIT
	"$PERFPORT" info --json -i "$file" >"$WORK/$name.json" || fail "$name: perfport info exit $?"
	perf script -i "$file" -F pid,tid,event >"$WORK/$name.script" 2>/dev/null
	$PY "$CHECK" counts "$WORK/$name.json" "$WORK/$name.script" || fail "$name: counts"
	"$PERFPORT" dump --samples -i "$file" >"$WORK/$name.dump" || fail "$name: perfport dump exit $?"
	perf script -i "$file" -F pid,tid,time,event --ns >"$WORK/$name.times" 2>/dev/null
	$PY "$CHECK" order "$WORK/$name.dump" "$WORK/$name.times" || fail "$name: order"
	trap 'rm -rf "$WORK"' EXIT
	echo "ok: $name"
}

record "$WORK/fp.data" -g -F 999 -e cpu-clock "$WORKLOAD" 0.5
check fp "$WORK/fp.data"

record "$WORK/dwarf.data" --call-graph dwarf -F 299 -e cpu-clock "$WORKLOAD" 0.3
check dwarf "$WORK/dwarf.data"

record "$WORK/tp.data" -g -e sched:sched_switch "$WORKLOAD" 0.3
check tracepoint "$WORK/tp.data"

record "$WORK/sw.data" -g -e cpu-clock/freq=499/ -e sched:sched_switch --switch-events "$WORKLOAD" 0.3
check switch-events "$WORK/sw.data"
# Tracepoint fields are read by name from the recording's own formats.
"$PERFPORT" dump --samples --event sched:sched_switch -i "$WORK/sw.data" >"$WORK/sw.fields"
perf script -i "$WORK/sw.data" -F time,trace --ns >"$WORK/sw.trace" 2>/dev/null
$PY "$CHECK" tpfields "$WORK/sw.fields" "$WORK/sw.trace" || fail "sched_switch fields"

record "$WORK/two.data" -g -e cpu-clock -e task-clock "$WORKLOAD" 0.4
check two-events "$WORK/two.data"

record "$WORK/zstd.data" -z -g -F 999 -e cpu-clock "$WORKLOAD" 0.4
check zstd "$WORK/zstd.data"
$PY "$CHECK" json "$WORK/zstd.json" records.PERF_RECORD_SAMPLE=">0" compression.compressed_bytes=">0"

perf record -g -F 999 -e cpu-clock -o - "$WORKLOAD" 0.4 >"$WORK/pipe.data" 2>"$WORK/record.log" ||
	{ cat "$WORK/record.log"; fail "perf record -o - failed"; }
check pipe "$WORK/pipe.data"
$PY "$CHECK" json "$WORK/pipe.json" mode=pipe
# The same stream read from standard input, as a pipe and as a redirect.
cat "$WORK/pipe.data" | "$PERFPORT" info --json -i - >"$WORK/stdin.json" || fail "pipe on stdin: exit $?"
$PY "$CHECK" counts "$WORK/stdin.json" "$WORK/pipe.script" || fail "pipe on stdin: counts"
"$PERFPORT" info --json -i - <"$WORK/fp.data" >"$WORK/redir.json" || fail "file redirected to stdin: exit $?"
$PY "$CHECK" counts "$WORK/redir.json" "$WORK/fp.script" || fail "file on stdin: counts"

# perf record's own messages on stderr sent into the same file: text after
# the last record, recognised as such - every record read, exit 0
perf record -g -F 999 -e cpu-clock -o - "$WORKLOAD" 0.3 >"$WORK/mixed.data" 2>&1 ||
	fail "perf record -o - >file 2>&1 failed"
if tail -c 200 "$WORK/mixed.data" | has "\[ perf record: "; then
	check pipe-and-stderr "$WORK/mixed.data"
	$PY "$CHECK" json "$WORK/pipe-and-stderr.json" skipped_records=0 truncated=false \
		message_bytes=">0"
else
	echo "note: this perf record wrote no messages into the pipe file: nothing to check"
fi

perf record -z -g -F 999 -e cpu-clock -o - "$WORKLOAD" 0.4 >"$WORK/pipez.data" 2>"$WORK/record.log" ||
	{ cat "$WORK/record.log"; fail "perf record -z -o - failed"; }
check pipe-zstd "$WORK/pipez.data"

record "$WORK/sys.data" -a -g -e cpu-clock/freq=299/ -e sched:sched_switch -- "$WORKLOAD" 0.3
check system-wide "$WORK/sys.data"

if perf record -q --threads -e cpu-clock -o "$WORK/dir.data" true >/dev/null 2>&1; then
	rm -rf "$WORK/dir.data"
	record "$WORK/dir.data" --threads -g -F 999 -e cpu-clock "$WORKLOAD" 0.4
	[ -d "$WORK/dir.data" ] || fail "perf record --threads did not write a directory"
	check directory "$WORK/dir.data"
	$PY "$CHECK" json "$WORK/directory.json" mode=directory
else
	echo "note: this perf has no --threads; directory mode not checked here"
fi

# File-mode data through a real pipe cannot seek: a clear error, exit 2.
rc=0; cat "$WORK/fp.data" | "$PERFPORT" info -i - >/dev/null 2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] || fail "file-mode data on a pipe: exit $rc, want 2"
grep -q "cannot seek" "$WORK/err" || fail "file-mode data on a pipe: message: $(cat "$WORK/err")"
echo "ok: all modes"
