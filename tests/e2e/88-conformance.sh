#!/usr/bin/env bash
# Every backend reads what perfport uploads the way its own code reads it:
# ../shared/conformance/ (the backends' protocol files, the vendor SDK's
# signer, the backends' parsing, replayed on loopback stand-ins) judges the
# uploads of the bundled samples and of fresh on- and off-CPU recordings of
# a C program (shape), a C++ one (progs/cxx.cc: templates, operators,
# lambdas) and a Rust one (progs/rs.rs: paths, generics, trait impls), and
# of two arm64 recordings (tests/arm64/data). ARMS, Datakit and CodeGuru take each recording as it is; a
# SkyWalking task has one target type, so it is checked once as an ON_CPU
# task and once as an OFF_CPU one (and, for on-CPU-only recordings, with
# the sums against perfport report too).
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
CONF=${CONFORMANCE:-$TOP/../shared/conformance}
[ -x "$CONF/run-all" ] || skip "no conformance checkers at $CONF (../shared/conformance beside the checkout)"
command -v g++ >/dev/null || skip "g++ is not installed (apt-get install g++)"

build_shape
g++ -std=c++17 -O1 -g -fno-omit-frame-pointer -pthread -o "$WORK/cxx" "$TOP/tests/e2e/progs/cxx.cc" ||
	fail "cannot build progs/cxx.cc"
record "$WORK/c-on.data" -e cpu-clock/freq=499/ -g -- "$SHAPE" 1 "$WORK"
record "$WORK/c-off.data" -e cpu-clock/freq=499/ -e sched:sched_switch --switch-events -g -- \
	"$SHAPE" 1 "$WORK"
record "$WORK/cxx-on.data" -e cpu-clock/freq=499/ -g -- "$WORK/cxx" 1
record "$WORK/cxx-off.data" -e cpu-clock/freq=499/ -e sched:sched_switch --switch-events \
	--call-graph dwarf -- "$WORK/cxx" 1
RS=
RUSTC=$(command -v rustc || true)
if [ -n "$RUSTC" ]; then
	"$RUSTC" -O -g -C force-frame-pointers=yes -o "$WORK/rs" "$TOP/tests/e2e/progs/rs.rs" ||
		fail "cannot build progs/rs.rs"
	record "$WORK/rs-on.data" -e cpu-clock/freq=499/ -g -- "$WORK/rs" 1
	record "$WORK/rs-off.data" -e cpu-clock/freq=499/ -e sched:sched_switch --switch-events \
		--call-graph dwarf -- "$WORK/rs" 1
	RS="$WORK/rs-on.data $WORK/rs-off.data"
else
	echo "(rustc is not installed, apt-get install rustc: the Rust program is not tried)"
fi

# recordings made on arm64 (tests/arm64: Debian's arm64 kernel and perf
# under qemu), with perf archive's tarball beside them: on-CPU with
# --call-graph dwarf, off-CPU with -g --user-regs
ARM=
if [ -f "$TOP/tests/arm64/data/archive.tar.xz" ] && command -v xz >/dev/null; then
	for n in stacks-dwarf waits-regs; do
		xz -dc "$TOP/tests/arm64/data/$n.data.xz" >"$WORK/arm64-$n.data"
		ln -s "$TOP/tests/arm64/data/archive.tar.xz" "$WORK/arm64-$n.data.tar.xz"
		ARM="$ARM $WORK/arm64-$n.data"
	done
else
	echo "(no arm64 fixtures or no xz: the arm64 recordings are not tried)"
fi

failed=0
judge() { # NAME COMMAND...: the checker's verdict, its defects shown on failure
	local name=$1 rc=0; shift
	"$@" >"$WORK/verdict.txt" 2>&1 || rc=$?
	case $rc in
	0) echo "ok   $name: $(tail -1 "$WORK/verdict.txt")";;
	77) skip "$name: $(grep -m1 SKIP "$WORK/verdict.txt")";;
	*) echo "FAIL $name (exit $rc):"; grep -E "DEFECT|: [0-9]+ defect|failed" "$WORK/verdict.txt" | sed 's/^/    /' | head -20
	   failed=$((failed + 1));;
	esac
}
for f in "$TOP/samples/oncpu.perf.data" "$TOP/samples/offcpu.perf.data" "$WORK"/c-on.data \
	 "$WORK"/c-off.data "$WORK"/cxx-on.data "$WORK"/cxx-off.data $RS $ARM; do
	n=$(basename "$f")
	judge "$n: codeguru, arms, datakit" "$CONF/run-all" "$PERFPORT" "$f" --only codeguru,arms,datakit -v
	judge "$n: skywalking ON_CPU task" "$CONF/skywalking/check" "$PERFPORT" "$f" --target ON_CPU -- \
		-O skywalking.target=on-cpu
	if "$PERFPORT" -q report --json -i "$f" | $PY -c 'import json,sys; t=json.load(sys.stdin)["totals"]; sys.exit(any(v["count"] for k, v in t.items() if k not in ("on-cpu", "idle")))'; then
		judge "$n: skywalking, sums against perfport report" "$CONF/skywalking/check" "$PERFPORT" "$f"
	else
		judge "$n: skywalking OFF_CPU task" "$CONF/skywalking/check" "$PERFPORT" "$f" --target OFF_CPU -- \
			-O skywalking.target=off-cpu
	fi
done
[ $failed -eq 0 ] || fail "$failed conformance check(s) found defects"
echo "ok: every backend's own code reads the uploads as perfport means them"
