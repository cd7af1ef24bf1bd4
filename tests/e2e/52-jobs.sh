#!/usr/bin/env bash
# -j N: new frames are named on threads of their own (src/symbols/namer.c:
# one lane with -j 2, three with -j 6, each with its own symbolizer) while
# the pass goes on, and DWARF samples unwound by a pool. The output must be
# -j 1's, byte for byte: on recordings where processes start, map their
# libraries and exit while others are sampled (the machine changes under
# frames waiting for names), with DWARF, off-CPU (stacks whose tree node is
# needed at once), a timeline format, per-thread grouping, a C++ program
# whose one big unit the lanes index together, and on every recording of
# the shared corpus (other perf versions and arches).
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
build_workload

# same WHAT FORMATS ARGS...: export with -j 1, 2 and 6 into three
# directories (one format: a file in it); every file equal. With
# SAME_STDIN set, each export reads that file as its standard input.
same() {
	local what=$1 formats=$2 out; shift 2
	for j in 1 2 6; do
		rm -rf "$WORK/j$j"
		out=$WORK/j$j
		case $formats in *,*) ;; *) mkdir "$out"; out=$out/$formats.out;; esac
		"$PERFPORT" export -j "$j" -f "$formats" "$@" -o "$out" <"${SAME_STDIN:-/dev/null}" \
			>/dev/null 2>"$WORK/err.$j" || {
			rc=$?; [ $rc -eq 3 ] || { cat "$WORK/err.$j"; fail "$what: -j $j exit $rc"; }; }
	done
	for f in "$WORK/j1"/*; do
		b=$(basename "$f")
		for j in 2 6; do
			case $b in
			*.gz) cmp -s <(zcat "$f") <(zcat "$WORK/j$j/$b") ||
				fail "$what: $b differs between -j 1 and -j $j";;
			*) cmp -s "$f" "$WORK/j$j/$b" || fail "$what: $b differs between -j 1 and -j $j";;
			esac
		done
	done
}

# Processes that start, map libraries and end all through the recording,
# beside a long-running one: MMAP, COMM, FORK and EXIT records land between
# samples whose frames are new.
cat >"$WORK/churn.sh" <<'SH'
#!/bin/sh
"$1" 2 &
i=0
while [ $i -lt "${2:-12}" ]; do
	i=$((i + 1))
	sha256sum /usr/bin/perf >/dev/null
	gzip -c /usr/bin/perf >/dev/null
	python3 -c 'import json, zlib; sum(len(zlib.compress(bytes(range(256)) * 64)) for _ in range(200))'
done
wait
SH
chmod +x "$WORK/churn.sh"
record "$WORK/fp.data" -g -F 4000 -e cpu-clock -- "$WORK/churn.sh" "$WORKLOAD"
same "frame pointers, processes coming and going" folded,pprof -i "$WORK/fp.data"
n=$(wc -l <"$WORK/j1/profile.folded")
[ "$n" -gt 50 ] || fail "only $n distinct stacks: the churn recording is too small"
# named at all: the workload's own functions and the dynamic loader's of
# each process started (coreutils are stripped)
for fn in cpu_worker io_worker dl_main; do
	grep -q "$fn" "$WORK/j1/profile.folded" || fail "no frame named $fn in the folded output"
done
echo "ok: -g with processes coming and going: -j 2 and -j 6 equal -j 1 ($n stacks)"

# A C++ program of real-world shape in one unit of ~5,000 top-level DIEs
# (the bench's generator, 8 kernels): with -j 8 its four lanes want the
# unit at once; it is indexed once, in parts (-vv says so), and every frame
# named as with -j 1, lambdas and inlined calls included.
if command -v g++ >/dev/null; then
	$PY "$TOP/tests/bench/gen_cxx.py" "$WORK/shape.cc" 8
	g++ -std=c++17 -O2 -g -o "$WORK/shape" "$WORK/shape.cc" || fail "cannot build the C++ program"
	# (its exit status is a bit of its result, to keep the work from being
	# optimised away: perf record would pass it on)
	record "$WORK/cxx.data" --call-graph dwarf,8192 -F 1000 -e cpu-clock -- \
		sh -c '"$1" 2; exit 0' sh "$WORK/shape"
	for j in 1 8; do
		"$PERFPORT" -vv export -j $j -f folded -i "$WORK/cxx.data" -o "$WORK/cxx$j.folded" \
			>/dev/null 2>"$WORK/cxx$j.err" || { tail "$WORK/cxx$j.err"; fail "C++: export -j $j"; }
	done
	cmp -s "$WORK/cxx1.folded" "$WORK/cxx8.folded" || fail "C++: -j 8's stacks differ from -j 1's"
	grep -q "gathered in [0-9]* parts" "$WORK/cxx8.err" || fail "C++: -j 8 did not index the unit in parts"
	grep -q "lambda" "$WORK/cxx1.folded" || fail "C++: no lambda named"
	grep "gathered in" "$WORK/cxx8.err" | sed 's/^perfport: debug: /  /'
	echo "ok: C++, one big unit: -j 8 (four lanes, the unit indexed in parts) equals -j 1" \
		"($(wc -l <"$WORK/cxx1.folded") stacks)"
else
	echo "note: no g++: the C++ program is not compared"
fi

record "$WORK/dw.data" --call-graph dwarf,8192 -F 1000 -e cpu-clock -- "$WORK/churn.sh" "$WORKLOAD"
same "DWARF" folded,pprof -i "$WORK/dw.data"
echo "ok: --call-graph dwarf: -j 2 and -j 6 equal -j 1"

# What starts: a file whose events record nothing to unwind (-g) starts no
# unwinding thread nor a delivering one (its samples are accounted straight
# from the reader); a DWARF one does. The threads that ran, by role, from
# PERFPORT_THREAD_TIMES (the bench's per-thread CPU times: a line a thread).
roles() {
	rm -f "$WORK/tt"
	PERFPORT_THREAD_TIMES="$WORK/tt" "$PERFPORT" export -j 4 -f folded -i "$1" \
		-o "$WORK/tt.folded" >/dev/null 2>&1 || fail "export -j 4 of $1"
	awk '{ print $1 }' "$WORK/tt" | sort -u | tr '\n' ' '
}
r=" $(roles "$WORK/fp.data")"
case $r in *" unwind "* | *" deliver "*) fail "-g at -j 4 started unwinding threads (roles:$r)";; esac
case $r in *" namer "*) ;; *) fail "-g at -j 4: no naming lane ran (roles:$r)";; esac
r=" $(roles "$WORK/dw.data")"
case $r in *" unwind "*) ;; *) fail "DWARF at -j 4: no unwinding thread ran (roles:$r)";; esac
echo "ok: -g starts no unwinding thread, DWARF does"

same "timeline (firefox)" firefox,folded -i "$WORK/fp.data"
same "per thread (skywalking)" skywalking -i "$WORK/fp.data"
echo "ok: a timeline format and per-thread trees: -j 2 and -j 6 equal -j 1"

# Off-CPU: the switch's stack needs its tree node when the interval opens.
same "off-CPU sample" folded,pprof -i "$TOP/samples/offcpu.perf.data"
for j in 1 2; do
	"$PERFPORT" report --json -j $j -i "$TOP/samples/offcpu.perf.data" >"$WORK/r$j.json" 2>"$WORK/stderr.txt" ||
		fail "report -j $j: $(said "$WORK/stderr.txt")"
done
cmp -s "$WORK/r1.json" "$WORK/r2.json" || fail "report --json differs between -j 1 and -j 2"
echo "ok: off-CPU: export and report of -j 2 equal -j 1"

# The ways perf writes a recording: through a pipe (read from stdin, the
# events announced as records), compressed (-z), one file per reading
# thread (--threads, a directory), with switch records, with the sched
# tracepoints beside samples (off-CPU intervals and their wakers), and two
# sampling events. Beside export, the views: report --json (with wakers),
# stacks and info --json.
views_same() {
	local what=$1; shift
	for j in 1 2; do
		"$PERFPORT" report --json --wakers -j $j "$@" <"${SAME_STDIN:-/dev/null}" \
			>"$WORK/rep$j.json" 2>"$WORK/stderr.txt" || fail "$what: report -j $j: $(said "$WORK/stderr.txt")"
		"$PERFPORT" stacks -j $j "$@" <"${SAME_STDIN:-/dev/null}" >"$WORK/st$j.txt" 2>"$WORK/stderr.txt" ||
			fail "$what: stacks -j $j: $(said "$WORK/stderr.txt")"
		"$PERFPORT" info --json -j $j "$@" <"${SAME_STDIN:-/dev/null}" >"$WORK/in$j.json" \
			2>"$WORK/stderr.txt" || fail "$what: info -j $j: $(said "$WORK/stderr.txt")"
	done
	cmp -s "$WORK/rep1.json" "$WORK/rep2.json" || fail "$what: report --json differs with -j 2"
	cmp -s "$WORK/st1.txt" "$WORK/st2.txt" || fail "$what: stacks differs with -j 2"
	cmp -s "$WORK/in1.json" "$WORK/in2.json" || fail "$what: info --json differs with -j 2"
}
modes=0
perf record -g -F 1000 -e cpu-clock -o - -- "$WORK/churn.sh" "$WORKLOAD" 3 >"$WORK/pipe.data" \
	2>"$WORK/record.log" || { cat "$WORK/record.log"; fail "perf record -o - failed"; }
SAME_STDIN=$WORK/pipe.data same "pipe" folded,pprof,firefox,codeguru -i -
SAME_STDIN=$WORK/pipe.data views_same "pipe" -i -
modes=$((modes + 1))

# The threads are named for their work (top -H, ps -L, perf): an export of
# the pipe recording at -j 4 runs its unwinding pool and its naming lanes.
# Their names are read from the kernel's task:task_rename events (perf
# records perfport), not from /proc while they happen to run: the lanes
# start at the first frame, which a pipe gives only at its end, and the
# unwinding threads end soon after; catching both alive was luck.
if perf record -q -e task:task_rename -o "$WORK/probe.data" true >/dev/null 2>&1; then
	cat "$WORK/pipe.data" | perf record -e task:task_rename -o "$WORK/names.data" -- \
		"$PERFPORT" -q export -j 4 -f folded -i - -o "$WORK/names.folded" >"$WORK/names.log" 2>&1 ||
		{ cat "$WORK/names.log"; fail "the export of the pipe under perf record failed"; }
	names=$(perf script -i "$WORK/names.data" -F trace 2>"$WORK/names.err" |
		sed -n 's/.*newcomm=\([^ ]*\).*/\1/p' | sort | uniq -c | tr -s ' \n' ' ') ||
		{ cat "$WORK/names.err"; fail "perf script of the threads' names failed"; }
	echo "threads: $names"
	case $names in *pp-namer*) ;; *) fail "no thread named pp-namer at -j 4 (threads: $names)";; esac
	case $names in *pp-unwind*) ;; *) fail "no thread named pp-unwind at -j 4 (threads: $names)";; esac
	echo "ok: the threads are named for their work"
