#!/usr/bin/env bash
# On a terminal, long reads draw a progress line on stderr and erase it at
# the end; when stderr is not a terminal nothing is drawn.
. "$(dirname "$0")/lib/common.sh"
need_perf
command -v script >/dev/null || skip "script(1) from bsdutils is needed to fake a terminal"
build_workload
# The line is redrawn every 16 MiB: record a little more than that (the
# kernel may lower the sample rate on a busy machine: then record longer,
# up to 30 s).
secs=6
for try in 1 2; do
	record "$WORK/big.data" -a -g -F 20000 -e cpu-clock -- "$WORKLOAD" "$secs"
	size=$(stat -c %s "$WORK/big.data")
	[ "$size" -le $((17 << 20)) ] || break
	secs=$(( secs * (20 << 20) / (size + 1) + 1 ))
	[ "$secs" -le 30 ] || break
done
[ "$size" -gt $((17 << 20)) ] || skip "recording is only $((size >> 20)) MiB; progress needs > 16 MiB"
script -qc "'$PERFPORT' info -i '$WORK/big.data' >/dev/null" /dev/null >"$WORK/tty" </dev/null
grep -q "perfport: reading .*% (.* of [0-9]* MiB)" "$WORK/tty" || fail "no progress line on a terminal: $(cat -v "$WORK/tty" | head -c 200)"
grep -q $'\e\[K' "$WORK/tty" || fail "the progress line is not erased at the end"
"$PERFPORT" info -i "$WORK/big.data" 2>"$WORK/err" >/dev/null
[ ! -s "$WORK/err" ] || fail "output on stderr when it is not a terminal: $(head -c 200 "$WORK/err")"
echo "ok: progress on a terminal only"
