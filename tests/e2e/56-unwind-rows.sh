#!/usr/bin/env bash
# --call-graph dwarf samples walked by the files' CFI rows (src/symbols/cfi.c)
# give what libdwfl's unwinding gives (PERFPORT_UNWIND=libdw), byte for
# byte: every sample's stacks (perfport stacks), the folded profile and
# info's unwinding counts, on
#  - every recording of the shared corpus (../shared/corpus; perfparser's
#    static binaries through --symfs),
#  - the arm64 fixtures (tests/arm64/data: dwarf stacks of Debian's arm64
#    perf, pointer authentication included),
#  - fresh recordings here: the sample workload (threads, locks, I/O,
#    60-deep calls), a loop interrupted by a signal handler (its samples'
#    signal frames are libdwfl's to unwind: counted) and the whole machine
#    while processes start (code without CFI: the frame-pointer step).
# The rows must have done the work: on each fresh recording most samples
# are walked by them, not handed to libdwfl.
. "$(dirname "$0")/lib/common.sh"
need_python
export XDG_CACHE_HOME="$WORK/cache"
compared=0 walked=0

# same NAME PERFPORT-ARGS... - both unwinders' stacks, folded profile and
# counts of one recording; adds its samples walked by rows to $walked
same() {
	local name=$1; shift
	local u
	for u in libdw rows; do
		PERFPORT_UNWIND=$u "$PERFPORT" -q stacks "$@" >"$WORK/$u.stacks" 2>"$WORK/$u.err" ||
			fail "$name: stacks with PERFPORT_UNWIND=$u: exit $? ($(said "$WORK/$u.err"))"
		PERFPORT_UNWIND=$u "$PERFPORT" -q export -f folded -o "$WORK/$u.folded" "$@" 2>"$WORK/$u.err" ||
			fail "$name: export with PERFPORT_UNWIND=$u: exit $? ($(said "$WORK/$u.err"))"
		PERFPORT_UNWIND=$u "$PERFPORT" -q info --json "$@" >"$WORK/$u.json" 2>"$WORK/$u.err" ||
			fail "$name: info with PERFPORT_UNWIND=$u: exit $? ($(said "$WORK/$u.err"))"
	done
	cmp -s "$WORK/libdw.stacks" "$WORK/rows.stacks" || {
		diff "$WORK/libdw.stacks" "$WORK/rows.stacks" | head -20
		fail "$name: the rows' stacks differ from libdwfl's"
	}
	cmp -s "$WORK/libdw.folded" "$WORK/rows.folded" || fail "$name: the rows' folded profile differs from libdwfl's"
	read -r n by_rows <<<"$($PY - "$WORK/libdw.json" "$WORK/rows.json" "$name" <<'PY'
import json, sys
a, b = (json.load(open(p))["symbols"] for p in sys.argv[1:3])
keys = ("dwarf_unwound", "dwarf_unwind_stopped", "dwarf_unwind_truncated", "dwarf_unwind_failed")
diff = [(k, a[k], b[k]) for k in keys if a[k] != b[k]]
if diff:
    sys.exit("%s: unwinding counts differ (libdw, rows): %s" % (sys.argv[3], diff))
# samples unwound or tried, and of those the ones the rows walked
n = lambda s: s["dwarf_unwound"] + s["dwarf_unwind_failed"]
if n(a) != a["dwarf_unwind_libdw"]:
    sys.exit("%s: PERFPORT_UNWIND=libdw gave libdwfl %d of %d samples" %
             (sys.argv[3], a["dwarf_unwind_libdw"], n(a)))
print(n(b), n(b) - b["dwarf_unwind_libdw"])
PY
)" || fail "$name: info's counts"
	compared=$((compared + 1))
	walked=$((walked + by_rows))
	echo "$name: $n dwarf samples, $by_rows by rows, $((n - by_rows)) by libdwfl: the same"
	LAST_N=$n LAST_ROWS=$by_rows
}

# --- the shared corpus ---
if [ -d "$CORPUS" ]; then
	while IFS= read -r f; do
		case $f in *.txt|*/README.md|*corrupted*) continue;; esac
		head -c 8 "$f" | has PERFILE2 || continue
		args=(-i "$f")
		case $f in */perfparser/*/*) args+=(--symfs "$(dirname "$f")");; esac
		same "${f#$CORPUS/}" "${args[@]}"
	done < <(find "$CORPUS" -type f | sort)
else
	echo "(no corpus at $CORPUS, which lives in ../shared/corpus beside the checkout: its files not compared)"
fi

# --- the arm64 fixtures, their files from perf archive's tarball ---
D=$TOP/tests/arm64/data
if [ -f "$D/archive.tar.xz" ] && command -v xz >/dev/null; then
	for f in "$D"/*.data.xz; do
		n=$(basename "${f%.xz}")
		xz -dc "$f" >"$WORK/$n"
		ln -s "$D/archive.tar.xz" "$WORK/$n.tar.xz"
		same "arm64/$n" -i "$WORK/$n"
	done
else
	echo "(no arm64 fixtures or no xz: tests/arm64/data not compared)"
fi

# --- fresh recordings ---
if command -v perf >/dev/null && perf record -e cpu-clock -o "$WORK/probe.data" true >/dev/null 2>&1; then
	build_workload
	record "$WORK/w.data" --call-graph dwarf -F 999 -e cpu-clock -- "$WORKLOAD" 1 all
	same "workload (all)" -i "$WORK/w.data"
	[ "$LAST_ROWS" -ge $((LAST_N * 9 / 10)) ] ||
		fail "workload: only $LAST_ROWS of $LAST_N samples walked by rows"
	record "$WORK/deep.data" --call-graph dwarf,16384 -F 999 -e cpu-clock -- "$WORKLOAD" 1 deep
	same "workload (deep)" -i "$WORK/deep.data"
	[ "$LAST_ROWS" -ge $((LAST_N * 9 / 10)) ] ||
		fail "workload deep: only $LAST_ROWS of $LAST_N samples walked by rows"
	cc -O1 -g -o "$WORK/sigframe" "$TOP/tests/e2e/progs/sigframe.c" || fail "cc sigframe.c: exit $?"
	record "$WORK/sig.data" --call-graph dwarf -F 999 -e cpu-clock -- "$WORK/sigframe" 0.5
	same "sigframe" -i "$WORK/sig.data"
	# the handler's samples pass __restore_rt's signal frame: libdwfl's
	[ "$LAST_ROWS" -lt "$LAST_N" ] || fail "sigframe: no sample handed to libdwfl (its signal frames)"
	# system-wide, with processes starting meanwhile (their loader's
	# _start has no FDE: libdwfl's frame-pointer step, the rows' too)
	( for _ in $(seq 100); do sh -c 'ls / >/dev/null'; done ) &
	if perf record -o "$WORK/sw.data" -a --call-graph dwarf,4096 -F 199 -e cpu-clock -- \
		"$WORKLOAD" 1 all >"$WORK/record.log" 2>&1; then
		wait
		same "system-wide" -i "$WORK/sw.data"
	else
		wait
		echo "(perf cannot record system-wide here: $(said "$WORK/record.log"))"
	fi
else
	echo "(perf cannot record here: no fresh recordings compared)"
fi

[ $compared -gt 0 ] || skip "nothing to compare: no corpus, no arm64 fixtures, no perf"
[ $walked -gt 0 ] || fail "no sample was walked by rows"
echo "ok: $compared recordings, the CFI rows' unwinding byte-identical to libdwfl's ($walked samples by rows)"