else
	echo "note: perf cannot record task:task_rename here: the threads' names are not checked"
fi
record "$WORK/z.data" -z -g -F 1000 -e cpu-clock -- "$WORK/churn.sh" "$WORKLOAD" 3
same "-z" folded,pprof,codeguru -i "$WORK/z.data"
modes=$((modes + 1))
if perf record -q --threads -o "$WORK/thr.data" true >/dev/null 2>&1; then
	rm -rf "$WORK/thr.data"
	record "$WORK/thr.data" --threads -g -F 1000 -e cpu-clock -- "$WORK/churn.sh" "$WORKLOAD" 3
	[ -d "$WORK/thr.data" ] || fail "perf record --threads wrote no directory"
	same "--threads" folded,pprof -i "$WORK/thr.data"
	views_same "--threads" -i "$WORK/thr.data"
	modes=$((modes + 1))
else
	echo "note: this perf has no --threads: a directory recording is not compared"
fi
record "$WORK/sw.data" --switch-events -g -F 1000 -e cpu-clock -- "$WORK/churn.sh" "$WORKLOAD" 3
same "--switch-events" folded,pprof,firefox -i "$WORK/sw.data"
views_same "--switch-events" -i "$WORK/sw.data"
modes=$((modes + 1))
if perf record -q -e sched:sched_switch -o "$WORK/probe.data" true >/dev/null 2>&1; then
	record "$WORK/tp.data" -g -e sched:sched_switch -e sched:sched_wakeup -e cpu-clock -F 1000 \
		-- "$WORK/churn.sh" "$WORKLOAD" 3
	same "sched tracepoints" folded,pprof,firefox,skywalking -i "$WORK/tp.data"
	views_same "sched tracepoints" -i "$WORK/tp.data"
	grep -q '"wakers"' "$WORK/rep1.json" || fail "report --wakers wrote no wakers"
	modes=$((modes + 1))
