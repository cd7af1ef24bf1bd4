#!/usr/bin/env bash
# --sort state names the program's innermost function outside the C
# library: four threads waiting in pthread_cond_timedwait() from
# wait_for_work(), recorded with --call-graph dwarf, wait in wait_for_work,
# not in glibc's __futex_abstimed_wait_common64 (inlined). Recorded with -g,
# where the frame-pointer stack stops in glibc and no program frame is
# recorded, the line says so (and what records it) instead of naming the
# library's function as the program's.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_tracepoint
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/condwait" "$TOP/tests/e2e/progs/condwait.c" ||
	fail "cannot build progs/condwait.c"
EV="-e cpu-clock/freq=999/ -e sched:sched_switch --switch-events"
record "$WORK/dwarf.data" $EV --call-graph dwarf -m 4096 -- "$WORK/condwait"
record "$WORK/fp.data" $EV -g -- "$WORK/condwait"
for v in dwarf fp; do
	"$PERFPORT" -q report -i "$WORK/$v.data" --sort state --top 5 --no-tree --no-threads >"$WORK/$v.txt" ||
		fail "report --sort state ($v): exit $?"
	sed -n '/^## off-CPU: where/,/^$/p' "$WORK/$v.txt" >"$WORK/$v.state"
	! has "(inlined)" "$WORK/$v.state" || fail "$v: an inlined line in --sort state: $(cat "$WORK/$v.state")"
done
first=$(sed -n '3p' "$WORK/dwarf.state")
case $first in
*" wait_for_work (condwait)") echo "ok: dwarf: $first" ;;
*) fail "dwarf: the first line is not wait_for_work: $(cat "$WORK/dwarf.state")" ;;
esac
if has -F "(libc.so.6)" "$WORK/fp.state"; then
	fail "-g: a C library function named as where the program waited: $(cat "$WORK/fp.state")"
fi
if has -F "[no program frame: the stacks end in libc.so.6" "$WORK/fp.state"; then
	has -F "record with --call-graph dwarf to see the program" "$WORK/fp.txt" || fail "-g: no advice: $(cat "$WORK/fp.txt")"
	echo "ok: -g: $(sed -n '3p' "$WORK/fp.state")"
fi
echo "ok: --sort state names the program's function"
