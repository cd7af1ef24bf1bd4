#!/usr/bin/env bash
# tests/bench/jvm-rss.sh: peak RSS of 'perfport report' of a --call-graph
# dwarf recording of a small Java program (tests/e2e/progs/Waits.java), with
# libjvm's debug information (openjdk-17-dbg): issue 58's case, whose naming
# (libdw's state, the indexes of libjvm's units and the pages of its debug
# file) was most of the memory: on a 68 MB recording, 269 MB at -j 1 before
# issue 58's work (132 anonymous, 127 file-backed), 94.5 MB after it
# (docs/architecture.md, "Memory of naming from big debug information").
# Prints the recording's size, then for -j 1 and the default -j: wall time
# and peak RSS, its anonymous and file-backed parts (the mapped debug
# sections are file pages). Called
# by bench.sh; skips (exit 0, with why) without a JDK or the debug symbols.
#
#   BENCH_DIR   where the recording is kept between runs (/var/tmp/perfport-bench)
#   JVM_SECS    how long Waits runs (8: a recording of ~190 MB)
set -euo pipefail
cd "$(dirname "$0")/../.."
PERFPORT=${PERFPORT:-$PWD/build/perfport}
dir=${BENCH_DIR:-/var/tmp/perfport-bench}
secs=${JVM_SECS:-8}
mkdir -p "$dir"
data="$dir/jvm-dwarf.perf.data"

command -v javac >/dev/null && command -v java >/dev/null ||
	{ echo "jvm-rss: no JDK (apt-get install default-jdk-headless): skipped"; exit 0; }
jvm=$(readlink -f "$(dirname "$(readlink -f "$(command -v java)")")/../lib/server/libjvm.so")
bid=$(readelf -n "$jvm" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$bid" ] && [ -f "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ] ||
	{ echo "jvm-rss: libjvm's debug symbols are not installed (openjdk-17-dbg): skipped"; exit 0; }
if [ ! -f "$data" ]; then
	javac -d "$dir" tests/e2e/progs/Waits.java
	perf record -q -o "$data" -m 2048 -e cpu-clock/freq=499/ -e sched:sched_switch \
		-e sched:sched_waking --switch-events --call-graph dwarf,8192 -- \
		java -XX:-UsePerfData -Xmx64m -cp "$dir" Waits "$secs" >/dev/null 2>&1
fi
echo
echo "perfport report of a --call-graph dwarf JVM recording ($(( $(stat -c %s "$data") >> 20 )) MB, libjvm's debug info):"
# peak RSS and its parts, read every 20 ms from /proc (the anonymous part
# is what perfport made; the file part, pages of what it mapped)
for j in 1 ""; do
	t0=$(date +%s%N)
	"$PERFPORT" -q report ${j:+-j $j} -i "$data" --no-tree --top 1 >/dev/null 2>&1 &
	pid=$!
	peak="0 0 0"
	while kill -0 "$pid" 2>/dev/null; do
		cur=$(awk '/^VmHWM/ { h = $2 } /^RssAnon/ { a = $2 } /^RssFile/ { f = $2 }
			   END { print h + 0, a + 0, f + 0 }' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$cur" ] && peak=$(echo "$peak $cur" | awk '{ print ($4 > $1 ? $4 : $1),
			($5 > $2 ? $5 : $2), ($6 > $3 ? $6 : $3) }')
		sleep 0.02
	done
	wait "$pid" || true
	t1=$(date +%s%N)
	echo "$peak" | awk -v j="${j:-default}" -v t="$(( (t1 - t0) / 1000000 ))" '{
		printf "  -j %-7s %6.2f s  peak RSS %.1f MB (anonymous at most %.1f MB, file-backed %.1f MB)\n",
		       j, t / 1000, $1 / 1024, $2 / 1024, $3 / 1024 }'
done