else
	echo "note: perf cannot record sched:sched_switch here: the tracepoint recording is not compared"
fi
record "$WORK/two.data" -g -e cpu-clock -e task-clock -F 1000 -- "$WORK/churn.sh" "$WORKLOAD" 3
same "two events" folded,pprof,codeguru -i "$WORK/two.data"
views_same "two events" -i "$WORK/two.data"
modes=$((modes + 1))
echo "ok: $modes recording modes (pipe, -z, --threads, switch records, sched tracepoints, two events): -j 2 and -j 6 equal -j 1"

# The same recordings through the ThreadSanitizer build (make tsan), when
# there is one: processes that come and go while frames wait for names,
# DWARF unwinding, naming lanes sharing a unit, a pipe, off-CPU intervals
# with wakers.
if [ -x "$TOP/build-tsan/perfport" ]; then
	for f in fp.data dw.data cxx.data pipe.data sw.data tp.data; do
		[ -e "$WORK/$f" ] || continue
		TSAN_OPTIONS="halt_on_error=1 exitcode=66" PERFPORT_PLUGIN_PATH=$TOP/build-tsan/plugins \
			"$TOP/build-tsan/perfport" export -j 6 -f folded,pprof,firefox -o "$WORK/tsan" \
			-i - <"$WORK/$f" >/dev/null 2>"$WORK/tsan.err" || {
			tail -40 "$WORK/tsan.err"; fail "ThreadSanitizer: export -j 6 of $f (exit $?)"; }
	done
	echo "ok: ThreadSanitizer: export -j 6 of the churn, DWARF, C++, pipe, switch and tracepoint recordings"
else
	echo "note: no build-tsan/perfport (make tsan): the recordings are not run under ThreadSanitizer"
fi

if [ -d "$CORPUS" ]; then
	n=0
	while IFS= read -r f; do
		head -c 8 "$f" | has PERFILE2 || continue
		same "${f#$CORPUS/}" folded,pprof -i "$f"
		n=$((n + 1))
	done < <(find "$CORPUS" -type f | sort)
	[ $n -ge 30 ] || fail "only $n corpus recordings found"
	echo "ok: $n corpus recordings: -j 2 and -j 6 equal -j 1"
else
	echo "note: no corpus at $CORPUS: its recordings are not compared"
fi
