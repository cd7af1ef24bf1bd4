#!/usr/bin/env bash
# A stream cut into windows (watch -i -) when its samples carry DWARF
# stacks, which the unwinding pool unwinds on threads: every window holds
# exactly the samples perf script puts in its time span (windows count
# from the first sample, empty ones are not sent), at -j 1, 2 and 3, and
# the watcher ends with 0. The build before cut a window from inside the
# pool's delivery, flushed the pool there, delivered the next batch before
# the rest of the one being delivered, then the one being delivered again:
# with --call-graph dwarf every run recursed until its stack overflowed
# (SIGSEGV). A -g stream of the same program is checked the same way.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
build_shape
test_server held_server.py
trap '[ -z "${SERVER_PID:-}" ] || kill "$SERVER_PID" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

# buckets FILE MS: perf script's samples of FILE per window of MS ms from
# its first sample, the empty windows left out, one count a line
buckets() {
	perf script -i "$1" -F time --ns 2>"$WORK/script.err" | $PY -c '
import re, sys
w = int(sys.argv[1]) * 1000000
ts = [int(m.group(1) + m.group(2)) for m in
      (re.match(r"^\s*(\d+)\.(\d{9}):\s*$", l) for l in sys.stdin) if m]
if not ts:
    sys.exit("perf script printed no sample time")
c = {}
for t in ts:
    k = (t - ts[0]) // w
    c[k] = c.get(k, 0) + 1
for k in sorted(c):
    print(c[k])
' "$2" || fail "perf script -F time: $(said "$WORK/script.err")"
}

for mode in dwarf fp; do
	case $mode in
	dwarf) cg=(--call-graph dwarf,4096);;
	fp) cg=(-g);;
	esac
	perf record -m 16 -k CLOCK_MONOTONIC -e cpu-clock/freq=1999/ "${cg[@]}" -o - -- "$SHAPE" 2 "$WORK" \
		>"$WORK/$mode.pipe" 2>"$WORK/$mode.rec" ||
		fail "perf record $mode -o -: exit $?: $(said "$WORK/$mode.rec")"
	buckets "$WORK/$mode.pipe" 100 >"$WORK/$mode.want"
	[ "$(wc -l <"$WORK/$mode.want")" -ge 5 ] || fail "$mode: the recording spans under 5 windows of 100 ms"
	for j in 1 2 3; do
		rc=0
		"$PERFPORT" watch -j "$j" -i - --window 100ms -f pyroscope -O server="$URL" \
			--spool "$WORK/spool-$mode-$j" <"$WORK/$mode.pipe" \
			>"$WORK/$mode-$j.out" 2>"$WORK/$mode-$j.err" || rc=$?
		[ "$rc" = 0 ] || fail "$mode -j $j: watch -i - ended with $rc: $(said "$WORK/$mode-$j.err")"
		sed -n 's/^window [^ ]*: \([0-9]*\) samples.*/\1/p' "$WORK/$mode-$j.out" >"$WORK/$mode-$j.got"
		cmp -s "$WORK/$mode.want" "$WORK/$mode-$j.got" ||
			fail "$mode -j $j: samples per window differ from perf script's (want, got): $(paste -d' ' "$WORK/$mode.want" "$WORK/$mode-$j.got" | tr '\n' ',')"
	done
	echo "ok: $mode: $(wc -l <"$WORK/$mode.want") windows of 100 ms, each holding perf script's samples, at -j 1, 2 and 3"
done

# A stream cut short inside a record: only its last window says it was
# read partly (the record skipped, the data ending early), and the watcher
# ends with 3. The build before read the stream ahead of its windows, met
# the cut end, and said every window cut after then was read partly, each
# with that same record skipped (6 of 19 windows of 100 ms here).
size=$(wc -c <"$WORK/dwarf.pipe")
head -c $((size * 2 / 3 + 7)) "$WORK/dwarf.pipe" >"$WORK/cut.pipe"
rc=0
"$PERFPORT" watch -j 2 -i - --window 100ms -f pyroscope -O server="$URL" \
	--spool "$WORK/spool-cut" <"$WORK/cut.pipe" >"$WORK/cut.out" 2>"$WORK/cut.err" || rc=$?
[ "$rc" = 3 ] || fail "a stream cut short: watch -i - ended with $rc, not 3: $(said "$WORK/cut.err")"
n=$(grep -c '^window ' "$WORK/cut.out") || true
[ "$n" -ge 5 ] || fail "a stream cut short: $n windows sent: $(said "$WORK/cut.err")"
partly=$(grep -c 'read partly' "$WORK/cut.err") || true
last=$(sed -n '$s/^\(window [^ ]*\): .*/\1/p' "$WORK/cut.out")
[ "$partly" = 1 ] && grep -q "^perfport: warning: $last: read partly: 1 records skipped, the data ends early" "$WORK/cut.err" ||
	fail "a stream cut short: $partly of $n windows said they were read partly, not the last one alone ($last): $(grep 'read partly' "$WORK/cut.err" | head -3 | tr '\n' ' ')"
echo "ok: a stream cut short: only its last of $n windows read partly, exit 3"

# A stream cut short before its first sample: no window to say it, so the
# watcher says the stream was read partly and held no sample, and ends
# with 3. The build before ended with 3 and not a word.
head -c 5000 "$WORK/dwarf.pipe" >"$WORK/head.pipe"
rc=0
"$PERFPORT" watch -j 2 -i - --window 100ms -f pyroscope -O server="$URL" \
	--spool "$WORK/spool-head" <"$WORK/head.pipe" >"$WORK/head.out" 2>"$WORK/head.err" || rc=$?
[ "$rc" = 3 ] || fail "a stream cut before its first sample: watch -i - ended with $rc, not 3: $(said "$WORK/head.err")"
grep -q "^perfport: warning: '-': read partly: records skipped or the data ends early$" "$WORK/head.err" &&
	grep -q "^perfport: warning: '-' held no sample to cut into windows: nothing sent$" "$WORK/head.err" ||
	fail "a stream cut before its first sample: not said: $(said "$WORK/head.err")"
echo "ok: a stream cut before its first sample: said so, exit 3"
