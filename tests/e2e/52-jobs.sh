#!/usr/bin/env bash
# -j N: new frames are named on a thread of their own (src/symbols/namer.c)
# while the pass goes on, and DWARF samples unwound by a pool. The output
# must be -j 1's, byte for byte: on recordings where processes start, map
# their libraries and exit while others are sampled (the machine changes
# under frames waiting for names), with DWARF, off-CPU (stacks whose tree
# node is needed at once), a timeline format, per-thread grouping, and on
# every recording of the shared corpus (other perf versions and arches).
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
build_workload

# same WHAT FORMATS ARGS...: export with -j 1, 2 and 3 into three
# directories (one format: a file in it); every file equal
same() {
	local what=$1 formats=$2 out; shift 2
	for j in 1 2 3; do
		rm -rf "$WORK/j$j"
		out=$WORK/j$j
		case $formats in *,*) ;; *) mkdir "$out"; out=$out/$formats.out;; esac
		"$PERFPORT" export -j "$j" -f "$formats" "$@" -o "$out" >/dev/null 2>"$WORK/err.$j" || {
			rc=$?; [ $rc -eq 3 ] || { cat "$WORK/err.$j"; fail "$what: -j $j exit $rc"; }; }
	done
	for f in "$WORK/j1"/*; do
		b=$(basename "$f")
		for j in 2 3; do
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
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
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
echo "ok: -g with processes coming and going: -j 2 and -j 3 equal -j 1 ($n stacks)"

record "$WORK/dw.data" --call-graph dwarf,8192 -F 1000 -e cpu-clock -- "$WORK/churn.sh" "$WORKLOAD"
same "DWARF" folded,pprof -i "$WORK/dw.data"
echo "ok: --call-graph dwarf: -j 2 and -j 3 equal -j 1"

same "timeline (firefox)" firefox,folded -i "$WORK/fp.data"
same "per thread (skywalking)" skywalking -i "$WORK/fp.data"
echo "ok: a timeline format and per-thread trees: -j 2 and -j 3 equal -j 1"

# Off-CPU: the switch's stack needs its tree node when the interval opens.
same "off-CPU sample" folded,pprof -i "$TOP/samples/offcpu.perf.data"
for j in 1 2; do
	"$PERFPORT" report --json -j $j -i "$TOP/samples/offcpu.perf.data" >"$WORK/r$j.json" 2>/dev/null ||
		fail "report -j $j"
done
cmp -s "$WORK/r1.json" "$WORK/r2.json" || fail "report --json differs between -j 1 and -j 2"
echo "ok: off-CPU: export and report of -j 2 equal -j 1"

if [ -d "$CORPUS" ]; then
	n=0
	while IFS= read -r f; do
		head -c 8 "$f" | grep -q PERFILE2 || continue
		same "${f#$CORPUS/}" folded,pprof -i "$f"
		n=$((n + 1))
	done < <(find "$CORPUS" -type f | sort)
	[ $n -ge 30 ] || fail "only $n corpus recordings found"
	echo "ok: $n corpus recordings: -j 2 and -j 3 equal -j 1"
else
	echo "note: no corpus at $CORPUS: its recordings are not compared"
fi
